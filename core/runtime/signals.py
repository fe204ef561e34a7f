"""How a long run reacts to being stopped: SIGTERM and SIGHUP (``timeout``, batch schedulers, a
closed terminal) like Ctrl+C, Ctrl+C held off while results are being saved, and worker
processes that never outlive their parent."""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from contextlib import contextmanager
from collections.abc import Iterator

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


_stop_received = threading.Event()


def _raise_interrupt(signum, frame) -> None:
    _stop_received.set()
    raise KeyboardInterrupt(signal.Signals(signum).name)


def stop_received() -> bool:
    """Tell whether SIGTERM or SIGHUP arrived inside :func:`stop_signals_interrupt`.

    Its KeyboardInterrupt can be lost: raised while the main thread runs a garbage-collector
    callback or a ``__del__`` (Dask's scheduler keeps one), Python only reports it; a long loop
    checks this too, and stops.

    Returns:
        Whether a stop signal arrived since the last block that installed the handlers began.
    """
    return _stop_received.is_set()


def _quiet_lost_interrupt(previous):
    def hook(unraisable) -> None:  # the lost KeyboardInterrupt is seen through stop_received()
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and _stop_received.is_set():
            return
        previous(unraisable)
    return hook


def ignore_stop_signals() -> None:
    """Ignore Ctrl+C, SIGTERM and SIGHUP from now on: for a program whose command has ended, while
    Python shuts down. A second Ctrl+C there (torch's finalizers run at exit) printed a traceback
    and killed the process by the signal instead of its exit status. Only the main thread can
    change signal handling: elsewhere this does nothing.
    """
    if _in_main_thread():
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)


@contextmanager
def stop_signals_interrupt() -> Iterator[None]:
    """Make SIGTERM and SIGHUP raise KeyboardInterrupt inside the block, as Ctrl+C does.

    The same code then keeps the results and removes temporary files (and :func:`stop_received`
    says that one came). Signals whose handler is not the default are left alone. Only the main
    thread can handle signals: elsewhere (a GUI's worker thread) this does nothing.

    Yields:
        Nothing; the handlers are restored on the way out.
    """
    if not _in_main_thread():
        yield
        return
    previous = {}
    for sig in STOP_SIGNALS:
        if sig != signal.SIGINT and signal.getsignal(sig) in (signal.SIG_DFL, None):
            previous[sig] = signal.signal(sig, _raise_interrupt)
    hook = sys.unraisablehook
    if previous:
        _stop_received.clear()
        sys.unraisablehook = _quiet_lost_interrupt(hook)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sys.unraisablehook = hook


class Deferred:
    """The stop signals that arrived while they were held off (see :func:`deferred_stops`).

    It is true when any arrived.

    Attributes:
        signals: the signal numbers, in order of arrival.
    """

    def __init__(self) -> None:
        self.signals: list[int] = []

    def __bool__(self) -> bool:
        return bool(self.signals)


@contextmanager
def deferred_stops() -> Iterator[Deferred]:
    """Hold off Ctrl+C, SIGTERM and SIGHUP for the block, while saving results that a stop would lose.

    In a thread other than the main one this records nothing (signals never reach it).

    Yields:
        The :class:`Deferred` that records the signals that arrived, for the caller to act on
        afterwards.
    """
    caught = Deferred()
    if not _in_main_thread():
        yield caught
        return
    previous = {sig: signal.signal(sig, lambda signum, frame: caught.signals.append(signum)) for sig in STOP_SIGNALS}
    try:
        yield caught
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def init_worker_process() -> None:
    """Set up a worker process's signals so that it never outlives its parent.

    Ctrl+C is its parent's to handle (the terminal sends it to the whole process group; the worker
    would print a traceback), SIGTERM and SIGHUP end it at once, and it dies with its parent
    (Linux, ``PR_SET_PDEATHSIG``), so a killed parent leaves no orphans. A worker whose parent has
    already died exits.
    """
    parent = os.getppid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in STOP_SIGNALS:
        if sig != signal.SIGINT:
            signal.signal(sig, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)
