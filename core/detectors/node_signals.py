"""Node signals on a batch of graphs laid end to end: the node-feature matrix of a fitted
:class:`core.data.features.FeatureSchema`, the edges with their graph offsets, and sums per
graph. The label-free views built on node features (random-GIN forests, kernel mean
embeddings, the spectral view) share it.

Every quantity of a graph is computed from that graph's own nodes and edges, in the same order
whatever other graphs are in the batch, so a graph's score never depends on the batch it is
scored with.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.data.features import FeatureSchema
from core.data.graphset import GraphSet
from core.data.scaling import usable_spread
from core.errors import DataError


@dataclass
class NodeBatch:
    """Graphs laid end to end as numpy arrays, for the label-free views built on node features.

    Attributes:
        x: node features, shape (nodes, features), float64.
        src: the source of every directed edge (both directions of an undirected one, no
            self-loops), as batch node numbers.
        dst: the destination of every directed edge.
        graph: each node's graph index, shape (nodes,).
        n_graphs: the number of graphs.
    """

    x: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    graph: np.ndarray
    n_graphs: int

    @property
    def degree(self) -> np.ndarray:
        """Each node's number of neighbours (edges counted as given, loops excluded)."""
        return np.bincount(self.src, minlength=len(self.x)).astype(np.float64)

    def per_graph_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum per-node values over each graph's nodes.

        Args:
            values: one row per node, shape (nodes, ...).

        Returns:
            Shape (graphs, ...), float64; zeros for a graph without nodes.
        """
        values = np.asarray(values, dtype=np.float64)
        out = np.zeros((self.n_graphs,) + values.shape[1:])
        np.add.at(out, self.graph, values)
        return out

    def per_graph_mean(self, values: np.ndarray) -> np.ndarray:
        """Average per-node values over each graph's nodes.

        Args:
            values: one row per node, shape (nodes, ...).

        Returns:
            Shape (graphs, ...), float64; 0 for a graph without nodes.
        """
        counts = np.bincount(self.graph, minlength=self.n_graphs).astype(np.float64)
        sums = self.per_graph_sum(values)
        return sums / np.maximum(counts, 1.0).reshape((-1,) + (1,) * (sums.ndim - 1))

    def neighbour_sum(self, h: np.ndarray) -> np.ndarray:
        """Sum each node's neighbours' rows: one step of message passing.

        Args:
            h: one row per node, shape (nodes, ...).

        Returns:
            Shape as ``h``: each node's sum over the sources of its incoming edges.
        """
        out = np.zeros_like(h)
        np.add.at(out, self.dst, h[self.src])
        return out


def node_batch(graphs: GraphSet, schema: FeatureSchema) -> NodeBatch:
    """Lay graphs' node features (under a fitted schema) and edges end to end.

    Args:
        graphs: the graphs.
        schema: the fitted node-feature schema.

    Returns:
        The :class:`NodeBatch`; an empty one (width ``schema.dim``) for no graphs.

    Raises:
        DataError: a graph with NaN or infinite node features, naming it.
    """
    xs, srcs, dsts, owner = [], [], [], []
    offset = 0
    for i, g in enumerate(graphs.graphs):
        x = schema.transform(g).double().numpy()
        if not np.all(np.isfinite(x)):
            meta = graphs.meta[i]
            raise DataError(f"graph {meta.id} has NaN or infinite node features", graphs.source, meta.line)
        n = int(g.num_nodes)
        e = g.edge_index.numpy().astype(np.int64)
        keep = e[0] != e[1]
        xs.append(x.reshape(n, schema.dim))
        srcs.append(e[0, keep] + offset)
        dsts.append(e[1, keep] + offset)
        owner.append(np.full(n, i, dtype=np.int64))
        offset += n
    if not xs:
        return NodeBatch(np.zeros((0, schema.dim)), np.zeros(0, np.int64), np.zeros(0, np.int64),
                         np.zeros(0, np.int64), 0)
    return NodeBatch(np.concatenate(xs), np.concatenate(srcs), np.concatenate(dsts), np.concatenate(owner),
                     len(graphs))


def column_scale(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Give the column means and standard deviations of node features, to standardise them.

    Args:
        x: node features, shape (nodes, features).

    Returns:
        ``(mean, std)``, each shape (features,); a constant column gets a deviation of 1, and no
        rows give means 0 and deviations 1.
    """
    mean = x.mean(axis=0) if len(x) else np.zeros(x.shape[1])
    std = x.std(axis=0) if len(x) else np.ones(x.shape[1])
    return mean, usable_spread(std, mean)
