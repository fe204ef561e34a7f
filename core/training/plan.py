"""The rules of training, decided before any fitting: which detector, with which settings, on
which graphs, calibrated or not, weighed by which known anomalies.

The rules, for every front end (the command line, the app, the evaluation harness):

1. **Normal graphs.** With ``normal_label``, the graphs of that label; without, every graph but
   the known anomalies of ``known_label``. A label no graph has is an error.
2. **Known anomalies** come as graphs (``known_anomalies``) or as a label of the data
   (``known_label``), not both; that label cannot be the normal one, and is never trained on.
   Known anomalies are never trained on, given either way: the normal graphs that are the same
   graphs (:func:`core.data.graph_identity.graph_key`; stereoisomers are one graph to the
   model), such as a molecule listed twice with each label, are left out of the normal graphs
   (:attr:`TrainingPlan.known_in_data` counts them).
   They weigh the views of a detector that has several (registry: ``weighable``); for any other
   they are an error.
3. **Detector.** The one named, or, when none is, the default (the consensus) if it can hold out
   its calibration share of the normal graphs (:func:`core.detectors.conformal.can_calibrate`),
   else GLocalKD (:attr:`TrainingPlan.fell_back` says so). A named detector is never swapped.
4. **Calibration.** ``calibration`` is a share from 0 to 0.5 (a larger one would hold out more
   graphs than it leaves to train on, which :func:`core.detectors.conformal.can_calibrate`
   refuses). A detector that calibrates itself (registry: ``calibrates_itself``, the consensus)
   takes it as its own ``calibration`` parameter, needs it above 0 and needs graphs enough to
   hold it out and train on the rest.
   Any other is fitted on the rest and calibrated on the held-out share when there are graphs
   enough, else trained on every graph without p-values (:attr:`TrainingPlan.calibrated` is
   False); with ``calibration`` 0, always on every graph.
5. **Settings.** ``seed`` and ``device`` go to the detector when it takes them; the detector takes
   the ``params`` it accepts, and a detector built on GLocalKD (registry: ``needs_glocalkd``)
   gives its GLocalKD component every GLocalKD setting (the ``params`` it does not take itself,
   GLocalKD's defaults for the others, ``seed`` and ``device``); the rest are ignored (the
   settings of another detector; :func:`plan_notes` names them), unless no detector takes them.

Errors are :class:`core.errors.ParameterError` naming the parameter, for each front end to word.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


from core.data.graph_identity import graph_key, shared_graphs
from core.data.graphset import GraphSet, normalize_label
from core.detectors.conformal import can_calibrate, check_calibration_share
from core.detectors.catalog import MIN_KNOWN_ANOMALIES
from core.detectors.registry import (DEFAULT_DETECTOR, DETECTORS, DetectorInfo, accepted_params, detector_defaults,
                                     detector_info, make_detector)
from core.data.label_coding import check_label_coding, label_coding
from core.errors import DataError, GLocalKDError, ParameterError, SchemaMismatchError
from core.detectors.base import SEED, is_seed
from core.training.spec import TrainSpec
from core.wording import counted

GLOCALKD = "glocalkd"
FALLBACK_DETECTOR = GLOCALKD  # trains on every graph when the default cannot calibrate
OWN_FIELDS = ("seed", "device", "calibration")  # fields of the spec, not settings in its params


@dataclass(frozen=True)
class TrainingPlan:
    """What :func:`core.training.train_model` will do, decided by the rules of this module.

    Attributes:
        detector: the registry entry of the detector to train.
        params: its constructor parameters.
        normal: the normal graphs (the calibration share among them).
        known: the known anomalies (None: none).
        calibrated: whether a held-out share of ``normal`` calibrates the model (by the detector
            itself, or from outside).
        fell_back: no detector was named and the default could not calibrate, so GLocalKD trains.
        known_in_data: graphs of the data that are known anomalies too (the same graphs), left out of
            ``normal`` (rule 2).
        ignored: the settings given that the detector does not use (rule 5), in the order given.
    """

    detector: DetectorInfo
    params: dict[str, Any]
    normal: GraphSet
    known: GraphSet | None
    calibrated: bool
    fell_back: bool
    known_in_data: int = 0
    ignored: tuple[str, ...] = ()


def plan_training(graphs: GraphSet, spec: TrainSpec) -> TrainingPlan:
    """Apply the rules of this module to ``spec`` over ``graphs``.

    Args:
        graphs: the data (every label).
        spec: what to train.

    Returns:
        The plan; no detector is fitted.

    Raises:
        ParameterError: a setting that breaks a rule, naming it.
    """
    check_settings(spec)
    known = _known_anomalies(graphs, spec)
    normal = _normal_graphs(graphs, spec, known)
    known_in_data = 0
    if known is not None:  # never trained on (rule 2), a label's too: a molecule listed twice, with
        shared = set(shared_graphs(normal, known))  # each label, was trained on as normal and weighed as anomalous
        if shared:
            known_in_data = len(shared)
            normal = normal.subset(i for i in range(len(normal)) if i not in shared)
    info, fell_back = _detector(spec, len(normal))
    if known is not None and fell_back:  # the default would weigh them: say why it cannot, not "choose it"
        why = ("{calibration} is 0, and the consensus calibrates its views on a held-out share; set it above 0"
               if not spec.calibration else
               f"{counted(len(normal), 'normal graph')} {'is' if len(normal) == 1 else 'are'} left once the known "
               "anomalies are left out: too few for the consensus to hold out a calibration share and fit on as "
               "many; give more normal graphs")
        raise ParameterError(f"known anomalies weigh the consensus's views, but {why}, or leave out "
                             "{known_anomalies} and {known_label}",
                             *(("calibration",) if not spec.calibration else ()), "known_anomalies", "known_label")
    if known is not None and not info.weighable:
        raise ParameterError(f"known anomalies weigh the consensus's views, and {info.label} has one: choose the "
                             "consensus (the default) with {detector}, or leave out {known_anomalies} and "
                             "{known_label}", "detector", "known_anomalies", "known_label")
    if info.calibrates_itself:
        _check_self_calibration(info, spec, len(normal))
        calibrated = True
    else:
        calibrated = can_calibrate(len(normal), spec.calibration)
    return TrainingPlan(info, _params(info, spec), normal, known, calibrated, fell_back, known_in_data,
                        tuple(unused_settings(info.name, spec.params)))


def check_settings(spec: TrainSpec) -> None:
    """Apply the rules that need no graphs: the calibration share, the seed, and the settings of
    every detector the plan can choose (the one named, or the default and its fallback), so that a
    front end refuses ``epochs`` 0 before it reads the data rather than after.

    Args:
        spec: what to train (its graphs, if any, are not read).

    Raises:
        ParameterError: a setting that breaks a rule, naming it.
    """
    check_calibration_share(spec.calibration)
    if not isinstance(spec.params, dict):  # None failed in .items()
        raise ParameterError(f"{{params}} must map setting names to values, not {spec.params!r}", "params")
    given = spec.params.get("component_params")
    if given is not None and (not isinstance(given, dict) or not all(isinstance(v, dict) for v in given.values())):
        raise ParameterError(f"{{component_params}} must map view names to their settings, not {given!r}",
                             "component_params")
    if not is_seed(spec.seed):
        raise ParameterError(f"{{seed}} must be {SEED}, not {spec.seed!r}", "seed")
    if spec.detector is not None:
        candidates = [_detector(spec, 0)[0]]
    else:  # the default when it can calibrate (rule 3), and the fallback for too few graphs
        candidates = [detector_info(name) for name in (DEFAULT_DETECTOR, FALLBACK_DETECTOR)
                      if name != DEFAULT_DETECTOR or spec.calibration > 0]
    for info in candidates:
        if info.calibrates_itself and not spec.calibration:
            raise ParameterError(f"the {info.label} calibrates its components: {{calibration}} must be above 0",
                                 "calibration")
        params = _params(info, spec)
        built = [info.factory(**params)]
        if info.needs_glocalkd:  # its GLocalKD component is built when it is fitted: check its settings now
            try:  # by make_detector, as the consensus builds it (the bare factory raised a TypeError)
                built.append(make_detector(GLOCALKD, **params["component_params"][GLOCALKD]))
            except ParameterError:
                raise
            except GLocalKDError as exc:
                raise ParameterError(f"{{component_params}}: {exc}", "component_params") from None
        for detector in built:
            detector.check_params()


def check_known_anomalies(known: GraphSet, data: GraphSet | None = None) -> None:
    """Refuse known anomalies that are not one kind of anomalous graph from a file of their own.

    The rule of every way known anomalies come in (``glocalkd train --known-anomalies``,
    ``glocalkd weigh``, the app's *Known anomalies*): at least
    :data:`core.detectors.catalog.MIN_KNOWN_ANOMALIES` of them, and their graphs must not carry two or more
    labels (a labelled file of actives and inactives would weigh the views by both), nor be read
    from the data file itself (it holds the normal graphs).

    Args:
        known: the known anomalies, as loaded.
        data: the graphs the model is trained on or scores (None: none to compare with).

    Raises:
        DataError: fewer than three known anomalies, naming the file.
        SchemaMismatchError: they are graphs of another kind than ``data`` (molecules and a graph
            collection, or node labels that mean other things), naming the file.
        GLocalKDError: naming the file and what to do.
    """
    if data is not None and known.source and data.source and _same_file(known.source, data.source):
        raise GLocalKDError(f"{known.source} is the data file itself: known anomalies must be a file of graphs "
                            "known to be anomalous only (e.g. reference actives), never the training data")
    distinct = len({graph_key(g) for g in known.graphs})  # one molecule given three times is one anomaly
    if distinct < MIN_KNOWN_ANOMALIES:  # checked before any training: fewer cannot weigh the views
        repeated = f" ({len(known):,} rows, some the same graph)" if distinct < len(known) else ""
        raise DataError(f"weighing the views needs at least {MIN_KNOWN_ANOMALIES} known anomalies, not "
                        f"{distinct}{repeated}", known.source)
    counts = known.label_counts()
    if len(counts) >= 2:
        listed = ", ".join(f"{label}: {n:,}" for label, n in counts.items())
        raise GLocalKDError(f"{known.source} holds graphs of {len(counts)} labels ({listed}): known anomalies must "
                            "be graphs known to be anomalous only. Keep only the anomalous rows in that file.")
    if data is not None and len(data):  # another kind of graph: said before training, not after it
        try:
            if known.kind != data.kind:
                raise SchemaMismatchError(f"the model is trained on {data.kind_words} and these are "
                                          f"{known.kind_words}")
            check_label_coding(label_coding(data), label_coding(known))
        except SchemaMismatchError as exc:
            raise SchemaMismatchError(f"{known.source}: these known anomalies cannot weigh this model's views: "
                                      f"{exc}") from None


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one existing file or folder (False when either is missing)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _known_anomalies(graphs: GraphSet, spec: TrainSpec) -> GraphSet | None:
    if spec.known_anomalies is not None and spec.known_label is not None:
        raise ParameterError("give the known anomalies as graphs ({known_anomalies}) or as a label ({known_label}), "
                             "not both", "known_anomalies", "known_label")
    if spec.known_label is None:
        if spec.known_anomalies is not None:  # before training: the rule is known now
            check_known_anomalies(spec.known_anomalies, graphs)
        return spec.known_anomalies
    if spec.normal_label is not None and normalize_label(spec.known_label) == normalize_label(spec.normal_label):
        raise ParameterError(f"label {spec.known_label!r} cannot be both the normal graphs' ({{normal_label}}) and "
                             "the known anomalies' ({known_label})", "known_label", "normal_label")
    known = graphs.with_label(spec.known_label)
    if len(known) == 0:
        raise ParameterError(f"no graphs of {graphs.source} have label {spec.known_label!r} ({{known_label}})",
                             "known_label")
    if len(known) < MIN_KNOWN_ANOMALIES:  # before training, not after it
        raise ParameterError(f"label {spec.known_label!r} holds {len(known)} of the graphs of {graphs.source}, and "
                             f"weighing the views needs at least {MIN_KNOWN_ANOMALIES} known anomalies: choose "
                             "another label or none ({known_label})", "known_label")
    return known


def _normal_graphs(graphs: GraphSet, spec: TrainSpec, known: GraphSet | None) -> GraphSet:
    if spec.normal_label is not None:
        normal = graphs.with_label(spec.normal_label)
        if len(normal) == 0:
            raise ParameterError(f"no graphs have label {spec.normal_label!r} ({{normal_label}})", "normal_label")
        return normal
    if spec.known_label is not None:  # every graph but the known anomalies
        wanted = normalize_label(spec.known_label)
        return graphs.subset(i for i, label in enumerate(graphs.labels) if label != wanted)
    return graphs


def _detector(spec: TrainSpec, n_normal: int) -> tuple[DetectorInfo, bool]:
    if spec.detector is not None:
        try:
            return detector_info(spec.detector), False
        except GLocalKDError as exc:
            raise ParameterError(f"{{detector}}: {exc}", "detector") from None
    if can_calibrate(n_normal, spec.calibration):
        return detector_info(DEFAULT_DETECTOR), False
    return detector_info(FALLBACK_DETECTOR), True


def _check_self_calibration(info: DetectorInfo, spec: TrainSpec, n_normal: int) -> None:
    """A detector that calibrates itself needs graphs enough to hold out its share (above 0:
    :func:`check_settings`) and leave as many to fit: the rule that chooses the default
    (:func:`can_calibrate`). Only the split was asked for, so a named consensus of 20 molecules
    was fitted on 1 and calibrated on 19."""
    if not can_calibrate(n_normal, spec.calibration):
        raise ParameterError(f"{n_normal} normal graphs are too few for the {info.label} to hold out a calibration "
                             "share and train on the rest; choose another detector with {detector} (GLocalKD, for "
                             "one), which trains on every graph when they are this few", "detector")


def unused_settings(detector: str, params: Mapping[str, Any]) -> list[str]:
    """The settings given that a detector does not use under rule 5 (the settings of another
    detector, e.g. ``epochs`` for WL-LESINN): ignored, so a front end must say so.

    Args:
        detector: the detector's registry name.
        params: the settings given (only those a user gave: each is named).

    Returns:
        Their names, in the order given; not the spec's own fields (``seed``, ``device``,
        ``calibration``), nor a name no detector takes (an error of the plan).
    """
    info = detector_info(detector)
    used = accepted_params(info.name) | (accepted_params(GLOCALKD) if info.needs_glocalkd else set())
    return [key for key in params if key not in OWN_FIELDS and key not in used
            and any(key in accepted_params(name) for name in DETECTORS)]


def unused_settings_note(detector: str, settings: Sequence[str],
                         setting_name: Callable[[str], str] | None = None) -> str:
    """Say which settings given a detector ignores, in the words of :func:`plan_notes`.

    Args:
        detector: the detector's registry name.
        settings: the settings it does not use (:func:`unused_settings`).
        setting_name: how the front end names a setting (``--node-max``); None: by its parameter name.

    Returns:
        The sentence; "" when there are none.
    """
    if not settings:
        return ""
    names = ", ".join((setting_name or str)(key) for key in settings)
    return f"{detector_info(detector).label} does not use {names}: ignored"


def plan_notes(plan: TrainingPlan, calibration: float, no_calibration: str = "a calibration share of 0",
               setting_name: Callable[[str], str] | None = None) -> list[str]:
    """Say the choices the rules made that a user did not ask for, in the words every front end shows.

    Args:
        plan: the training plan.
        calibration: the calibration share asked for.
        no_calibration: how the front end names a share of 0 (``--calibration 0``).
        setting_name: how the front end names a setting (``--node-max``); None: by its parameter name.

    Returns:
        One sentence for each: the data's copies of known anomalies left out, the default's
        fall-back to GLocalKD, a model that gives no p-values for want of graphs, and the
        settings given that the detector does not use.
    """
    n = len(plan.normal)
    too_few = f"{counted(n, 'graph')} {'is' if n == 1 else 'are'} too few"
    notes = []
    if plan.known_in_data:
        notes.append(f"{counted(plan.known_in_data, 'graph')} of the data {'is' if plan.known_in_data == 1 else 'are'} "
                     "known anomalies too (the same graphs to the model): left out of training")
    if plan.fell_back:
        why = no_calibration if not calibration else f"{too_few} to calibrate"
        notes.append(f"training GLocalKD: the default consensus needs a calibration share ({why})")
    if calibration > 0 and not plan.calibrated:
        notes.append(f"{too_few} to hold out a calibration share: training on all of them, so the model gives no "
                     "p-values")
    if plan.ignored:
        notes.append(unused_settings_note(plan.detector.name, plan.ignored, setting_name))
    return notes


def split_settings(detector: str, settings: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Rule 5's split of settings given: (the detector's own, those of its GLocalKD view): the one
    rule of training and evaluation (``evaluate(path, model_params={"epochs": 1})`` refused the
    consensus's epochs, which training gives its GLocalKD view). Settings of other detectors are
    in neither (:func:`unused_settings` names them); the spec's own fields stay with the own.

    Args:
        detector: the detector's registry name.
        settings: the settings given.

    Returns:
        (its own settings, its GLocalKD view's settings; empty for a detector without that view).

    Raises:
        ParameterError: a setting no detector takes.
    """
    info = detector_info(detector)
    own_names = accepted_params(info.name)
    component = accepted_params(GLOCALKD) - {"seed", "device"} if info.needs_glocalkd else set()
    own: dict[str, Any] = {}
    routed: dict[str, Any] = {}
    for key, value in settings.items():
        if key in own_names or key in OWN_FIELDS:
            own[key] = value
        elif key in component:
            routed[key] = value
        elif not any(key in accepted_params(name) for name in DETECTORS):
            raise ParameterError(f"no detector takes a setting {{{key}}}", key)
    return own, routed


def _params(info: DetectorInfo, spec: TrainSpec) -> dict[str, Any]:
    """The detector's constructor parameters under rule 5."""
    for key in spec.params:
        if key in OWN_FIELDS:
            raise ParameterError(f"{{{key}}} is a field of the training spec, not a detector setting", key)
    params, routed = split_settings(info.name, spec.params)
    own = accepted_params(info.name)
    if info.needs_glocalkd:  # its GLocalKD's every setting, as its model file records them
        given = dict(params.get("component_params") or {})
        gcn = {**detector_defaults(GLOCALKD), **routed, "seed": spec.seed, "device": spec.device}
        params["component_params"] = {**given, GLOCALKD: {**gcn, **given.get(GLOCALKD, {})}}
    for key, value in (("seed", spec.seed), ("device", spec.device), ("calibration", spec.calibration)):
        if key in own and (key != "calibration" or info.calibrates_itself):
            params[key] = value
    return params
