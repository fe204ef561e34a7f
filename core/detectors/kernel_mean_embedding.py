"""Node-attribute distribution view: each graph as the kernel mean embedding of its nodes.

A graph is the distribution of its nodes' features, each node described by its own features
and their means over its 1- and 2-hop neighbourhoods; that distribution is embedded by random
Fourier features of a Gaussian kernel (Rahimi and Recht 2007): the graph's embedding is the
mean of its nodes' features, an estimate of the kernel mean embedding, and the distance between
two graphs estimates the maximum mean discrepancy of their node distributions. LESINN scores
the embeddings. This is the core of LGKDE (arXiv 2505.21285) without its training; it is the
only view that reads the continuous node attributes of ENZYMES and PROTEINS_full as a
distribution.

Settings, fixed before the first measurement (docs/results.md):

- node features: the schema of the training graphs (``features="auto"``: attributes and
  one-hot labels of TU graphs, RDKit atom features of molecules, one-hot degree of plain graphs);
- ``hops=2``: a node is ``[x, m1, m2]``, where ``m1`` is the mean of ``x`` over the node and
  its neighbours and ``m2`` the same mean of ``m1``; the columns are then standardised with
  the training nodes' means and deviations;
- ``n_features=512`` random Fourier features ``sqrt(2 / D) cos(h W / sigma + b)``,
  ``W ~ N(0, 1)``, ``b ~ U(0, 2 pi)``; the bandwidth ``sigma`` is the median distance between
  1,000 pairs of training nodes drawn at random;
- LESINN: 256 members of 256 graphs, Euclidean distance; seed 0.
"""
from __future__ import annotations

import numpy as np

from core.data.graphset import GraphSet
from core.detectors.base import COUNT, is_count
from core.detectors.embedding_view import EmbeddingView
from core.detectors.node_signals import NodeBatch, column_scale, node_batch

BANDWIDTH_PAIRS = 1000  # pairs of training nodes whose median distance sets the kernel's bandwidth


def propagated(batch: NodeBatch, hops: int) -> np.ndarray:
    """Describe each node by its features and their neighbourhood means, ``hops`` times over.

    Each hop takes the mean over the node and its neighbours of the previous hop's columns.

    Args:
        batch: the graphs' nodes (:func:`core.detectors.node_signals.node_batch`).
        hops: how many times the means are taken.

    Returns:
        Shape (nodes, features * (hops + 1)): ``[x, m1, ..., m_hops]``.
    """
    deg = batch.degree + 1.0
    h, parts = batch.x, [batch.x]
    for _ in range(hops):
        h = (h + batch.neighbour_sum(h)) / deg[:, None]
        parts.append(h)
    return np.concatenate(parts, axis=1)


class KernelMeanEmbedding(EmbeddingView):
    """Random-Fourier kernel mean embedding of each graph's (propagated) node features, scored by LESINN.

    Fitted state beside the base's: ``mean_``, ``std_`` (node columns), ``weights_``, ``offsets_``
    (the random features, bandwidth included).

    Args:
        hops: neighbourhood means per node (:func:`propagated`).
        n_features: random Fourier features.
        ensemble_size: LESINN's members.
        subsample_size: LESINN's graphs per member.
        features: the node-feature recipe (:class:`core.data.features.FeatureSchema`).
        seed: the seed of the random features, the bandwidth's pairs and LESINN.
    """

    name = "kme-lesinn"
    FITTED = EmbeddingView.FITTED + ("mean_", "std_", "weights_", "offsets_")

    def __init__(self, hops: int = 2, n_features: int = 512, ensemble_size: int = 256, subsample_size: int = 256,
                 features: str = "auto", seed: int = 0):
        self.hops = hops
        self.n_features = n_features
        self.ensemble_size = ensemble_size
        self.subsample_size = subsample_size
        self.features = features
        self.seed = seed

    def validate_params(self) -> None:
        """Check that ``hops`` is 0 or more and ``n_features`` at least 1.

        Raises:
            ParameterError: naming each that breaks its rule (:meth:`check_settings`).
        """
        self.check_settings({"hops": (is_count(self.hops, 0), "a whole number of at least 0"),
                             "n_features": (is_count(self.n_features), COUNT)})

    def _fit_embedding(self, graphs: GraphSet) -> None:
        nodes = propagated(node_batch(graphs, self.schema_), self.hops)
        self.mean_, self.std_ = column_scale(nodes)
        nodes = (nodes - self.mean_) / self.std_
        rng = np.random.default_rng([self.seed, 1])
        if len(nodes) > 1:
            a, b = rng.integers(0, len(nodes), BANDWIDTH_PAIRS), rng.integers(0, len(nodes), BANDWIDTH_PAIRS)
            distances = np.linalg.norm(nodes[a] - nodes[b], axis=1)
            distances = distances[distances > 0]
            sigma = float(np.median(distances)) if len(distances) else 1.0
        else:
            sigma = 1.0
        self.weights_ = rng.standard_normal((nodes.shape[1], self.n_features)) / sigma
        self.offsets_ = rng.uniform(0.0, 2.0 * np.pi, self.n_features)

    def _embed(self, batch: NodeBatch) -> np.ndarray:
        nodes = (propagated(batch, self.hops) - self.mean_) / self.std_
        features = np.sqrt(2.0 / self.n_features) * np.cos(_row_products(nodes, self.weights_) + self.offsets_)
        return batch.per_graph_mean(features)


def _row_products(rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``rows @ weights``, each row's product the same whatever rows are beside it: a lone row (a
    graph of one node scored alone) took BLAS's matrix-vector path, which rounds otherwise (2.8e-16
    where its batch gave 0.0, a graph's distance to its own copy among the training graphs)."""
    if rows.shape[0] == 1:
        return (np.vstack([rows, rows]) @ weights)[:1]
    return rows @ weights
