"""Packed mini-batches equal torch-geometric's collation plus the GCN-normalised adjacency."""
import pytest
import torch
from torch_geometric.loader import DataLoader

from core import GLocalKD, load
from core.nn.gcn import normalized_adjacency
from core.data.packed import PackedGraphs
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


def test_runs_by_node_count_keep_order_and_stay_near_the_budget(tmp_path):
    sizes = [3, 5, 2, 10, 1, 4, 4, 4]
    graphs = load(write_tu(tmp_path / "R", "R", [(n, path(n), i % 2) for i, n in enumerate(sizes)]))
    packed = PackedGraphs(GLocalKD(epochs=1, hidden_dim=4, out_dim=2, device="cpu").fit(graphs).schema_.apply(graphs))
    for order in (torch.arange(8), torch.tensor([7, 3, 0, 5, 1]), torch.tensor([3])):
        for budget in (1, 4, 6, 100):
            runs = packed.split_by_nodes(order, budget)
            assert torch.equal(torch.cat(runs), order)  # every graph once, in order
            for run in runs:
                nodes = [sizes[i] for i in run.tolist()]
                assert len(run) == 1 or sum(nodes) - nodes[-1] < budget  # over budget by less than its last graph
    assert len(packed.split_by_nodes(torch.arange(8), 100)) == 1
    assert len(packed.split_by_nodes(torch.arange(8), 1)) == 8


def test_training_in_runs_of_nodes_takes_the_same_steps_as_whole_batches(tmp_path, monkeypatch):
    """Cutting each batch into runs (to keep activations in cache) must not change training:
    the gradient of the batch's mean loss is the sum of the runs' parts."""
    import core.data.packed as packed_module

    shapes = [(n, ring(n), i % 2) for i, n in enumerate([3, 4, 5, 6, 7, 8, 9, 10] * 3)]
    graphs = load(write_tu(tmp_path / "S", "S", shapes))
    fitted = {}
    for budget in (10, 10**6):
        monkeypatch.setitem(packed_module.BATCH_NODES, "cpu", budget)
        m = GLocalKD(epochs=4, batch_size=8, hidden_dim=16, out_dim=8, lr=1e-2, device="cpu", seed=3).fit(graphs)
        fitted[budget] = m
    small, whole = fitted[10], fitted[10**6]
    for a, b in zip(small.predictor_.parameters(), whole.predictor_.parameters()):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-6)
    assert small.loss_history_ == pytest.approx(whole.loss_history_, rel=1e-5)
    assert small.train_scores_ == pytest.approx(whole.train_scores_, rel=1e-4)
    assert small.loss_history_[-1] < small.loss_history_[0]  # it did train


def test_packing_knows_whether_every_edge_is_listed_both_ways():
    from torch_geometric.data import Data

    def graph(edges, n):
        return Data(x=torch.ones(n, 2), edge_index=torch.tensor(edges, dtype=torch.long).t().reshape(2, -1), num_nodes=n)

    square = graph([(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2), (3, 0), (0, 3)], 4)
    assert PackedGraphs([square, graph([(0, 1), (1, 0)], 3)]).symmetric
    packed = PackedGraphs([square, graph([(0, 1), (1, 2)], 3)])  # the second graph is directed
    assert not packed.symmetric and not packed.batch(torch.tensor([0])).symmetric
    dense = packed.batch(torch.tensor([1])).adj.to_dense()
    assert not torch.equal(dense, dense.t())
