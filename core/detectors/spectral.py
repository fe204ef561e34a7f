"""Spectral view: how smooth each node-feature channel is over the graph, and the shape of its
Laplacian's spectrum.

For the normalised Laplacian ``L = I - D^-1/2 A D^-1/2`` of a graph (an isolated node's row is
zero) and each channel ``x`` of its node features, the Rayleigh quotient
``x' L x / x' x`` says how much the channel varies between neighbours (0: constant over each
component; up to 2: alternating); RQGNN (ICLR 2024) and GLADMamba read anomalies from it. The
spectral moments ``tr(L^k) / n``, k = 1..4, are the coefficients of the heat trace's Taylor
series (``tr exp(-tL) = sum_k (-t)^k tr(L^k) / k!``): the density of the Laplacian's spectrum
without an eigendecomposition. LESINN scores the standardised vector.

Settings, fixed before the first measurement (docs/results.md):

- node features: the schema of the training graphs (``features="auto"``), unscaled (the
  quotient does not depend on a channel's scale); a channel that is zero on every node of a
  graph has quotient 0;
- the quotients of every channel, then the four moments; each column standardised with the
  training graphs' mean and deviation;
- LESINN: 256 members of 256 graphs, Euclidean distance; seed 0.
"""
from __future__ import annotations

import numpy as np

from core.detectors.embedding_view import StandardisedView
from core.detectors.node_signals import NodeBatch

MOMENTS = 4


def rayleigh_quotients(batch: NodeBatch) -> np.ndarray:
    """Measure how much each node-feature channel varies between neighbours: its Rayleigh quotient.

    Args:
        batch: the graphs' nodes and edges.

    Returns:
        Shape (graphs, channels): ``x' L x / x' x`` of each channel of each graph, for the
        normalised Laplacian L; 0 for a channel that is zero on every node.
    """
    deg = batch.degree
    inv_sqrt = np.where(deg > 0, 1.0 / np.sqrt(np.maximum(deg, 1.0)), 0.0)
    scaled = batch.x * inv_sqrt[:, None]
    diff = scaled[batch.src] - scaled[batch.dst]
    energy = np.zeros((batch.n_graphs, batch.x.shape[1]))
    np.add.at(energy, batch.graph[batch.src], 0.5 * diff * diff)  # each undirected edge is listed twice
    norm = batch.per_graph_sum(batch.x * batch.x)
    return np.divide(energy, norm, out=np.zeros_like(energy), where=norm > 0)


def spectral_moments(batch: NodeBatch, moments: int = MOMENTS) -> np.ndarray:
    """Compute the spectral moments of each graph's normalised Laplacian from sparse products.

    Args:
        batch: the graphs' nodes and edges.
        moments: how many moments, 4 at most.

    Returns:
        Shape (graphs, moments): ``tr(L^k) / n`` for k = 1..``moments``.
    """
    from scipy import sparse

    n = len(batch.x)
    deg = batch.degree
    inv_sqrt = np.where(deg > 0, 1.0 / np.sqrt(np.maximum(deg, 1.0)), 0.0)
    off = sparse.csr_matrix((-inv_sqrt[batch.src] * inv_sqrt[batch.dst], (batch.src, batch.dst)), shape=(n, n))
    lap = (sparse.diags((deg > 0).astype(np.float64)) + off).tocsr()
    lap.sort_indices()
    square = (lap @ lap).tocsr()
    square.sort_indices()
    diagonals = [np.asarray(lap.diagonal()),                                  # tr L
                 np.asarray(lap.multiply(lap).sum(axis=1)).ravel(),           # tr L^2 (L symmetric)
                 np.asarray(square.multiply(lap).sum(axis=1)).ravel(),        # tr L^3
                 np.asarray(square.multiply(square).sum(axis=1)).ravel()]     # tr L^4
    per_node = np.column_stack(diagonals[:moments])
    return batch.per_graph_mean(per_node)


class SpectralView(StandardisedView):
    """Rayleigh quotients and spectral moments of each graph, standardised, scored by LESINN.

    The quotients are those of the node-feature channels on the normalised Laplacian. Fitted
    state beside the base's: ``mean_``, ``std_`` (of the training graphs' vectors).

    Args:
        ensemble_size: LESINN's members.
        subsample_size: LESINN's graphs per member.
        features: the node-feature recipe (:class:`core.data.features.FeatureSchema`).
        seed: the seed of LESINN.
    """

    name = "spectral-lesinn"

    def __init__(self, ensemble_size: int = 256, subsample_size: int = 256, features: str = "auto", seed: int = 0):
        self.ensemble_size = ensemble_size
        self.subsample_size = subsample_size
        self.features = features
        self.seed = seed

    def _raw(self, batch: NodeBatch) -> np.ndarray:
        return np.concatenate([rayleigh_quotients(batch), spectral_moments(batch)], axis=1)
