"""What a parsing worker process does first: its signals and its memory ceiling."""
from __future__ import annotations

from core.runtime.memory import limit_address_space
from core.runtime.signals import init_worker_process


def init_parsing_worker() -> None:
    """Initializer of a process that parses molecules: stop signals as a worker takes them
    (:func:`core.runtime.signals.init_worker_process`) and an address-space ceiling
    (:func:`core.runtime.memory.limit_address_space`), so a runaway parse costs one row."""
    init_worker_process()
    limit_address_space()
