"""The detectors GLocalKD Studio offers, by name: GLocalKD and the paper's competitors.

Every detector has the same interface: constructor parameters, ``fit(graphs, on_epoch,
should_stop)``, ``score(graphs) -> Scores`` (higher = more anomalous), ``decision_function``,
``threshold(percentile)``, ``graph_embeddings(graphs)`` and the fitted ``train_scores_``,
``loss_history_`` and ``stopped_early_``. ``has_node_scores`` says whether its scores carry
per-node errors (only GLocalKD's do), so views know when a heatmap means something.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from core.errors import GLocalKDError


@dataclass(frozen=True)
class DetectorInfo:
    """A detector's name, its display label, what it is, and how to build it."""

    name: str
    label: str
    summary: str
    has_node_scores: bool
    trains_by_epoch: bool
    factory: Callable[..., object]


def _glocalkd(**params):
    from core.detectors.glocalkd import GLocalKD

    return GLocalKD(**params)


def _ocgcn(**params):
    from core.detectors.ocgcn import OCGCN

    return OCGCN(**params)


def _size(**params):
    from core.detectors.size import SizeBaseline

    return SizeBaseline(**params)


def _consensus(**params):
    from core.detectors.consensus import Consensus

    return Consensus(**params)


def _two_step(kernel: str, scorer: str) -> Callable[..., object]:
    def make(**params):
        from core.detectors.two_step import TwoStepDetector

        return TwoStepDetector(kernel=kernel, scorer=scorer, **params)

    return make


DETECTORS: dict[str, DetectorInfo] = {info.name: info for info in (
    DetectorInfo("glocalkd", "GLocalKD", "glocal knowledge distillation from a frozen random GCN (the paper's "
                 "method)", True, True, _glocalkd),
    DetectorInfo("ocgcn", "OCGCN", "the same GCN trained with the Deep SVDD one-class objective", False, True,
                 _ocgcn),
    DetectorInfo("wl-iforest", "WL-iForest", "Weisfeiler-Lehman subtree kernel (3 iterations) + isolation forest",
                 False, False, _two_step("wl", "iforest")),
    DetectorInfo("wl-lesinn", "WL-LESINN", "Weisfeiler-Lehman subtree kernel (3 iterations) + LESINN "
                 "nearest-neighbour ensemble", False, False, _two_step("wl", "lesinn")),
    DetectorInfo("pk-iforest", "PK-iForest", "propagation kernel + isolation forest", False, False,
                 _two_step("pk", "iforest")),
    DetectorInfo("pk-lesinn", "PK-LESINN", "propagation kernel + LESINN nearest-neighbour ensemble", False, False,
                 _two_step("pk", "lesinn")),
    DetectorInfo("consensus", "Consensus", "GLocalKD, WL-LESINN and graph size, each calibrated on held-out "
                 "normal graphs, their p-values combined (Fisher)", True, True, _consensus),
    DetectorInfo("size", "Graph size", "a sanity baseline: how unusual a graph's node and edge counts are "
                 "against the training graphs", False, False, _size),
)}


def detector_info(name: str) -> DetectorInfo:
    """The registry entry of ``name`` (case-insensitive), or a one-line error listing the names."""
    info = DETECTORS.get(str(name).lower())
    if info is None:
        raise GLocalKDError(f"unknown detector {name!r}; choose one of {', '.join(DETECTORS)}")
    return info


def accepted_params(name: str) -> set[str]:
    """The constructor parameters the detector ``name`` takes."""
    return set(detector_info(name).factory().param_names()) - {"kernel", "scorer"}


def make_detector(name: str, **params):
    """A new, unfitted detector ``name`` with ``params``; parameters it does not take are an error."""
    info = detector_info(name)
    unknown = set(params) - accepted_params(name)
    if unknown:
        raise GLocalKDError(f"{info.label} does not take {', '.join(sorted(unknown))}")
    return info.factory(**params)
