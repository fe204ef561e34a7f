"""Rare-substructure view: how seldom each node's neighbourhood occurs among the training graphs.

Noble and Cook (KDD 2003) call a graph anomalous when it holds substructures that are rare in
the rest of the data, and chemists read novelty the same way: an atom environment seldom seen in
a reference set (Ertl's natural-product-likeness and synthetic-accessibility scores count how
often Morgan fragments occur). No other view asks this. WL-LESINN compares the shares of a
graph's subtrees with its nearest training graphs, so one odd group among thirty atoms moves it
little; GLocalKD reads embedding errors and graph size reads counts.

A node's environment of radius h is its Weisfeiler-Lehman label after h iterations
(:class:`core.detectors.wl_features.WLFeatures`, the labels the WL views read). Its rarity is
``-log((df + 1) / (N + 2))``, where df is how many of the N training graphs hold that label
(add-one smoothing: a label no training graph has scores ``log(N + 2)``). A node's surprise is
the mean of its rarities at radius 0, 1 and 2, and a graph's score is the mean of its three
most surprising nodes (all of them in a smaller graph). A graph's score depends on itself and
the training counts only, never on the other graphs scored with it. The training graphs' own
scores are leave-one-out (each graph's labels counted without it), so they read as a new
graph's would.

Settings, fixed before the first measurement (research/README.md, "The rare-substructure
view"): radii 0-2 (``iterations=2``, ECFP4's radius), the three most surprising nodes
(``top_nodes=3``), add-one smoothing, every training graph counted.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from core.data.graphset import GraphSet
from core.detectors.base import GraphLevelDetector, is_count
from core.detectors.graph_kernels import LabelledMoleculeView, checked_labelled, label_coding, labelled_graphs
from core.detectors.wl_features import WLFeatures


def _largest(values: np.ndarray, group: np.ndarray, n_groups: int, top: int):
    """Each group's ``top`` largest values: ``(groups, ranks, values)`` of the items kept, rank 0 the largest."""
    order = np.lexsort((-values, group))
    g = group[order]
    rank = np.arange(len(g)) - np.searchsorted(g, np.arange(n_groups))[g]
    keep = rank < top
    return g[keep], rank[keep], values[order][keep]


def top_mean(values: np.ndarray, group: np.ndarray, n_groups: int, top: int) -> np.ndarray:
    """Average the ``top`` largest values of each group (all of a smaller group's).

    Args:
        values: one value per item.
        group: each item's group, 0 to ``n_groups - 1``.
        n_groups: the number of groups.
        top: how many of each group's largest values are averaged.

    Returns:
        Shape (n_groups,): each group's mean of its largest values; 0 for a group with no items.
    """
    g, _, kept = _largest(values, group, n_groups, top)
    total = np.bincount(g, weights=kept, minlength=n_groups)
    count = np.bincount(g, minlength=n_groups)
    return np.divide(total, count, out=np.zeros(n_groups), where=count > 0)


class RareSubstructure(LabelledMoleculeView, GraphLevelDetector):
    """Scores a graph by its rarest node neighbourhoods among the training graphs (higher = rarer).

    Fitted state: ``wl_`` (the WL vocabulary), ``graph_counts_`` (per vocabulary column, how many
    training graphs hold it), ``n_train_`` and ``train_scores_`` (leave-one-out).

    Args:
        iterations: WL iterations: node neighbourhoods of radius 0 to ``iterations``.
        top_nodes: how many of a graph's most surprising nodes its score averages.
        seed: unused (nothing is random); kept so that every detector takes one.
    """

    name = "rare-substructure"
    has_node_scores = False
    FITTED = ("wl_", "graph_counts_", "n_train_", "coding_", "train_scores_", "loss_history_", "stopped_early_")

    def __init__(self, iterations: int = 2, top_nodes: int = 3, seed: int = 0):
        self.iterations = iterations
        self.top_nodes = top_nodes
        self.seed = seed

    def validate_params(self) -> None:
        """Check the settings before fitting.

        Raises:
            ParameterError: ``iterations`` not a whole number from 0, or ``top_nodes`` not one from 1.
        """
        self.check_settings({"iterations": (is_count(self.iterations, 0), "a whole number from 0"),
                             "top_nodes": (is_count(self.top_nodes), "a whole number from 1")})

    def _fit(self, graphs: GraphSet, on_epoch: Callable | None = None,
             should_stop: Callable[[], bool] | None = None) -> None:
        """Count, for every subtree label, the training graphs that hold it; no epochs."""
        labelled = labelled_graphs(graphs)
        self.wl_ = WLFeatures(self.iterations)
        features, _ = self.wl_.fit(labelled)
        self.graph_counts_ = np.bincount(features.indices, minlength=self.wl_.n_columns_).astype(np.int64)
        self.n_train_ = len(graphs)
        self.coding_ = label_coding(graphs)
        self.train_scores_ = self._scores(labelled, leave_one_out=True)
        self.loss_history_: list[float] = []
        self.stopped_early_ = False

    def node_surprise(self, labelled: Sequence[tuple[np.ndarray, np.ndarray]],
                      leave_one_out: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
        """Give each node's surprise: the mean rarity of its neighbourhoods of radius 0 to ``iterations``.

        Args:
            labelled: the graphs as ``(edge_index, node_labels)`` pairs.
            leave_one_out: the graphs are the training graphs, each counted without itself.

        Returns:
            ``(surprise, graph, n_graphs)``: one value per node (in nats), each node's graph, and
            the number of graphs.
        """
        self._check_fitted()
        return self._node_surprise(labelled, leave_one_out)

    def _node_surprise(self, labelled, leave_one_out: bool) -> tuple[np.ndarray, np.ndarray, int]:
        columns, graph, n = self.wl_.node_columns(labelled)
        counts = np.where(columns >= 0, self.graph_counts_[np.maximum(columns, 0)], 0).astype(np.float64)
        total = float(self.n_train_)
        if leave_one_out:  # every label of a training graph is counted once for that graph itself
            counts, total = counts - 1.0, total - 1.0
        rarity = -np.log((counts + 1.0) / (total + 2.0))
        return rarity.mean(axis=0), graph, n

    def _scores(self, labelled, leave_one_out: bool = False) -> np.ndarray:
        surprise, graph, n = self._node_surprise(labelled, leave_one_out)
        return top_mean(surprise, graph, n, self.top_nodes)

    def score_labelled(self, labelled: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Score graphs given as ``(edge_index, node_labels)`` pairs (screening's packed molecules too).

        Args:
            labelled: the graphs.

        Returns:
            The scores, shape (graphs,).

        Raises:
            GLocalKDError: not fitted.
        """
        return self._scores(labelled)

    def graph_scores(self, graphs: GraphSet) -> np.ndarray:
        """Score graphs by their most surprising nodes (higher = rarer neighbourhoods).

        Args:
            graphs: the graphs to score.

        Returns:
            One score per graph.
        """
        return self._scores(self._labelled(graphs))

    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor") -> np.ndarray:
        """Give each graph's node surprises, sorted and padded: the ``top_nodes`` largest, for the map.

        Args:
            graphs: the graphs.
            network: ignored: there is one representation.

        Returns:
            Shape (graphs, top_nodes), float32: each graph's largest node surprises, largest first,
            0 where a graph has fewer nodes.

        Raises:
            GLocalKDError: not fitted.
        """
        surprise, graph, n = self.node_surprise(self._labelled(graphs))
        g, rank, kept = _largest(surprise, graph, n, self.top_nodes)
        out = np.zeros((n, self.top_nodes), dtype=np.float32)
        out[g, rank] = kept
        return out

    def _labelled(self, graphs: GraphSet):
        """The graphs as the WL labels read them, their labels checked against the training graphs'."""
        return checked_labelled(getattr(self, "coding_", None), graphs)

    def fitted_state(self) -> dict:
        """Give the WL vocabulary, the label counts and the training scores, for a model file.

        Returns:
            ``{"wl", "graph_counts", "n_train", "train_scores", "coding"}``.

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        return {"wl": self.wl_.fitted_state(), "graph_counts": self.graph_counts_, "n_train": self.n_train_,
                "train_scores": self.train_scores_, "coding": self.coding_}

    def restore_fitted_state(self, state: dict, device: str = "auto") -> None:
        """Set the fitted state from :meth:`fitted_state`'s values, checking them.

        Args:
            state: the values :meth:`fitted_state` gave.
            device: unused (no network).

        Raises:
            ValueError: the counts do not match the vocabulary, or exceed the training graphs.
        """
        wl = WLFeatures(self.iterations)
        wl.restore_fitted_state(state["wl"])
        counts = np.asarray(state["graph_counts"], dtype=np.int64)
        n_train = int(state["n_train"])
        if counts.shape != (wl.n_columns_,) or n_train < 1 or (len(counts) and (counts.min() < 1 or counts.max() > n_train)):
            raise ValueError("the rare-substructure counts do not match the WL vocabulary and the training graphs")
        self.wl_, self.graph_counts_, self.n_train_ = wl, counts, n_train
        self.coding_ = dict(state.get("coding") or {})  # files older than the record: not checked
        self.train_scores_ = np.asarray(state["train_scores"], dtype=np.float64)
        self.loss_history_, self.stopped_early_ = [], False
