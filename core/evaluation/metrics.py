"""Detection metrics with the anomalous class as positive (scikit-learn underneath)."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve


def roc_auc(is_anomaly: Sequence[bool], scores: Sequence[float]) -> float:
    """ROC-AUC (the paper's metric); NaN when only one class is present."""
    y = np.asarray(is_anomaly, dtype=bool)
    if y.all() or not y.any():
        return math.nan
    return float(roc_auc_score(y, np.asarray(scores, dtype=np.float64)))


def average_precision(is_anomaly: Sequence[bool], scores: Sequence[float]) -> float:
    y = np.asarray(is_anomaly, dtype=bool)
    if not y.any():
        return math.nan
    return float(average_precision_score(y, np.asarray(scores, dtype=np.float64)))


def fpr_at_tpr(is_anomaly: Sequence[bool], scores: Sequence[float], tpr: float = 0.95) -> float:
    """False-positive rate at the first threshold that reaches the given true-positive rate."""
    y = np.asarray(is_anomaly, dtype=bool)
    if y.all() or not y.any():
        return math.nan
    fpr, tprs, _ = roc_curve(y, np.asarray(scores, dtype=np.float64))
    return float(fpr[np.searchsorted(tprs, tpr, side="left")])
