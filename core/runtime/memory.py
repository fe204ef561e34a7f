"""A ceiling on a parsing worker's memory, so that a runaway parse ends that worker, not the machine.

RDKit's ring perception can grow without bound on a legal SMILES: a fused ladder of 2,000 atoms
(4,000 characters) reached 2.1 GB and 24 s; one of 9,998 atoms was reported at 20 GB before the
kernel's OOM killer ended it (and on a shared machine that killer may pick someone else's process).
:func:`core.data.chem.parse_smiles` refuses such rows before RDKit sees them; this limit is the
second line. A parsing worker calls :func:`limit_address_space` once at start: past the limit an
allocation fails, RDKit raises ``MemoryError`` (the row is rejected with that reason) or the worker
dies (the screening pipeline then rejects the one row that killed it), and nothing else on the
machine is touched.

The limit is on address space (``RLIMIT_AS``): what the worker has mapped when it starts (a forked
worker inherits its parent's mappings, torch's libraries included) plus ``PARSE_MEMORY_DEFAULT``
(2 GiB). A chunk of 20,000 MOSES rows needs far less. Set ``GLOCALKD_PARSE_MEMORY`` to another
size (``4G``, ``512M``, bytes) or to ``off``.
"""
from __future__ import annotations

import os
import re

PARSE_MEMORY_DEFAULT = 2 * 1024**3
PARSE_MEMORY_ENV = "GLOCALKD_PARSE_MEMORY"
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def parse_size(text: str) -> int | None:
    """Bytes from a size such as ``2G``, ``512M``, ``1.5g`` or ``1073741824``; None for ``off``/``0``.

    Args:
        text: the size.

    Returns:
        The size in bytes, or None when the limit is switched off.

    Raises:
        ValueError: ``text`` is not a size.
    """
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    if text in ("OFF", "NONE", "0", ""):
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)", text)
    if match is None:
        raise ValueError(f"not a size: {text!r} (use e.g. 2G, 512M or off)")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def mapped_bytes() -> int | None:
    """Read this process's address space now (``VmSize`` of ``/proc/self/status``).

    Returns:
        The mapped bytes, or None where /proc cannot tell.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def parse_memory_allowance() -> int | None:
    """Read the address space a parsing worker may add to what it has mapped at start.

    Returns:
        Bytes from ``GLOCALKD_PARSE_MEMORY``, else ``PARSE_MEMORY_DEFAULT`` (also for a value that
        is not a size); None when switched off (``off``, ``0``).
    """
    text = os.environ.get(PARSE_MEMORY_ENV)
    if text is None:
        return PARSE_MEMORY_DEFAULT
    try:
        return parse_size(text)
    except ValueError:
        return PARSE_MEMORY_DEFAULT


def limit_address_space(allowance: int | None = None) -> int | None:
    """Cap this process's address space at what it has mapped now plus ``allowance`` bytes.

    Meant for worker processes only (a whole-process limit: torch's thread pools in the main
    process need room). Never raises the hard limit, and keeps a lower limit already set.

    Args:
        allowance: bytes beyond the current mappings; None reads :func:`parse_memory_allowance`.

    Returns:
        The limit set in bytes, or None where none was set (switched off, or not supported here).
    """
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    allowance = parse_memory_allowance() if allowance is None else allowance
    now = mapped_bytes()
    if allowance is None or now is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = now + allowance
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft != resource.RLIM_INFINITY and soft <= limit:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        return None
    return limit
