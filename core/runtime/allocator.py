"""Keep freed memory in the process instead of giving it back to the kernel after each step.

On Linux with glibc, ``malloc`` sizes its thresholds to the largest block freed so far. Freed
memory at the top of the heap beyond twice that size goes back to the kernel. A training step
frees tens of megabytes of activations, and the next step asks for the same again. The kernel
then has to map and zero every page once more: one page fault per 4 KB, about 1.7 us each here.
An AIDS epoch at paper widths took 65 to 19,000 such faults, depending on the process's
history. With the thresholds below it took 0 to 700.

PyTorch's CPU performance guide suggests jemalloc or tcmalloc for the same reason. Setting
glibc's own thresholds needs no extra library. This tuning changes the whole process, so the
library never does it on its own. The ``glocalkd`` command, the app and the benchmarks call
:func:`retain_freed_memory` once at start-up, and a script can too. It did not raise the
measured peak: a REDDIT-BINARY training fold peaked at 1,788 MB with it and 1,851 MB without.
What it costs is memory held after a peak: up to ``trim_mb`` of freed memory stays in the
process instead of going back to the system.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys

_M_TRIM_THRESHOLD = -1  # mallopt parameter numbers, from glibc's <malloc.h>
_M_MMAP_THRESHOLD = -3


def _libc() -> ctypes.CDLL | None:
    """The C library on Linux (glibc or another), else None."""
    return _load_libc() if sys.platform.startswith("linux") else None


@functools.cache
def _load_libc() -> ctypes.CDLL | None:
    """The C library, looked up once: the lookup takes about 2 ms, and screening releases
    memory after every chunk."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def retain_freed_memory(trim_mb: int = 256, mmap_mb: int = 32) -> bool:
    """Set glibc's malloc thresholds so freed memory stays in the process between training steps.

    Blocks under ``mmap_mb`` come from the heap, which gives freed memory back only past
    ``trim_mb``. Both are set: setting either one turns off glibc's sliding thresholds.

    Args:
        trim_mb: freed memory at the top of the heap beyond this many MiB goes back to the kernel.
        mmap_mb: blocks of at least this many MiB are mapped on their own (and unmapped when freed).

    Returns:
        Whether the settings took: False off Linux, or when the C library is not glibc (musl has
        no ``mallopt``).
    """
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # Set both: setting either one turns off glibc's sliding thresholds.
    return bool(mallopt(_M_MMAP_THRESHOLD, mmap_mb << 20)) and bool(mallopt(_M_TRIM_THRESHOLD, trim_mb << 20))


def release_freed_memory() -> bool:
    """Give the memory this process has freed back to the kernel now (glibc's ``malloc_trim``).

    A screening worker calls it after each chunk: the thresholds of :func:`retain_freed_memory`,
    inherited from its parent at fork, would otherwise keep up to ``trim_mb`` of a chunk's freed
    memory in every worker for the whole run.

    Returns:
        Whether any memory went back (False off glibc).
    """
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is None:
        return False
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return bool(trim(0))
