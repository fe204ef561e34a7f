"""retain_freed_memory: freed blocks are reused, not mapped and zeroed by the kernel again."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

_PROBE = textwrap.dedent("""
    import ctypes, ctypes.util, resource, sys
    from core.runtime.allocator import retain_freed_memory
    took = retain_freed_memory() if sys.argv[1] == "tuned" else None  # "default": a control run
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    faults = []
    for _ in range(6):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        blocks = [libc.malloc(20_000_000) for _ in range(3)]  # 3 x 20 MB, as a training step's activations
        for block in blocks:
            libc.memset(block, 1, 20_000_000)  # touched, as a tensor's data is
        for block in blocks:
            libc.free(block)  # 60 MB free at the heap's top: past glibc's own trim threshold (twice 20 MB)
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
    """Without the call glibc gives the 60 MB back each round and maps it afresh (about 14,600
    faults in every round on an AMD EPYC with AVX2); with it the rounds after the first reuse
    what the process kept (none). The blocks come straight from malloc, which is what torch's
    CPU allocator calls: with tensors, torch's own small allocations land between the blocks,
    and how soon the rounds stop faulting then depends on that layout (on that machine: from the
    fifth or the seventh of 12 rounds, with or without the call)."""
    took, faults = _faults("tuned")
    assert took == "True"
    assert faults[0] > 0 and max(faults[1:]) < max(1, faults[0] // 20)
    _, control = _faults("default")
    assert min(control[1:]) > faults[0] // 2  # the probe sees the difference the call makes


def test_it_reports_whether_the_settings_took(monkeypatch):
    from core.runtime import allocator

    monkeypatch.setattr(allocator.sys, "platform", "darwin")
    assert allocator.retain_freed_memory() is False


_RELEASE_PROBE = textwrap.dedent("""
    import ctypes, ctypes.util, sys
    from core.runtime.allocator import release_freed_memory, retain_freed_memory
    def rss_mb():
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * 4096 / 2**20
    retain_freed_memory()
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    blocks = [libc.malloc(1_000_000) for _ in range(100)]  # 100 MB in blocks under the mmap threshold
    for block in blocks:
        libc.memset(block, 1, 1_000_000)
    for block in blocks:
        libc.free(block)
    kept = rss_mb()
    released = release_freed_memory() if sys.argv[1] == "release" else None
    print(released, kept, rss_mb())
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim exists on Linux only")
def test_released_memory_goes_back_to_the_kernel():
    """Under the retained thresholds, 100 MB freed stays in the process until it is released
    (what a screening worker does after each chunk)."""
    def run(mode):
        out = subprocess.run([sys.executable, "-c", _RELEASE_PROBE, mode], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
        return out[0], float(out[1]), float(out[2])

    released, kept, after = run("release")
    assert released == "True" and kept - after > 80
    _, kept, after = run("keep")
    assert kept - after < 5  # without the call the 100 MB stays: the probe sees the difference
