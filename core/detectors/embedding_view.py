"""A label-free view: a fixed embedding of each graph, then LESINN on the embeddings.

The embedding of a graph depends only on that graph and on what was fitted on the training
graphs (the node-feature schema, scales, random projections), never on the other graphs scored
with it. Subclasses say how the embedding is fitted (:meth:`EmbeddingView._fit_embedding`) and
computed (:meth:`EmbeddingView._embed`); LESINN (``ensemble_size`` members of
``subsample_size`` graphs, Euclidean distances) scores them, as it scores the WL kernel's view.
"""
from __future__ import annotations

import abc
from collections.abc import Callable

import numpy as np

from core.data.features import FeatureSchema
from core.data.graphset import GraphSet
from core.detectors.base import GraphLevelDetector
from core.detectors.lesinn import LESINN
from core.detectors.node_signals import NodeBatch, column_scale, node_batch

# Nodes laid end to end per chunk of graphs while embedding (bounds the memory of wide node maps).
CHUNK_NODES = 16_384


class EmbeddingView(GraphLevelDetector, abc.ABC):
    """Base of the views that embed each graph on its own and score the embeddings by LESINN.

    Subclasses set ``features``, ``ensemble_size``, ``subsample_size`` and ``seed`` in their
    constructors and implement ``_fit_embedding`` and ``_embed``. Fitted state: ``schema_``, the
    subclass's embedding state, ``scorer_``, ``train_scores_``.
    """

    has_node_scores = False
    FITTED = ("schema_", "scorer_", "train_scores_", "loss_history_", "stopped_early_")

    # set by subclasses' constructors
    features: str
    ensemble_size: int
    subsample_size: int
    seed: int

    def _fit(self, graphs: GraphSet, on_epoch: Callable | None = None,
             should_stop: Callable[[], bool] | None = None) -> None:
        """Fit the node-feature schema, the embedding and LESINN; no epochs."""
        self.schema_ = FeatureSchema.fit(graphs, self.features)
        embedded = self._fit_embedding(graphs)
        if embedded is None:
            embedded = self._embeddings(graphs)
        self.scorer_ = LESINN(self.ensemble_size, self.subsample_size, metric="euclidean", seed=self.seed).fit(embedded)
        self.train_scores_ = self.scorer_.train_scores_
        self.loss_history_: list[float] = []
        self.stopped_early_ = False

    @abc.abstractmethod
    def _fit_embedding(self, graphs: GraphSet) -> np.ndarray | None:
        """Fit what the embedding needs from the training graphs (``schema_`` is set); return
        their embeddings when fitting computed them anyway (else None: they are computed after)."""

    @abc.abstractmethod
    def _embed(self, batch: NodeBatch) -> np.ndarray:
        """(graphs, dims) embeddings of the graphs of ``batch``."""

    def _embeddings(self, graphs: GraphSet) -> np.ndarray:
        """Every graph's embedding, graphs taken a chunk of about :data:`CHUNK_NODES` nodes at a time."""
        parts, start, nodes = [], 0, 0
        for i, g in enumerate(graphs.graphs):
            nodes += int(g.num_nodes)
            if nodes >= CHUNK_NODES or i == len(graphs) - 1:
                parts.append(self._embed(node_batch(graphs.subset(range(start, i + 1)), self.schema_)))
                start, nodes = i + 1, 0
        return np.concatenate(parts) if parts else np.zeros((0, 0))

    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor") -> np.ndarray:
        """Give each graph's embedding (the representation LESINN scores).

        Args:
            graphs: the graphs.
            network: ignored: there is one representation.

        Returns:
            Shape (graphs, embedding width), float32.

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        return self._embeddings(graphs).astype(np.float32)

    def graph_scores(self, graphs: GraphSet) -> np.ndarray:
        """Score graphs by LESINN on their embeddings (higher = more anomalous).

        Args:
            graphs: the graphs to score.

        Returns:
            One score per graph.
        """
        return self.scorer_.decision_function(self._embeddings(graphs))


class StandardisedView(EmbeddingView):
    """Base of the views whose graph vectors are standardised with the training graphs' column
    means and deviations before LESINN (the spectral view, the distance profile, graphlets).

    Subclasses implement ``_raw``. Fitted state beside the base's: ``mean_``, ``std_``.
    """

    FITTED = EmbeddingView.FITTED + ("mean_", "std_")

    @abc.abstractmethod
    def _raw(self, batch: NodeBatch) -> np.ndarray:
        """(graphs, dims) vectors of the graphs of ``batch``, before standardising."""

    def _fit_embedding(self, graphs: GraphSet) -> np.ndarray:
        self.mean_, self.std_ = np.zeros(0), np.ones(0)  # identity while the training vectors are computed
        raw = self._embeddings(graphs)
        self.mean_, self.std_ = column_scale(raw)
        return (raw - self.mean_) / self.std_  # the training embeddings, without computing them again

    def _embed(self, batch: NodeBatch) -> np.ndarray:
        raw = self._raw(batch)
        if len(self.mean_) == 0:
            return raw
        return (raw - self.mean_) / self.std_
