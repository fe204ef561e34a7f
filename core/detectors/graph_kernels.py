"""Graph kernels: Weisfeiler-Lehman subtree and propagation kernels on a GraphSet, as GraKeL defines them.

The GLocalKD paper's two-step baselines take WL (three iterations, the same neighbourhood
as a three-layer GCN) and PK ("the recommended setting in GraKeL") from GraKeL. Both work on
discrete node labels: a TU collection's node labels, a molecule's element, or, for graphs
without labels (IMDB, REDDIT), the node degree, the usual choice for WL on plain graphs.
Kernels are normalised (k(x, x) = 1) as GraKeL does, so ``sqrt(2 - 2 k)`` is a distance in
feature space: graphs are compared by the shares of their subtrees. Unnormalised (raw counts),
``sqrt(k(x, x) + k(y, y) - 2 k(x, y))`` also sees how many subtrees a graph has, so its size
(docs/consensus.md, "A WL view that keeps size").

GraKeL computes the propagation kernel with a dense matrix per graph and pair by pair in Python
(45 s for 1,000 Tox21 molecules, over an hour per REDDIT-BINARY fold). Its value is a sum of dot
products of per-step hashed label counts, so ``core.detectors.propagation_kernel`` computes GraKeL's
features with sparse propagation and the dot products are one sparse matrix product: the same
kernel, in seconds. The WL kernel is computed the same way (``core.detectors.wl_features``):
hashed label histograms and one sparse product, the same values as GraKeL's string dictionaries.
Both keep their fitted state in plain arrays.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from core.data.chem import ELEMENTS
from core.data.graphset import GraphSet
from core.data.label_coding import check_label_coding, label_coding  # noqa: F401 (the kernels' names)
from core.detectors.base import MoleculeView
from core.detectors.propagation_kernel import PropagationFeatures
from core.detectors.wl_features import WLFeatures, shared
from core.errors import GLocalKDError

KERNELS = ("wl", "pk")
NORMALISE_TILE_VALUES = 32_768  # kernel values normalised at a time (256 KB: a tile stays in the cache)
DENSE_FEATURE_SHARE = 0.05  # features at least this share of the training graphs has: a dense block (SplitProduct)


def node_labels(graph) -> np.ndarray:
    """Give the discrete labels the kernels read for one graph's nodes.

    Args:
        graph: a graph of a :class:`GraphSet` (``node_label``, ``x``, ``edge_index``).

    Returns:
        Shape (nodes,) int64: TU node labels, else the element of a molecule's atoms (RDKit
        features: the one-hot element block first), else the degree.
    """
    label = graph.get("node_label")
    if label is not None:
        return label.numpy().astype(np.int64)
    x = graph.get("x")
    n = int(graph.num_nodes)
    if x is not None and x.shape[1] > len(ELEMENTS):  # molecule: one-hot element block first
        return x[:, : len(ELEMENTS) + 1].argmax(dim=1).numpy().astype(np.int64)
    degree = np.zeros(n, dtype=np.int64)
    np.add.at(degree, graph.edge_index[0].numpy(), 1)
    return degree


def checked_labelled(fitted: dict | None, graphs: GraphSet) -> list[tuple[np.ndarray, np.ndarray]]:
    """Give graphs as the WL views read them, once their node labels are checked to mean what the
    fitted graphs' did.

    Args:
        fitted: the fitted graphs' :func:`label_coding` (None or ``{}``: not recorded, not checked).
        graphs: the graphs.

    Returns:
        :func:`labelled_graphs` of them.

    Raises:
        SchemaMismatchError: another kind of label (:func:`check_label_coding`).
    """
    check_label_coding(fitted, label_coding(graphs))
    return labelled_graphs(graphs)


def to_grakel(graphs: GraphSet) -> list[list]:
    """Convert graphs to GraKeL's input, for comparing with GraKeL's kernels.

    Args:
        graphs: the graphs.

    Returns:
        Per graph ``[adjacency, labels]``: an adjacency dict (every node listed, self-loops left
        out) and a node -> label dict (:func:`node_labels`).
    """
    out = []
    for g in graphs.graphs:
        n = int(g.num_nodes)
        src, dst = g.edge_index.numpy()
        keep = src != dst
        adjacency: dict[int, list[int]] = {v: [] for v in range(n)}
        for a, b in zip(src[keep].tolist(), dst[keep].tolist()):
            adjacency[a].append(b)
        out.append([adjacency, dict(enumerate(node_labels(g).tolist()))])
    return out


def labelled_graphs(graphs: GraphSet) -> list[tuple[np.ndarray, np.ndarray]]:
    """Give each graph's edge index and discrete node labels: what the kernels read.

    Args:
        graphs: the graphs.

    Returns:
        One ``(edge_index, node_labels)`` pair per graph: shapes (2, edges) and (nodes,); the same
        list for the same graphs inside :func:`core.detectors.wl_features.shared_transforms`.
    """
    return shared((graphs,), "labelled-graphs", lambda: [(g.edge_index.numpy(), node_labels(g)) for g in graphs.graphs])


def labelled_molecules(x: np.ndarray, bonds: np.ndarray, atom_counts: np.ndarray,
                       bond_counts: np.ndarray) -> PackedLabelled:
    """Give molecules' edge indexes and node labels from packed arrays, with no graph objects: screening's path.

    Edges are the bonds both ways, as a molecule graph holds them; labels are the atoms'
    elements, as :func:`node_labels` reads them.

    Args:
        x: every molecule's atom features, molecule after molecule, the one-hot element block
            first (:class:`core.data.atom_batch.MoleculeArrays`).
        bonds: each bond once as two atom numbers within its molecule, any shape that reshapes to
            (bonds, 2).
        atom_counts: atoms of each molecule.
        bond_counts: bonds of each molecule.

    Returns:
        The pairs, kept packed; the same object for the same arrays inside
        :func:`core.detectors.wl_features.shared_transforms`.
    """
    def make() -> PackedLabelled:
        labels = np.argmax(x[:, : len(ELEMENTS) + 1], axis=1).astype(np.int64)
        return PackedLabelled(labels, np.asarray(bonds, dtype=np.int64).reshape(-1, 2),
                              np.asarray(atom_counts, dtype=np.int64), np.asarray(bond_counts, dtype=np.int64))

    return shared((x, bonds, atom_counts, bond_counts), "labelled-molecules", make)


class LabelledMoleculeView(MoleculeView):
    """A view that scores graphs as ``(edge index, node labels)`` pairs (its ``score_labelled``) and
    so scores molecules from screening's packed arrays too, in the parsing workers: WL-LESINN and
    the known-anomaly classifier."""

    def score_molecules(self, x: np.ndarray, bonds: np.ndarray, atom_counts: np.ndarray,
                        bond_counts: np.ndarray) -> np.ndarray:
        """Score molecules given as packed arrays (screening's parsing workers): its ``score``'s values.

        Args:
            x: every molecule's atom features, the one-hot element block first.
            bonds: each bond once as two atom numbers within its molecule.
            atom_counts: atoms of each molecule.
            bond_counts: bonds of each molecule.

        Returns:
            The scores, shape (molecules,).

        Raises:
            SchemaMismatchError: the view was fitted on graphs labelled otherwise than by elements.
        """
        check_label_coding(self.label_coding_fitted(), {"kind": "elements"})
        return self.score_labelled(labelled_molecules(x, bonds, atom_counts, bond_counts))

    def label_coding_fitted(self) -> dict | None:
        """Give the fitted graphs' :func:`label_coding`; a view whose labels a :class:`GraphKernel`
        reads gives its kernel's.

        Returns:
            The coding, or None when it was not recorded (not fitted, or an older model file).
        """
        return getattr(self, "coding_", None)


class PackedLabelled(Sequence):
    """Many graphs' ``(edge_index, node_labels)`` pairs kept packed, as a sequence of those pairs.

    It slices (in steps of 1) without copying per graph and hands the WL features the stacked
    arrays at once (:meth:`stacked`), so no step loops over the graphs in Python.

    Args:
        labels: every graph's node labels, graph after graph.
        bonds: (bonds, 2) each undirected edge once, as node numbers within its graph.
        node_counts: nodes of each graph.
        bond_counts: bonds of each graph.
    """

    def __init__(self, labels: np.ndarray, bonds: np.ndarray, node_counts: np.ndarray, bond_counts: np.ndarray):
        self.labels, self.bonds = labels, bonds
        self.node_counts, self.bond_counts = node_counts, bond_counts
        self.node_ptr = np.concatenate([[0], np.cumsum(node_counts)]).astype(np.int64)
        self.bond_ptr = np.concatenate([[0], np.cumsum(bond_counts)]).astype(np.int64)

    def __len__(self) -> int:
        return len(self.node_counts)

    def __getitem__(self, index):
        if isinstance(index, slice):
            lo, hi, step = index.indices(len(self))
            if step != 1:
                raise IndexError("packed graphs slice only in steps of 1")
            hi = max(lo, hi)
            n_lo, n_hi, b_lo, b_hi = self.node_ptr[lo], self.node_ptr[hi], self.bond_ptr[lo], self.bond_ptr[hi]
            return PackedLabelled(self.labels[n_lo:n_hi], self.bonds[b_lo:b_hi],
                                  self.node_counts[lo:hi], self.bond_counts[lo:hi])
        k = range(len(self))[index]
        pairs = self.bonds[self.bond_ptr[k]:self.bond_ptr[k + 1]]
        return np.concatenate([pairs, pairs[:, ::-1]]).T, self.labels[self.node_ptr[k]:self.node_ptr[k + 1]]

    def stacked(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Give all graphs as one, for the WL features.

        Returns:
            ``(labels, edges, graph)``: node labels, shape (nodes,); directed edges both ways,
            numbered across the graphs, shape (2, 2 x bonds); and the graph of each node, shape
            (nodes,).
        """
        offsets = np.repeat(self.node_ptr[:-1], self.bond_counts)
        pairs = self.bonds + offsets[:, None]
        edges = np.concatenate([pairs, pairs[:, ::-1]]).T
        return self.labels, edges, np.repeat(np.arange(len(self)), self.node_counts)


class GraphKernel:
    """A graph kernel (WL or PK) fitted on training graphs, with its feature-space distances.

    ``fit`` gives the (n, n) training kernel, ``transform`` the (m, n) kernel between new graphs
    and the training graphs, and :meth:`distances` / :meth:`distances_labelled` the feature-space
    distances. Fitted state: ``kernel_`` (the feature map), ``n_train_``, ``train_features_``,
    ``train_squares_``.

    Args:
        kind: ``wl`` (Weisfeiler-Lehman subtree) or ``pk`` (propagation kernel, GraKeL's defaults:
            5 steps, bin width 0.01).
        wl_iterations: the WL kernel's iterations.
        seed: the seed of the propagation kernel's hashing.
        normalize: cosine-normalised as GraKeL does (the default), else the raw feature products.

    Raises:
        GLocalKDError: an unknown ``kind``.
    """

    def __init__(self, kind: str = "wl", wl_iterations: int = 3, seed: int = 0, normalize: bool = True):
        if kind not in KERNELS:
            raise GLocalKDError(f"kernel must be one of {', '.join(KERNELS)}, not {kind!r}")
        self.kind = kind
        self.wl_iterations = wl_iterations
        self.seed = seed
        self.normalize = normalize

    def _make(self):
        if self.kind == "wl":
            return WLFeatures(self.wl_iterations)
        return PropagationFeatures(seed=self.seed)  # GraKeL's defaults: 5 steps, bin width 0.01

    def fit(self, graphs: GraphSet) -> np.ndarray:
        """Fit the feature map on the training graphs.

        Args:
            graphs: the training graphs.

        Returns:
            The training kernel, shape (n, n), float64.

        Raises:
            GLocalKDError: no graphs.
        """
        if len(graphs) == 0:
            raise GLocalKDError("a graph kernel needs training graphs")
        self.kernel_ = self._make()
        self.n_train_ = len(graphs)
        self.coding_ = label_coding(graphs)
        self.train_features_, self.train_squares_ = self.kernel_.fit(labelled_graphs(graphs))
        self._product = None  # made from the training features when first needed
        return self._feature_kernel(self.train_features_, self.train_squares_)

    def fitted_state(self) -> dict:
        """Give the fitted state as plain values for a model file.

        Returns:
            ``{"features", "n_train", "train_squares", "train_features"}``, the training features as
            their CSR parts.
        """
        f = self.train_features_
        return {"features": self.kernel_.fitted_state(), "n_train": self.n_train_, "train_squares": self.train_squares_,
                "train_features": {"data": f.data, "indices": f.indices, "indptr": f.indptr,
                                   "shape": list(f.shape)}, "coding": self.coding_}

    def restore_fitted_state(self, state: dict) -> None:
        """Set the fitted state from :meth:`fitted_state`'s values, checking them.

        Args:
            state: the values :meth:`fitted_state` gave.

        Raises:
            ValueError: the parts do not fit together (:func:`csr_from_state`, or a count of
                training squares other than the training graphs').
        """
        self.kernel_ = self._make()
        self.kernel_.restore_fitted_state(state["features"])
        self.coding_ = dict(state.get("coding") or {})  # files older than the record: not checked
        self.n_train_ = int(state["n_train"])
        self.train_features_ = csr_from_state(state["train_features"], (self.n_train_, self.kernel_.n_columns_))
        self._product = None
        self.train_squares_ = np.asarray(state["train_squares"], dtype=np.float64)
        if len(self.train_squares_) != self.n_train_:
            raise ValueError("the kernel's training features do not match its training graphs")

    def transform(self, graphs: GraphSet) -> np.ndarray:
        """Compute the kernel between new graphs and the training graphs (the empirical kernel map).

        Args:
            graphs: the graphs.

        Returns:
            Shape (graphs, training graphs), float64.

        Raises:
            GLocalKDError: the kernel is not fitted.
            SchemaMismatchError: the graphs' node labels mean something else than the fitted
                graphs' (:func:`check_label_coding`).
        """
        return self.transform_labelled(self.labelled(graphs))

    def labelled(self, graphs: GraphSet) -> list[tuple[np.ndarray, np.ndarray]]:
        """Give the graphs as the kernel reads them, after checking that their node labels mean
        what the fitted graphs' did.

        Args:
            graphs: the graphs.

        Returns:
            :func:`labelled_graphs` of them.

        Raises:
            SchemaMismatchError: another kind of label (:func:`check_label_coding`).
        """
        return checked_labelled(getattr(self, "coding_", None), graphs)

    def transform_labelled(self, labelled: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Compute :meth:`transform` for graphs given as (edge index, node labels) pairs.

        Args:
            labelled: the pairs (:func:`labelled_graphs`, :func:`labelled_molecules`).

        Returns:
            Shape (graphs, training graphs), float64.

        Raises:
            GLocalKDError: the kernel is not fitted.
        """
        if not hasattr(self, "kernel_"):
            raise GLocalKDError("the graph kernel is not fitted yet")
        if len(labelled) == 0:
            return np.zeros((0, self.n_train_))
        return self._feature_kernel(*self.kernel_.transform(labelled))

    def features_labelled(self, labelled: list[tuple[np.ndarray, np.ndarray]]) -> tuple:
        """Give the feature rows of graphs given as (edge index, node labels) pairs, for
        :meth:`kernel_of_features` to use a block at a time.

        Args:
            labelled: the pairs (:func:`labelled_graphs`, :func:`labelled_molecules`).

        Returns:
            ``(features, squares)``: the (graphs, vocabulary) features and each graph's own kernel value.

        Raises:
            GLocalKDError: the kernel is not fitted.
        """
        if not hasattr(self, "kernel_"):
            raise GLocalKDError("the graph kernel is not fitted yet")
        return self.kernel_.transform(labelled)

    def kernel_of_features(self, features, squares: np.ndarray, distances: bool = False) -> np.ndarray:
        """Compute :meth:`transform` (or :meth:`distances_labelled`) from :meth:`features_labelled`'s rows.

        Args:
            features: the graphs' feature rows.
            squares: their own kernel values.
            distances: give the distances to the training graphs instead of the kernel.

        Returns:
            Shape (graphs, training graphs), float64.
        """
        if features.shape[0] == 0:
            return np.zeros((0, self.n_train_))
        if not distances:
            return self._feature_kernel(features, squares)
        if self.normalize:  # normalised and turned into distances a tile at a time, in the cache
            return self._feature_kernel(features, squares, distances=True)
        return self.distances(self._feature_kernel(features, squares), squares, overwrite=True)

    def distances(self, k: np.ndarray, squares: np.ndarray, overwrite: bool = False) -> np.ndarray:
        """Turn kernel values into feature-space distances to the training graphs.

        Args:
            k: this kernel's values, shape (graphs, training graphs).
            squares: the graphs' own kernel values, shape (graphs,); used only without
                normalisation.
            overwrite: compute in ``k``'s memory (when it is a writable float64 array).

        Returns:
            :func:`kernel_distance` of ``k`` when normalised, else
            ``sqrt(squares + training squares - 2k)`` clipped at 0; shape as ``k``.
        """
        if self.normalize:
            return kernel_distance(k, overwrite=overwrite)
        d = k if overwrite and k.dtype == np.float64 and k.flags.writeable else np.array(k, dtype=np.float64)
        np.multiply(d, -2.0, out=d)
        d += np.asarray(squares, dtype=np.float64)[:, None]
        d += self.train_squares_[None, :]
        np.clip(d, 0.0, None, out=d)
        return np.sqrt(d, out=d)

    def distances_labelled(self, labelled: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Compute feature-space distances to the training graphs of graphs given as (edge index, labels) pairs.

        Args:
            labelled: the pairs (:func:`labelled_graphs`, :func:`labelled_molecules`).

        Returns:
            Shape (graphs, training graphs), float64.

        Raises:
            GLocalKDError: the kernel is not fitted.
        """
        if not hasattr(self, "kernel_"):
            raise GLocalKDError("the graph kernel is not fitted yet")
        if len(labelled) == 0:
            return np.zeros((0, self.n_train_))
        return self.kernel_of_features(*self.kernel_.transform(labelled), distances=True)

    def __getstate__(self) -> dict:
        """Pickled (e.g. sent to a cluster's workers) without the split product: it is remade there."""
        return {**self.__dict__, "_product": None}

    def _feature_kernel(self, features: sp.csr_matrix, squares: np.ndarray, distances: bool = False) -> np.ndarray:
        """Kernel of ``features`` against the training graphs', normalised as GraKeL does unless
        ``normalize`` is off. ``squares``: each graph's own kernel value, unseen features included.
        ``distances`` (normalised only): turned into :func:`kernel_distance`'s distances as well."""
        if getattr(self, "_product", None) is None:  # made on first use, from the fitted features
            self._product = SplitProduct(self.train_features_)
        k = self._product.dot(features)
        if k is None:  # not whole counts: the plain product
            k = np.asarray((features @ self.train_features_.T).toarray(), dtype=np.float64)
        if not self.normalize:
            return k
        squares = np.asarray(squares, dtype=np.float64)
        # graphs with an all-zero feature vector (0/0 when normalising) get 0; only their rows and
        # columns can hold NaN, so only they are cleaned (a pass over all of k cost as much as the product)
        empty_rows = np.asarray(squares) == 0
        empty_columns = np.flatnonzero(self.train_squares_ == 0)
        # each element goes through the same operations as a whole-array pass would put it through,
        # a tile of rows at a time so that the tile stays in the cache between them (each pass over
        # all of k cost as much as the product)
        step = max(1, NORMALISE_TILE_VALUES // max(1, k.shape[1]))
        norms = np.empty((min(step, len(k)), k.shape[1]))
        with np.errstate(invalid="ignore", divide="ignore"):
            for lo in range(0, len(k), step):
                tile, sq = k[lo:lo + step], squares[lo:lo + step]
                n = norms[:len(tile)]
                np.multiply(sq[:, None], self.train_squares_[None, :], out=n)  # np.outer's products
                np.divide(tile, np.sqrt(n, out=n), out=tile)
                rows = np.flatnonzero(empty_rows[lo:lo + step])
                if len(rows):
                    tile[rows] = np.nan_to_num(tile[rows], nan=0.0, posinf=0.0, neginf=0.0)
                if len(empty_columns):
                    tile[:, empty_columns] = np.nan_to_num(tile[:, empty_columns], nan=0.0, posinf=0.0, neginf=0.0)
                if distances:
                    kernel_distance(tile, overwrite=True)
        return k


class SplitProduct:
    """``features @ train.T`` as a dense array for feature counts: dense BLAS for common features, sparse for rare.

    A feature that many training graphs have is a column of a dense block multiplied by BLAS, the
    others stay sparse. Every product and partial sum is then a whole number below 2^53, exact in
    float64 in any order, so the values are exactly the plain sparse product's, in a fraction of
    its time (the product of features that most graphs share is dense anyway, and a sparse
    product pays for every entry of it and for converting its result). Features that are not
    such counts get None from :meth:`dot`: the caller takes the plain product.

    Args:
        train: (training graphs, features) CSR counts.
        dense_share: a feature is in the dense block when at least this share of the training
            graphs has it.
    """

    def __init__(self, train: sp.csr_matrix, dense_share: float = DENSE_FEATURE_SHARE):
        train = sp.csr_matrix(train)
        train.sum_duplicates()
        graphs_with = np.bincount(train.indices, minlength=train.shape[1])
        dense = graphs_with >= max(1.0, dense_share * train.shape[0])
        self.dense_position = np.full(train.shape[1], -1, dtype=np.int64)
        self.dense_position[dense] = np.arange(int(dense.sum()))
        self.train_dense = np.ascontiguousarray(train[:, np.flatnonzero(dense)].toarray().T, dtype=np.float64)
        self.train_dense32 = self.train_dense.astype(np.float32)
        self.train_sparse_t = _without_columns(train, dense).T.tocsr()
        self.train_bound = _count_bound(train)

    def dot(self, features: sp.csr_matrix) -> np.ndarray | None:
        """Multiply features by the training features, exactly, when both are whole counts.

        Args:
            features: (graphs, features) CSR.

        Returns:
            ``features @ train.T``, dense float64, shape (graphs, training graphs); None unless both
            are non-negative whole counts whose products sum exactly in float64.
        """
        features = sp.csr_matrix(features)
        features.sum_duplicates()
        bound = _count_bound(features)
        if bound is None or self.train_bound is None or bound * self.train_bound >= 2.0 ** 53:
            return None
        n = features.shape[0]
        rows = np.repeat(np.arange(n), np.diff(features.indptr))
        position = self.dense_position[features.indices]
        in_dense = position >= 0
        # float32 where every partial sum stays below 2^24 (exact there too): BLAS runs it faster
        dtype = np.float32 if bound * self.train_bound < 2.0 ** 24 else np.float64
        block = np.zeros((n, self.train_dense.shape[0]), dtype=dtype)
        block[rows[in_dense], position[in_dense]] = features.data[in_dense]
        k = np.asarray(block @ (self.train_dense32 if dtype == np.float32 else self.train_dense), dtype=np.float64)
        rest = ~in_dense
        sparse = sp.csr_matrix((features.data[rest], (rows[rest], features.indices[rest])), shape=features.shape)
        product = (sparse @ self.train_sparse_t).tocoo()
        # a sparse product holds each (graph, training graph) entry once, so += adds each once
        k[product.row, product.col] += product.data
        return k


def _count_bound(matrix: sp.csr_matrix) -> float | None:
    """The largest row sum of ``matrix`` (a bound on any dot product's partial sums, times the
    other side's), or None when its entries are not non-negative whole numbers."""
    data = matrix.data
    if data.size and (data.min() < 0 or not np.array_equal(data, np.floor(data))):
        return None
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    return float(np.bincount(rows, weights=data, minlength=1).max())


def _without_columns(matrix: sp.csr_matrix, drop: np.ndarray) -> sp.csr_matrix:
    """``matrix`` with the columns where ``drop`` is true emptied (their entries removed)."""
    coo = matrix.tocoo()
    keep = ~drop[coo.col]
    return sp.csr_matrix((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=matrix.shape)


def kernel_distance(k: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """Turn a normalised kernel into feature-space distances: sqrt(2 - 2k), clipped at 0.

    Args:
        k: normalised kernel values, any shape.
        overwrite: compute in ``k``'s own memory (a writable float64 array the caller no longer
            needs).

    Returns:
        The distances, float64, shape as ``k``.
    """
    d = k if overwrite and k.dtype == np.float64 and k.flags.writeable else np.array(k, dtype=np.float64)
    np.multiply(d, 2.0, out=d)
    np.subtract(2.0, d, out=d)
    np.clip(d, 0.0, None, out=d)
    return np.sqrt(d, out=d)


def csr_from_state(f: dict, shape: tuple[int, int]) -> sp.csr_matrix:
    """Rebuild a sparse matrix saved as ``{"data", "indices", "indptr", "shape"}``, checked before use.

    Its shape must be ``shape`` (what the fitted state around it implies) and its index arrays
    must be consistent (a damaged index would make scipy read out of bounds).

    Args:
        f: the saved parts.
        shape: the shape the matrix must have.

    Returns:
        The matrix.

    Raises:
        ValueError: the parts do not make a matrix of that shape.
    """
    saved = tuple(int(s) for s in f["shape"])
    if saved != tuple(shape):
        raise ValueError(f"sparse features of shape {saved}, where the model implies {tuple(shape)}")
    matrix = sp.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=shape)
    matrix.check_format(full_check=True)
    return matrix
