"""Propagation-kernel features (Neumann et al., 2016) exactly as GraKeL computes them, done sparse.

The GLocalKD paper takes its PK baselines from GraKeL's ``Propagation`` kernel. GraKeL builds a
dense n x n transition matrix per graph and a dense (all nodes x all labels) label-distribution
matrix, then propagates graph by graph with dense products: on REDDIT-BINARY (graphs of up to
3,782 nodes, node degrees as labels) one fold took 7.8 GB and well over an hour. Here the same
algorithm runs on one sparse block-diagonal transition matrix and a sparse label-distribution
matrix, and counts hashes with numpy: same random directions (GraKeL's draws from the same
seed), same label enumeration, same hashing, so the same features up to floating-point
summation order inside the products (a hash can only move when a value sits within rounding
error of a bin edge).

New graphs whose nodes carry labels no training graph has follow GraKeL's own rules so that
kernels stay comparable with the paper's tool:

- such nodes (at step 0) and nodes whose distribution puts mass on *every* new label (later
  steps) are hashed with fresh random directions; their hashes never match a training hash,
  so they only add to the graph's own norm;
- the other nodes are hashed on their distribution over the training labels alone;
- GraKeL counts a graph's hashes over node positions ``start..end`` inclusive, so the first
  node of the next graph also counts for this one. Kept, because it is what GraKeL computes.

One deliberate difference: GraKeL draws the fresh directions from wherever its random state
was left, so calling its ``transform`` twice can give two answers. Here every ``transform``
starts from the state ``fit`` left, which is the same as GraKeL's first call after fitting.
"""
from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

Graph = tuple[np.ndarray, np.ndarray]
"""One graph: its (2, E) edge index and its (n,) integer node labels."""


class PropagationFeatures:
    """Hashed label-distribution counts per propagation step, over the training graphs' hashes.

    ``fit`` and ``transform`` return a sparse (graphs x training hashes) count matrix and each
    graph's squared norm over *all* its hashes (seen in training or not), which is GraKeL's
    k(x, x) before normalisation.

    Args:
        t_max: propagation steps (GraKeL's default 5).
        bin_width: the hash's bin width (GraKeL's default 0.01).
        seed: the seed of the random hashing directions.
    """

    def __init__(self, t_max: int = 5, bin_width: float = 0.01, seed: int = 0):
        self.t_max = t_max
        self.bin_width = bin_width
        self.seed = seed

    def fit(self, graphs: Sequence[Graph]) -> tuple[sp.csr_matrix, np.ndarray]:
        """Enumerate the labels, draw the hashing directions and hash the training graphs.

        Args:
            graphs: the training graphs as ``(edge_index, node_labels)`` pairs.

        Returns:
            ``(features, squares)``: (graphs, training hashes) CSR counts, and each graph's squared
            norm.
        """
        labels = _label_set(graphs)
        self.labels_ = {label: i for i, label in enumerate(list(labels))}  # GraKeL's enumeration
        self.label_set_ = labels
        self.random_state_ = np.random.RandomState(self.seed)
        self.directions_, self.offsets_ = [], []
        for _ in range(self.t_max):
            u = self.random_state_.randn(len(labels))
            self.directions_.append(u / self.random_state_.randn(len(labels)))  # Cauchy: total variation
            self.offsets_.append(self.bin_width * self.random_state_.rand())
        transition, ptr, p = self._setup(graphs, self.labels_)
        graph_of = np.repeat(np.arange(len(graphs)), np.diff(ptr))
        self.hashes_: list[np.ndarray] = []  # per step, the training hashes in column order
        rows, cols, counts, squares = [], [], [], np.zeros(len(graphs))
        start = 0
        for t in range(self.t_max):
            seen, column = np.unique(self._hash(p, t), return_inverse=True)
            self.hashes_.append(seen)
            g, c, n = _count(graph_of, column.ravel())
            rows.append(g)
            cols.append(c + start)
            counts.append(n)
            np.add.at(squares, g, n * n)
            start += len(seen)
            if t < self.t_max - 1:
                p = transition @ p
        return _matrix(rows, cols, counts, len(graphs), self.n_columns_), squares

    def fitted_state(self) -> dict:
        """Give the fitted state as plain values for a model file, the random state included.

        Returns:
            ``{"labels", "directions", "offsets", "hashes", "random_state"}``.
        """
        kind, keys, position, has_gauss, cached = self.random_state_.get_state()
        return {"labels": self.labels_, "directions": list(self.directions_), "offsets": list(self.offsets_),
                "hashes": list(self.hashes_),
                "random_state": [kind, keys, int(position), int(has_gauss), float(cached)]}

    def restore_fitted_state(self, state: dict) -> None:
        """Set the fitted state from :meth:`fitted_state`'s values.

        Args:
            state: the values :meth:`fitted_state` gave.

        Raises:
            ValueError: the directions, offsets or hashes do not match ``t_max``.
        """
        self.labels_ = dict(state["labels"])
        self.label_set_ = set(self.labels_)
        self.directions_ = [np.asarray(d, dtype=np.float64) for d in state["directions"]]
        self.offsets_ = [float(o) for o in state["offsets"]]
        self.hashes_ = [np.asarray(h) for h in state["hashes"]]
        kind, keys, position, has_gauss, cached = state["random_state"]
        self.random_state_ = np.random.RandomState()
        self.random_state_.set_state((kind, np.asarray(keys, dtype=np.uint32), position, has_gauss, cached))
        if not len(self.directions_) == len(self.offsets_) == len(self.hashes_) == self.t_max:
            raise ValueError("the propagation kernel's state does not match its number of steps")

    @property
    def n_columns_(self) -> int:
        """Feature columns: the training hashes of every step."""
        return sum(len(h) for h in self.hashes_)

    def transform(self, graphs: Sequence[Graph]) -> tuple[sp.csr_matrix, np.ndarray]:
        """Hash new graphs and count their hashes over the training ones (see the module notes).

        Every call starts from the random state ``fit`` left, so it gives the same answer each time.

        Args:
            graphs: the graphs as ``(edge_index, node_labels)`` pairs.

        Returns:
            ``(features, squares)``: (graphs, training hashes) CSR counts, and each graph's squared
            norm over all its hashes (fresh ones included).
        """
        labels = _label_set(graphs)
        new = list(labels - self.label_set_)
        enumeration = dict(self.labels_)
        enumeration.update((label, i) for i, label in enumerate(new, len(self.labels_)))
        transition, ptr, p = self._setup(graphs, enumeration)
        n_nodes, n_graphs, known = int(ptr[-1]), len(graphs), len(self.labels_)
        graph_of = np.repeat(np.arange(n_graphs), np.diff(ptr))
        if new:  # GraKeL's inclusive end: node ptr[k + 1] also counts for graph k
            before = np.flatnonzero(ptr[1:] < n_nodes)
            graph_of = np.concatenate([graph_of, before])
            node_of = np.concatenate([np.arange(n_nodes), ptr[1:][before]])
        else:
            node_of = np.arange(n_nodes)
        random_state = copy.deepcopy(self.random_state_)
        fresh = p.indices >= known if new else np.zeros(n_nodes, dtype=bool)  # one-hot: one entry per row
        rows, cols, counts, squares = [], [], [], np.zeros(n_graphs)
        start = 0
        for t in range(self.t_max):
            if new:
                u = random_state.randn(len(new))
                u = np.concatenate([self.directions_[t], u / random_state.randn(len(new))])
                hashes = np.where(fresh, self._hash(p, t, u), self._hash(p[:, :known], t))
            else:
                hashes = self._hash(p, t)
            hashes, fresh_of = hashes[node_of], fresh[node_of]
            # counts of each (graph, hash) among nodes hashed the usual way; fresh hashes apart
            for is_fresh in (False, True) if new else (False,):
                keep = fresh_of == is_fresh
                distinct, key = np.unique(hashes[keep], return_inverse=True)
                g, k, n = _count(graph_of[keep], key.ravel())
                np.add.at(squares, g, n * n)
                if not is_fresh:  # fresh hashes never match a training hash
                    seen = self.hashes_[t]
                    at = np.minimum(np.searchsorted(seen, distinct[k]), len(seen) - 1)
                    match = seen[at] == distinct[k]
                    rows.append(g[match])
                    cols.append(at[match] + start)
                    counts.append(n[match])
            start += len(self.hashes_[t])
            if t < self.t_max - 1:
                p = transition @ p
                if new:
                    fresh = np.diff((p[:, known:] > 0).tocsr().indptr) == len(new)
        return _matrix(rows, cols, counts, n_graphs, self.n_columns_), squares

    def _hash(self, p: sp.csr_matrix, t: int, u: np.ndarray | None = None) -> np.ndarray:
        """GraKeL's locality-sensitive hash: floor((p . u + b) / w) per node."""
        u = self.directions_[t] if u is None else u
        return np.floor((p @ u + self.offsets_[t]) / self.bin_width)

    @staticmethod
    def _setup(graphs: Sequence[Graph], enumeration: dict) -> tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix]:
        """The block-diagonal row-normalised adjacency (no self-loops, no repeated edges), the
        node offsets of each graph, and the one-hot label matrix."""
        sizes = np.array([len(labels) for _, labels in graphs], dtype=np.int64)
        ptr = np.concatenate([[0], np.cumsum(sizes)])
        n = int(ptr[-1])
        src = np.concatenate([np.asarray(e[0], dtype=np.int64) + ptr[i] for i, (e, _) in enumerate(graphs)])
        dst = np.concatenate([np.asarray(e[1], dtype=np.int64) + ptr[i] for i, (e, _) in enumerate(graphs)])
        keep = src != dst
        adjacency = sp.csr_matrix((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n))
        adjacency.sum_duplicates()
        adjacency.data[:] = 1.0
        degree = np.diff(adjacency.indptr)
        adjacency.data /= np.repeat(degree, degree).astype(np.float64)  # l1 rows, as sklearn's normalize
        lookup = np.concatenate([np.asarray(labels) for _, labels in graphs])
        column = np.array([enumeration[label] for label in lookup.tolist()], dtype=np.int64)
        one_hot = sp.csr_matrix((np.ones(n), (np.arange(n), column)), shape=(n, len(enumeration)))
        return adjacency, ptr, one_hot


def _label_set(graphs: Sequence[Graph]) -> set:
    """The set of node labels, built as GraKeL builds it (its iteration order fixes the
    enumeration, hence which random direction each label gets)."""
    labels: set = set()
    for _, node_labels in graphs:
        labels |= set(np.asarray(node_labels).tolist())
    return labels


def _count(graph_of: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How many times each (graph, key) pair occurs: graphs, keys, counts."""
    if len(key) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    width = int(key.max()) + 1
    pairs, n = np.unique(graph_of.astype(np.int64) * width + key, return_counts=True)
    return pairs // width, pairs % width, n.astype(np.float64)


def _matrix(rows: list, cols: list, counts: list, n_rows: int, n_cols: int) -> sp.csr_matrix:
    return sp.csr_matrix((np.concatenate(counts), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n_rows, max(n_cols, 1)))
