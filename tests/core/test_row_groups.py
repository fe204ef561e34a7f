"""Grouping identical first-layer rows is exact: same embeddings, gradients, losses and scores."""
import numpy as np
import pytest
import torch

from core import GLocalKD, load
from core.gcn import GCNEncoder, normalized_adjacency
from core.packed import PackedGraphs
from core.row_groups import RowGroups, _projection


def test_groups_are_exactly_the_sets_of_equal_rows():
    torch.manual_seed(0)
    distinct = torch.randn(5, 7)
    which = torch.randint(0, 5, (40,))
    rows = distinct[which]
    groups = RowGroups.find(rows)
    assert groups is not None and groups.num_groups == len(torch.unique(which)) and groups.num_rows == 40
    assert torch.equal(groups.expand(groups.pick(rows)), rows)
    same_group = groups.inverse[:, None] == groups.inverse[None, :]
    assert torch.equal(same_group, which[:, None] == which[None, :])


def test_no_groups_when_rows_are_mostly_distinct_or_nan():
    torch.manual_seed(1)
    assert RowGroups.find(torch.randn(20, 4)) is None
    assert RowGroups.find(torch.ones(1, 4)) is None
    rows = torch.ones(8, 3)
    rows[2, 1] = float("nan")
    rows[5, 1] = float("nan")
    groups = RowGroups.find(rows)  # NaN equals nothing, not even itself: never grouped with a row
    assert groups is None or torch.equal(groups.expand(groups.pick(rows)).isnan(), rows.isnan())


def test_a_key_collision_never_merges_different_rows():
    p = _projection(2, torch.device("cpu"))
    a, b = torch.tensor([p[1], 0.0], dtype=torch.float64), torch.tensor([0.0, p[0]], dtype=torch.float64)
    assert (a @ p).item() == (b @ p).item()  # different rows, one key
    rows = torch.stack([a, b, a, b, a, b])
    groups = RowGroups.find(rows)
    assert groups is not None and groups.num_groups == 2
    assert torch.equal(groups.expand(groups.pick(rows)), rows)


def _graphs_with_repeats():
    """Two copies of a small two-component graph with one-hot features: many equal rows."""
    edges = torch.tensor([[0, 1, 1, 2, 2, 3, 4, 5, 5, 6], [1, 0, 2, 1, 3, 2, 5, 4, 6, 5]])
    edges = torch.cat([edges, edges + 7], dim=1)
    x = torch.eye(3)[torch.tensor([0, 1, 1, 0, 0, 1, 0] * 2)]
    return x, normalized_adjacency(edges, 14)


@pytest.mark.parametrize("dims,normalize,bias", [
    ((3, 16, 8, 3), False, True),   # widening first layer: groups Â X
    ((3, 16, 8, 3), True, True),
    ((3, 2, 8, 3), False, True),    # narrowing first layer: groups X; a widening second one
    ((3, 16, 8, 1), False, False),  # one layer, the output itself grouped
    ((3, 8, 8, 2), False, True),
])
def test_grouped_encoder_gives_the_same_embeddings_and_gradients(dims, normalize, bias):
    x, adj = _graphs_with_repeats()
    net = GCNEncoder(*dims, normalize=normalize, bias=bias)
    for conv in net.convs:
        if conv.bias is not None:
            torch.nn.init.normal_(conv.bias)
    groups = RowGroups.find(net.first_rows(x, adj))
    assert groups is not None and groups.num_groups < x.shape[0]
    weights = torch.arange(14 * dims[2], dtype=torch.float32).view(14, dims[2]).sin()  # an uneven loss
    results = []
    for g in (None, groups):
        net.zero_grad()
        out = net(x, adj, groups=g)
        (out * weights).sum().backward()
        results.append((out.detach(), [p.grad.clone() for p in net.parameters()]))
    (plain, plain_grads), (grouped, grouped_grads) = results
    assert torch.allclose(plain, grouped, atol=1e-6)
    for a, b in zip(plain_grads, grouped_grads):
        assert torch.allclose(a, b, atol=1e-5)


def test_training_with_groups_is_training_without_them(herg_path, monkeypatch):
    graphs = load(herg_path)
    graphs = graphs.subset(list(range(120)))
    settings = dict(epochs=3, hidden_dim=64, out_dim=32, batch_size=40, lr=1e-3, seed=2, device="cpu")
    grouped = GLocalKD(**settings).fit(graphs)
    packed = PackedGraphs(grouped.schema_.apply(graphs))
    assert grouped._rows_repeat(packed, torch.device("cpu"))  # atoms repeat: grouping is used
    monkeypatch.setattr(GLocalKD, "_rows_repeat", lambda self, packed, device: False)
    monkeypatch.setattr(GLocalKD, "_row_groups", lambda self, batch, adj: None)
    plain = GLocalKD(**settings).fit(graphs)
    assert np.allclose(grouped.loss_history_, plain.loss_history_, rtol=1e-5)
    a, b = grouped.score(graphs), plain.score(graphs)
    assert np.allclose(a.score, b.score, rtol=1e-4)
    assert np.allclose(a.node_errors, b.node_errors, rtol=1e-4, atol=1e-6)


def test_continuous_attributes_are_not_grouped(tu_folder):
    graphs = load(tu_folder)  # node attributes differ from node to node
    model = GLocalKD(epochs=1, hidden_dim=16, out_dim=8, batch_size=4, device="cpu").fit(graphs)
    assert not model._rows_repeat(PackedGraphs(model.schema_.apply(graphs)), torch.device("cpu"))
