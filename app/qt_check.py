"""A guard against a PySide6 release whose signals corrupt Python's reference counts.

In PySide6 6.12.0 every ``Signal.emit()`` returns ``True`` without taking a reference to it, so
each emit lowers ``True``'s reference count by one. On Python before 3.12 (where ``True`` is not
immortal) a session that emits enough signals (epoch progress, finished tasks) frees ``True``
and crashes: "bool_dealloc" aborts or segmentation faults. pyproject.toml excludes that release;
this check catches it when an environment has it anyway.
"""
from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Probe(QObject):
    ping = Signal()


def emit_keeps_refcounts(emits: int = 8) -> bool:
    """True when emitting a signal leaves ``True``'s reference count as it was."""
    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(emits):
        probe.ping.emit()
    return sys.getrefcount(True) == before


def emit_bug_message() -> str | None:
    """A message for the user when this PySide6 has the emit bug, else None."""
    if emit_keeps_refcounts():
        return None
    import PySide6

    return (f"PySide6 {PySide6.__version__} has a bug that makes long sessions crash (each signal "
            "drops a reference to Python's True). Install another release, for example:\n"
            "    pip install 'PySide6-Essentials!=6.12.0'")
