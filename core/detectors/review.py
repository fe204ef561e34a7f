"""The review loop: an analyst marks ranked graphs as anomalous or normal, and the consensus
re-ranks the graphs not yet reviewed, without training anything again.

- Graphs marked **anomalous** weigh the views as known anomalies do
  (:meth:`core.detectors.consensus.Consensus.weigh_views`): view c weighs
  ``max(0, AUC_c - 0.5)``, the ROC-AUC of the marked anomalies against the calibration graphs
  under view c, scaled to a mean of 1; the reserve views count from then on. With fewer than
  three marked anomalies the views weigh what they weighed before the review.
- Graphs marked **normal** join every view's calibration graphs, so the p-values are computed
  against more normal graphs. The graphs an analyst reviews rank high, so they are not a random
  draw of the normal graphs: they raise the calibration's upper tail, which makes the p-values
  more cautious rather than less (measured: research/ranking, docs/results.md).
- The combined statistic of every graph is computed again, and the calibration graphs' own
  statistics (leave-one-out, as the consensus computes them) give each graph its p-value.

:func:`rank_with_marks` is the computation on arrays (every view's scores of the set and of
its calibration graphs); :class:`Review` runs it on a fitted consensus and a scored set.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from core.data.graphset import GraphSet
from core.data.pvalues import conformal_p_values
from core.detectors.consensus import (
    MIN_KNOWN_ANOMALIES,
    combine_p_values,
    leave_one_out_p_values,
    separation_auc,
    view_weights,
)
from core.errors import GLocalKDError


@dataclass
class Reranked:
    """The consensus's view of a reviewed set under the analyst's marks.

    Attributes:
        statistic: every graph's combined statistic (higher = more anomalous), shape (graphs,).
        p_values: every graph's p-value, shape (graphs,).
        weights: each view's weight.
        known_auc: each view's ROC-AUC of the marked anomalies; None while fewer than three are
            marked.
    """

    statistic: np.ndarray
    p_values: np.ndarray
    weights: dict[str, float]
    known_auc: dict[str, float] | None


def rank_with_marks(calibration: Mapping[str, np.ndarray], scores: Mapping[str, np.ndarray],
                    marks: Mapping[int, bool], weights_before: Mapping[str, float]) -> Reranked:
    """Every graph's combined statistic and p-value given the analyst's marks.

    Args:
        calibration: per view, the scores of the consensus's calibration graphs.
        scores: per view, the scores of the reviewed set's graphs (same views, same order of graphs).
        marks: graph index -> True (anomalous) or False (normal).
        weights_before: per view, its weight without marks (``Consensus.weights_now()``: 1 for a
            component, 0 for a reserve view, or the known anomalies' weights).

    Returns:
        The statistic, p-values and weights under the marks (Fisher's rule, weighted).
    """
    views = list(weights_before)
    normal = np.array(sorted(i for i, a in marks.items() if not a), dtype=np.int64)
    anomalous = np.array(sorted(i for i, a in marks.items() if a), dtype=np.int64)
    cal = {v: np.concatenate([np.asarray(calibration[v], dtype=np.float64),
                              np.asarray(scores[v], dtype=np.float64)[normal]]) for v in views}
    known_auc = None
    weights = dict(weights_before)
    if len(anomalous) >= MIN_KNOWN_ANOMALIES:
        known_auc = {v: separation_auc(cal[v], np.asarray(scores[v], dtype=np.float64)[anomalous]) for v in views}
        weighed = view_weights(known_auc)
        if weighed is not None:
            weights = weighed
    used = [v for v in views if weights[v] > 0]
    w = np.array([weights[v] for v in used])
    p = np.column_stack([conformal_p_values(cal[v], np.asarray(scores[v], dtype=np.float64)) for v in used])
    # at the precision the consensus scores at (float32), so that ties compare as the consensus's do
    statistic = combine_p_values(p, "fisher", w).astype(np.float32).astype(np.float64)
    loo = np.column_stack([leave_one_out_p_values(cal[v]) for v in used])
    reference = combine_p_values(loo, "fisher", w).astype(np.float32).astype(np.float64)
    return Reranked(statistic, conformal_p_values(reference, statistic), weights, known_auc)


class Review:
    """An analyst's review of the graphs a fitted consensus scored.

    ``mark(i, True)`` / ``mark(i, False)`` / ``mark(i, None)`` set or clear graph i's mark;
    :meth:`rerank` gives every graph's statistic and p-value under the marks, and :meth:`ranking`
    the unreviewed graphs, most anomalous first. Each view scores the set once, here; the model
    is not changed.

    Args:
        model: a fitted :class:`core.detectors.consensus.Consensus` with Fisher's rule.
        graphs: the scored set to review.

    Raises:
        GLocalKDError: the model is not such a consensus, or not fitted.
    """

    def __init__(self, model, graphs: GraphSet):
        if getattr(model, "name", None) != "consensus" or getattr(model, "rule", None) != "fisher":
            raise GLocalKDError("the review loop re-weighs a consensus's views: train the consensus (the default "
                                "detector) with Fisher's rule")
        model._check_fitted()
        self.weights_before = model.weights_now()
        self.calibration = {v: np.asarray(model.component_calibration_[v], dtype=np.float64)
                            for v in self.weights_before}
        self.scores = {v: model.components_[v].score(graphs).score.astype(np.float64) for v in self.weights_before}
        self.size = len(graphs)
        self.marks: dict[int, bool] = {}

    def mark(self, index: int, anomalous: bool | None) -> None:
        """Mark a graph anomalous or normal, or clear its mark.

        Args:
            index: the graph's index in the reviewed set.
            anomalous: True (anomalous), False (normal) or None (clear the mark).

        Raises:
            GLocalKDError: no graph has that index.
        """
        if not 0 <= int(index) < self.size:
            raise GLocalKDError(f"no graph {index}: the set has {self.size}")
        if anomalous is None:
            self.marks.pop(int(index), None)
        else:
            self.marks[int(index)] = bool(anomalous)

    def rerank(self) -> Reranked:
        """Compute every graph's statistic and p-value under the current marks.

        Returns:
            The :class:`Reranked` view (:func:`rank_with_marks`).
        """
        return rank_with_marks(self.calibration, self.scores, self.marks, self.weights_before)

    def ranking(self) -> np.ndarray:
        """List the graphs not yet marked, most anomalous first under the current marks.

        Returns:
            Their indices (ties: lower index first).
        """
        statistic = self.rerank().statistic
        order = np.argsort(-statistic, kind="stable")
        return order[~np.isin(order, list(self.marks))]
