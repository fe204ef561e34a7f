"""Adam, fused where PyTorch allows it: the same update rule as the per-tensor loop."""
import pytest
import torch

from core.nn.gcn import GCNEncoder
from core.nn.optim import adam


def _train(optimizer_factory, steps: int = 20) -> list[torch.Tensor]:
    torch.manual_seed(0)
    net = GCNEncoder(6, hidden_dim=16, out_dim=8)
    opt = optimizer_factory(net.parameters())
    x = torch.randn(30, 6)
    adj = torch.eye(30).to_sparse_csr()
    for _ in range(steps):
        opt.zero_grad()
        net(x, adj).pow(2).sum().backward()
        opt.step()
    return [p.detach().clone() for p in net.parameters()]


@pytest.mark.parametrize("weight_decay", [0.0, 1e-3])
def test_adam_matches_the_unfused_update(weight_decay):
    fused = _train(lambda p: adam(p, lr=1e-2, weight_decay=weight_decay))
    plain = _train(lambda p: torch.optim.Adam(p, lr=1e-2, weight_decay=weight_decay))
    start = _train(lambda p: torch.optim.SGD(p, lr=0.0))
    for a, b, s in zip(fused, plain, start):
        assert not torch.equal(a, s)  # the weights moved
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_adam_is_fused_on_a_cpu_from_torch_2_4():
    opt = adam([torch.nn.Parameter(torch.zeros(3))], lr=1e-3)
    version = tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2])
    assert opt.defaults["fused"] is (True if version >= (2, 4) else None)


def test_adam_falls_back_when_fused_is_refused(monkeypatch):
    real = torch.optim.Adam

    def refusing(params, **kw):
        if kw.get("fused"):
            raise RuntimeError("`fused=True` requires all the params to be on supported devices")
        return real(params, **kw)

    monkeypatch.setattr(torch.optim, "Adam", refusing)
    opt = adam([torch.nn.Parameter(torch.zeros(3))], lr=1e-3, weight_decay=0.1)
    assert not opt.defaults["fused"] and opt.defaults["weight_decay"] == 0.1
