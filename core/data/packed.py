"""PackedGraphs: a set of graphs stored as one block, cut into mini-batches by vectorised gathers.

Collating a mini-batch from per-graph ``Data`` objects (torch-geometric's ``DataLoader``) and
normalising its adjacency costs Python work per graph and a sort per batch, every epoch. Here
the whole set is packed once: node features end to end, the edges with their GCN weights
(D^-1/2 (A + I) D^-1/2, which only depends on each graph's own degrees) sorted by
(destination, source). Because each graph's nodes are contiguous, any list of graphs, in any
order, gives edges that are already in CSR order once renumbered: a batch is a handful of
index operations, with no sort and no per-graph Python. A batch is processed in runs of
about ``max_batch_nodes`` nodes (the gradient summed over them: ``step_in_runs``), so that on a
CPU each layer's activations stay in cache whatever the batch size.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Callable

import torch

from core.data.adjacency import csr_adjacency, gcn_edges

if TYPE_CHECKING:
    from torch_geometric.data import Data


# A batch is processed in runs of about this many nodes (see ``max_batch_nodes``).
BATCH_NODES = {"cpu": 4096, "cuda": 65536}


def max_batch_nodes(device: torch.device | str) -> int:
    """Nodes per forward pass on a device.

    On a CPU, runs of about 4096 nodes keep a layer's activations (4096 x 512 floats, 8 MB) in
    cache: a Tox21 training epoch took 5.4 s in runs of ~4,000 nodes against 7.7 s in the
    paper's batches of 2000 graphs (~33,000 nodes), a REDDIT-BINARY one 7 s against 10-13 s. A
    GPU wants large kernels, so it gets large runs (not measured).

    Args:
        device: the device the model runs on.

    Returns:
        ``BATCH_NODES`` of the device's type (a device type not listed gets the CUDA figure).
    """
    return BATCH_NODES.get(torch.device(device).type, BATCH_NODES["cuda"])


@dataclass
class PackedBatch:
    """A mini-batch: node features, the normalised adjacency (CSR, rows = destinations), each
    node's graph in the batch, node offsets per graph, and the picked rows of extra tensors."""

    x: torch.Tensor
    adj: torch.Tensor
    batch: torch.Tensor
    ptr: torch.Tensor
    node_extra: dict[str, torch.Tensor]
    graph_extra: dict[str, torch.Tensor]
    symmetric: bool = False  # adj equals its transpose (every edge is listed both ways)

    @property
    def num_graphs(self) -> int:
        """The graphs in the batch."""
        return int(self.ptr.numel() - 1)


class PackedGraphs:
    """Graphs packed end to end (see the module docstring). ``len`` is the number of graphs."""

    def __init__(self, data: list[Data]):
        counts = torch.tensor([int(d.num_nodes) for d in data], dtype=torch.long)
        self.node_ptr = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
        total = int(self.node_ptr[-1])
        self.x = torch.cat([d.x for d in data]) if data else torch.zeros(0, 0)
        offsets = torch.repeat_interleave(self.node_ptr[:-1], torch.tensor([d.edge_index.shape[1] for d in data],
                                                                           dtype=torch.long))
        edge_index = torch.cat([d.edge_index for d in data], dim=1) + offsets if data else \
            torch.zeros(2, 0, dtype=torch.long)
        edge_index, weight = gcn_edges(edge_index, total)
        src, dst = edge_index
        order = torch.argsort(dst * max(total, 1) + src)  # CSR order: by destination, then source
        self.src, self.dst, self.weight = src[order], dst[order], weight[order]
        transposed = torch.argsort(self.src * max(total, 1) + self.dst, stable=True)
        self.symmetric = bool(torch.equal(self.src[transposed], self.dst)  # every edge listed both ways
                              and torch.equal(self.dst[transposed], self.src)
                              and torch.allclose(self.weight[transposed], self.weight))
        graph_of_edge = torch.searchsorted(self.node_ptr, self.dst, right=True) - 1
        self.edge_ptr = torch.cat([counts.new_zeros(1), torch.bincount(graph_of_edge, minlength=len(data)).cumsum(0)])
        self.node_extra: dict[str, torch.Tensor] = {}
        self.graph_extra: dict[str, torch.Tensor] = {}

    def __len__(self) -> int:
        return int(self.node_ptr.numel() - 1)

    @property
    def num_nodes(self) -> int:
        """The nodes of all graphs together."""
        return int(self.node_ptr[-1])

    def batch(self, graphs: torch.Tensor, device: torch.device | str = "cpu") -> PackedBatch:
        """Gather some graphs into one batch, their nodes renumbered and their edges kept in CSR order.

        Args:
            graphs: the graph numbers, shape (k,), in the order wanted.
            device: where to put the batch (default the CPU).

        Returns:
            The batch, with the rows of ``node_extra`` and ``graph_extra`` it picks.
        """
        graphs = graphs.to(torch.long)
        counts = self.node_ptr[graphs + 1] - self.node_ptr[graphs]
        ptr = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
        n = int(ptr[-1])
        node_shift = self.node_ptr[graphs] - ptr[:-1]  # old id - new id, per graph
        nodes = torch.arange(n) + torch.repeat_interleave(node_shift, counts, output_size=n)
        e_counts = self.edge_ptr[graphs + 1] - self.edge_ptr[graphs]
        e_ptr = torch.cat([e_counts.new_zeros(1), e_counts.cumsum(0)])
        m = int(e_ptr[-1])
        edges = torch.arange(m) + torch.repeat_interleave(self.edge_ptr[graphs] - e_ptr[:-1], e_counts, output_size=m)
        shift = torch.repeat_interleave(node_shift, e_counts, output_size=m)
        dst, src = self.dst[edges] - shift, self.src[edges] - shift
        return PackedBatch(
            x=self.x[nodes].to(device), adj=csr_adjacency(dst, src, self.weight[edges], n, device),
            batch=torch.repeat_interleave(torch.arange(len(graphs)), counts, output_size=n).to(device),
            ptr=ptr.to(device),
            node_extra={k: v[nodes].to(device) for k, v in self.node_extra.items()},
            graph_extra={k: v[graphs].to(device) for k, v in self.graph_extra.items()},
            symmetric=self.symmetric)

    def batch_ids(self, batch_size: int, generator: torch.Generator | None = None):
        """Graph numbers in groups of ``batch_size`` (the last one may be smaller).

        Args:
            batch_size: graphs per group.
            generator: shuffles the graphs when given (None: in order).

        Yields:
            A long tensor of graph numbers per group.
        """
        order = torch.randperm(len(self), generator=generator) if generator is not None else torch.arange(len(self))
        yield from order.split(batch_size)

    def split_by_nodes(self, graphs: torch.Tensor, max_nodes: int) -> tuple[torch.Tensor, ...]:
        """Cut a group of graphs, in order, into runs of about ``max_nodes`` nodes.

        A run starts at the first graph whose first node passes the next multiple of
        ``max_nodes``, so a run exceeds it by less than one graph (a graph larger than
        ``max_nodes`` is a run of its own).

        Args:
            graphs: graph numbers, shape (k,).
            max_nodes: about how many nodes a run holds.

        Returns:
            The runs, views of ``graphs`` that together are ``graphs``.
        """
        counts = self.node_ptr[graphs + 1] - self.node_ptr[graphs]
        start = counts.cumsum(0) - counts  # node offset of each graph within the group
        _, sizes = torch.unique_consecutive(torch.div(start, max(max_nodes, 1), rounding_mode="floor"),
                                            return_counts=True)
        return graphs.split(sizes.tolist())

    def batches(self, batch_size: int, device: torch.device | str = "cpu", generator: torch.Generator | None = None,
                max_nodes: int | None = None):
        """All graphs in batches of ``batch_size``.

        Args:
            batch_size: graphs per batch.
            device: where to put the batches (default the CPU).
            generator: shuffles the graphs when given (None: in order).
            max_nodes: when given, each batch is further cut into runs of about that many nodes
                (:meth:`split_by_nodes`).

        Yields:
            One :class:`PackedBatch` per batch or run.
        """
        for part in self.batch_ids(batch_size, generator):
            for run in (self.split_by_nodes(part, max_nodes) if max_nodes else (part,)):
                yield self.batch(run, device)


def step_in_runs(packed: PackedGraphs, ids: torch.Tensor, optimizer: torch.optim.Optimizer,
                 graph_losses: Callable[[PackedBatch], torch.Tensor], device: torch.device | str) -> float:
    """One optimizer step on the mean of ``graph_losses`` over the graphs numbered ``ids``.

    The gradient is summed over runs of about ``max_batch_nodes`` nodes: the same step as one
    pass over the whole batch, with activations small enough to stay in cache. A loss that is
    NaN or infinite is returned at once, without a step, for the caller to report.

    Args:
        packed: the packed training graphs.
        ids: the graph numbers of the mini-batch.
        optimizer: the optimizer to step.
        graph_losses: the model's loss, one value per graph of a batch.
        device: where the model runs.

    Returns:
        The loss summed over the batch's graphs (or the first run's non-finite loss).
    """
    optimizer.zero_grad(set_to_none=True)
    summed = 0.0
    for run in packed.split_by_nodes(ids, max_batch_nodes(device)):
        loss = graph_losses(packed.batch(run, device)).sum()
        value = float(loss.detach())
        if not math.isfinite(value):
            return value
        (loss / len(ids)).backward()  # the batch's mean loss, summed over its runs
        summed += value
    optimizer.step()
    return summed
