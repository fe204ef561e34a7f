"""What CPU a measurement ran on: its name and its widest vector instructions.

Speeds, and ratios to a matmul bound, depend on them: wider vectors make the dense products
faster but not the passes over memory, and bfloat16 is fast only with AVX-512 or AMX. The
benchmarks and evaluation results record it beside their figures.
"""
from __future__ import annotations

import platform
from pathlib import Path

VECTOR_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile")


def describe_cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict:
    """Describe the CPU a measurement ran on: its name and its widest vector instructions.

    Args:
        cpuinfo: the file to read (Linux's ``/proc/cpuinfo``); its first processor's entry is used.

    Returns:
        ``{"cpu": name, "vector_flags": [...]}``, the flags those of ``VECTOR_FLAGS`` present;
        where the file cannot be read, the name ``platform`` gives and no flags.
    """
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return {"cpu": platform.processor() or platform.machine() or "unknown", "vector_flags": []}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:  # the first processor's entry
            fields[key.strip()] = value.strip()
    flags = set(fields.get("flags", "").split())
    return {"cpu": fields.get("model name", platform.processor() or "unknown"),
            "vector_flags": [f for f in VECTOR_FLAGS if f in flags]}
