"""Running the GCN on groups of nodes that look alike is exact: same embeddings, gradients,
losses and scores, whatever else shares the batch."""
import numpy as np
import pytest
import torch

import core.nn.row_groups as row_groups
from core import GLocalKD, load
from core.nn.gcn import GCNEncoder, normalized_adjacency
from core.data.packed import PackedGraphs
from core.nn.row_groups import GroupedPropagation


def _chain_graphs(copies: int = 3):
    """``copies`` copies of two small molecules-like graphs with one-hot features: many nodes
    look alike for one and for two propagations."""
    edges = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 7, 8, 8, 9],
                          [1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 7, 6, 8, 7, 9, 8]])
    labels = torch.tensor([0, 1, 1, 1, 1, 0, 2, 1, 1, 2])
    edges = torch.cat([edges + 10 * c for c in range(copies)], dim=1)
    x = torch.eye(3)[labels.repeat(copies)]
    return x, normalized_adjacency(edges, 10 * copies)


def _outputs_and_grads(net, x, adj, groups, weights):
    net.zero_grad()
    out = net(x, adj, groups=groups)
    (out * weights).sum().backward()
    return out.detach(), [p.grad.clone() for p in net.parameters()]


def test_groups_shrink_level_by_level():
    x, adj = _chain_graphs()
    plan = GroupedPropagation.build(x, adj, 3)
    assert plan is not None and plan.pays_off
    assert plan.groups[0] == 3  # three distinct feature rows
    assert plan.groups[0] <= plan.groups[1] <= plan.groups[2] < x.shape[0]  # groups only split, never merge
    assert plan.steps[-1].matrix.shape == (x.shape[0], plan.groups[2])  # the last step gives every node a row


@pytest.mark.parametrize("dims,normalize,bias", [
    ((3, 16, 8, 3), False, True),   # the paper's shape: widen, then narrow
    ((3, 16, 8, 3), True, True),
    ((3, 2, 8, 3), False, True),    # a narrowing first layer multiplies before it propagates
    ((3, 16, 8, 1), False, False),  # one layer
    ((3, 8, 8, 2), False, True),
])
def test_grouped_encoder_gives_the_same_embeddings_and_gradients(dims, normalize, bias):
    x, adj = _chain_graphs()
    net = GCNEncoder(*dims, normalize=normalize, bias=bias)
    for conv in net.convs:
        if conv.bias is not None:
            torch.nn.init.normal_(conv.bias)
    plan = GroupedPropagation.build(x, adj, dims[3])
    assert plan is not None
    weights = torch.arange(x.shape[0] * dims[2], dtype=torch.float32).view(x.shape[0], dims[2]).sin()
    plain, plain_grads = _outputs_and_grads(net, x, adj, None, weights)
    grouped, grouped_grads = _outputs_and_grads(net, x, adj, plan, weights)
    assert torch.allclose(plain, grouped, atol=1e-6)
    for a, b in zip(plain_grads, grouped_grads):
        assert torch.allclose(a, b, atol=1e-5)


def test_a_node_gets_the_same_bits_whatever_shares_its_batch():
    x, adj = _chain_graphs(copies=1)
    other_x, other_adj = _chain_graphs(copies=2)
    other_x = torch.eye(3)[torch.tensor([2, 2, 0, 1, 0, 2, 1, 1, 0, 0] * 2)]  # other graphs, other groups
    both_x = torch.cat([x, other_x])
    both_adj = torch.block_diag(adj.to_dense(), other_adj.to_dense()).to_sparse_csr()
    torch.manual_seed(4)
    net = GCNEncoder(3, 16, 8, 3)
    with torch.no_grad():
        alone = net(x, adj, groups=GroupedPropagation.build(x, adj, 3))
        shared = net(both_x, both_adj, groups=GroupedPropagation.build(both_x, both_adj, 3))
    assert torch.equal(alone, shared[: x.shape[0]])


def test_a_key_collision_never_merges_different_rows(monkeypatch):
    x, adj = _chain_graphs()
    # every group key alike after the first propagation: the rows' check must catch it
    monkeypatch.setattr(row_groups, "_mix", lambda keys: np.ones(keys.shape))
    assert GroupedPropagation.build(x, adj, 3) is None
    # every feature row keyed alike
    monkeypatch.undo()
    monkeypatch.setattr(row_groups, "_projection", lambda width: np.zeros(width))
    assert GroupedPropagation.build(x, adj, 3) is None


def test_nan_features_are_not_grouped_and_distinct_ones_do_not_pay_off():
    x, adj = _chain_graphs()
    broken = x.clone()
    broken[4, 1] = float("nan")
    assert GroupedPropagation.build(broken, adj, 3) is None
    torch.manual_seed(5)
    distinct = torch.randn_like(x)
    plan = GroupedPropagation.build(distinct, adj, 3)
    assert plan is not None and plan.groups[0] == x.shape[0] and not plan.pays_off
    net = GCNEncoder(3, 16, 8, 3)
    with torch.no_grad():  # still exact, just not cheaper
        assert torch.allclose(net(distinct, adj, groups=plan), net(distinct, adj), atol=1e-6)


def test_training_with_groups_is_training_without_them(herg_path, monkeypatch):
    graphs = load(herg_path).subset(list(range(120)))
    settings = dict(epochs=3, hidden_dim=64, out_dim=32, batch_size=40, lr=1e-3, seed=2, device="cpu")
    grouped = GLocalKD(**settings).fit(graphs)
    packed = PackedGraphs(grouped.schema_.apply(graphs))
    assert grouped._grouping_pays_off(packed, torch.device("cpu"))  # atoms look alike: grouping is used
    monkeypatch.setattr(GLocalKD, "_grouping_pays_off", lambda self, packed, device: False)
    plain = GLocalKD(**settings).fit(graphs)
    assert grouped.grouped_ and not plain.grouped_
    assert np.allclose(grouped.loss_history_, plain.loss_history_, rtol=1e-5)
    a, b = grouped.score(graphs), plain.score(graphs)
    assert np.allclose(a.score, b.score, rtol=1e-4)
    assert np.allclose(a.node_errors, b.node_errors, rtol=1e-4, atol=1e-6)


def test_continuous_attributes_are_not_grouped(tu_folder):
    graphs = load(tu_folder)  # node attributes differ from node to node
    model = GLocalKD(epochs=1, hidden_dim=16, out_dim=8, batch_size=4, device="cpu").fit(graphs)
    assert not model._grouping_pays_off(PackedGraphs(model.schema_.apply(graphs)), torch.device("cpu"))
    assert not model.grouped_


def test_the_choice_is_saved_with_the_model(herg_path, tmp_path):
    graphs = load(herg_path).subset(list(range(60)))
    model = GLocalKD(epochs=1, hidden_dim=32, out_dim=16, batch_size=30, device="cpu").fit(graphs)
    model.save(tmp_path / "m.pt")
    loaded = GLocalKD.load(tmp_path / "m.pt", device="cpu")
    assert model.grouped_ and loaded.grouped_
    assert np.array_equal(model.score(graphs).score, loaded.score(graphs).score)
    batch = next(PackedGraphs(model.schema_.apply(graphs)).batches(30))
    assert model._grouping(batch, batch.adj) is not None
    loaded.device_ = torch.device("cuda")  # a GPU computes node by node (only the device's type is read)
    assert loaded._grouping(batch, batch.adj) is None


def test_a_molecule_scored_alone_scores_as_in_a_large_batch(herg_path):
    """Alone, a molecule's groups are few (often under 16 rows): the products must still give
    the bits they give in a batch of hundreds (see ``core.nn.gcn.MIN_PRODUCT_ROWS``)."""
    graphs = load(herg_path).subset(list(range(300)))
    model = GLocalKD(epochs=1, device="cpu", seed=1).fit(graphs)
    together = model.score(graphs, batch_size=300)
    for i in np.argsort(np.diff(together.node_ptr), kind="stable")[:3]:  # the smallest molecules
        alone = model.score(graphs.subset([i]))
        assert alone.score[0] == together.score[i]
        lo, hi = together.node_ptr[i], together.node_ptr[i + 1]
        assert np.array_equal(alone.node_errors, together.node_errors[lo:hi])
