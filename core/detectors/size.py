"""Graph size: a sanity baseline that scores a graph by how unusual its size is.

A graph's score is the squared z-score of its log node count plus that of its log edge
count, both against the training graphs: no structure, no features. A detector that does not
beat it on a data set has learned nothing there beyond size. (On the Tox21 sets the size
alone ranks the actives about as well as the paper's GLocalKD does: ``docs/results.md``.)
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.detectors.base import GraphLevelDetector, MoleculeView
from core.data.graphset import GraphSet
from core.data.label_coding import check_label_coding, label_coding
from core.data.scaling import usable_spread


def graph_sizes(graphs: GraphSet) -> np.ndarray:
    """Give each graph's log sizes, what the size baseline scores.

    Args:
        graphs: the graphs.

    Returns:
        Shape (graphs, 2): log(1 + nodes), log(1 + undirected edges).
    """
    sizes = [(int(g.num_nodes), int(g.edge_index.shape[1]) / 2) for g in graphs.graphs]
    return np.log1p(np.asarray(sizes, dtype=np.float64).reshape(-1, 2))


def log_sizes(nodes: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Give :func:`graph_sizes` from counts (screening's path, with no graph objects).

    Args:
        nodes: each graph's node count.
        edges: each graph's undirected edge count.

    Returns:
        Shape (graphs, 2): log(1 + nodes), log(1 + edges).
    """
    return np.log1p(np.column_stack([np.asarray(nodes, dtype=np.float64), np.asarray(edges, dtype=np.float64)]))


class SizeBaseline(MoleculeView, GraphLevelDetector):
    """Size-deviation detector in the scikit-learn / PyOD style: squared z-scores of log sizes.

    Fitted state: ``mean_`` and ``std_`` of the training graphs' log sizes (a deviation of 1 where
    all training graphs have one size), ``coding_`` (what the training graphs were:
    :func:`~core.data.label_coding.label_coding`), ``train_scores_``. A size means something only
    among graphs of one kind (a molecule's atoms, a collection's nodes, a network's members), so
    graphs of another kind are refused, as every other view refuses them.

    Args:
        seed: unused (nothing is random); kept so that every detector takes one.
    """

    name = "size"
    has_node_scores = False

    def __init__(self, seed: int = 0):
        self.seed = seed  # nothing is random; kept so every detector takes a seed

    FITTED = ("mean_", "std_", "coding_", "train_scores_", "loss_history_", "stopped_early_")

    def _fit(self, graphs: GraphSet, on_epoch: Callable | None = None,
             should_stop: Callable[[], bool] | None = None) -> None:
        """Learn the training graphs' size distribution; there are no epochs, so ``on_epoch`` and
        ``should_stop`` are not called."""
        sizes = graph_sizes(graphs)
        self.coding_ = label_coding(graphs)
        self.mean_ = sizes.mean(axis=0)
        std = sizes.std(axis=0)
        self.std_ = usable_spread(std, self.mean_)  # all training graphs one size: any change is one unit
        self.loss_history_: list[float] = []
        self.stopped_early_ = False
        self.train_scores_ = self._values(sizes)

    def fitted_state(self) -> dict:
        """Give the size statistics and the training scores, for a model file.

        Returns:
            ``{"mean", "std", "train_scores", "coding"}``.

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        return {"mean": self.mean_, "std": self.std_, "train_scores": self.train_scores_, "coding": self.coding_}

    def restore_fitted_state(self, state: dict, device: str = "auto") -> None:
        """Set the size statistics and training scores from :meth:`fitted_state`'s values.

        Args:
            state: the values :meth:`fitted_state` gave.
            device: unused (no network).

        Raises:
            ValueError: not two means and two positive deviations.
        """
        self.mean_, self.std_ = np.asarray(state["mean"], float), np.asarray(state["std"], float)
        if self.mean_.shape != (2,) or self.std_.shape != (2,) or not np.all(self.std_ > 0):
            raise ValueError("size statistics must be two means and two positive deviations")
        self.train_scores_ = np.asarray(state["train_scores"])
        self.coding_ = dict(state.get("coding") or {})  # files older than the record: not checked
        self.loss_history_, self.stopped_early_ = [], False

    def _values(self, sizes: np.ndarray) -> np.ndarray:
        return (((sizes - self.mean_) / self.std_) ** 2).sum(axis=1)

    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor") -> np.ndarray:
        """Give each graph's log sizes (the representation scored).

        Args:
            graphs: the graphs.
            network: ignored: there is one representation.

        Returns:
            Shape (graphs, 2), float32.

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        return graph_sizes(graphs).astype(np.float32)

    def score_molecules(self, x: np.ndarray, bonds: np.ndarray, atom_counts: np.ndarray,
                        bond_counts: np.ndarray) -> np.ndarray:
        """Score molecules given as packed arrays (screening's parsing workers): :meth:`score`'s values.

        Args:
            x: every molecule's atom features (unused).
            bonds: each bond once (unused).
            atom_counts: atoms of each molecule.
            bond_counts: bonds of each molecule.

        Returns:
            The scores, shape (molecules,).

        Raises:
            GLocalKDError: not fitted.
            SchemaMismatchError: the model was fitted on graphs that are not molecules.
        """
        self._check_fitted()
        check_label_coding(self.coding_, {"kind": "elements"})
        return self.score_sizes(atom_counts, bond_counts)

    def score_sizes(self, nodes: np.ndarray, edges: np.ndarray) -> np.ndarray:
        """Score graphs given by their node and undirected edge counts (screening's path).

        Args:
            nodes: each graph's node count.
            edges: each graph's undirected edge count.

        Returns:
            The scores, shape (graphs,).

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        return self._values(log_sizes(nodes, edges))

    def graph_scores(self, graphs: GraphSet) -> np.ndarray:
        """Score graphs by how unusual their sizes are (higher = more anomalous).

        Args:
            graphs: the graphs to score.

        Returns:
            One score per graph.

        Raises:
            SchemaMismatchError: graphs of another kind than the training graphs.
        """
        check_label_coding(self.coding_, label_coding(graphs))
        return self._values(graph_sizes(graphs))
