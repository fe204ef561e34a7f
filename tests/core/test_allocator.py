"""retain_freed_memory: freed blocks are reused, not mapped and zeroed by the kernel again."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_PROBE = textwrap.dedent("""
    import resource, sys
    import torch
    from core.allocator import retain_freed_memory
    took = retain_freed_memory() if sys.argv[1] == "tuned" else None  # "default": a control run
    faults = []
    for _ in range(6):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        blocks = [torch.ones(5_000_000) for _ in range(3)]  # 3 x 20 MB, as a training step's activations
        del blocks  # 60 MB free at the heap's top: past glibc's own trim threshold (twice 20 MB)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    print(took, *faults)
""")


def _faults(mode: str) -> tuple[str, list[int]]:
    """Minor page faults while allocating and freeing three 20 MB blocks six times in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split()
    return out[0], [int(v) for v in out[1:]]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc thresholds exist on Linux only")
def test_freed_blocks_are_reused_without_page_faults():
    """Without the call glibc gives most of the 60 MB back each round and maps it afresh
    (9,700-14,600 faults per round, here); with it the rounds soon reuse what the process kept."""
    took, faults = _faults("tuned")
    assert took == "True"
    assert faults[0] > 0 and max(faults[3:]) < max(1, faults[0] // 20)


def test_it_reports_whether_the_settings_took(monkeypatch):
    from core import allocator

    monkeypatch.setattr(allocator.sys, "platform", "darwin")
    assert allocator.retain_freed_memory() is False
