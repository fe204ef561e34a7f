"""Packed mini-batches equal torch-geometric's collation plus the GCN-normalised adjacency."""
import torch
from torch_geometric.loader import DataLoader

from core import GLocalKD, load
from core.gcn import normalized_adjacency
from core.packed import PackedGraphs
from tests.conftest import path, ring, write_tu


def test_any_batch_of_packed_graphs_matches_the_collated_batch(tmp_path):
    shapes = [(n, ring(n), 1) for n in (3, 5, 8)] + [(n, path(n), 0) for n in (1, 2, 6)]
    graphs = load(write_tu(tmp_path / "P", "P", shapes))
    data = GLocalKD(epochs=1, hidden_dim=4, out_dim=2, device="cpu").fit(graphs).schema_.apply(graphs)
    packed = PackedGraphs(data)
    assert len(packed) == 6 and packed.num_nodes == 25
    packed.graph_extra["tag"] = torch.arange(6) * 10
    for order in ([0, 1, 2, 3, 4, 5], [5, 2, 0], [4], [3, 3, 1]):
        b = packed.batch(torch.tensor(order))
        ref = next(iter(DataLoader([data[i] for i in order], batch_size=len(order))))
        assert torch.equal(b.x, ref.x) and torch.equal(b.batch, ref.batch) and torch.equal(b.ptr, ref.ptr)
        assert torch.allclose(b.adj.to_dense(), normalized_adjacency(ref.edge_index, ref.num_nodes).to_dense())
        assert b.graph_extra["tag"].tolist() == [10 * i for i in order]
    seen = torch.cat([b.graph_extra["tag"] for b in packed.batches(4, generator=torch.Generator().manual_seed(0))])
    assert sorted(seen.tolist()) == [0, 10, 20, 30, 40, 50]
