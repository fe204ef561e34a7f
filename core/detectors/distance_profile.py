"""Distance-profile view: a graph's global shape, as the distribution of its shortest paths.

Every other view reads a graph locally: the WL views its subtrees up to radius 3, the KME view its
nodes' features and their 1- and 2-hop means, the spectral view walks of up to 4 steps, GLocalKD
a 3-layer GCN. None can tell a long chain from a compact ring system of the same parts, a deep
discussion thread from a star of replies, or an elongated protein fold from a globular one. The
shortest-path kernel (Borgwardt and Kriegel, ICDM 2005) compares graphs by their distances for
that reason. This view embeds each graph as two distributions, each a share over fixed bins: the
lengths of the shortest paths from each source node to every other node (unreachable pairs in a
bin of their own), and each source node's eccentricity (its largest finite distance). Both are
shares, so the view reads shape, not size (graph size is a view of its own). LESINN scores the
standardised vector. Node features are not read.

Settings, fixed before the first measurement (research/README.md, "The distance-profile view"):

- sources: every node of a graph of at most 256 nodes; else 256 nodes evenly spaced in the
  graph's own node order (so a graph's profile depends on that graph alone);
- distance bins: 1, 2, ..., 12, 13-16, 17-24, 25-32, 33 and more, and unreachable (17 bins);
  eccentricity bins: 0, 1, ..., 12, 13-16, 17-24, 25-32, 33 and more (17 bins);
- each column standardised with the training graphs' mean and deviation;
- LESINN: 256 members of 256 graphs, Euclidean distance; seed 0.
"""
from __future__ import annotations

import numpy as np

from core.detectors.embedding_view import StandardisedView
from core.detectors.node_signals import NodeBatch

MAX_SOURCES = 256
# lower edges of the bins: 1..12 one by one, then 13-16, 17-24, 25-32, 33 and more
DISTANCE_EDGES = np.array([*range(1, 14), 17, 25, 33], dtype=np.float64)
ECCENTRICITY_EDGES = np.r_[0.0, DISTANCE_EDGES]
WIDTH = (len(DISTANCE_EDGES) + 1) + len(ECCENTRICITY_EDGES)  # distance bins, unreachable, eccentricity bins


def sources(n: int, most: int = MAX_SOURCES) -> np.ndarray:
    """Choose the source nodes of a graph's profile: all of them, or ``most`` evenly spaced ones.

    Args:
        n: the graph's node count.
        most: the largest number of sources.

    Returns:
        Sorted node numbers of the graph, at most ``most`` of them.
    """
    if n <= most:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, most).round().astype(np.int64))


def distance_profile(adjacency, most: int = MAX_SOURCES) -> np.ndarray:
    """Describe one graph's shape: shares of its shortest-path lengths and of its eccentricities.

    Args:
        adjacency: the graph's (n, n) sparse adjacency matrix, symmetric, no weights read.
        most: the largest number of source nodes (:func:`sources`).

    Returns:
        Shape (:data:`WIDTH`,): the shares of the (source, other node) pairs in each distance bin
        and unreachable, then the shares of the sources in each eccentricity bin; zeros for a
        graph without nodes, and zero distance shares for a graph of one node.
    """
    from scipy.sparse.csgraph import shortest_path

    n = adjacency.shape[0]
    out = np.zeros(WIDTH)
    if n == 0:
        return out
    src = sources(n, most)
    dist = shortest_path(adjacency, method="D", directed=False, unweighted=True, indices=src)
    dist[np.arange(len(src)), src] = np.nan  # a node's distance to itself is no pair
    finite = np.isfinite(dist)
    n_dist = len(DISTANCE_EDGES)
    if n > 1:
        pairs = len(src) * (n - 1)
        bins = np.searchsorted(DISTANCE_EDGES, dist[finite], side="right") - 1
        out[:n_dist] = np.bincount(bins, minlength=n_dist) / pairs
        out[n_dist] = np.sum(np.isinf(dist)) / pairs
    eccentricity = np.where(finite, dist, 0.0).max(axis=1) if n > 1 else np.zeros(1)
    bins = np.searchsorted(ECCENTRICITY_EDGES, eccentricity, side="right") - 1
    out[n_dist + 1:] = np.bincount(bins, minlength=len(ECCENTRICITY_EDGES)) / len(src)
    return out


def distance_profiles(batch: NodeBatch, most: int = MAX_SOURCES) -> np.ndarray:
    """Give every graph of a batch its :func:`distance_profile`.

    Args:
        batch: the graphs' nodes and edges.
        most: the largest number of source nodes per graph.

    Returns:
        Shape (graphs, :data:`WIDTH`).
    """
    from scipy import sparse

    n = len(batch.graph)
    adjacency = sparse.csr_matrix((np.ones(len(batch.src)), (batch.src, batch.dst)), shape=(n, n))
    starts = np.searchsorted(batch.graph, np.arange(batch.n_graphs + 1))  # nodes lie graph by graph
    return np.stack([distance_profile(adjacency[a:b, a:b], most) for a, b in zip(starts[:-1], starts[1:])]) \
        if batch.n_graphs else np.zeros((0, WIDTH))


class DistanceProfile(StandardisedView):
    """Shares of each graph's shortest-path lengths and eccentricities, standardised, scored by LESINN.

    Fitted state beside the base's: ``mean_``, ``std_`` (of the training graphs' profiles).

    Args:
        ensemble_size: LESINN's members.
        subsample_size: LESINN's graphs per member.
        seed: the seed of LESINN.
    """

    name = "distance-lesinn"
    features = "auto"  # the base's node-feature schema; this view reads no features

    def __init__(self, ensemble_size: int = 256, subsample_size: int = 256, seed: int = 0):
        self.ensemble_size = ensemble_size
        self.subsample_size = subsample_size
        self.seed = seed

    def _raw(self, batch: NodeBatch) -> np.ndarray:
        return distance_profiles(batch)
