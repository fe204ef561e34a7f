"""GLocalKD: glocal knowledge distillation from a frozen random GCN (Ma et al., WSDM 2022).

A predictor GCN learns to reproduce the node embeddings and the max-pooled graph
embedding of a frozen, randomly initialised target GCN on normal graphs. A graph's
anomaly score is its graph-embedding error plus lambda times its mean node-embedding
error; each node's own error says which nodes drive the score.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import global_max_pool
from torch_geometric.utils import scatter

from .errors import DataError, GLocalKDError, ModelFileError
from .features import FeatureSchema
from .gcn import GCNEncoder, normalized_adjacency
from .graphset import GraphSet
from .scores import Scores

MODEL_FORMAT = "glocalkd-studio/model"
MODEL_VERSION = 1
# Cache the frozen target's outputs when they fit in this many bytes (else recompute per batch).
TARGET_CACHE_BYTES = 4 * 1024**3


@dataclass
class EpochInfo:
    """Progress of training, given to ``on_epoch`` after every epoch."""

    epoch: int
    epochs: int
    loss: float
    seconds: float


def resolve_device(device: str) -> torch.device:
    """``auto`` is CUDA when torch sees a GPU, else CPU; ``cpu``/``cuda`` force one."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise GLocalKDError("device 'cuda' asked for, but torch sees no CUDA GPU (use 'auto' or 'cpu')")
    return torch.device(device)


class GLocalKD:
    """Graph-level anomaly detector in the scikit-learn / PyOD style: ``fit`` then ``score``.

    Parameters are the paper's defaults (``normalize``: per-layer L2 normalisation of node
    embeddings as in the authors' code, off by default; see :class:`core.gcn.GCNEncoder`). Fitted state lives in trailing-underscore
    attributes: ``schema_``, ``target_``, ``predictor_``, ``loss_history_``,
    ``train_scores_`` (the training graphs' scores, for thresholds) and ``stopped_early_``.
    """

    def __init__(self, epochs: int = 150, lr: float = 1e-4, batch_size: int = 300, hidden_dim: int = 512,
                 out_dim: int = 256, num_layers: int = 3, lam: float = 1.0, normalize: bool = False,
                 features: str = "auto", seed: int = 0, device: str = "auto"):
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.hidden_dim = hidden_dim
        self.out_dim = out_dim
        self.num_layers = num_layers
        self.lam = lam
        self.normalize = normalize
        self.features = features
        self.seed = seed
        self.device = device

    def get_params(self) -> dict:
        return {k: getattr(self, k) for k in ("epochs", "lr", "batch_size", "hidden_dim", "out_dim",
                                              "num_layers", "lam", "normalize", "features", "seed", "device")}

    # ------------------------------------------------------------------ training
    def fit(self, graphs: GraphSet, on_epoch: Callable[[EpochInfo], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> "GLocalKD":
        """Train the predictor on ``graphs`` (taken as normal).

        ``on_epoch`` is called after each epoch; ``should_stop`` is polled between batches
        and ends training cleanly (the model stays usable, ``stopped_early_`` is True).
        """
        self._check_params()
        if len(graphs) == 0:
            raise DataError("no graphs to train on", graphs.source)
        device = resolve_device(self.device)
        self.device_ = device
        self.schema_ = FeatureSchema.fit(graphs, self.features)
        data = self.schema_.apply(graphs)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.target_ = self._encoder().to(device)
            self.predictor_ = self._encoder().to(device)
        self.target_.requires_grad_(False).eval()
        cache = sum(d.num_nodes for d in data) * self.out_dim * 4 <= TARGET_CACHE_BYTES
        if cache:
            data = self._attach_targets(data, device)
        optimizer = torch.optim.Adam(self.predictor_.parameters(), lr=self.lr)
        loader = DataLoader(data, batch_size=self.batch_size, shuffle=True,
                            generator=torch.Generator().manual_seed(self.seed))
        self.loss_history_: list[float] = []
        self.stopped_early_ = False
        self.predictor_.train()
        for epoch in range(1, self.epochs + 1):
            start = time.perf_counter()
            total, count = 0.0, 0
            for batch in loader:
                if should_stop is not None and should_stop():
                    self.stopped_early_ = True
                    break
                batch = batch.to(device)
                adj = normalized_adjacency(batch.edge_index, batch.num_nodes)
                if cache:
                    t_node, t_graph = batch.t_node, batch.t_graph
                else:
                    with torch.no_grad():
                        t_node, t_graph = self._embed(self.target_, batch, adj)
                graph_err, node_term, _ = self._errors(batch, adj, t_node, t_graph)
                loss = (graph_err + self.lam * node_term).mean()
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                total += float(loss.detach()) * batch.num_graphs
                count += batch.num_graphs
            if self.stopped_early_:
                break
            self.loss_history_.append(total / max(count, 1))
            if on_epoch is not None:
                on_epoch(EpochInfo(epoch, self.epochs, self.loss_history_[-1], time.perf_counter() - start))
        self.predictor_.eval()
        self.train_scores_ = self.score(graphs).score
        return self

    def _encoder(self) -> GCNEncoder:
        return GCNEncoder(self.schema_.dim, self.hidden_dim, self.out_dim, self.num_layers, self.normalize)

    def _check_params(self) -> None:
        checks = {"epochs": self.epochs >= 1, "lr": self.lr > 0, "batch_size": self.batch_size >= 1,
                  "hidden_dim": self.hidden_dim >= 1, "out_dim": self.out_dim >= 1,
                  "num_layers": self.num_layers >= 1, "lam": self.lam >= 0}
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise GLocalKDError("invalid setting: " + ", ".join(f"{k}={getattr(self, k)!r}" for k in bad))

    def _attach_targets(self, data: list[Data], device: torch.device) -> list[Data]:
        """Compute the frozen target's node and graph embeddings once; they never change."""
        out = []
        for batch in DataLoader(data, batch_size=max(self.batch_size, 1024)):
            batch = batch.to(device)
            adj = normalized_adjacency(batch.edge_index, batch.num_nodes)
            with torch.no_grad():
                t_node, t_graph = self._embed(self.target_, batch, adj)
            t_node, t_graph = t_node.cpu(), t_graph.cpu()
            ptr = batch.ptr.cpu()
            for i in range(batch.num_graphs):
                out.append(Data(x=data[len(out)].x, edge_index=data[len(out)].edge_index,
                                num_nodes=data[len(out)].num_nodes,
                                t_node=t_node[ptr[i]:ptr[i + 1]], t_graph=t_graph[i:i + 1]))
        return out

    @staticmethod
    def _embed(net: GCNEncoder, batch: Batch, adj: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = net(batch.x, adj)
        return h, global_max_pool(h, batch.batch, size=batch.num_graphs)

    def _errors(self, batch: Batch, adj: torch.Tensor, t_node: torch.Tensor, t_graph: torch.Tensor):
        """Per-graph squared graph-embedding error, per-graph mean node error, per-node errors."""
        h, h_graph = self._embed(self.predictor_, batch, adj)
        node_err = (h - t_node).pow(2).sum(dim=1)
        node_term = scatter(node_err, batch.batch, dim=0, dim_size=batch.num_graphs, reduce="mean")
        graph_err = (h_graph - t_graph).pow(2).sum(dim=1)
        return graph_err, node_term, node_err

    # ------------------------------------------------------------------ scoring
    def _check_fitted(self) -> None:
        if not hasattr(self, "predictor_"):
            raise GLocalKDError("this model is not trained yet: call fit() or load a model file")

    @torch.no_grad()
    def score(self, graphs: GraphSet, batch_size: int = 2048,
              on_progress: Callable[[int, int], None] | None = None) -> Scores:
        """Anomaly scores of ``graphs`` (higher = more anomalous), with both terms and per-node errors."""
        self._check_fitted()
        device = self.device_
        data = self.schema_.apply(graphs)
        parts = []
        done = 0
        for batch in DataLoader(data, batch_size=batch_size):
            batch = batch.to(device)
            adj = normalized_adjacency(batch.edge_index, batch.num_nodes)
            t_node, t_graph = self._embed(self.target_, batch, adj)
            graph_err, node_term, node_err = self._errors(batch, adj, t_node, t_graph)
            parts.append(Scores(
                score=(graph_err + self.lam * node_term).cpu().numpy(),
                graph_term=graph_err.cpu().numpy(),
                node_term=node_term.cpu().numpy(),
                node_errors=node_err.cpu().numpy(),
                node_ptr=batch.ptr.cpu().numpy().astype(np.int64),
            ))
            done += batch.num_graphs
            if on_progress is not None:
                on_progress(done, len(data))
        return Scores.concat(parts)

    @torch.no_grad()
    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor", batch_size: int = 2048) -> np.ndarray:
        """Max-pooled graph embeddings, shape (graphs, out_dim), from the ``predictor`` or the
        frozen ``target`` network, or their ``difference`` (predictor - target: the error vector)."""
        self._check_fitted()
        if network not in ("predictor", "target", "difference"):
            raise GLocalKDError(f"network must be 'predictor', 'target' or 'difference', not {network!r}")
        parts = []
        for batch in DataLoader(self.schema_.apply(graphs), batch_size=batch_size):
            batch = batch.to(self.device_)
            adj = normalized_adjacency(batch.edge_index, batch.num_nodes)
            emb = {}
            for name in ("predictor", "target"):
                if network in (name, "difference"):
                    net = self.predictor_ if name == "predictor" else self.target_
                    emb[name] = self._embed(net, batch, adj)[1]
            out = emb["predictor"] - emb["target"] if network == "difference" else emb[network]
            parts.append(out.cpu().numpy())
        return np.concatenate(parts) if parts else np.zeros((0, self.out_dim), dtype=np.float32)

    def decision_function(self, graphs: GraphSet) -> np.ndarray:
        """Graph anomaly scores only (PyOD's name for it)."""
        return self.score(graphs).score

    def threshold(self, percentile: float = 95.0) -> float:
        """The given percentile of the training graphs' scores: a natural cut-off for flagging."""
        self._check_fitted()
        return float(np.percentile(self.train_scores_, percentile))

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> None:
        """Write weights, hyper-parameters and the feature schema (atomically; safe to load)."""
        self._check_fitted()
        path = Path(path)
        state = {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "params": {k: v for k, v in self.get_params().items()},
            "schema": self.schema_.to_dict(),
            "target": {k: v.cpu() for k, v in self.target_.state_dict().items()},
            "predictor": {k: v.cpu() for k, v in self.predictor_.state_dict().items()},
            "train_scores": torch.from_numpy(np.asarray(self.train_scores_, dtype=np.float32)),
            "loss_history": [float(v) for v in self.loss_history_],
            "stopped_early": bool(self.stopped_early_),
        }
        tmp = path.with_name(path.name + ".tmp")
        torch.save(state, tmp)
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path, device: str = "auto") -> "GLocalKD":
        """Read a model file with torch's ``weights_only`` loader (no code in a file can run)."""
        path = Path(path)
        if not path.is_file():
            raise ModelFileError(f"{path}: no such model file")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise ModelFileError(f"{path}: not a GLocalKD Studio model file, or damaged "
                                 f"({type(exc).__name__})") from None
        if not isinstance(state, dict) or state.get("format") != MODEL_FORMAT:
            raise ModelFileError(f"{path}: not a GLocalKD Studio model file")
        if state.get("version") != MODEL_VERSION:
            raise ModelFileError(f"{path}: model file version {state.get('version')} is not supported "
                                 f"by this version (it reads version {MODEL_VERSION}); retrain the model")
        try:
            params = dict(state["params"])
            params["device"] = device
            model = cls(**params)
            model.device_ = resolve_device(device)
            model.schema_ = FeatureSchema.from_dict(state["schema"])
            nets = []
            for key in ("target", "predictor"):
                net = model._encoder()
                net.load_state_dict(state[key])
                nets.append(net.to(model.device_).eval())
            model.target_, model.predictor_ = nets
            model.target_.requires_grad_(False)
            model.train_scores_ = state["train_scores"].numpy()
            model.loss_history_ = list(state["loss_history"])
            model.stopped_early_ = bool(state.get("stopped_early", False))
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise ModelFileError(f"{path}: damaged model file ({exc})") from None
        return model

