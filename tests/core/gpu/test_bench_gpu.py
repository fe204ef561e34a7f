"""The speed benchmark reports a training epoch on the GPU beside the CPU's, or says there is no GPU."""
from __future__ import annotations

import pytest
import torch

from benchmarks.bench import _gpu_note, gpu_epoch
from core import load
from tests.conftest import DEMO_DATA


@pytest.fixture(scope="module")
def graphs():
    return load(DEMO_DATA / "herg.tab").subset(range(64))


def test_without_a_gpu_the_benchmark_says_so(graphs, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    gpu = gpu_epoch(graphs, epochs=1)
    assert gpu == {"gpu": "no GPU"}
    assert _gpu_note({"gpu": gpu, "seconds_per_epoch": 1.0}) == "; GPU: no GPU (torch sees none)"


@pytest.mark.cuda
def test_with_a_gpu_the_benchmark_times_an_epoch_there(graphs):
    gpu = gpu_epoch(graphs, epochs=1)
    assert gpu["gpu"] == torch.cuda.get_device_name(0) and gpu["seconds_per_epoch"] > 0
    assert "s/epoch" in _gpu_note({"gpu": gpu, "seconds_per_epoch": 1.0})
