"""The detectors GLocalKD Studio offers, by name: the single detectors of
:mod:`core.detectors.catalog` (GLocalKD, the paper's competitors, graph size) and the consensus.

Every detector has the same interface (:class:`core.detectors.base.Detector`): constructor
parameters, ``fit(graphs, on_epoch, should_stop)``, ``score(graphs) -> Scores`` (higher = more
anomalous), ``decision_function``, ``threshold(percentile)``, ``graph_embeddings(graphs)`` and the
fitted ``train_scores_``, ``loss_history_`` and ``stopped_early_``. ``has_node_scores`` says
whether its scores carry per-node errors, so views know when a heatmap means something.
"""
from __future__ import annotations

import inspect

from core.detectors.catalog import SINGLE_DETECTORS, DetectorInfo, info_in, make_in, params_in


def _consensus(**params):
    from core.detectors.consensus import Consensus

    return Consensus(**params)


_CONSENSUS = DetectorInfo("consensus", "Consensus", "GLocalKD, WL-LESINN and graph size, each calibrated on held-out "
                          "normal graphs, their p-values combined (Fisher)", True, True, _consensus, savable=True,
                          calibrates_itself=True, weighable=True, needs_glocalkd=True)
DETECTORS: dict[str, DetectorInfo] = {**SINGLE_DETECTORS, _CONSENSUS.name: _CONSENSUS}

# The default detector of make_detector, ``glocalkd train`` and the app. The rule that chose it
# (docs/consensus.md): the highest mean ROC-AUC over the 14 rows of the competitor table among
# candidates that use only the training graphs, provided it has no more rows below 0.5 than any
# single detector. The consensus: 0.662 (1 row below 0.5) against at most 0.604 (3 to 5 rows).
DEFAULT_DETECTOR = "consensus"

__all__ = ["DEFAULT_DETECTOR", "DETECTORS", "DetectorInfo", "accepted_params", "detector_defaults", "detector_info",
           "make_detector", "view_label"]

CLASSIFIER_LABEL = "known-anomaly classifier"  # the consensus's view that known anomalies train


def view_label(name: str) -> str:
    """Name a consensus's view for people: its detector's label, or the classifier view's.

    Args:
        name: a view name (a detector's registry name, or ``known-classifier``).

    Returns:
        The label.

    Raises:
        GLocalKDError: an unknown name.
    """
    from core.detectors.known_classifier import CLASSIFIER_VIEW

    return CLASSIFIER_LABEL if name == CLASSIFIER_VIEW else detector_info(name).label


def detector_info(name: str) -> DetectorInfo:
    """Look up the registry entry of a detector.

    Args:
        name: a registry name (case-insensitive).

    Returns:
        Its :class:`DetectorInfo`.

    Raises:
        GLocalKDError: an unknown name; the one-line message lists the names.
    """
    return info_in(DETECTORS, name)


def scores_alone(model) -> bool:
    """Whether a fitted detector scores each graph on its own, whatever else is in its batch.

    Args:
        model: the fitted detector.

    Returns:
        False for a detector whose registry entry is ``batch_dependent`` (PK-LESINN, PK-iForest),
        and for a consensus with such a view among its components or reserve views (its
        combined score inherits the view's dependence); else True (the default consensus,
        GLocalKD and every other detector).
    """
    names = [getattr(model, "name", ""), *(getattr(model, "views", None) or [])]
    infos = [DETECTORS.get(str(name).lower()) for name in names]
    return not any(info is not None and info.batch_dependent for info in infos)


def accepted_params(name: str) -> set[str]:
    """List the constructor parameters a detector takes (those its name fixes left out).

    Args:
        name: a registry name (case-insensitive).

    Returns:
        The parameter names.

    Raises:
        GLocalKDError: an unknown name.
    """
    return params_in(DETECTORS, name)


def make_detector(name: str = DEFAULT_DETECTOR, **params):
    """Make a new, unfitted detector by registry name.

    Args:
        name: a registry name (case-insensitive); the consensus by default
            (:data:`DEFAULT_DETECTOR`).
        **params: constructor parameters.

    Returns:
        The detector.

    Raises:
        GLocalKDError: an unknown name, or a parameter the detector does not take.
    """
    return make_in(DETECTORS, name, **params)


def detector_defaults(name: str) -> dict[str, object]:
    """Read the default of each constructor parameter of a detector from its signature.

    It is the one place they are written: the command line and the app's form read them here.
    It imports the detector's module (torch, for most).

    Args:
        name: a registry name (case-insensitive).

    Returns:
        Parameter name -> default, for the parameters :func:`accepted_params` lists.

    Raises:
        GLocalKDError: an unknown name.
    """
    accepted = accepted_params(name)
    signature = inspect.signature(type(make_detector(name)))
    return {n: p.default for n, p in signature.parameters.items() if n in accepted and p.default is not p.empty}
