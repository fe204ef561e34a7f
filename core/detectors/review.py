"""The review loop: an analyst marks ranked graphs as anomalous or normal, and the consensus
re-ranks the graphs not yet reviewed, without training anything again.

- Graphs marked **anomalous** weigh the views as known anomalies do
  (:meth:`core.detectors.consensus.Consensus.weigh_views`): view c weighs
  ``max(0, AUC_c - 0.5)``, the ROC-AUC of the marked anomalies against the calibration graphs
  under view c, scaled to a mean of 1; the reserve views count from then on. With fewer than
  three marked anomalies the views weigh what they weighed before the review. Marks train no
  classifier view; a model's own, trained by known anomalies, joins as in the consensus.
- Graphs marked **normal** join every view's calibration graphs, so the p-values are computed
  against more normal graphs. The graphs an analyst reviews rank high, so they are not a random
  draw of the normal graphs: they raise the calibration's upper tail, which makes the p-values
  more cautious rather than less (measured: research/ranking, docs/results.md).
- The combined statistic of every graph is computed again, and the calibration graphs' own
  statistics (leave-one-out, as the consensus computes them) give each graph its p-value.
- Optionally (``Review(..., similarity=True)``; off by default: measured, it did not pass its
  rule, research/README.md), once a graph is marked anomalous, a **similarity view** adds evidence
  of a new kind: a graph near a marked anomaly and far from every graph marked normal is suspect.
  Its statistic is
  ``max_a k(x, a) - max_n k(x, n)`` (``k``: the consensus's cosine-normalised WL subtree kernel;
  ``a`` the marked anomalies, ``n`` the graphs marked normal, an empty maximum counting 0), its
  p-value is calibrated on the WL component's training graphs (normal graphs the statistic does
  not depend on), and a graph's final statistic is Fisher's ``-2 log p`` of the consensus's
  p-value plus that of the similarity p-value; its p-value is the chi-square (4 degrees of
  freedom) tail of that sum. A graph's statistic depends on itself, the marks and the model,
  never on the other unmarked graphs of the set. Measured by the simulated analyst on the 14
  benchmark rows it found fewer anomalies in 30 reviews than the views' weights alone
  (docs/results.md), so the review loop leaves it out unless asked.
- Optionally (``Review(..., classifier=True)``; off by default: measured, it did not pass its
  rule, research/README.md), once a graph is marked anomalous, a **classifier view** learns from
  the marks: a class-balanced logistic regression (``C=1``) on the cosine-normalised WL subtree
  features tells the graphs marked anomalous from the graphs marked normal and the WL
  component's training graphs. Its statistic is the decision value; its p-value is conformal
  against the training graphs' out-of-fold decision values (5 folds, so no reference graph is
  scored by a classifier trained on it), joined to the consensus's p-value by Fisher's rule as
  the similarity view's is. A graph's statistic depends on itself, the marks and the model.
  Measured by the simulated analyst it found 0.34 more anomalies in 30 reviews (SE 0.56) and
  ranked the unreviewed rest 0.016 lower (SE 0.015) than the current loop (docs/results.md).

:func:`rank_with_marks` is the computation on arrays (every view's scores of the set and of
its calibration graphs, and the kernel of :class:`KernelColumns`); :class:`Review` runs it on a
fitted consensus and a scored set; :func:`apply_marks` puts saved marks on a :class:`Review`.
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
    fisher_two_statistic,
    leave_one_out_p_values,
    separation_auc,
    view_weights,
)
from core.detectors.known_classifier import CLASSIFIER_VIEW, cross_fitted, unit_rows
from core.detectors.wl_features import shared_transforms
from core.errors import GLocalKDError

SIMILARITY_VIEWS = ("wl-lesinn", "wl-count-lesinn")  # the components whose WL features the similarity view reads


@dataclass
class Reranked:
    """The consensus's view of a reviewed set under the analyst's marks.

    Attributes:
        statistic: every graph's combined statistic (higher = more anomalous), shape (graphs,).
        p_values: every graph's p-value, shape (graphs,).
        weights: each view's weight.
        known_auc: each view's ROC-AUC of the marked anomalies; None while fewer than three are
            marked.
        similarity_p: the similarity view's p-value per graph, when it is used.
        classifier_p: the classifier view's p-value per graph, when it is used.
    """

    statistic: np.ndarray
    p_values: np.ndarray
    weights: dict[str, float]
    known_auc: dict[str, float] | None
    similarity_p: np.ndarray | None = None
    classifier_p: np.ndarray | None = None


class KernelColumns:
    """The cosine-normalised kernel between a set's graphs and some of them, and between
    reference graphs and those, from feature vectors (sparse or dense rows).

    Args:
        features: the set's feature vectors, one row per graph.
        squares: each set graph's squared norm (features outside the vocabulary included).
        reference_features: the reference graphs' feature vectors (same columns).
        reference_squares: their squared norms.
    """

    def __init__(self, features, squares: np.ndarray, reference_features, reference_squares: np.ndarray):
        self.features = features
        self.squares = np.asarray(squares, dtype=np.float64)
        self.reference_features = reference_features
        self.reference_squares = np.asarray(reference_squares, dtype=np.float64)

    def columns(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The kernel of every set graph and of every reference graph with the set's graphs ``indices``.

        Args:
            indices: positions of graphs in the set.

        Returns:
            ``(set graphs x indices, reference graphs x indices)`` cosine similarities (0 where a
            graph has no features).
        """
        chosen = self.features[np.asarray(indices, dtype=np.int64)]
        chosen_sq = self.squares[np.asarray(indices, dtype=np.int64)]
        return (_cosine(self.features, self.squares, chosen, chosen_sq),
                _cosine(self.reference_features, self.reference_squares, chosen, chosen_sq))


def _cosine(a, a_sq: np.ndarray, b, b_sq: np.ndarray) -> np.ndarray:
    product = a @ b.T
    product = np.asarray(product.toarray() if hasattr(product, "toarray") else product, dtype=np.float64)
    norms = np.sqrt(np.outer(a_sq, b_sq))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norms > 0, product / np.where(norms > 0, norms, 1.0), 0.0)


def similarity_statistic(k: np.ndarray, anomalous: np.ndarray) -> np.ndarray:
    """``max_a k(x, a) - max_n k(x, n)`` per row of ``k`` (an empty maximum counts 0).

    Args:
        k: (graphs, marked graphs) kernel values.
        anomalous: per marked graph (column), whether it is marked anomalous.

    Returns:
        The statistic per graph, rounded to float32 so that equal similarities tie.
    """
    k = np.asarray(k, dtype=np.float64)
    anomalous = np.asarray(anomalous, dtype=bool)
    near_anomaly = k[:, anomalous].max(axis=1) if anomalous.any() else np.zeros(len(k))
    near_normal = k[:, ~anomalous].max(axis=1) if (~anomalous).any() else np.zeros(len(k))
    return (near_anomaly - near_normal).astype(np.float32).astype(np.float64)


def fisher_two(p_first: np.ndarray, p_second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fisher's combination of two p-values per graph and its chi-square (4 degrees of freedom) tail.

    Args:
        p_first: one p-value per graph.
        p_second: another p-value per graph.

    Returns:
        ``(statistic, p_values)``: ``T = -2 log p1 - 2 log p2`` (float32 precision) and
        ``exp(-T/2) (1 + T/2)``, the p-value of T were the two independent.
    """
    t = fisher_two_statistic(p_first, p_second).astype(np.float32).astype(np.float64)
    return t, np.minimum(1.0, np.exp(-t / 2.0) * (1.0 + t / 2.0))


def classifier_view(features: KernelColumns, marks: Mapping[int, bool]) -> tuple[np.ndarray, np.ndarray]:
    """The classifier view: a logistic regression on the cosine-normalised WL features that tells
    the graphs marked anomalous from the graphs marked normal and the reference (normal training)
    graphs, class-balanced.

    Args:
        features: the set's and the reference graphs' WL features (:class:`KernelColumns`).
        marks: graph index -> True (anomalous) or False (normal); at least one anomalous.

    Returns:
        ``(statistic, p_values)`` per set graph: the decision value of the classifier trained on all
        the labelled graphs (float32 precision, so that equal graphs tie), and its conformal p-value
        against the reference graphs' out-of-fold decision values (each scored by a classifier
        trained without it, :data:`core.detectors.known_classifier.CLASSIFIER_FOLDS` folds).

    Raises:
        GLocalKDError: no graph is marked anomalous, or there are fewer than two reference graphs.
    """
    import scipy.sparse as sp

    anomalous = np.array(sorted(i for i, a in marks.items() if a), dtype=np.int64)
    normal = np.array(sorted(i for i, a in marks.items() if not a), dtype=np.int64)
    if len(anomalous) == 0 or features.reference_features.shape[0] < 2:
        raise GLocalKDError("the classifier view needs a graph marked anomalous and two reference graphs")
    x_set = unit_rows(features.features, features.squares)
    stack = sp.vstack if sp.issparse(x_set) else np.vstack
    model, reference = cross_fitted(stack([x_set[anomalous], x_set[normal]]),
                                    np.r_[np.ones(len(anomalous)), np.zeros(len(normal))],
                                    unit_rows(features.reference_features, features.reference_squares))
    statistic = model.decision_function(x_set).astype(np.float32).astype(np.float64)
    return statistic, conformal_p_values(reference, statistic)


def rank_with_marks(calibration: Mapping[str, np.ndarray], scores: Mapping[str, np.ndarray],
                    marks: Mapping[int, bool], weights_before: Mapping[str, float],
                    kernel: KernelColumns | None = None, classifier: KernelColumns | None = None,
                    known: tuple[np.ndarray, np.ndarray] | None = None) -> Reranked:
    """Every graph's combined statistic and p-value given the analyst's marks.

    Args:
        calibration: per view, the scores of the consensus's calibration graphs.
        scores: per view, the scores of the reviewed set's graphs (same views, same order of graphs).
        marks: graph index -> True (anomalous) or False (normal).
        weights_before: per view, its weight without marks (``Consensus.weights_now()``: 1 for a
            component, 0 for a reserve view, or the known anomalies' weights).
        kernel: the WL kernel of the set's graphs and of reference normal graphs with any of the
            set's graphs; None leaves the similarity view out.
        classifier: the WL features of the set's graphs and of reference normal graphs that the
            classifier view (:func:`classifier_view`) learns from; None leaves it out.
        known: the p-values that the consensus's own classifier view (trained by known anomalies,
            :meth:`core.detectors.consensus.Consensus.weigh_views`) gives the set's graphs and its
            calibration graphs; None when it has none. It joins the weighed views as in the
            consensus, so that without marks the statistic and p-values are the model's.

    Returns:
        The statistic, p-values and weights under the marks (Fisher's rule, weighted), with the
        similarity view and the classifier view (each given) once a graph is marked anomalous,
        each joined to the consensus's p-value by :func:`fisher_two`.
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
    if known is not None:  # the model's classifier view joins, calibrated as the consensus does it
        known_set, known_calibration = known
        statistic = fisher_two_statistic(conformal_p_values(reference, statistic), known_set)
        reference = fisher_two_statistic(leave_one_out_p_values(reference),
                                         np.concatenate([known_calibration, known_set[normal]]))
        statistic, reference = (a.astype(np.float32).astype(np.float64) for a in (statistic, reference))
    p_values = conformal_p_values(reference, statistic)
    similarity_p = classifier_p = None
    if kernel is not None and len(anomalous):
        marked = np.array(sorted(marks), dtype=np.int64)
        k_set, k_reference = kernel.columns(marked)
        is_anomalous = np.array([marks[int(i)] for i in marked], dtype=bool)
        similarity_p = conformal_p_values(similarity_statistic(k_reference, is_anomalous),
                                          similarity_statistic(k_set, is_anomalous))
        statistic, p_values = fisher_two(p_values, similarity_p)
    if classifier is not None and len(anomalous):
        _, classifier_p = classifier_view(classifier, marks)
        statistic, p_values = fisher_two(p_values, classifier_p)
    return Reranked(statistic, p_values, weights, known_auc, similarity_p, classifier_p)


class Review:
    """An analyst's review of the graphs a fitted consensus scored.

    ``mark(i, True)`` / ``mark(i, False)`` / ``mark(i, None)`` set or clear graph i's mark;
    :meth:`rerank` gives every graph's statistic and p-value under the marks, and :meth:`ranking`
    the unreviewed graphs, most anomalous first. Each view scores the set once, here (or its
    scores are given: :meth:`from_view_scores`); the model is not changed.

    Args:
        model: a fitted :class:`core.detectors.consensus.Consensus` with Fisher's rule.
        graphs: the scored set to review, in the order the marks index.
        similarity: add the similarity view (nearest marked anomaly against nearest marked normal
            in the WL kernel) to the re-ranking; off by default (it did not pass its rule).
        classifier: add the classifier view (a logistic regression on the WL features, learnt
            from the marks and the WL component's training graphs) to the re-ranking.

    Raises:
        GLocalKDError: the model is not such a consensus, or not fitted.
    """

    def __init__(self, model, graphs: GraphSet, similarity: bool = False, classifier: bool = False):
        from core.detectors.base import as_model_reads

        self._start(model)
        graphs = as_model_reads(model, graphs)  # once, not once per view
        with shared_transforms():  # the WL views, the classifier and the marks' kernel read the same WL features
            self.scores = {v: model.components_[v].score(graphs).score.astype(np.float64) for v in self.weights_before}
            features = similarity_kernel(model, graphs) if similarity or classifier else None
            known = getattr(model, "known_classifier_", None)
            if known is not None:
                self.known = (known.p_values(known.score(graphs).score), self.known[1])
        self.kernel = features if similarity else None
        self.classifier = features if classifier else None
        self.size = len(graphs)

    def _start(self, model) -> None:
        """Check the model and take its views' weights and calibration scores; no marks yet."""
        if getattr(model, "name", None) != "consensus" or getattr(model, "rule", None) != "fisher":
            raise GLocalKDError("the review loop re-weighs a consensus's views: train the consensus (the default "
                                "detector) with Fisher's rule")
        model._check_fitted()
        self.weights_before = model.weights_now()
        self.calibration = {v: np.asarray(model.component_calibration_[v], dtype=np.float64)
                            for v in self.weights_before}
        self.marks: dict[int, bool] = {}
        # the model's classifier view, when known anomalies trained one: its calibration graphs' p-values
        # now, the set's once scored
        known = getattr(model, "known_classifier_", None)
        self.known = None if known is None else (None, known.p_values(known.decisions(*model.calibration_features_)))

    @classmethod
    def from_view_scores(cls, model, view_scores: Mapping[str, np.ndarray], similarity: bool = False,
                         classifier: bool = False) -> Review:
        """The review of a set whose views' raw scores are known already (a ranked report's ``view:``
        columns, :attr:`core.io.ranked_report.RankedReport.view_scores`): no graph is made or scored.

        It re-ranks exactly as ``Review(model, graphs)`` on the graphs those scores are of.

        Args:
            model: a fitted consensus with Fisher's rule, the one that scored the set.
            view_scores: view name -> each graph's raw score under that view, for every view of
                ``model.reported_views()`` (as each view's own ``score`` gives them).
            similarity: must be False: the similarity view reads the graphs.
            classifier: must be False: the classifier view reads the graphs.

        Returns:
            The review, with no marks.

        Raises:
            GLocalKDError: the model is not such a consensus or not fitted, the names are not
                the model's views, the views' arrays differ in length or one holds no score
                (NaN) for a graph, or ``similarity`` or ``classifier`` is asked for.
        """
        if similarity or classifier:
            raise GLocalKDError("the similarity and classifier views read the graphs' WL features: build the "
                                "review from the graphs (Review(model, graphs)) to use them")
        review = cls.__new__(cls)
        review._start(model)
        views = list(review.weights_before) + ([CLASSIFIER_VIEW] if review.known is not None else [])
        if sorted(view_scores) != sorted(views):
            raise GLocalKDError(f"the scores are of the views {sorted(view_scores)}, the model's views are "
                                f"{sorted(views)}: a report scored by another model?")
        scores = {v: np.asarray(view_scores[v], dtype=np.float64) for v in views}
        sizes = {len(a) for a in scores.values()}
        if len(sizes) != 1:
            raise GLocalKDError(f"the views' scores differ in length ({sorted(sizes)})")
        missing = [v for v in views if np.isnan(scores[v]).any()]
        if missing:
            raise GLocalKDError(f"some graphs have no score under the views {missing}")
        if review.known is not None:
            review.known = (model.known_classifier_.p_values(scores.pop(CLASSIFIER_VIEW)), review.known[1])
        review.scores, review.kernel, review.classifier, review.size = scores, None, None, sizes.pop()
        return review

    def mark(self, index: int, anomalous: bool | str | None) -> None:
        """Mark a graph anomalous or normal, or clear its mark.

        Args:
            index: the graph's index in the reviewed set (a whole number, or its text as a JSON
                file keeps it).
            anomalous: True or ``"anomaly"`` (anomalous), False or ``"not anomaly"`` (normal), or
                None (clear the mark).

        Raises:
            GLocalKDError: no graph has that index, or the mark is none of these (nothing changes then).
        """
        i, value = _checked_mark(index, anomalous, self.size)
        if value is None:
            self.marks.pop(i, None)
        else:
            self.marks[i] = value

    def rerank(self) -> Reranked:
        """Compute every graph's statistic and p-value under the current marks.

        Returns:
            The :class:`Reranked` view (:func:`rank_with_marks`).
        """
        return rank_with_marks(self.calibration, self.scores, self.marks, self.weights_before, self.kernel,
                               self.classifier, self.known)

    def ranking(self) -> np.ndarray:
        """List the graphs not yet marked, most anomalous first under the current marks.

        Returns:
            Their indices (ties: lower index first).
        """
        statistic = self.rerank().statistic
        order = np.argsort(-statistic, kind="stable")
        return order[~np.isin(order, list(self.marks))]


def similarity_kernel(model, graphs: GraphSet) -> KernelColumns | None:
    """The WL features of ``graphs`` and of the training graphs of the consensus's first WL view
    (:data:`SIMILARITY_VIEWS`), or None when it has none.

    Args:
        model: a fitted consensus.
        graphs: the reviewed set.

    Returns:
        The kernel the similarity view reads, or None.
    """
    for name in SIMILARITY_VIEWS:
        component = model.components_.get(name)
        kernel = getattr(component, "kernel_", None)
        if kernel is not None and getattr(kernel, "kind", None) == "wl":
            features, squares = kernel.kernel_.transform(kernel.labelled(graphs))
            return KernelColumns(features, squares, kernel.train_features_, kernel.train_squares_)
    return None


MARK_WORDS = {"anomaly": True, "not anomaly": False}


def _checked_mark(key, value, size: int) -> tuple[int, bool | None]:
    """A mark's graph index and verdict, checked: a whole number within the set, and True/False,
    ``"anomaly"``/``"not anomaly"`` or None (never a truthy stand-in such as ``"False"``)."""
    if isinstance(value, str):
        if value not in MARK_WORDS:
            raise GLocalKDError(f"graph {key}: a mark is 'anomaly' or 'not anomaly', not {value!r}")
        value = MARK_WORDS[value]
    elif value is not None and not isinstance(value, (bool, np.bool_)):
        raise GLocalKDError(f"graph {key}: a mark is True, False or None, not {value!r}")
    digits = not isinstance(key, str) or (key.isascii() and key.isdigit())  # int("1_0") and int(" 1") read too
    if isinstance(key, (bool, np.bool_, float, np.floating)) or not digits:
        raise GLocalKDError(f"a marked graph's index must be a whole number, not {key!r}")
    try:
        index = int(key)
    except (TypeError, ValueError):
        raise GLocalKDError(f"a marked graph's index must be a whole number, not {key!r}") from None
    if not 0 <= index < size:
        raise GLocalKDError(f"no graph {key}: the set has {size}")
    return index, None if value is None else bool(value)


def _mark_word(value: bool | None) -> str:
    return "unmarked" if value is None else ("anomaly" if value else "not anomaly")


def apply_marks(review: Review, marks: Mapping) -> Review:
    """Put saved marks on a review, replacing any it has.

    Args:
        review: the review of the graphs the marks were made on.
        marks: graph index (an int, or its text as a JSON file keeps it) -> True or ``"anomaly"``
            (anomalous), False or ``"not anomaly"`` (normal); None clears.

    Returns:
        ``review``, marked.

    Raises:
        GLocalKDError: an index outside the set or a mark that is none of these; the review's
            marks are then as they were.
    """
    checked = [_checked_mark(key, value, review.size) for key, value in marks.items()]  # all, before any changes
    seen: dict[int, bool | None] = {}
    for index, value in checked:  # {1: True, "1": False}: one graph, two verdicts
        if seen.setdefault(index, value) != value:
            raise GLocalKDError(f"graph {index} is marked twice, as {_mark_word(seen[index])} and as {_mark_word(value)}")
    review.marks.clear()
    for index, value in checked:
        if value is not None:
            review.marks[index] = value
    return review
