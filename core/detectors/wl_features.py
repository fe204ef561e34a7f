"""Weisfeiler-Lehman subtree features, hashed and sparse: GraKeL's WL kernel in numpy.

GraKeL's ``WeisfeilerLehman`` relabels each node, iteration by iteration, by its own label and
the sorted labels of its neighbours, compresses the new labels through dictionaries of strings,
and sums the dot products of the per-iteration label histograms (Shervashidze et al., JMLR 2011).
Here a node's new label is a 64-bit hash of its label and of the *sum* of its neighbours'
hashed labels: a multiset hash, so the same neighbourhood gives the same label whatever the
order, and two different ones collide with probability about 2^-64 per pair. The histograms
are sparse count matrices, one column block per iteration, and the kernel is one sparse
product: the same kernel as GraKeL's (a test compares them), in vectorised numpy instead of
Python loops over nodes, and a fitted state of plain arrays that a model file can hold.

A label that no training graph has, at any iteration, is no column of the training features:
it adds nothing to a new graph's dot products but counts in its own norm, as in GraKeL.
"""
from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_NEIGHBOURS = np.uint64(0x632BE59BD9B4E019)


_local = threading.local()  # .shared inside shared_transforms(): (inputs, tag, value) made in this thread's block


@contextmanager
def shared_transforms() -> Iterator[None]:
    """Within the block, the WL features of the same graphs over an equal vocabulary are computed once.

    A weighed consensus scores one screening chunk with WL-LESINN, WL counts and the known-anomaly
    classifier: three views fitted on the same graphs, so over equal vocabularies, each of which
    would compute the chunk's features again. The block holds what it computed until it ends;
    a nested block is part of the outer one. Each thread has its own block (the app scores in a
    background thread).

    Yields:
        Nothing: the sharing is on until the block ends.
    """
    if getattr(_local, "shared", None) is not None:
        yield
        return
    _local.shared = []
    try:
        yield
    finally:
        _local.shared = None


def shared(inputs: tuple, tag: object, make: Callable[[], object]) -> object:
    """``make()``, computed once per ``inputs`` (compared by identity) and ``tag`` inside
    :func:`shared_transforms`, and every time outside it.

    Args:
        inputs: the objects the value is made from (held until the block ends).
        tag: what is made of them (equal tags: the same value).
        make: makes the value.

    Returns:
        The value.
    """
    block = getattr(_local, "shared", None)
    if block is None:
        return make()
    for held, held_tag, value in block:
        if held_tag == tag and len(held) == len(inputs) and all(a is b for a, b in zip(held, inputs)):
            return value
    value = make()
    block.append((inputs, tag, value))
    return value


def mix64(x: np.ndarray) -> np.ndarray:
    """Hash 64-bit values with SplitMix64's finaliser: bijective, wrapping arithmetic.

    Args:
        x: values, read as uint64.

    Returns:
        The hashes, uint64, shape as ``x``.
    """
    z = np.asarray(x, dtype=np.uint64) + _GOLDEN
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _stack(labelled: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """All graphs as one: hashed node labels, directed edges without self-loops, graph index per node.
    Graphs that come packed (``stacked()``, e.g. screening's molecules) are stacked already."""
    if hasattr(labelled, "stacked"):
        labels, edges, graph = labelled.stacked()
        edges = edges[:, edges[0] != edges[1]]
        return mix64(np.asarray(labels, dtype=np.int64).view(np.uint64)), edges, graph, len(labelled)
    sizes = np.array([len(labels) for _, labels in labelled], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    labels = np.concatenate([np.asarray(lab, dtype=np.int64) for _, lab in labelled]) if len(labelled) else \
        np.zeros(0, dtype=np.int64)
    edges = [np.asarray(ei, dtype=np.int64).reshape(2, -1) + off for (ei, _), off in zip(labelled, offsets)]
    edges = np.concatenate(edges, axis=1) if edges else np.zeros((2, 0), dtype=np.int64)
    edges = edges[:, edges[0] != edges[1]]
    graph = np.repeat(np.arange(len(labelled)), sizes)
    return mix64(labels.view(np.uint64)), edges, graph, len(labelled)


def _iterations(labels: np.ndarray, edges: np.ndarray, iterations: int):
    """Each iteration's node labels, from the original (iteration 0) to ``iterations``."""
    yield labels
    src, dst = edges
    for _ in range(iterations):
        neighbours = np.zeros(len(labels), dtype=np.uint64)
        np.add.at(neighbours, src, mix64(labels[dst]))  # wraps: a sum modulo 2^64
        labels = mix64(labels ^ mix64(neighbours ^ _NEIGHBOURS))
        yield labels


def _squares(graph: np.ndarray, labels: np.ndarray, n_graphs: int) -> np.ndarray:
    """Per graph, the sum over its distinct labels of the squared count: its histogram's self dot product."""
    if len(labels) == 0:
        return np.zeros(n_graphs)
    order = np.lexsort((labels, graph))
    g, lab = graph[order], labels[order]
    start = np.concatenate([[True], (g[1:] != g[:-1]) | (lab[1:] != lab[:-1])])
    runs = np.diff(np.concatenate([np.flatnonzero(start), [len(g)]]))
    return np.bincount(g[start], weights=runs.astype(np.float64) ** 2, minlength=n_graphs)


class WLFeatures:
    """Hashed WL subtree histograms over ``iterations`` relabelings (GraKeL's ``n_iter``).

    ``fit`` learns each iteration's vocabulary from the training graphs and returns their
    features and squared norms; ``transform`` gives the same for new graphs (labels outside the
    vocabulary count in the norm only). Graphs are ``(edge_index, node_labels)`` pairs (or a
    :class:`core.detectors.graph_kernels.PackedLabelled`). Fitted state: ``vocabulary_`` (one
    sorted uint64 array per iteration) and ``offsets_``.

    Args:
        iterations: WL relabelings after the original labels.
    """

    def __init__(self, iterations: int = 3):
        self.iterations = iterations

    def fit(self, labelled: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[sp.csr_matrix, np.ndarray]:
        """Learn each iteration's label vocabulary from the training graphs and give their features.

        Args:
            labelled: the training graphs as ``(edge_index, node_labels)`` pairs.

        Returns:
            ``(features, squares)``: (graphs, vocabulary) CSR label counts, one column block per
            iteration, and each graph's squared norm.
        """
        labels, edges, graph, n = _stack(labelled)
        per_iteration = list(_iterations(labels, edges, self.iterations))
        self.vocabulary_ = [np.unique(lab) for lab in per_iteration]
        self.offsets_ = np.concatenate([[0], np.cumsum([len(v) for v in self.vocabulary_])]).astype(np.int64)
        self._digest = None
        return self._features(per_iteration, graph, n)

    def fitted_state(self) -> dict:
        """Give the fitted state as plain values for a model file.

        Returns:
            ``{"vocabulary", "offsets"}``.
        """
        return {"vocabulary": list(self.vocabulary_), "offsets": self.offsets_}

    def restore_fitted_state(self, state: dict) -> None:
        """Set the fitted state from :meth:`fitted_state`'s values, checking them.

        Args:
            state: the values :meth:`fitted_state` gave.

        Raises:
            ValueError: the vocabulary does not match the number of iterations, or the offsets do
                not match the vocabulary.
        """
        self.vocabulary_ = [np.asarray(v, dtype=np.uint64) for v in state["vocabulary"]]
        self.offsets_ = np.asarray(state["offsets"], dtype=np.int64)
        self._digest = None
        if len(self.vocabulary_) != self.iterations + 1 or len(self.offsets_) != len(self.vocabulary_) + 1:
            raise ValueError("the WL vocabulary does not match the number of iterations")
        if not np.array_equal(self.offsets_, np.concatenate([[0], np.cumsum([len(v) for v in self.vocabulary_])])):
            raise ValueError("the WL feature offsets do not match its vocabulary")

    @property
    def n_columns_(self) -> int:
        """Feature columns: one per label in the vocabulary of every iteration."""
        return int(self.offsets_[-1])

    def transform(self, labelled: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[sp.csr_matrix, np.ndarray]:
        """Give new graphs' features over the training vocabulary.

        Args:
            labelled: the graphs as ``(edge_index, node_labels)`` pairs.

        Returns:
            ``(features, squares)``: (graphs, vocabulary) CSR label counts, and each graph's squared
            norm over all its labels (those outside the vocabulary included).
        """
        def compute() -> tuple[sp.csr_matrix, np.ndarray]:
            labels, edges, graph, n = _stack(labelled)
            return self._features(list(_iterations(labels, edges, self.iterations)), graph, n)

        return shared((labelled,), ("wl-features", self.iterations, self.vocabulary_digest()), compute)

    def node_columns(self, labelled: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, int]:
        """Give each node's feature column at every iteration: which subtree of the vocabulary it roots.

        Args:
            labelled: the graphs as ``(edge_index, node_labels)`` pairs.

        Returns:
            ``(columns, graph, n_graphs)``: shape (iterations + 1, nodes) int64, the column of the
            node's label at each iteration, -1 where no training graph had that label; the graph of
            each node, shape (nodes,); and the number of graphs.
        """
        labels, edges, graph, n = _stack(labelled)
        columns = np.full((self.iterations + 1, len(labels)), -1, dtype=np.int64)
        for k, lab in enumerate(_iterations(labels, edges, self.iterations)):
            column, known = self._columns(k, lab)
            columns[k, known] = column[known]
        return columns, graph, n

    def vocabulary_digest(self) -> str:
        """A digest of the fitted vocabulary: equal digests give equal features (:func:`shared_transforms`).

        Returns:
            The BLAKE2b digest of the iterations, the vocabulary and its offsets, as hex.
        """
        if getattr(self, "_digest", None) is None:
            h = hashlib.blake2b(np.int64(self.iterations).tobytes())
            for part in (*self.vocabulary_, self.offsets_):
                h.update(np.ascontiguousarray(part).tobytes())
            self._digest = h.hexdigest()
        return self._digest

    def _columns(self, k: int, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Iteration ``k``'s labels as feature columns, and which of them the vocabulary has."""
        vocabulary = self.vocabulary_[k]
        position = np.searchsorted(vocabulary, labels)
        known = position < len(vocabulary)
        known[known] = vocabulary[position[known]] == labels[known]
        return position + self.offsets_[k], known

    def _features(self, per_iteration: list[np.ndarray], graph: np.ndarray,
                  n_graphs: int) -> tuple[sp.csr_matrix, np.ndarray]:
        rows, cols = [], []
        squares = np.zeros(n_graphs)
        for k, labels in enumerate(per_iteration):
            column, known = self._columns(k, labels)
            rows.append(graph[known])
            cols.append(column[known])
            if not known.all():  # the labels outside the vocabulary count in the norm only
                unknown = ~known
                squares += _squares(graph[unknown], labels[unknown], n_graphs)
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        features = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_graphs, int(self.offsets_[-1])))
        features.sum_duplicates()
        # the known labels' squared counts are the features' own: no second sort of every node's label.
        # Whole numbers throughout, so the sums are exact in any order.
        entry_rows = np.repeat(np.arange(n_graphs), np.diff(features.indptr))
        squares += np.bincount(entry_rows, weights=features.data ** 2, minlength=n_graphs)
        return features, squares
