"""Which graphs of one set are also in another: the same graph (its nodes' and edges' features
and its bonds), whatever the order its nodes were read in; and which sets are the same data.

Used where one file must not hold another's graphs: known anomalies are never trained on, so
those also in the training data are left out of its normal graphs
(:func:`core.training.plan.plan_training`); and where results of one data set are put together
(an evaluation resumed on other data mixed its folds: :func:`graphs_digest`).
"""
from __future__ import annotations

import functools
import hashlib

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from core.data.graphset import GraphSet

WL_ROUNDS = 4  # colour refinement rounds: molecules and TU graphs that differ are told apart by then

_NODE_FIELDS = ("x", "node_label", "node_attr")
_EDGE_FIELDS = ("edge_attr", "edge_label")


def _rows(data, fields: tuple[str, ...], count: int) -> list[bytes]:
    """Each node's (or edge's) features as bytes: every field the graph has, in one row."""
    parts = []
    for name in fields:
        value = getattr(data, name, None)
        if value is not None:
            array = np.ascontiguousarray(value.detach().cpu().numpy())
            # (no edges: a single atom's edge labels are an empty array, which reshape(0, -1) refused)
            array = array.reshape(count, -1) if count else array.reshape(0, 0)
            parts.append(array.astype(np.float64, copy=False))
    if not parts:
        return [b""] * count
    table = np.ascontiguousarray(np.concatenate(parts, axis=1))
    return [row.tobytes() for row in table]


@functools.lru_cache(maxsize=65536)  # a data set's nodes and edges take few distinct feature rows
def _row_colour(row: bytes) -> int:
    """A node's (or edge's) first colour: a hash of its features' bytes that every process gives
    alike (Python's ``hash`` of bytes is salted per process; of ints and tuples of ints it is not,
    so the colour refinement's later rounds are the same in every process too)."""
    return int.from_bytes(hashlib.blake2b(row, digest_size=8).digest(), "little", signed=True)


def graph_key(data) -> int:
    """A key that two copies of one graph share, in this process and in any other.

    Session files keep it as the identity of a graph without a SMILES (a TU collection's review
    marks): a key salted per process, as Python's ``hash`` of bytes is, lost every such mark once
    the session was opened again in another run of the app.

    Weisfeiler-Lehman colour refinement over the node features, with each edge's features on
    its neighbour's colour, for :data:`WL_ROUNDS` rounds; the key is the hash of the node and
    edge counts and the multiset of every round's colours. Two different graphs that WL cannot
    tell apart share a key (regular graphs of one size, rarely molecules).

    Args:
        data: a graph (torch-geometric ``Data``).

    Returns:
        The key.
    """
    n = int(data.num_nodes)
    edges = data.edge_index.detach().cpu().numpy()
    colour = [_row_colour(row) for row in _rows(data, _NODE_FIELDS, n)]
    edge_colour = [_row_colour(row) for row in _rows(data, _EDGE_FIELDS, edges.shape[1])]
    neighbours: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for (source, target), e in zip(edges.T.tolist(), edge_colour):
        neighbours[target].append((source, e))
    seen = [tuple(sorted(colour))]
    for _ in range(WL_ROUNDS):
        colour = [hash((colour[v], tuple(sorted((colour[u], e) for u, e in neighbours[v])))) for v in range(n)]
        seen.append(tuple(sorted(colour)))
    return hash((n, edges.shape[1], tuple(seen)))


def graph_keys(graphs: GraphSet) -> np.ndarray:
    """Every graph's :func:`graph_key`, as a model file keeps them.

    Args:
        graphs: the graphs.

    Returns:
        One int64 key per graph, in order.
    """
    return np.fromiter((graph_key(g) for g in graphs.graphs), dtype=np.int64, count=len(graphs))


def shared_graphs(graphs: GraphSet, others: GraphSet) -> list[int]:
    """The positions of the graphs of ``graphs`` that are also in ``others`` (:func:`graph_key`).

    Args:
        graphs: the set searched.
        others: the graphs looked for.

    Returns:
        Positions in ``graphs``, in order.
    """
    wanted = {graph_key(g) for g in others.graphs}
    return [i for i, g in enumerate(graphs.graphs) if graph_key(g) in wanted]


def graphs_digest(*sets: GraphSet | None) -> str:
    """A digest of the graphs of ``sets`` as read, in order, with their labels: equal for the same
    data, whatever its file's name or path.

    Args:
        *sets: the graph sets (None: left out).

    Returns:
        ``"sha256:"`` and 16 hex digits.
    """
    h = hashlib.sha256()
    for graphs in sets:
        if graphs is None:
            continue
        h.update(f"set {len(graphs)}".encode())
        for g, label in zip(graphs.graphs, graphs.labels):
            h.update(f"graph {int(g.num_nodes)} {label}".encode())
            for name in ("edge_index", *_NODE_FIELDS, *_EDGE_FIELDS):
                value = getattr(g, name, None)
                if value is not None:
                    h.update(name.encode())
                    h.update(np.ascontiguousarray(value.detach().cpu().numpy()).tobytes())
    return "sha256:" + h.hexdigest()[:16]
