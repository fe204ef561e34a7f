"""GLocalKD: glocal knowledge distillation from a frozen random GCN (Ma et al., WSDM 2022).

A predictor GCN learns to reproduce the node embeddings and the max-pooled graph
embedding of a frozen, randomly initialised target GCN on normal graphs. A graph's
anomaly score is its graph-embedding error plus lambda times its mean node-embedding
error; each node's own error says which nodes drive the score.

Two optional readouts of the same trained networks (training is unchanged) cover what the
paper's score misses (measured in ``docs/explanations.md``): ``node_max`` adds the largest
node error to the node term, so a few anomalous atoms are not averaged away in a large
molecule; ``size_term`` adds the error of the sum-pooled embeddings (divided by the mean
training graph size) to the graph term, so a graph made of many normal parts, which the
max-pool and the mean cannot tell from one part, scores high.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from core.detectors.base import (COUNT, MODEL_FORMAT, NUMERICAL_ERRORS, CallbackError, Detector, EpochInfo, call_back,
                                 describe_error, is_count, is_number, not_this_kind, reference_scores)
from core.detectors.training import train_epochs
from core.errors import GLocalKDError, ModelFileError
from core.runtime.model_files import version_problem
from core.data.features import MODES, FeatureSchema
from core.nn.gcn import GCNEncoder, normalized_adjacency
from core.data.graphset import GraphSet
from core.nn.optim import adam
from core.data.packed import PackedBatch, PackedGraphs, max_batch_nodes
from core.nn.pooling import global_max_pool, graph_mean, graph_sum
from core.nn.row_groups import GroupedPropagation
from core.data.scores import Scores
from core.runtime.device import matmul_dtype, resolve_device

MODEL_VERSION = 2  # 2: the readouts node_max and size_term, and the training graphs' mean size
READABLE_VERSIONS = (1, 2)
# Cache the frozen target's outputs when they fit in this many bytes (else recompute per batch).
TARGET_CACHE_BYTES = 4 * 1024**3


class GLocalKD(Detector):
    """GLocalKD, the paper's detector, in the scikit-learn / PyOD style: ``fit`` then ``score``.

    The defaults are the paper's. Fitted state lives in trailing-underscore attributes:
    ``schema_``, ``target_``, ``predictor_``, ``loss_history_``, ``train_scores_`` (the training
    graphs' scores, for thresholds), ``mean_nodes_`` (the training graphs' mean node count),
    ``stopped_early_``, ``device_`` and ``grouped_`` (whether the networks run on groups of nodes
    that look alike, see :mod:`core.nn.row_groups`: decided on the training graphs, then used for
    every batch on a CPU).

    Args:
        epochs: training epochs.
        lr: the Adam learning rate.
        batch_size: training graphs per batch.
        hidden_dim: the width of the GCNs' hidden layers.
        out_dim: the width of the node and graph embeddings.
        num_layers: GCN layers in each network.
        lam: lambda, the weight of the node term in the loss and the score.
        normalize: per-layer L2 normalisation of node embeddings as in the authors' code, off by
            default (see :class:`core.nn.gcn.GCNEncoder`).
        features: the node-feature recipe (:class:`core.data.features.FeatureSchema`), ``auto``
            by default.
        seed: the seed of the networks' weights and the batch order.
        device: ``auto``, ``cpu`` or ``cuda`` (:func:`core.runtime.device.resolve_device`).
        node_max: add the largest node error to the node term (the module docstring's readout),
            off by default.
        size_term: add the sum-pooled error over the mean training size to the graph term (the
            module docstring's readout), off by default.
    """

    name = "glocalkd"
    has_node_scores = True

    def __init__(self, epochs: int = 150, lr: float = 1e-4, batch_size: int = 300, hidden_dim: int = 512,
                 out_dim: int = 256, num_layers: int = 3, lam: float = 1.0, normalize: bool = False,
                 features: str = "auto", seed: int = 0, device: str = "auto", node_max: bool = False,
                 size_term: bool = False):
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
        self.node_max = node_max
        self.size_term = size_term

    # ------------------------------------------------------------------ training
    FITTED = ("device_", "schema_", "target_", "predictor_", "loss_history_", "stopped_early_",
              "train_scores_", "mean_nodes_", "grouped_")
    TRAIN_SCORES_ARE_SCORES = True  # _fit ends by scoring its training graphs

    def _fit(self, graphs: GraphSet, on_epoch: Callable[[EpochInfo], None] | None,
             should_stop: Callable[[], bool] | None) -> None:
        device = resolve_device(self.device)
        self.device_ = device
        self.schema_ = FeatureSchema.fit(graphs, self.features)
        self.mean_nodes_ = max(graphs.num_nodes / len(graphs), 1.0)
        data = self.schema_.apply(graphs)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(self.seed))
            self.target_ = self._encoder().to(device)
            self.predictor_ = self._encoder().to(device)
        self.target_.requires_grad_(False).eval()
        packed = PackedGraphs(data)
        del data
        self.grouped_ = self._grouping_pays_off(packed, device)
        cache = packed.num_nodes * self.out_dim * 4 <= TARGET_CACHE_BYTES
        if cache:
            self._attach_targets(packed, device)
        optimizer = adam(self.predictor_.parameters(), lr=self.lr)
        self.predictor_.train()
        self.loss_history_, self.stopped_early_ = train_epochs(
            packed, lambda batch: self._graph_losses(batch, cache), optimizer, device, self.epochs, self.batch_size,
            self.seed, on_epoch, should_stop,
            "lower the learning rate, or scale the node attributes (very large values overflow)")
        self.predictor_.eval()
        self.train_scores_ = self.score(graphs).score
        if not np.all(np.isfinite(self.train_scores_)):
            raise GLocalKDError("training diverged: some training graphs score NaN or infinite; lower the "
                                "learning rate, or scale the node attributes (very large values overflow)")

    def _graph_losses(self, batch, cache: bool) -> torch.Tensor:
        """Each graph's training loss: graph-embedding error + lambda x mean node error."""
        groups = self._grouping(batch, batch.adj)
        if cache:
            t_node, t_graph = batch.node_extra["t_node"], batch.graph_extra["t_graph"]
        else:
            with torch.no_grad():
                t_node, t_graph = self._embed(self.target_, batch, batch.adj, groups=groups)
        graph_err, node_term, _, _ = self._errors(batch, batch.adj, t_node, t_graph, groups=groups)
        return graph_err + self.lam * node_term

    def _encoder(self) -> GCNEncoder:
        return GCNEncoder(self.schema_.dim, self.hidden_dim, self.out_dim, self.num_layers, self.normalize)

    def validate_params(self) -> None:
        """Check the settings: whole numbers of at least 1, a positive finite ``lr``, a finite ``lam`` of at least 0.

        ``features`` must be one of the recipes and ``node_max`` and ``size_term`` booleans.

        Raises:
            ParameterError: naming every invalid setting and its value (:meth:`check_settings`).
        """
        self.check_settings({
            "epochs": (is_count(self.epochs), COUNT), "lr": (is_number(self.lr, above=True), "a positive number"),
            "batch_size": (is_count(self.batch_size), COUNT), "hidden_dim": (is_count(self.hidden_dim), COUNT),
            "out_dim": (is_count(self.out_dim), COUNT), "num_layers": (is_count(self.num_layers), COUNT),
            "lam": (is_number(self.lam), "a number of at least 0"),
            "features": (self.features in MODES, "one of " + ", ".join(MODES)),
            "node_max": (isinstance(self.node_max, bool), "True or False"),
            "size_term": (isinstance(self.size_term, bool), "True or False")})

    def _grouping_pays_off(self, packed: PackedGraphs, device: torch.device, sample_runs: int = 4) -> bool:
        """Whether grouping nodes that look alike (:class:`GroupedPropagation`) pays off on these
        graphs, judged on their first few runs: decided once, so that graphs whose rows are
        nearly all distinct (continuous attributes) pay nothing for looking in every run."""
        runs = packed.batches(self.batch_size, device, max_nodes=max_batch_nodes(device))
        plans = [GroupedPropagation.build(batch.x, batch.adj, self.num_layers)
                 for _, batch in zip(range(sample_runs), runs)]
        return 2 * sum(p is not None and p.pays_off for p in plans) >= len(plans) > 0

    def _attach_targets(self, packed: PackedGraphs, device: torch.device) -> None:
        """Compute the frozen target's node and graph embeddings once (they never change) and
        keep them beside the packed graphs, so each batch picks its rows."""
        nodes, graphs = [], []
        with torch.no_grad():
            for batch in packed.batches(max(self.batch_size, 1024), device, max_nodes=max_batch_nodes(device)):
                t_node, t_graph = self._embed(self.target_, batch, batch.adj,
                                              groups=self._grouping(batch, batch.adj))
                nodes.append(t_node.cpu())
                graphs.append(t_graph.cpu())
        packed.node_extra["t_node"] = torch.cat(nodes)
        packed.graph_extra["t_graph"] = torch.cat(graphs)

    @staticmethod
    def _embed(net: GCNEncoder, batch: PackedBatch, adj: torch.Tensor, matmul_dtype: torch.dtype | None = None,
               groups: GroupedPropagation | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        h = net(batch.x, adj, matmul_dtype, adj_symmetric=getattr(batch, "symmetric", False), groups=groups)
        return h, global_max_pool(h, batch.batch, size=batch.num_graphs)

    def _grouping(self, batch: PackedBatch, adj: torch.Tensor) -> GroupedPropagation | None:
        """Groups of nodes that look alike to the networks (both have the same layers), when
        this model groups (``grouped_``, decided on its training graphs) and runs on a CPU.
        On a GPU the products are cheap and finding the groups (numpy, on the CPU) would add
        a round trip per batch; that trade is not measured (no GPU here), so a GPU computes
        node by node as before."""
        if not self.grouped_ or self.device_.type != "cpu":
            return None
        return GroupedPropagation.build(batch.x, adj, self.num_layers)

    def _errors(self, batch: PackedBatch, adj: torch.Tensor, t_node: torch.Tensor, t_graph: torch.Tensor,
                matmul_dtype: torch.dtype | None = None, groups: GroupedPropagation | None = None):
        """Per-graph squared graph-embedding error, per-graph mean node error, per-node errors,
        and the per-node error vectors (predictor - target)."""
        h, h_graph = self._embed(self.predictor_, batch, adj, matmul_dtype, groups)
        diff = h - t_node
        node_err = diff.pow(2).sum(dim=1)
        node_term = graph_mean(node_err, batch.batch, batch.num_graphs)
        graph_err = (h_graph - t_graph).pow(2).sum(dim=1)
        return graph_err, node_term, node_err, diff

    # ------------------------------------------------------------------ scoring
    def _check_fitted(self) -> None:
        if not hasattr(self, "predictor_"):
            raise GLocalKDError("this model is not trained yet: call fit() or load a model file")

    @torch.no_grad()
    def score(self, graphs: GraphSet, batch_size: int = 512,
              on_progress: Callable[[int, int], None] | None = None) -> Scores:
        """Score graphs, with the graph and node terms and every node's error (higher = more anomalous).

        Args:
            graphs: the graphs to score, featurised by the model's schema.
            batch_size: graphs per forward pass (runs are also capped by node count).
            on_progress: called as ``on_progress(done, total)`` after each batch.

        Returns:
            The :class:`Scores`, with ``parts``: ``graph``, ``node_mean``, ``node_max`` and ``size``.

        Raises:
            GLocalKDError: the model is not trained, or scoring fails (e.g. out of memory).
        """
        self._check_fitted()
        device = self.device_
        packed = PackedGraphs(self.schema_.apply(graphs))
        parts = []
        done = 0
        try:
            for batch in packed.batches(batch_size, device, max_nodes=max_batch_nodes(device)):
                parts.append(self._score_batch(batch))
                done += batch.num_graphs
                if on_progress is not None:
                    call_back(on_progress, done, len(packed))
        except CallbackError as wrapped:
            raise wrapped.error from None
        except NUMERICAL_ERRORS as exc:
            raise GLocalKDError(f"scoring failed ({describe_error(exc)})") from exc
        return Scores.concat(parts)

    def _score_batch(self, batch: PackedBatch, matmul_dtype: torch.dtype | None = None) -> Scores:
        """Scores of one batch."""
        adj = batch.adj
        groups = self._grouping(batch, adj)
        t_node, t_graph = self._embed(self.target_, batch, adj, matmul_dtype, groups)
        graph_err, node_mean, node_err, diff = self._errors(batch, adj, t_node, t_graph, matmul_dtype, groups)
        index, size = batch.batch, batch.num_graphs
        node_max = global_max_pool(node_err.view(-1, 1), index, size).view(-1)
        size_err = graph_sum(diff, index, size).pow(2).sum(dim=1) / self.mean_nodes_ ** 2
        graph_term = graph_err + size_err if self.size_term else graph_err
        node_term = node_mean + node_max if self.node_max else node_mean
        parts = {"graph": graph_err, "node_mean": node_mean, "node_max": node_max, "size": size_err}
        return Scores(
            score=(graph_term + self.lam * node_term).cpu().numpy(),
            graph_term=graph_term.cpu().numpy(),
            node_term=node_term.cpu().numpy(),
            node_errors=node_err.cpu().numpy(),
            node_ptr=batch.ptr.cpu().numpy().astype(np.int64),
            parts={k: v.cpu().numpy() for k, v in parts.items()},
        )

    @torch.no_grad()
    def score_arrays(self, x: torch.Tensor, edge_index: torch.Tensor, num_nodes: torch.Tensor,
                     precision: str = "float32") -> Scores:
        """Score graphs given as one block: the fast path for screening large libraries.

        Args:
            x: node features already made by this model's schema, graphs one after another, shape
                (nodes, schema width).
            edge_index: edges over those global node ids (both directions), shape (2, edges).
            num_nodes: each graph's node count, shape (graphs,).
            precision: ``float32``, or ``bfloat16`` to run the dense products in bfloat16 (faster
                where the hardware has it; the ranking agrees closely with float32, see
                ``docs/scaling.md``).

        Returns:
            The graphs' :class:`Scores`, as :meth:`score` gives them.

        Raises:
            GLocalKDError: the model is not trained, ``x`` has the wrong width, an unknown
                ``precision``, or scoring fails.
        """
        self._check_fitted()
        dtype = matmul_dtype(precision)
        counts = num_nodes.to(torch.long)
        if x.shape[1] != self.schema_.dim:
            raise GLocalKDError(f"features have width {x.shape[1]}, the model expects {self.schema_.dim}")
        ptr = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
        device = self.device_
        batch = PackedBatch(x=x.float().to(device), adj=normalized_adjacency(edge_index.long(), int(ptr[-1])).to(device),
                            batch=torch.repeat_interleave(torch.arange(len(counts)), counts).to(device),
                            ptr=ptr.to(device), node_extra={}, graph_extra={})
        try:
            return self._score_batch(batch, matmul_dtype=dtype)
        except NUMERICAL_ERRORS as exc:
            raise GLocalKDError(f"scoring failed ({describe_error(exc)})") from exc

    @torch.no_grad()
    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor", batch_size: int = 2048) -> np.ndarray:
        """Compute max-pooled graph embeddings from one of the two networks, or their difference.

        Args:
            graphs: the graphs.
            network: ``predictor``, the frozen ``target``, or their ``difference`` (predictor -
                target: the error vector).
            batch_size: graphs per forward pass.

        Returns:
            The embeddings, shape (graphs, out_dim), float32.

        Raises:
            GLocalKDError: the model is not trained, or an unknown ``network``.
        """
        self._check_fitted()
        if network not in ("predictor", "target", "difference"):
            raise GLocalKDError(f"network must be 'predictor', 'target' or 'difference', not {network!r}")
        if len(graphs) == 0:  # as score() answers an empty set (torch failed on a 0x0 product)
            return np.zeros((0, self.out_dim), dtype=np.float32)
        parts = []
        for batch in PackedGraphs(self.schema_.apply(graphs)).batches(batch_size, self.device_):
            adj = batch.adj
            groups = self._grouping(batch, adj)
            emb = {}
            for name in ("predictor", "target"):
                if network in (name, "difference"):
                    net = self.predictor_ if name == "predictor" else self.target_
                    emb[name] = self._embed(net, batch, adj, groups=groups)[1]
            out = emb["predictor"] - emb["target"] if network == "difference" else emb[network]
            parts.append(out.cpu().numpy())
        return np.concatenate(parts) if parts else np.zeros((0, self.out_dim), dtype=np.float32)

    def fingerprint(self) -> str:
        """Hash what decides the fitted model's scores: settings, feature schema and weights, not the device.

        Reports scored with the same fingerprint were scored by the same model, whatever its file is
        called and wherever it ran. Unlike the base's, it hashes the networks' weights directly.

        Returns:
            16 hexadecimal digits (the start of a SHA-256).

        Raises:
            GLocalKDError: the model is not trained.
        """
        import hashlib
        import json

        self._check_fitted()
        from core.data.standardise import RULES

        # a standardising model names the rules it standardises with: rules 2 keep stereo and may
        # choose another tautomer, so its scores are not those of the rules before
        standardise = [f"standardise {RULES}"] if self.standardises else []
        described = [self.scoring_params(), self.schema_.to_dict()] + standardise
        h = hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode())
        for net in (self.target_, self.predictor_):
            for name, tensor in sorted(net.state_dict().items()):
                h.update(name.encode())
                h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
        return h.hexdigest()[:16]

    def _fingerprint_before(self) -> str | None:
        """None: the networks' fingerprint has not changed for a model whose scores did not."""
        return None

    # ------------------------------------------------------------------ persistence
    can_save = True  # its own format: state_dict()

    def save(self, path) -> None:
        """Write the model file in GLocalKD's own format (:meth:`state_dict`), atomically, with a digest.

        The file goes through an exclusively created temporary file (no link is written through);
        :mod:`core.runtime.model_files` adds the digest of its contents.

        Args:
            path: the model file to write.

        Raises:
            GLocalKDError: the model is not trained.
        """
        from core.runtime.model_files import write_model_file

        write_model_file(path, self.state_dict())

    def fitted_state(self) -> dict:
        """Give the fitted state: GLocalKD's whole :meth:`state_dict` (a consensus saves its component so).

        Returns:
            The :meth:`state_dict`.
        """
        return self.state_dict()

    def restore_fitted_state(self, state: dict, device: str = "auto") -> None:
        """Set the fitted state (and the settings) from a :meth:`state_dict`.

        Args:
            state: a :meth:`state_dict`.
            device: where the model runs (``auto``, ``cpu``, ``cuda``).

        Raises:
            ModelFileError: a foreign or damaged state (:meth:`from_state_dict`).
        """
        self.__dict__.update(vars(type(self).from_state_dict(state, device, source="its GLocalKD")))

    def file_state(self) -> dict:
        """Give what the model file holds: GLocalKD keeps its own format, :meth:`state_dict`.

        Returns:
            The :meth:`state_dict`.
        """
        return self.state_dict()

    @classmethod
    def from_file_state(cls, state, device: str = "auto", source: str = "model") -> GLocalKD:
        """Rebuild a model from its file's contents: GLocalKD's own format, read by :meth:`from_state_dict`.

        Args:
            state: a model file's contents.
            device: where the model runs (``auto``, ``cpu``, ``cuda``).
            source: the file's name, for messages.

        Returns:
            The fitted model.

        Raises:
            ModelFileError: a foreign, newer or damaged file, naming ``source``.
        """
        return cls.from_state_dict(state, device, source)

    def state_dict(self) -> dict:
        """Give everything a model file holds, in plain tensors, numbers and strings (for the ``weights_only`` loader).

        Returns:
            The format and version, settings, feature schema, both networks' weights (on the CPU),
            the training scores, mean training size, loss history, ``stopped_early``, ``grouped``, and
            the calibration scores when calibrated.

        Raises:
            GLocalKDError: the model is not trained.
        """
        self._check_fitted()
        state = {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "params": {k: v for k, v in self.get_params().items()},
            "schema": self.schema_.to_dict(),
            "target": {k: v.cpu() for k, v in self.target_.state_dict().items()},
            "predictor": {k: v.cpu() for k, v in self.predictor_.state_dict().items()},
            "train_scores": torch.from_numpy(np.asarray(self.train_scores_, dtype=np.float32)),
            "mean_nodes": float(self.mean_nodes_),
            "loss_history": [float(v) for v in self.loss_history_],
            "stopped_early": bool(self.stopped_early_),
            "grouped": bool(self.grouped_),
        }
        if self.is_calibrated:  # the held-out normal graphs' scores: p-values need nothing else
            state["calibration_scores"] = torch.from_numpy(np.asarray(self.calibration_scores_, dtype=np.float64))
        if self.standardises:  # absent (files before it, and models that do not): off
            state["standardise"] = True
        return state

    @classmethod
    def from_state_dict(cls, state: dict, device: str = "auto", source: str = "model") -> GLocalKD:
        """Rebuild the model a :meth:`state_dict` describes, checked entry by entry.

        Weight shapes are checked against the saved settings before any network is built, so a bad
        file cannot allocate much; NaN or infinite weights, calibration scores or sizes are refused.

        Args:
            state: a :meth:`state_dict` (versions 1 and 2 are read).
            device: where the model runs (``auto``, ``cpu``, ``cuda``).
            source: names the file in errors.

        Returns:
            The fitted model.

        Raises:
            ModelFileError: not a GLocalKD model file, a version this one does not read (a newer one
                says to update), or damaged contents.
            GLocalKDError: ``device`` is unknown or not available.
        """
        if not isinstance(state, dict) or state.get("format") != MODEL_FORMAT:
            raise ModelFileError(not_this_kind(source, state, "GLocalKD"))
        problem = version_problem(state.get("version"), READABLE_VERSIONS)
        if problem:
            raise ModelFileError(f"{source}: {problem}")
        model_device = resolve_device(device)
        try:
            params = dict(state["params"])
            params["device"] = device
            model = cls(**params)
            model.check_params()  # as fit checks them: kinds too (normalize="yes" loaded as True)
            model.device_ = model_device
            model.schema_ = FeatureSchema.from_dict(state["schema"])
            if model.schema_.mode not in MODES[1:] or model.schema_.dim < 1:
                raise ValueError(f"unknown feature schema {state['schema']!r}")
            nets = []
            for key in ("target", "predictor"):
                weights = state[key]
                expected = _expected_shapes(model.schema_.dim, model.hidden_dim, model.out_dim,
                                            model.num_layers)
                found = {k: tuple(v.shape) for k, v in weights.items()}
                if found != expected:  # checked before building, so a bad file cannot allocate much
                    raise ValueError(f"{key} weights do not match the saved settings")
                if not all(torch.isfinite(v).all() for v in weights.values()):
                    raise ValueError(f"{key} weights hold NaN or infinite values (did training diverge?)")
                net = model._encoder()
                net.load_state_dict(weights)
                nets.append(net.to(model.device_).eval())
            model.target_, model.predictor_ = nets
            model.target_.requires_grad_(False)
            model.train_scores_ = state["train_scores"].numpy()
            reference_scores(model.train_scores_, "training scores")
            if "calibration_scores" in state:  # files before calibration, or trained without it: none
                model.calibration_scores_ = reference_scores(state["calibration_scores"].numpy(), "calibration scores")
            # version 1 files have no mean size, and no size term to use it
            model.mean_nodes_ = float(state.get("mean_nodes", 1.0))
            if not (np.isfinite(model.mean_nodes_) and model.mean_nodes_ >= 1.0):
                raise ValueError(f"mean training graph size {model.mean_nodes_!r}")
            model.loss_history_ = list(state["loss_history"])
            model.stopped_early_ = bool(state.get("stopped_early", False))
            model.grouped_ = bool(state.get("grouped", False))  # files before it: node by node
            model.standardises = state.get("standardise", False) is True  # files before it: off
        except (GLocalKDError, KeyError, TypeError, ValueError, RuntimeError, AttributeError, IndexError) as exc:
            raise ModelFileError(f"{source}: damaged model file ({exc})") from None
        return model


def _expected_shapes(in_dim: int, hidden_dim: int, out_dim: int, num_layers: int) -> dict[str, tuple]:
    """Parameter shapes of a :class:`GCNEncoder` with these sizes, without building one."""
    dims = [in_dim] + [hidden_dim] * (num_layers - 1) + [out_dim]
    shapes = {}
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        shapes[f"convs.{i}.bias"] = (b,)
        shapes[f"convs.{i}.lin.weight"] = (b, a)
    return shapes
