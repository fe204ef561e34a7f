"""What to train: the detector, its settings, which graphs are normal, the calibration share and
the known anomalies, as one small value."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from collections.abc import Mapping

from core.detectors.conformal import DEFAULT_CALIBRATION_FRACTION

if TYPE_CHECKING:
    from core.data.graphset import GraphSet


@dataclass(frozen=True)
class TrainSpec:
    """What :func:`core.training.train_model` trains. The rules that apply to it are
    :func:`core.training.plan_training`'s.

    Attributes:
        detector: a registry name (:data:`core.detectors.registry.DETECTORS`); None: the default
            detector (the consensus), or GLocalKD when the consensus cannot hold out its
            calibration share (``calibration`` 0, or too few normal graphs).
        params: the detector's settings (constructor parameters, GLocalKD's feature mode
            ``features`` among them). A detector built on GLocalKD passes the GLocalKD settings
            it does not take itself to its GLocalKD component; settings of other detectors are
            ignored, so one set of GCN settings serves every detector; a name no detector takes
            is an error. Not ``seed``, ``device`` or ``calibration``: the fields below.
        calibration: the share of the normal graphs held out to calibrate p-values; 0 trains on
            every graph, without p-values.
        normal_label: train only on the graphs of this label; None: on every graph but the
            known anomalies.
        known_label: the graphs of this label are known anomalies.
        known_anomalies: known anomalies as graphs of their own (e.g. a file of reference
            actives); not with ``known_label``.
        seed: seeds the detector and the calibration split.
        device: ``auto``, ``cpu`` or ``cuda``, for the detectors that take one.
    """

    detector: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    calibration: float = DEFAULT_CALIBRATION_FRACTION
    normal_label: str | None = None
    known_label: str | None = None
    known_anomalies: GraphSet | None = None
    seed: int = 0
    device: str = "auto"
