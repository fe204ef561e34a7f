import torch
from torch_geometric.nn import global_max_pool as pyg_global_max_pool

from core.nn.pooling import global_max_pool


def _graphs():
    """Five graphs, one of them empty, with tied maxima (as symmetric atoms give)."""
    torch.manual_seed(0)
    counts = torch.tensor([4, 1, 0, 6, 3])
    batch = torch.repeat_interleave(torch.arange(len(counts)), counts)
    x = torch.randn(int(counts.sum()), 8, dtype=torch.float64)
    x[1] = x[0]  # a full tie in graph 0
    x[5] += 10  # graph 3's maximum, tied below
    x[6, :4] = x[5, :4]  # a partial tie in graph 3
    x[7:9] = x[5]  # a three-way tie in graph 3
    return x, batch, len(counts)


def _pool_and_grad(pool, x, batch, size, grad):
    x = x.clone().requires_grad_()
    out = pool(x, batch, size=size)
    out.backward(grad)
    return out.detach(), x.grad


def test_max_pool_and_its_gradient_match_torch_geometric_bitwise():
    x, batch, size = _graphs()
    grad = torch.randn(size, x.shape[1], dtype=x.dtype)
    ours = _pool_and_grad(global_max_pool, x, batch, size, grad)
    theirs = _pool_and_grad(pyg_global_max_pool, x, batch, size, grad)
    assert torch.equal(ours[0], theirs[0]) and torch.equal(ours[1], theirs[1])
    assert torch.equal(ours[0][2], torch.zeros(x.shape[1], dtype=x.dtype))  # the empty graph
    assert torch.allclose(ours[1][5:9, 0], grad[3, 0].expand(4) / 4)  # split evenly over a 4-way tie
    with torch.no_grad():
        assert torch.equal(global_max_pool(x, batch, size), ours[0])


def test_max_pool_gradient_is_right_where_the_maximum_is_unique():
    torch.manual_seed(1)
    batch = torch.tensor([0, 0, 0, 1, 1, 2])
    x = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: global_max_pool(t, batch, 3), (x,))
