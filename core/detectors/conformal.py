"""Conformal calibration: turn a detector's raw scores into p-values against normal graphs it
did not train on, and p-values into false-discovery-rate q-values.

A raw score such as 17.79 says nothing by itself; its p-value is the share of held-out normal
graphs that score at least as high (split conformal: Vovk et al.; Bates et al., "Testing for
outliers with conformal p-values", 2023). For a graph exchangeable with the calibration graphs,
P(p <= a) <= a, so flagging p < 0.05 flags about 5 % of normal graphs. Benjamini-Hochberg
q-values over a scored set bound the expected share of false alarms among the flagged ones.
The p-value is a decreasing function of the score, so it never changes a detector's ranking.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np

from core.data.graphset import GraphSet
from core.data.pvalues import benjamini_hochberg, conformal_p_values  # noqa: F401  (the calibration API in one place)
from core.errors import GLocalKDError, ParameterError

DEFAULT_CALIBRATION_FRACTION = 0.2
MIN_CALIBRATION_GRAPHS = 19  # with fewer, no p-value can fall below 0.05
MAX_CALIBRATION_SHARE = 0.5  # the most a calibration share can hold out: more leaves fewer to train on (can_calibrate)


def calibration_split(n: int, fraction: float = DEFAULT_CALIBRATION_FRACTION,
                      seed: int = 0, groups: Sequence[Hashable] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Split graph indices into those to train on and the held-out calibration graphs (seeded).

    The calibration part is ``round(fraction * n)`` graphs, at least :data:`MIN_CALIBRATION_GRAPHS`,
    and at least one graph is left to train on. Without ``groups`` the graphs are shuffled. With
    them, whole groups in a shuffled order fill the calibration part and only the last one is
    split, so the calibration graphs are as new to the fitted model as graphs of other groups
    (a scaffold's analogues: :func:`calibration_groups`); the sizes are the same either way.

    Args:
        n: the number of normal graphs.
        fraction: the share held out for calibration, strictly between 0 and 1.
        seed: the seed of the shuffle.
        groups: one key per graph (None: every graph on its own).

    Returns:
        ``(train, calibration)``: two sorted index arrays.

    Raises:
        GLocalKDError: ``fraction`` is not between 0 and 1, or ``n`` is too small.
    """
    if not 0.0 < fraction < 1.0:
        raise GLocalKDError(f"the calibration fraction must be between 0 and 1, not {fraction}")
    n_cal = max(int(round(fraction * n)), MIN_CALIBRATION_GRAPHS)
    if n_cal >= n:
        raise GLocalKDError(f"{n} normal graphs are too few to hold out {MIN_CALIBRATION_GRAPHS} for calibration "
                            "and train on the rest; train without calibration")
    rng = np.random.default_rng(seed)
    if groups is None:
        order = rng.permutation(n)
    else:
        if len(groups) != n:
            raise GLocalKDError(f"{len(groups)} calibration groups for {n} graphs")
        members: dict[Hashable, list[int]] = {}
        for i, key in enumerate(groups):
            members.setdefault(key, []).append(i)
        parts = list(members.values())
        order = np.fromiter((i for j in rng.permutation(len(parts)) for i in parts[j]), dtype=np.int64, count=n)
    return np.sort(order[n_cal:]), np.sort(order[:n_cal])


def calibration_groups(graphs: GraphSet) -> list[str] | None:
    """The groups a calibration share of these graphs is drawn in: molecules by Bemis-Murcko scaffold.

    A training file often holds series of analogues side by side. Drawn graph by graph, the
    calibration share would hold analogues of the fitted molecules, which then score lower than
    molecules of other series, and p-values of a library of other series come out too small
    (docs/consensus.md). Drawn scaffold by scaffold, the calibration molecules are as new to the
    model as such a library's.

    Args:
        graphs: the normal training graphs.

    Returns:
        One key per graph when every graph is a molecule with a SMILES: its scaffold, or its own
        key for an acyclic molecule (no series to share); None otherwise (graphs drawn one by one).
    """
    if not drawn_by_scaffold(graphs):
        return None
    from core.data.chem import murcko_scaffolds

    return [key or f"#{i}" for i, key in enumerate(murcko_scaffolds([m.smiles for m in graphs.meta]))]


def drawn_by_scaffold(graphs: GraphSet) -> bool:
    """Whether a calibration share of these graphs is drawn scaffold by scaffold (:func:`calibration_groups`).

    Args:
        graphs: the normal training graphs.

    Returns:
        True when every graph is a molecule with a SMILES.
    """
    return bool(len(graphs.meta)) and all(m.smiles for m in graphs.meta)


def fit_calibrated(detector, graphs: GraphSet, fraction: float = DEFAULT_CALIBRATION_FRACTION, seed: int = 0,
                   on_epoch: Callable | None = None, should_stop: Callable[[], bool] | None = None):
    """Fit a detector on all but a held-out share of ``graphs`` and calibrate it on that share.

    Afterwards ``detector.calibration_scores_`` holds the held-out graphs' scores and
    ``detector.p_values(...)`` answers.

    Args:
        detector: an unfitted detector.
        graphs: the training graphs, taken as normal.
        fraction: the share held out for calibration.
        seed: the seed of the split.
        on_epoch: passed to ``fit``.
        should_stop: passed to ``fit``.

    Returns:
        The detector, fitted and calibrated.

    Raises:
        GLocalKDError: too few graphs (:func:`calibration_split`), a failed fit, or calibration
            graphs that score NaN or infinite.
    """
    fit_idx, cal_idx = calibration_split(len(graphs), fraction, seed, calibration_groups(graphs))
    detector.fit(graphs.subset(fit_idx), on_epoch=on_epoch, should_stop=should_stop)
    scores = detector.score(graphs.subset(cal_idx)).score
    if not np.all(np.isfinite(scores)):
        raise GLocalKDError("some calibration graphs score NaN or infinite: the model cannot be calibrated")
    detector.calibration_scores_ = np.asarray(scores, dtype=np.float64)
    return detector


def model_p_values(model, scores: np.ndarray) -> np.ndarray | None:
    """Give the p-values a model gives for its raw scores: the one rule of reports, screens and the app.

    A model fitted on all its graphs (too few to hold out a share, or a calibration share of 0)
    gives none: its training graphs score lower than unseen normal graphs, so p-values against
    them would call normal graphs rare.

    Args:
        model: a fitted detector.
        scores: its raw scores of the graphs, shape (graphs,).

    Returns:
        Conformal p-values against the held-out normal graphs, shape (graphs,), or None when the
        model holds no calibration.
    """
    return model.p_values(scores) if getattr(model, "is_calibrated", False) else None


def can_calibrate(n: int, fraction: float = DEFAULT_CALIBRATION_FRACTION) -> bool:
    """Tell whether there are normal graphs enough to hold out a calibration share.

    Args:
        n: the number of normal graphs.
        fraction: the share to hold out.

    Returns:
        Whether ``n`` leaves at least as many to train on as the calibration share (of at least
        :data:`MIN_CALIBRATION_GRAPHS`) holds out.
    """
    return 0.0 < fraction < 1.0 and n >= 2 * max(int(round(fraction * n)), MIN_CALIBRATION_GRAPHS)


def check_calibration_share(share: object, name: str = "calibration") -> None:
    """Refuse a calibration share that is not a number from 0 to :data:`MAX_CALIBRATION_SHARE`, the
    one rule of every front end (the plan's ``calibration``, :func:`fit_with_calibration`'s
    ``fraction``): a larger share holds out more graphs than it leaves to train on, and 20 meant as
    20 % once left a model silently without p-values.

    Args:
        share: the share asked for.
        name: the parameter's name, for the message.

    Raises:
        ParameterError: not a number (a bool or text), NaN, or outside 0 to MAX_CALIBRATION_SHARE.
    """
    number = not isinstance(share, (bool, np.bool_)) and isinstance(share, (int, float, np.integer, np.floating))
    if not number:  # "0.2"
        raise ParameterError(f"{{{name}}} must be a number, a share from 0 to {MAX_CALIBRATION_SHARE}, not "
                             f"{share!r}", name)
    if not 0.0 <= share <= MAX_CALIBRATION_SHARE:  # 0.6 of 120 graphs was said as "too few graphs"; NaN too
        raise ParameterError(f"{{{name}}} must be a share from 0 to {MAX_CALIBRATION_SHARE} (a larger one holds "
                             f"out more graphs than it leaves to train on), not {share}", name)


def fit_with_calibration(detector, graphs: GraphSet, fraction: float = DEFAULT_CALIBRATION_FRACTION,
                         seed: int = 0, on_epoch: Callable | None = None,
                         should_stop: Callable[[], bool] | None = None) -> bool:
    """Fit a detector as a product does: calibrated on a held-out share when there are graphs enough.

    With too few graphs (:func:`can_calibrate`) it is fitted on all of them. A detector that
    calibrates itself (its registry entry says so: the consensus) is fitted as it is.

    Args:
        detector: an unfitted detector.
        graphs: the training graphs, taken as normal.
        fraction: the share held out for calibration.
        seed: the seed of the split.
        on_epoch: passed to ``fit``.
        should_stop: passed to ``fit``.

    Returns:
        Whether the fitted detector gives p-values.

    Raises:
        ParameterError: a ``fraction`` that is not a share from 0 to MAX_CALIBRATION_SHARE, or a
            ``seed`` that is not a whole number from 0 to SEED_MAX.
    """
    from core.detectors.base import SEED, is_seed
    from core.detectors.registry import DETECTORS

    check_calibration_share(fraction, "fraction")
    if not is_seed(seed):
        raise ParameterError(f"{{seed}} must be {SEED}, not {seed!r}", "seed")
    info = DETECTORS.get(detector.name)
    if (info is not None and info.calibrates_itself) or not can_calibrate(len(graphs), fraction):
        detector.fit(graphs, on_epoch=on_epoch, should_stop=should_stop)
    else:
        fit_calibrated(detector, graphs, fraction, seed, on_epoch, should_stop)
    return detector.is_calibrated
