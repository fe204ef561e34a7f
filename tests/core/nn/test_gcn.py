"""The GCN encoder computes exactly torch-geometric's GCNConv layers, with and without autograd,
and holds its weights as GCNConv does (names, shapes and a seed's initial values)."""
import torch
from torch import nn
from torch_geometric.nn import GCNConv

from core.nn.gcn import GCNEncoder, normalized_adjacency
from core.nn.sparse import spmm


def test_encoder_matches_pyg_gcnconv_layers_with_and_without_grad():
    torch.manual_seed(0)
    net = GCNEncoder(5, 16, 8, 3)
    for conv in net.convs:
        torch.nn.init.normal_(conv.bias)  # non-zero biases, so the fused bias is checked too
    x = torch.randn(7, 5)
    edges = torch.tensor([[0, 1, 1, 2, 3, 4, 5, 6], [1, 0, 2, 1, 4, 3, 6, 5]])
    adj = normalized_adjacency(edges, 7)
    expected = x
    for i, layer in enumerate(net.convs):  # PyG's own layer, with the same weights: linear, propagate, bias
        conv = GCNConv(layer.in_channels, layer.out_channels, normalize=False)
        conv.load_state_dict(layer.state_dict())
        expected = conv(expected, adj)
        if i < len(net.convs) - 1:
            expected = torch.relu(expected)
    with torch.no_grad():
        assert torch.allclose(net(x, adj), expected, atol=1e-5)
    out = net(x, adj)
    assert torch.allclose(out, expected, atol=1e-5)
    out.pow(2).sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in net.parameters())


def test_symmetric_propagation_gives_torchs_gradients():
    """The backward pass that reuses a symmetric Â must give the gradients torch's own gives."""
    torch.manual_seed(1)
    edges = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0, 4, 5], [1, 0, 2, 1, 3, 2, 0, 3, 5, 4]])
    adj = normalized_adjacency(edges, 6)
    assert torch.equal(adj.to_dense(), adj.to_dense().t())
    x = torch.randn(6, 3)
    grads = []
    for symmetric in (False, True):
        net = GCNEncoder(3, 8, 4, 3)
        torch.manual_seed(2)
        net.reset_parameters()
        out = net(x, adj, adj_symmetric=symmetric)
        (out * torch.arange(24.0).view(6, 4)).sum().backward()  # an uneven loss: every gradient differs
        grads.append([p.grad.clone() for p in net.parameters()])
    for a, b in zip(*grads):
        assert torch.allclose(a, b, atol=1e-6)


def test_spmm_is_the_dense_product_for_any_layout_of_x():
    """The fast CPU product writes into an uninitialised result: it must still be exactly Â X,
    for contiguous, transposed and sliced X, and for graphs with isolated nodes."""
    torch.manual_seed(3)
    edges = torch.tensor([[0, 1, 1, 2, 4, 5], [1, 0, 2, 1, 5, 4]])  # node 3 is isolated
    adj = normalized_adjacency(edges, 6)
    dense = adj.to_dense()
    x = torch.randn(6, 9)
    for operand in (x, x.t().contiguous().t(), x[:, 2:7]):
        assert torch.allclose(spmm(adj, operand), dense @ operand, atol=1e-6)
    # beta = 0: whatever the result's memory held is never read
    filled = torch.full((6, 9), float("nan")).addmm_(adj, x, beta=0)
    assert torch.allclose(filled, dense @ x, atol=1e-6)


def test_a_seed_gives_the_weights_gcnconv_layers_gave():
    """Model files and seeds from before keep their meaning: same parameter names and shapes,
    and the same initial weights (and random state after them) for the same seed."""
    for bias in (True, False):
        torch.manual_seed(5)
        net = GCNEncoder(37, 64, 32, 3, bias=bias)
        after = torch.rand(3)

        class WithGCNConv(GCNEncoder):
            def __init__(self):
                nn.Module.__init__(self)
                self.normalize = False
                dims = [37, 64, 64, 32]
                self.convs = nn.ModuleList(GCNConv(a, b, normalize=False, bias=bias)  # noqa: B023 (built in this iteration)
                                           for a, b in zip(dims[:-1], dims[1:]))
                self.reset_parameters()

        torch.manual_seed(5)
        reference = WithGCNConv()
        mine, theirs = net.state_dict(), reference.state_dict()
        assert list(mine) == list(theirs)
        assert all(torch.equal(mine[k], theirs[k]) for k in mine)
        assert torch.equal(after, torch.rand(3))
