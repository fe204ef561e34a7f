"""The GCN adjacency is built with torch alone, bit for bit as torch-geometric builds it
(``gcn_norm``, then a CSR matrix), including self-loops, repeated edges and isolated nodes."""
import pytest
import torch
from torch_geometric.nn.conv.gcn_conv import gcn_norm
from torch_geometric.utils import to_torch_csr_tensor

from core.data.adjacency import gcn_adjacency, gcn_edges


@pytest.mark.parametrize("nodes, edges", [(1, 0), (6, 0), (10, 30), (300, 2000)])
def test_the_adjacency_is_torch_geometrics(nodes, edges):
    g = torch.Generator().manual_seed(nodes)
    edge_index = torch.randint(0, nodes, (2, edges), generator=g)
    if edges:  # both ways, a few edges twice, and self-loops
        edge_index = torch.cat([edge_index, edge_index.flip(0), edge_index[:, :3],
                                torch.tensor([[0, 1], [0, 1]])], dim=1)
    expected_index, expected_weight = gcn_norm(edge_index, None, nodes, add_self_loops=True)
    index, weight = gcn_edges(edge_index, nodes)
    assert torch.equal(index, expected_index) and torch.equal(weight, expected_weight)
    expected = to_torch_csr_tensor(expected_index.flip(0), expected_weight, size=(nodes, nodes))
    adj = gcn_adjacency(edge_index, nodes)
    for part in ("crow_indices", "col_indices", "values"):
        assert torch.equal(getattr(adj, part)(), getattr(expected, part)())
