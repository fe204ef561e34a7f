"""Device names are checked where they are resolved: a GPU that is not there is a one-line error
naming the device asked for, never torch's "invalid device ordinal" later."""
from __future__ import annotations

import pytest
import torch

from core.errors import GLocalKDError
from core.runtime.device import resolve_device


def test_cpu_and_auto_resolve():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.parametrize("name", ["tpu", "cuda:x", 3])
def test_a_name_that_is_no_device_is_refused(name):
    with pytest.raises(GLocalKDError):
        resolve_device(name)


def test_a_gpu_number_beyond_those_torch_sees_is_refused_by_its_name(monkeypatch):
    """``cuda:3`` on a machine with one GPU was accepted, and torch failed later with a traceback;
    on a machine without one, the message said 'cuda', not the device asked for."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(GLocalKDError, match=r"'cuda:3' asked for, but torch sees 1 CUDA GPU \(cuda:0\)"):
        resolve_device("cuda:3")
    assert resolve_device("cuda:0") == torch.device("cuda:0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(GLocalKDError, match="'cuda:3' asked for, but torch sees no CUDA GPU"):
        resolve_device("cuda:3")
