"""The GCN-normalised adjacency D^-1/2 (A + I) D^-1/2 of graphs given as edge lists.

torch-geometric's ``gcn_norm`` computes it too, but importing torch-geometric costs more than a
second, and scoring a molecule file never needs anything else from it: this is the same
computation in torch alone, bit for bit (a test compares the two).
"""
from __future__ import annotations

import warnings

import torch


def gcn_edges(edge_index: torch.Tensor, num_nodes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The edges of D^-1/2 (A + I) D^-1/2 and their weights, as torch-geometric's ``gcn_norm`` gives them.

    Self-loops already in ``edge_index`` are replaced by one per node, appended after the other
    edges; degrees are counted at the destination.

    Args:
        edge_index: the edges, shape (2, E), sources in row 0 and destinations in row 1.
        num_nodes: the number of nodes of the graph (or batch of graphs).

    Returns:
        The edges with one self-loop per node, shape (2, E' + num_nodes), and their normalised
        weights, shape (E' + num_nodes,), E' being the edges that are not self-loops.
    """
    row, col = edge_index[0], edge_index[1]
    keep = row != col
    loops = torch.arange(num_nodes, device=edge_index.device)
    edge_index = torch.cat([edge_index[:, keep], loops.view(1, -1).repeat(2, 1)], dim=1)
    weight = torch.ones(edge_index.shape[1], device=edge_index.device)
    row, col = edge_index[0], edge_index[1]
    degree = weight.new_zeros(num_nodes).scatter_add_(0, col, weight)
    inv_sqrt = degree.pow_(-0.5)
    inv_sqrt.masked_fill_(inv_sqrt == float("inf"), 0)
    return edge_index, inv_sqrt[row] * weight * inv_sqrt[col]


def gcn_adjacency(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """D^-1/2 (A + I) D^-1/2 as a sparse CSR matrix whose rows are the destinations (Â, as the products here want it).

    Args:
        edge_index: the edges, shape (2, E), sources in row 0 and destinations in row 1;
            repeated edges add up.
        num_nodes: the number of nodes.

    Returns:
        The normalised adjacency, a sparse CSR tensor of shape (num_nodes, num_nodes).
    """
    (src, dst), weight = gcn_edges(edge_index, num_nodes)
    key = dst * max(num_nodes, 1) + src
    key, order = torch.sort(key, stable=True)
    weight = weight[order]
    first = torch.ones_like(key, dtype=torch.bool)
    first[1:] = key[1:] > key[:-1]
    if not bool(first.all()):  # repeated edges: one entry each, their weights summed in order
        slot = first.cumsum(0) - 1
        key = key[first]
        weight = weight.new_zeros(len(key)).scatter_add_(0, slot, weight)
    rows = torch.div(key, max(num_nodes, 1), rounding_mode="floor")
    return csr_adjacency(rows, key - rows * max(num_nodes, 1), weight, num_nodes)


def csr_adjacency(dst: torch.Tensor, src: torch.Tensor, weight: torch.Tensor, num_nodes: int,
                  device: torch.device | str | None = None) -> torch.Tensor:
    """The sparse CSR matrix (rows = destinations) of edges already sorted by (destination, source).

    Args:
        dst: the destination of each edge, shape (E,), sorted.
        src: the source of each edge, shape (E,), sorted within each destination.
        weight: the weight of each edge, shape (E,).
        num_nodes: the number of nodes (rows and columns of the matrix).
        device: where to build the matrix (None: where the edges are).

    Returns:
        A sparse CSR tensor of shape (num_nodes, num_nodes), its invariants not checked.
    """
    crow = torch.cat([dst.new_zeros(1), torch.bincount(dst, minlength=num_nodes).cumsum(0)])
    device = dst.device if device is None else device
    with warnings.catch_warnings():  # torch calls sparse CSR "beta"; the SpMM it serves is stable
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(crow.to(device), src.to(device), weight.to(device),
                                       size=(num_nodes, num_nodes), check_invariants=False)
