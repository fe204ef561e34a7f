"""Scores: what scoring a set of graphs returns (graph scores, their two terms, per-node errors)."""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

from core.errors import GLocalKDError


COMPONENT_PREFIX = "component:"  # a consensus's component scores in Scores.parts
WEIGHED_VIEWS_PART = "weighed-views"  # a consensus's part: its weighed views' statistic before the classifier view joins


class NonFiniteScoreError(GLocalKDError):
    """A model gave a graph a NaN or infinite score (see :meth:`Scores.__post_init__`)."""


def score_text(value: float) -> str:
    """Write a score as every report does: six significant digits.

    Args:
        value: the score.

    Returns:
        Its text.
    """
    return f"{value:.6g}"


def written_scores(score: np.ndarray) -> np.ndarray:
    """The scores as a report writes them (:func:`score_text`), as numbers: what every path ranks
    by. A streamed report compares its chunks' written scores, and a merge its shards'; ranked by
    the exact float32, two scores written alike (121.48061 and 121.48052, both ``121.481``) came
    out in one order in a training tab's export and in the other in ``glocalkd screen``'s report.

    Args:
        score: the scores, shape (N,).

    Returns:
        float64, shape (N,).
    """
    return np.array([float(score_text(v)) for v in np.asarray(score).tolist()], dtype=np.float64)


@dataclass
class Scores:
    """Anomaly scores of N graphs; higher means more anomalous.

    ``score = graph_term + lam * node_term``; ``graph_term`` is the squared error between
    the predictor's and the target's max-pooled graph embeddings, ``node_term`` the mean of
    the graph's per-node squared errors. ``node_errors[node_ptr[i]:node_ptr[i+1]]`` are the
    errors of graph i's nodes, in the graph's node order (RDKit atom order for molecules).

    ``parts`` holds GLocalKD's readouts by name, whichever of them the score uses: ``graph``
    (max-pooled embedding error), ``node_mean``, ``node_max`` (largest node error) and
    ``size`` (sum-pooled embedding error over the squared mean training size); the
    evaluation harness measures each of them from one trained model. A consensus adds each
    component's own score as ``component:NAME`` (see :meth:`component_scores`).

    Detectors without node scores (OCGCN, the two-step kernel methods) fill the two terms
    and the node errors with NaN (see :meth:`graph_only`); ``has_node_scores`` tells which.
    """

    score: np.ndarray
    graph_term: np.ndarray
    node_term: np.ndarray
    node_errors: np.ndarray
    node_ptr: np.ndarray
    parts: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Every path from a model to a report row builds a ``Scores``: a NaN or infinite score
        (a model whose weights overflow, e.g. a damaged or edited model file) stops here, so it
        can never be ranked and written as a result."""
        score = np.asarray(self.score)
        bad = np.flatnonzero(~np.isfinite(score))
        if len(bad):
            raise NonFiniteScoreError(
                f"scoring gave {len(bad):,} of {len(score):,} graphs a non-finite score ({score[bad[0]]}, "
                f"first at graph {int(bad[0]) + 1} of the batch): the model overflows on them (features far "
                "outside its training graphs', or a damaged or edited model file); no score was written")

    def component_scores(self) -> dict[str, np.ndarray]:
        """Each component's own score of a consensus.

        Returns:
            Component name (registry names, in the consensus's order) to its scores, shape (N,);
            empty for a single detector's scores.
        """
        return {key[len(COMPONENT_PREFIX):]: value for key, value in self.parts.items()
                if key.startswith(COMPONENT_PREFIX)}

    def __len__(self) -> int:
        return int(self.score.shape[0])

    @staticmethod
    def graph_only(score: np.ndarray, node_ptr: np.ndarray) -> Scores:
        """Scores of a detector that scores whole graphs only: the two terms and the node errors are NaN.

        Args:
            score: one score per graph, shape (N,).
            node_ptr: node offsets of the graphs, shape (N + 1,).

        Returns:
            The scores, float32, with ``has_node_scores`` False.
        """
        score = np.asarray(score, dtype=np.float32)
        node_ptr = np.asarray(node_ptr, dtype=np.int64)
        nan = np.full(len(score), np.nan, dtype=np.float32)
        return Scores(score, nan, nan.copy(), np.full(int(node_ptr[-1]), np.nan, dtype=np.float32), node_ptr)

    @property
    def has_node_scores(self) -> bool:
        """True when the node errors (and the two score terms) are real numbers, not NaN."""
        return bool(len(self.score) == 0 or np.isfinite(self.graph_term).any())

    def node_errors_of(self, i: int) -> np.ndarray:
        """The errors of one graph's nodes.

        Args:
            i: the graph's position (negative counts from the end, as in a list).

        Returns:
            A view of ``node_errors``, one per node in the graph's node order (NaN for a
            detector without node scores).

        Raises:
            IndexError: no graph has that position (-1 gave no nodes at all, as if the last
                graph had none).
        """
        n, i = len(self), operator.index(i)
        if not -n <= i < n:
            raise IndexError(f"position {i} is not one of these {n:,} graphs' scores")
        i %= n
        return self.node_errors[self.node_ptr[i]: self.node_ptr[i + 1]]

    def ranking(self) -> np.ndarray:
        """Rank the graphs from the most to the least anomalous, as every report ranks them.

        Returns:
            Graph indices, shape (N,), by decreasing score as written (:func:`written_scores`;
            scores that are written alike keep input order).
        """
        return np.argsort(-written_scores(self.score), kind="stable")

    def top_nodes(self, i: int, k: int = 5) -> list[tuple[int, float]]:
        """The nodes of one graph with the largest errors.

        Args:
            i: the graph's position.
            k: how many nodes at most (default 5).

        Returns:
            (node index, error) pairs, largest error first (ties in node order); empty without
            node scores.
        """
        if not self.has_node_scores:
            return []
        errors = self.node_errors_of(i)
        order = np.argsort(-errors, kind="stable")[:k]
        return [(int(j), float(errors[j])) for j in order]

    @staticmethod
    def concat(parts: list[Scores]) -> Scores:
        """Join the scores of consecutive batches into one.

        Args:
            parts: the batches' scores, in order.

        Returns:
            One ``Scores`` with node offsets shifted to match; ``parts`` keeps only the readouts
            every batch has. An empty list gives empty scores.
        """
        if not parts:
            empty = np.zeros(0, dtype=np.float32)
            return Scores(empty, empty, empty, empty, np.zeros(1, dtype=np.int64))
        offsets = np.cumsum([0] + [p.node_ptr[-1] for p in parts[:-1]])
        return Scores(
            score=np.concatenate([p.score for p in parts]),
            graph_term=np.concatenate([p.graph_term for p in parts]),
            node_term=np.concatenate([p.node_term for p in parts]),
            node_errors=np.concatenate([p.node_errors for p in parts]),
            node_ptr=np.concatenate([[0]] + [p.node_ptr[1:] + o for p, o in zip(parts, offsets)]).astype(np.int64),
            parts={k: np.concatenate([p.parts[k] for p in parts]) for k in set.intersection(
                *(set(p.parts) for p in parts))},
        )


READOUT_PARTS = frozenset({"graph", "node_mean", "node_max", "size"})  # what combine_readouts needs
READOUTS: dict[str, tuple[bool, bool]] = {  # name -> (node_max, size_term)
    "paper": (False, False), "node_max": (True, False), "size": (False, True), "node_max+size": (True, True)}


def combine_readouts(parts: dict[str, np.ndarray], lam: float, node_max: bool, size_term: bool) -> np.ndarray:
    """A GLocalKD score from its named readouts (see :class:`Scores`).

    Args:
        parts: the readouts by name (``READOUT_PARTS``), one value per graph.
        lam: the weight of the node term.
        node_max: add the largest node error to the node term (mean node error).
        size_term: add the size term to the graph term.

    Returns:
        graph term (+ size) + ``lam`` * (mean node error (+ largest node error)), per graph.
    """
    graph = parts["graph"] + (parts["size"] if size_term else 0.0)
    node = parts["node_mean"] + (parts["node_max"] if node_max else 0.0)
    return graph + lam * node


def checked_rank(count: int, rank: np.ndarray | None = None) -> np.ndarray:
    """One rank per row (1 = top): ``rank`` checked, or the rows' own order (1 to ``count``) when None.

    Args:
        count: how many rows.
        rank: each row's rank, e.g. an analyst's review's, or None.

    Returns:
        The ranks, shape (count,).

    Raises:
        ValueError: ``rank`` does not hold one rank per row.
    """
    if rank is None:
        return np.arange(1, count + 1, dtype=np.int64)
    rank = np.asarray(rank, dtype=np.int64)
    if rank.shape != (count,):
        raise ValueError(f"{rank.size} ranks for {count} rows")
    return rank


def ranking_of(scores: Scores, rank: np.ndarray | None = None) -> np.ndarray:
    """Graph indices in rank order, top first: by ``rank`` when given (e.g. an analyst's review's),
    else by the scores (:meth:`Scores.ranking`).

    Args:
        scores: the graphs' scores.
        rank: each graph's rank (1 = top), or None.

    Returns:
        The graph indices, top first.

    Raises:
        ValueError: ``rank`` does not hold one rank per graph.
    """
    if rank is None:
        return scores.ranking()
    return np.argsort(checked_rank(len(scores), rank), kind="stable")
