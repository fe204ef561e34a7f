"""Graphlet view: how a graph closes into small cycles, as the shares of its 3- and 4-node graphlets.

The 1-dimensional Weisfeiler-Leman test bounds what the WL views read and what a message-passing
GCN such as GLocalKD can tell apart, and it cannot count triangles or 4-cycles (Chen et al.,
NeurIPS 2020); graph size counts nodes and edges. So no other view of the default sees the
cliques of an ego network, the triangles of a protein's contact map or a molecule's fused rings
against a chain of the same atoms. The graphlet kernel (Shervashidze et al., AISTATS 2009)
compares graphs by exactly these counts. This view embeds each graph as the shares of its
connected induced 3-node graphlets (open path, triangle) and, apart, of its connected induced
4-node graphlets (path, star, 4-cycle, tailed triangle, diamond, 4-clique), counted exactly: the
non-induced counts come from degrees, each edge's triangles, each node pair's common neighbours
and the 4-cliques on each edge, and the induced counts from the standard relations between the
two. Shares, so the view reads how a graph closes, not its size (graph size is a view of its
own). LESINN scores the standardised vector. Node features are not read.

Settings, fixed before the first measurement (research/README.md, "The graphlet view"):

- the 2 + 6 shares above, zeros where a graph has no connected graphlet of a size;
- each column standardised with the training graphs' mean and deviation;
- LESINN: 256 members of 256 graphs, Euclidean distance; seed 0.
"""
from __future__ import annotations

import numpy as np

from core.detectors.embedding_view import StandardisedView
from core.detectors.node_signals import NodeBatch

THREE = ("path3", "triangle")
FOUR = ("path4", "star", "cycle4", "tailed_triangle", "diamond", "clique4")
WIDTH = len(THREE) + len(FOUR)
# How many times each induced 4-node graphlet (columns, in FOUR's order) holds each non-induced
# one (rows, in FOUR's order): a diamond holds 6 paths, 2 stars, 1 cycle, 4 tailed triangles and
# itself; a 4-clique 12 paths, 4 stars, 3 cycles, 12 tailed triangles, 6 diamonds and itself.
_HOLDS = np.array([[1, 0, 4, 2, 6, 12],
                   [0, 1, 0, 1, 2, 4],
                   [0, 0, 1, 0, 1, 3],
                   [0, 0, 0, 1, 4, 12],
                   [0, 0, 0, 0, 1, 6],
                   [0, 0, 0, 0, 0, 1]], dtype=np.float64)


def _simple(adjacency):
    """The adjacency as a simple graph: symmetric, 0/1, no loops, int64 (counts overflow int32)."""
    from scipy import sparse

    a = sparse.csr_matrix(adjacency, dtype=np.int64)
    a = ((a + a.T) > 0).astype(np.int64).tocsr()
    a.setdiag(0)
    a.eliminate_zeros()
    return a


def _cliques4(a, rows: np.ndarray, cols: np.ndarray, common: np.ndarray) -> int:
    """4-cliques: on each edge with two or more common neighbours, the edges among them; each
    4-clique is seen from its 6 edges."""
    seen = 0
    for u, v in zip(rows[common >= 2], cols[common >= 2]):
        shared = np.intersect1d(a.indices[a.indptr[u]:a.indptr[u + 1]], a.indices[a.indptr[v]:a.indptr[v + 1]],
                                assume_unique=True)
        seen += a[shared][:, shared].nnz // 2
    return seen // 6


def graphlet_counts(adjacency) -> np.ndarray:
    """Count one graph's connected induced 3- and 4-node graphlets, exactly.

    Args:
        adjacency: the graph's (n, n) sparse adjacency matrix; weights, direction and loops are
            not read.

    Returns:
        Shape (:data:`WIDTH`,): the counts in the order of :data:`THREE` then :data:`FOUR`.
    """
    a = _simple(adjacency)
    if a.shape[0] < 3 or a.nnz == 0:
        return np.zeros(WIDTH)
    degree = np.asarray(a.sum(axis=1)).ravel()
    square = (a @ a).tocsr()  # common neighbours of each node pair (the diagonal: the degrees)
    edges = a.tocoo()
    keep = edges.row < edges.col
    rows, cols = edges.row[keep], edges.col[keep]  # each edge once
    common = np.asarray(square[rows, cols]).ravel()  # each edge's triangles
    triangles = common.sum() / 3
    wedges = (degree * (degree - 1) // 2).sum()
    at_node = np.bincount(rows, weights=common, minlength=a.shape[0]) + np.bincount(cols, weights=common,
                                                                                 minlength=a.shape[0])
    at_node = at_node / 2  # each node's triangles
    pairs = square.tocoo()
    off = pairs.row < pairs.col
    shared = pairs.data[off]
    non_induced = np.array([
        ((degree[rows] - 1) * (degree[cols] - 1)).sum() - 3 * triangles,  # paths of 3 edges
        (degree * (degree - 1) * (degree - 2) // 6).sum(),  # stars of 3 edges
        (shared * (shared - 1) // 2).sum() / 2,  # 4-cycles: each seen from its 2 diagonals
        (at_node * (degree - 2)).sum(),  # a triangle with an edge hanging off one corner
        (common * (common - 1) // 2).sum(),  # two triangles on one edge
        _cliques4(a, rows, cols, common),
    ], dtype=np.float64)
    induced = np.linalg.solve(_HOLDS, non_induced)
    return np.r_[wedges - 3 * triangles, triangles, np.round(induced)]


def graphlet_shares(counts: np.ndarray) -> np.ndarray:
    """Turn graphlet counts into shares, the 3-node ones and the 4-node ones apart.

    Args:
        counts: shape (..., :data:`WIDTH`), as :func:`graphlet_counts` gives them.

    Returns:
        The same shape: each size's counts over their sum, zeros where a size has none.
    """
    out = np.zeros_like(counts, dtype=np.float64)
    for part in (slice(0, len(THREE)), slice(len(THREE), WIDTH)):
        total = counts[..., part].sum(axis=-1, keepdims=True)
        np.divide(counts[..., part], total, out=out[..., part], where=total > 0)
    return out


def graphlet_profiles(batch: NodeBatch) -> np.ndarray:
    """Give every graph of a batch its graphlet shares.

    Args:
        batch: the graphs' nodes and edges.

    Returns:
        Shape (graphs, :data:`WIDTH`).
    """
    from scipy import sparse

    n = len(batch.graph)
    adjacency = sparse.csr_matrix((np.ones(len(batch.src)), (batch.src, batch.dst)), shape=(n, n))
    starts = np.searchsorted(batch.graph, np.arange(batch.n_graphs + 1))  # nodes lie graph by graph
    if not batch.n_graphs:
        return np.zeros((0, WIDTH))
    return graphlet_shares(np.stack([graphlet_counts(adjacency[a:b, a:b]) for a, b in zip(starts[:-1], starts[1:])]))


class GraphletView(StandardisedView):
    """Shares of each graph's connected 3- and 4-node graphlets, standardised, scored by LESINN.

    Fitted state beside the base's: ``mean_``, ``std_`` (of the training graphs' shares).

    Args:
        ensemble_size: LESINN's members.
        subsample_size: LESINN's graphs per member.
        seed: the seed of LESINN.
    """

    name = "graphlet-lesinn"
    features = "auto"  # the base's node-feature schema; this view reads no features

    def __init__(self, ensemble_size: int = 256, subsample_size: int = 256, seed: int = 0):
        self.ensemble_size = ensemble_size
        self.subsample_size = subsample_size
        self.seed = seed

    def _raw(self, batch: NodeBatch) -> np.ndarray:
        return graphlet_profiles(batch)
