"""What a parsing worker process does first: its signals and its memory ceiling."""
from __future__ import annotations

from core.runtime.memory import limit_address_space
from core.runtime.signals import init_worker_process


def init_parsing_worker() -> None:
    """Set up a process that parses molecules, so that a runaway parse costs one row.

    It takes stop signals as a worker does (:func:`core.runtime.signals.init_worker_process`) and
    gets an address-space ceiling (:func:`core.runtime.memory.limit_address_space`); it is the
    initializer of the parsing worker pools.
    """
    init_worker_process()
    limit_address_space()
