"""Detection metrics with the anomalous class as positive (scikit-learn underneath)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

from core.data.pvalues import conformal_p_values
from core.errors import GLocalKDError


def roc_auc(is_anomaly: Sequence[bool], scores: Sequence[float]) -> float:
    """ROC-AUC with the anomalous class as positive (the paper's metric).

    Args:
        is_anomaly: one flag per graph.
        scores: one score per graph, higher meaning more anomalous.

    Returns:
        The area under the ROC curve; NaN when only one class is present.

    Raises:
        GLocalKDError: flags that are not True/False or 1/0 (labels such as "0"/"1" or -1/1 would
            all read as True), a score that is not finite, or not one score per flag.
    """
    y = anomaly_flags(is_anomaly)
    s = np.asarray(scores, dtype=np.float64)
    if s.shape != y.shape:
        raise GLocalKDError(f"roc_auc needs one score per flag: {s.size} scores, {y.size} flags")
    if not np.isfinite(s).all():
        raise GLocalKDError(f"roc_auc needs finite scores; {int((~np.isfinite(s)).sum())} are not")
    if y.all() or not y.any():
        return math.nan
    return float(roc_auc_score(y, s))


def anomaly_flags(is_anomaly: Sequence[bool]) -> np.ndarray:
    """Check and convert per-graph anomaly flags (True/False, or the numbers 1/0).

    Args:
        is_anomaly: one flag per graph.

    Returns:
        A 1-D bool array.

    Raises:
        GLocalKDError: a flag of another kind: text labels ("0"/"1") or -1/1 would all read as True.
    """
    raw = np.asarray(is_anomaly)
    if raw.dtype == bool:
        return raw.ravel()
    if raw.size and (raw.dtype.kind not in "iuf" or not np.isin(raw, (0, 1)).all()):
        shown = ", ".join(sorted({repr(v) for v in raw.ravel()[:1000].tolist()})[:4])
        raise GLocalKDError(f"anomaly flags are True/False (or 1/0), not {shown}: compare the labels with the "
                            "anomalous label first")
    return raw.astype(bool).ravel()


def average_precision(is_anomaly: Sequence[bool], scores: Sequence[float]) -> float:
    """Average precision with the anomalous class as positive.

    Args:
        is_anomaly: one flag per graph.
        scores: one score per graph, higher meaning more anomalous.

    Returns:
        scikit-learn's average precision; NaN when there is no anomaly.

    Raises:
        GLocalKDError: flags that are not True/False or 1/0 (:func:`anomaly_flags`).
    """
    y = anomaly_flags(is_anomaly)
    if not y.any():
        return math.nan
    return float(average_precision_score(y, np.asarray(scores, dtype=np.float64)))


def fpr_at_tpr(is_anomaly: Sequence[bool], scores: Sequence[float], tpr: float = 0.95) -> float:
    """False-positive rate at the first threshold that reaches a true-positive rate.

    Args:
        is_anomaly: one flag per graph.
        scores: one score per graph, higher meaning more anomalous.
        tpr: the true-positive rate to reach (default 0.95).

    Returns:
        The false-positive rate there; NaN when only one class is present.

    Raises:
        GLocalKDError: flags that are not True/False or 1/0 (:func:`anomaly_flags`).
    """
    y = anomaly_flags(is_anomaly)
    if y.all() or not y.any():
        return math.nan
    fpr, tprs, _ = roc_curve(y, np.asarray(scores, dtype=np.float64))
    return float(fpr[np.searchsorted(tprs, tpr, side="left")])


def roc_points(is_anomaly: Sequence[bool], scores: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The points of the ROC curve, to draw it.

    Args:
        is_anomaly: one flag per graph.
        scores: one score per graph, higher meaning more anomalous.

    Returns:
        (false-positive rates, true-positive rates) at scikit-learn's thresholds; empty arrays
        when only one class is present.

    Raises:
        GLocalKDError: flags that are not True/False or 1/0 (:func:`anomaly_flags`).
    """
    y = anomaly_flags(is_anomaly)
    if y.all() or not y.any():
        return np.zeros(0), np.zeros(0)
    fpr, tpr, _ = roc_curve(y, np.asarray(scores, dtype=np.float64))
    return fpr, tpr


def empirical_p_values(scores: np.ndarray, train_scores: np.ndarray) -> np.ndarray:
    """Each score's p-value against the training scores.

    Args:
        scores: the scores to judge, any shape.
        train_scores: the ``n`` training scores.

    Returns:
        (1 + training scores at least as high) / (n + 1), the shape of ``scores``; NaN for a
        NaN score (:func:`core.data.pvalues.conformal_p_values`, the one formula).

    Raises:
        GLocalKDError: no training score, or one that is not finite.
    """
    return conformal_p_values(train_scores, scores)
