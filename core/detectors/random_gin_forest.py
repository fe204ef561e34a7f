"""Random-GIN isolation forests: an ensemble of untrained graph encoders, one isolation forest
on each one's graph embeddings, their scores averaged.

The idea of Deep Isolation Forest (Xu et al., TKDE 2023): random, untrained networks map the
graphs into several different spaces, and an isolation forest in each finds the graphs that
are easy to isolate there; averaging over the spaces removes the luck of any one projection.
Written here from the paper's description; nothing is trained but the forests.

Settings, fixed before the first measurement (docs/results.md):

- node features: the schema of the training graphs (``features="auto"``), each column
  standardised with the training nodes' mean and deviation;
- ``n_encoders=20`` GIN encoders of ``depth=3`` layers ``h' = relu(MLP(h + sum of the
  neighbours' h))``, the MLP two linear maps ``width=64`` wide with a ReLU between them,
  weights and biases drawn as torch's ``Linear`` draws them (uniform within ``1 / sqrt(fan_in)``),
  each encoder from its own seed; float64;
- a graph's embedding under an encoder: the sum over its nodes of every layer's output,
  concatenated (3 x 64 values);
- one scikit-learn ``IsolationForest`` per encoder, 100 trees on subsamples of 256 graphs;
  a graph's score is the mean over the encoders of the forests' anomaly scores
  (``-score_samples``); seed 0.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.data.features import FeatureSchema
from core.data.graphset import GraphSet
from core.detectors.base import COUNT, GraphLevelDetector, is_count
from core.detectors.embedding_view import CHUNK_NODES
from core.detectors.node_signals import NodeBatch, column_scale, node_batch


def random_gin(in_dim: int, hidden_dim: int, num_layers: int, seed: int) -> list[tuple]:
    """Draw the weights of one untrained GIN encoder, as torch's ``Linear`` draws them.

    Args:
        in_dim: the width of the node features.
        hidden_dim: the width of every layer's MLP.
        num_layers: GIN layers.
        seed: the seed of the draws.

    Returns:
        Per layer ``(W1, b1, W2, b2)``, float64 tensors uniform within ``1 / sqrt(fan_in)``; W is
        (fan_in, fan_out).
    """
    import torch

    gen = torch.Generator().manual_seed(int(seed))
    layers, width = [], in_dim
    for _ in range(num_layers):
        parts = []
        for fan_in, fan_out in ((width, hidden_dim), (hidden_dim, hidden_dim)):
            bound = 1.0 / np.sqrt(max(fan_in, 1))
            parts.append((torch.rand(fan_in, fan_out, generator=gen, dtype=torch.float64) * 2 - 1) * bound)
            parts.append((torch.rand(fan_out, generator=gen, dtype=torch.float64) * 2 - 1) * bound)
        layers.append(tuple(parts))
        width = hidden_dim
    return layers


def gin_embedding(batch: NodeBatch, x: np.ndarray, layers: list[tuple]) -> np.ndarray:
    """Embed graphs with one untrained GIN encoder: each layer's node outputs summed per graph.

    Args:
        batch: the graphs' nodes and edges.
        x: standardised node features, shape (nodes, features).
        layers: the encoder's weights (:func:`random_gin`).

    Returns:
        Shape (graphs, layers * hidden): the per-layer sums, concatenated.
    """
    import torch

    h, pooled = x, []
    for w1, b1, w2, b2 in layers:
        mixed = torch.from_numpy(h + batch.neighbour_sum(h))
        h = torch.relu(torch.relu(mixed @ w1 + b1) @ w2 + b2).numpy()
        pooled.append(batch.per_graph_sum(h))
    return np.concatenate(pooled, axis=1)


class RandomGINForest(GraphLevelDetector):
    """Deep-Isolation-Forest-style ensemble of untrained GIN encoders with one isolation forest each.

    Fitted state: ``schema_``, ``mean_``, ``std_`` (node columns), ``encoders_``, ``forests_``,
    ``train_scores_``. Its forests are scikit-learn's, which have no safe file format: it cannot
    be saved.

    Args:
        n_encoders: untrained GIN encoders, one forest each.
        depth: GIN layers per encoder (not ``num_layers``: the app's GCN settings must not reach
            these encoders).
        width: the width of each layer's MLP.
        n_estimators: trees per forest.
        max_samples: each tree's subsample of graphs (capped by the training size).
        features: the node-feature recipe (:class:`core.data.features.FeatureSchema`).
        seed: the seed of the encoders and the forests.
    """

    name = "gin-iforest"
    has_node_scores = False
    FITTED = ("schema_", "mean_", "std_", "encoders_", "forests_", "train_scores_", "loss_history_",
              "stopped_early_")

    def __init__(self, n_encoders: int = 20, depth: int = 3, width: int = 64, n_estimators: int = 100,
                 max_samples: int = 256, features: str = "auto", seed: int = 0):
        self.n_encoders = n_encoders
        self.depth = depth  # not num_layers / hidden_dim: the app's GCN settings must not reach these encoders
        self.width = width
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.features = features
        self.seed = seed

    def validate_params(self) -> None:
        """Check that the encoders, layers, width, trees and subsample are all at least 1.

        Raises:
            ParameterError: naming each that is not a whole number of at least 1 (:meth:`check_settings`).
        """
        self.check_settings({name: (is_count(getattr(self, name)), COUNT)
                             for name in ("n_encoders", "depth", "width", "n_estimators", "max_samples")})

    def _fit(self, graphs: GraphSet, on_epoch: Callable | None = None,
             should_stop: Callable[[], bool] | None = None) -> None:
        """Draw the encoders and fit one forest per encoder; no epochs."""
        from sklearn.ensemble import IsolationForest  # here: importing scikit-learn costs about a second

        self.schema_ = FeatureSchema.fit(graphs, self.features)
        self.mean_, self.std_ = column_scale(node_batch(graphs, self.schema_).x)
        self.encoders_ = [random_gin(self.schema_.dim, self.width, self.depth, 7919 * self.seed + i)
                          for i in range(self.n_encoders)]
        embedded = self._embeddings(graphs)
        self.forests_ = [IsolationForest(n_estimators=self.n_estimators, max_samples=min(self.max_samples, len(graphs)),
                                         random_state=1000 * self.seed + i).fit(e) for i, e in enumerate(embedded)]
        self.train_scores_ = self._forest_scores(embedded)
        self.loss_history_: list[float] = []
        self.stopped_early_ = False

    def _embeddings(self, graphs: GraphSet) -> list[np.ndarray]:
        """Per encoder, (graphs, layers * hidden) embeddings; graphs a chunk of nodes at a time."""
        parts: list[list[np.ndarray]] = [[] for _ in self.encoders_]
        start, nodes = 0, 0
        for i, g in enumerate(graphs.graphs):
            nodes += int(g.num_nodes)
            if nodes >= CHUNK_NODES or i == len(graphs) - 1:
                batch = node_batch(graphs.subset(range(start, i + 1)), self.schema_)
                x = (batch.x - self.mean_) / self.std_
                for part, layers in zip(parts, self.encoders_):
                    part.append(gin_embedding(batch, x, layers))
                start, nodes = i + 1, 0
        return [np.concatenate(p) if p else np.zeros((0, self.depth * self.width)) for p in parts]

    def _forest_scores(self, embedded: list[np.ndarray]) -> np.ndarray:
        total = np.zeros(len(embedded[0]))
        for forest, e in zip(self.forests_, embedded):
            total += -forest.score_samples(e)
        return total / len(self.forests_)

    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor") -> np.ndarray:
        """Give the first encoder's graph embeddings (the forests' spaces differ; one is mapped).

        Args:
            graphs: the graphs.
            network: ignored.

        Returns:
            Shape (graphs, depth * width), float32.

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        return self._embeddings(graphs)[0].astype(np.float32)

    def graph_scores(self, graphs: GraphSet) -> np.ndarray:
        """Score graphs by the mean of the forests' anomaly scores (higher = more anomalous).

        Args:
            graphs: the graphs to score.

        Returns:
            One score per graph.
        """
        return self._forest_scores(self._embeddings(graphs))
