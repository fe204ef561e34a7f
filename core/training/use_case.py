"""Train a model as every front end does: plan by the rules (:mod:`core.training.plan`), fit,
calibrate, weigh by known anomalies. The one place a detector is fitted for a front end."""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

from core.data.graphset import GraphSet
from core.detectors.base import EpochInfo
from core.detectors.conformal import drawn_by_scaffold, fit_calibrated
from core.detectors.registry import detector_info, make_detector
from core.errors import GLocalKDError, SchemaMismatchError
from core.training.plan import TrainingPlan, check_known_anomalies, plan_training
from core.training.spec import TrainSpec


@dataclass
class TrainedModel:
    """A fitted detector and how it was trained.

    Attributes:
        model: the fitted detector (calibrated when ``plan.calibrated``; its views weighed when
            ``plan.known`` is not None).
        plan: what was decided before fitting: the detector, its parameters, the normal graphs,
            the known anomalies, calibrated or not, and whether the default fell back to GLocalKD.
    """

    model: object
    plan: TrainingPlan

    @property
    def n_calibration(self) -> int:
        """How many of the normal graphs were held out to calibrate the model."""
        return len(self.model.calibration_scores_) if self.model.is_calibrated else 0

    @property
    def calibration_note(self) -> str:
        """How the calibration share was drawn, for a front end's message: ``"whole scaffolds"``
        for molecules (:func:`core.detectors.conformal.calibration_groups`), else ``""``."""
        return "whole scaffolds" if self.n_calibration and drawn_by_scaffold(self.plan.normal) else ""

    @property
    def n_fit(self) -> int:
        """How many normal graphs the detector was fitted on."""
        return len(self.plan.normal) - self.n_calibration


def train_model(graphs: GraphSet, spec: TrainSpec, on_epoch: Callable[[EpochInfo], None] | None = None,
                should_stop: Callable[[], bool] | None = None,
                on_plan: Callable[[TrainingPlan], None] | None = None) -> TrainedModel:
    """Train the model ``spec`` describes on ``graphs`` under the rules of :mod:`core.training.plan`.

    Args:
        graphs: the data: normal graphs, and the known anomalies when ``spec.known_label`` names
            them.
        spec: what to train.
        on_epoch: called after each training epoch.
        should_stop: polled during training; True stops it early (the model keeps what it learnt).
        on_plan: called with the plan before fitting starts (e.g. to say what will be trained).

    Returns:
        The fitted model and its plan.

    Raises:
        ParameterError: a setting that breaks a rule, naming it.
    """
    plan = plan_training(graphs, spec)
    if on_plan is not None:
        on_plan(plan)
    model = make_detector(plan.detector.name, **plan.params)
    if plan.calibrated and not plan.detector.calibrates_itself:
        fit_calibrated(model, plan.normal, spec.calibration, seed=spec.seed, on_epoch=on_epoch,
                       should_stop=should_stop)
    else:
        model.fit(plan.normal, on_epoch=on_epoch, should_stop=should_stop)
    if plan.known is not None:
        weigh_known_anomalies(model, plan.known)
    return TrainedModel(model, plan)


def weigh_known_anomalies(model, known: GraphSet, data: GraphSet | None = None) -> dict[str, float]:
    """Weigh a fitted model's views by ``known`` (graphs known to be anomalous, never trained on).

    Args:
        model: a fitted detector whose registry entry is ``weighable`` (the consensus).
        known: the known anomalies.
        data: the graphs the model scores (the app's open data), which ``known`` must not be
            read from (:func:`core.training.plan.check_known_anomalies`); None: none.

    Returns:
        Each view's ROC-AUC of the known anomalies against the held-out normal graphs.

    Raises:
        GLocalKDError: ``known`` carry two or more labels or come from the data file, the model
            has a single view, or ``known`` are too few.
        SchemaMismatchError: the model cannot score graphs of ``known``'s kind (naming its file).
    """
    check_known_anomalies(known, data)
    if not detector_info(model.name).weighable:
        raise GLocalKDError(f"a {model.name} model has a single view: known anomalies weigh the views of a consensus")
    try:
        return model.weigh_views(known)
    except SchemaMismatchError as exc:  # say which file, as scoring one does
        raise SchemaMismatchError(f"{known.source}: these known anomalies cannot weigh this model's views: {exc}") \
            from exc
