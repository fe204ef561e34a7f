"""OCGCN: a GCN trained with the Deep SVDD one-class objective (Zhao and Akoglu, 2021).

The GLocalKD paper's end-to-end competitor: "the network architecture and the optimization
of OCGCN is the same as our model" (three GCN layers, 512/256 wide, max-pooled graph
embedding, Adam). Deep SVDD (Ruff et al., ICML 2018) fixes the centre ``c`` as the mean
graph embedding of the training graphs under the initial network (coordinates nearer zero
than ``eps`` pushed to +-eps), then trains the network to pull the normal graphs towards
``c``; a graph's score is its squared distance to ``c``. As Deep SVDD prescribes, the layers
have no bias terms (with biases the network can map every graph onto ``c``). Graph scores
only: no per-node scores.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from core.detectors.base import COUNT, NUMERICAL_ERRORS, Detector, EpochInfo, describe_error, is_count, is_number
from core.detectors.training import train_epochs
from core.errors import GLocalKDError
from core.data.features import MODES, FeatureSchema
from core.nn.gcn import GCNEncoder
from core.data.graphset import GraphSet
from core.nn.optim import adam
from core.data.packed import PackedBatch, PackedGraphs, max_batch_nodes
from core.nn.pooling import global_max_pool
from core.data.scores import Scores
from core.runtime.device import resolve_device


class OCGCN(Detector):
    """One-class GCN (Deep SVDD) in the scikit-learn / PyOD style: ``fit`` then ``score``.

    Fitted state: ``device_``, ``schema_``, ``net_``, ``center_``, ``loss_history_``,
    ``train_scores_``, ``stopped_early_``.

    Args:
        epochs: training epochs.
        lr: the Adam learning rate.
        batch_size: training graphs per batch.
        hidden_dim: the width of the GCN's hidden layers.
        out_dim: the width of the graph embeddings.
        num_layers: GCN layers.
        weight_decay: Adam's L2 penalty (Deep SVDD's weight decay).
        eps: centre coordinates nearer zero than this are pushed to +-eps.
        features: the node-feature recipe (:class:`core.data.features.FeatureSchema`).
        seed: the seed of the weights and the batch order.
        device: ``auto``, ``cpu`` or ``cuda``.
    """

    name = "ocgcn"
    has_node_scores = False

    def __init__(self, epochs: int = 150, lr: float = 1e-4, batch_size: int = 300, hidden_dim: int = 512,
                 out_dim: int = 256, num_layers: int = 3, weight_decay: float = 5e-7, eps: float = 0.1,
                 features: str = "auto", seed: int = 0, device: str = "auto"):
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.hidden_dim = hidden_dim
        self.out_dim = out_dim
        self.num_layers = num_layers
        self.weight_decay = weight_decay
        self.eps = eps
        self.features = features
        self.seed = seed
        self.device = device

    FITTED = ("device_", "schema_", "net_", "center_", "loss_history_", "train_scores_", "stopped_early_")

    def validate_params(self) -> None:
        """Check the settings: a known feature recipe, counts (epochs, batch size, widths, layers) of
        at least 1, ``lr`` and ``eps`` above 0, ``weight_decay`` of at least 0.

        Raises:
            ParameterError: naming every invalid setting (:meth:`check_settings`).
        """
        counts = ("epochs", "batch_size", "hidden_dim", "out_dim", "num_layers")
        self.check_settings({"features": (self.features in MODES, "one of " + ", ".join(MODES)),
                             **{name: (is_count(getattr(self, name)), COUNT) for name in counts},
                             "lr": (is_number(self.lr, above=True), "a positive number"),
                             "eps": (is_number(self.eps, above=True), "a positive number"),
                             "weight_decay": (is_number(self.weight_decay), "a number of at least 0")})

    def _fit(self, graphs: GraphSet, on_epoch: Callable[[EpochInfo], None] | None,
             should_stop: Callable[[], bool] | None) -> None:
        """Fix the centre (Deep SVDD), then train the network to pull normal graphs towards it."""
        self.device_ = device = resolve_device(self.device)
        self.schema_ = FeatureSchema.fit(graphs, self.features)
        packed = PackedGraphs(self.schema_.apply(graphs))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(self.seed))
            net = GCNEncoder(self.schema_.dim, self.hidden_dim, self.out_dim, self.num_layers, bias=False).to(device)
        self.net_ = net
        self.center_ = self._initial_center(packed)
        optimizer = adam(net.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        net.train()
        self.loss_history_, self.stopped_early_ = train_epochs(
            packed, self._distances, optimizer, device, self.epochs, self.batch_size, self.seed, on_epoch, should_stop)
        net.eval()
        self.train_scores_ = self.score(graphs).score

    def _embed(self, batch: PackedBatch) -> torch.Tensor:
        return global_max_pool(self.net_(batch.x, batch.adj, adj_symmetric=batch.symmetric), batch.batch, size=batch.num_graphs)

    def _distances(self, batch: PackedBatch) -> torch.Tensor:
        return (self._embed(batch) - self.center_).pow(2).sum(dim=1)

    def _batches(self, packed: PackedGraphs, batch_size: int):
        return packed.batches(batch_size, self.device_, max_nodes=max_batch_nodes(self.device_))

    @torch.no_grad()
    def _initial_center(self, packed: PackedGraphs) -> torch.Tensor:
        """Deep SVDD's centre: the mean initial embedding, coordinates kept at least ``eps`` from 0."""
        total = torch.zeros(self.out_dim, device=self.device_)
        for batch in self._batches(packed, 2048):
            total += self._embed(batch).sum(dim=0)
        c = total / len(packed)
        c[(c.abs() < self.eps) & (c < 0)] = -self.eps
        c[(c.abs() < self.eps) & (c >= 0)] = self.eps
        return c

    def _check_fitted(self) -> None:
        if not hasattr(self, "net_") or not hasattr(self, "center_"):
            raise GLocalKDError("this detector is not trained yet: call fit()")

    @torch.no_grad()
    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor", batch_size: int = 2048) -> np.ndarray:
        """Compute the trained network's max-pooled graph embeddings (there is one network).

        Args:
            graphs: the graphs.
            network: ignored: there is one network.
            batch_size: graphs per forward pass.

        Returns:
            The embeddings, shape (graphs, out_dim).

        Raises:
            GLocalKDError: the detector is not trained.
        """
        self._check_fitted()
        parts = [self._embed(b).cpu().numpy()
                 for b in self._batches(PackedGraphs(self.schema_.apply(graphs)), batch_size)]
        return np.concatenate(parts) if parts else np.zeros((0, self.out_dim), dtype=np.float32)

    @torch.no_grad()
    def score(self, graphs: GraphSet, batch_size: int = 512,
              on_progress: Callable[[int, int], None] | None = None) -> Scores:
        """Score graphs by the squared distance of their embeddings to the centre (higher = more anomalous).

        Args:
            graphs: the graphs to score.
            batch_size: graphs per forward pass.
            on_progress: called as ``on_progress(done, total)`` after each batch.

        Returns:
            Graph scores only (:meth:`Scores.graph_only`): no node scores.

        Raises:
            GLocalKDError: the detector is not trained, or scoring fails (e.g. out of memory).
        """
        self._check_fitted()
        values, done = [], 0
        try:
            for batch in self._batches(PackedGraphs(self.schema_.apply(graphs)), batch_size):
                values.append(self._distances(batch).cpu().numpy())
                done += batch.num_graphs
                if on_progress is not None:
                    on_progress(done, len(graphs))
        except NUMERICAL_ERRORS as exc:
            raise GLocalKDError(f"scoring failed ({describe_error(exc)})") from exc
        score = np.concatenate(values) if values else np.zeros(0, dtype=np.float32)
        return Scores.graph_only(score, graphs.node_ptr())
