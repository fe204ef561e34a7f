"""Train a model as every front end does: plan by the rules (:mod:`core.training.plan`), fit,
calibrate, weigh by known anomalies. The one place a detector is fitted for a front end."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from collections.abc import Callable

from core.data.graphset import GraphSet, Reject
from core.detectors.base import EpochInfo, as_model_reads
from core.detectors.conformal import drawn_by_scaffold, fit_calibrated
from core.detectors.consensus import MIN_KNOWN_ANOMALIES
from core.detectors.registry import detector_info, make_detector
from core.errors import DataError, GLocalKDError, SchemaMismatchError
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


def weigh_known_anomalies(model, known: GraphSet, data: GraphSet | None = None) -> GraphSet:
    """Weigh a fitted model's views by ``known`` (graphs known to be anomalous, never trained on).

    The one way every front end weighs (``train`` with known anomalies, ``weigh``, the app, the
    evaluation): known anomalies that the views were fitted or calibrated on as normal
    (:meth:`core.detectors.consensus.Consensus.seen_graphs`: a molecule listed twice, once with
    each label) are left out, as training leaves them out of the normal graphs; their scores are
    in-sample (10 such graphs weighed WL-LESINN at an AUC of 0.09).

    Args:
        model: a fitted detector whose registry entry is ``weighable`` (the consensus).
        known: the known anomalies.
        data: the graphs the model scores (the app's open data), which ``known`` must not be
            read from (:func:`core.training.plan.check_known_anomalies`); None: none.

    Returns:
        The known anomalies that weighed the views (``known``, less those left out; its
        ``rejects`` list them with the reason, after ``known``'s own).

    Raises:
        GLocalKDError: ``known`` carry two or more labels or come from the data file, the model
            has a single view, or ``known`` are too few (once those it has seen are left out).
        SchemaMismatchError: the model cannot score graphs of ``known``'s kind (naming its file).
    """
    check_known_anomalies(known, data)
    if not detector_info(model.name).weighable:
        raise GLocalKDError(f"a {model.name} model has a single view: known anomalies weigh the views of a consensus")
    known = as_model_reads(model, known, whole=False)  # before they are compared with the graphs it has seen
    try:
        seen = set(model.seen_graphs(known).tolist())
        if seen:
            left_out = [Reject(known.meta[i].line, known.meta[i].id, SEEN_AS_NORMAL, known.meta[i].smiles)
                        for i in sorted(seen)]
            kept = known.subset(i for i in range(len(known)) if i not in seen)
            if len(kept) < MIN_KNOWN_ANOMALIES:
                raise DataError(f"{len(seen):,} of the {len(known):,} known anomalies (the first: "
                                f"{known.meta[min(seen)].id}) are graphs the model was trained or calibrated on as "
                                f"normal, which leaves {len(kept)}: weighing the views needs at least "
                                f"{MIN_KNOWN_ANOMALIES} it has not seen", known.source)
            known = dataclasses.replace(kept, rejects=[*known.rejects, *left_out])
        model.weigh_views(known)
    except SchemaMismatchError as exc:  # say which file, as scoring one does
        raise SchemaMismatchError(f"{known.source}: these known anomalies cannot weigh this model's views: {exc}") \
            from exc
    return known


SEEN_AS_NORMAL = "left out of the known anomalies: the model was trained or calibrated on this graph as normal"
