"""Detection metrics with the anomalous class as positive (scikit-learn underneath)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve


def roc_auc(is_anomaly: Sequence[bool], scores: Sequence[float]) -> float:
    """ROC-AUC with the anomalous class as positive (the paper's metric).

    Args:
        is_anomaly: one flag per graph.
        scores: one score per graph, higher meaning more anomalous.

    Returns:
        The area under the ROC curve; NaN when only one class is present.
    """
    y = np.asarray(is_anomaly, dtype=bool)
    if y.all() or not y.any():
        return math.nan
    return float(roc_auc_score(y, np.asarray(scores, dtype=np.float64)))


def average_precision(is_anomaly: Sequence[bool], scores: Sequence[float]) -> float:
    """Average precision with the anomalous class as positive.

    Args:
        is_anomaly: one flag per graph.
        scores: one score per graph, higher meaning more anomalous.

    Returns:
        scikit-learn's average precision; NaN when there is no anomaly.
    """
    y = np.asarray(is_anomaly, dtype=bool)
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
    """
    y = np.asarray(is_anomaly, dtype=bool)
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
    """
    y = np.asarray(is_anomaly, dtype=bool)
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
        (1 + training scores at least as high) / (n + 1), the shape of ``scores``.
    """
    train = np.sort(np.asarray(train_scores, dtype=np.float64))
    above = len(train) - np.searchsorted(train, np.asarray(scores, dtype=np.float64), side="left")
    return (1.0 + above) / (len(train) + 1.0)
