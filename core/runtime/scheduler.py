"""Where distributed work runs: a Dask scheduler named on the command line.

``--scheduler local:N`` starts a ``LocalCluster`` of N single-threaded worker processes on this
machine for the length of the run; ``--scheduler tcp://HOST:8786`` (or any address Dask's
``Client`` takes, or the JSON file of ``dask scheduler --scheduler-file``) joins a cluster that
is already running, e.g. one started by
``dask-jobqueue`` on SLURM or by ``dask-kubernetes`` (docs/scaling.md). Dask is imported only
here and only when a scheduler is asked for, so the rest of core runs without it.
"""
from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator

from core.errors import GLocalKDError
from core.runtime.threads import PER_CORE_LIMIT, most_per_machine

_LOCAL = re.compile(r"^local(?::(\d+))?$")


def parse_scheduler(spec: str) -> tuple[str, int | None]:
    """Read a ``--scheduler`` string: a local cluster or the address of a running one.

    Args:
        spec: ``local`` or ``local:N``; a scheduler address (``tcp://HOST:8786``, ``HOST:PORT``, any
            ``scheme://``); or a ``.json`` scheduler file (``dask scheduler --scheduler-file``).

    Returns:
        ``("local", N)`` for ``local:N`` (N None for plain ``local``: the caller takes the usable
        CPU count), else ``(spec, None)`` with surrounding space removed.

    Raises:
        GLocalKDError: ``local:0``, more local workers than ``--workers`` allows
            (:func:`core.runtime.threads.most_per_machine`), or a string that is none of these.
    """
    spec = spec.strip()
    m = _LOCAL.match(spec)
    if m:
        n = int(m.group(1)) if m.group(1) else None
        if n is not None and n < 1:
            raise GLocalKDError(f"--scheduler {spec}: a local cluster needs at least 1 worker")
        if n is not None and n > most_per_machine():  # each a process, as --workers (which refuses as many)
            raise GLocalKDError(f"--scheduler {spec}: a local cluster's workers must be from 1 to "
                                f"{most_per_machine()} ({PER_CORE_LIMIT} per CPU core), not {n}")
        return "local", n
    if spec.endswith(".json"):  # a scheduler file (dask scheduler --scheduler-file, SLURM batch scripts)
        return spec, None
    if "://" not in spec and not re.match(r"^[\w.\-]+:\d+$", spec):
        raise GLocalKDError(f"--scheduler {spec!r}: expected local:N or a scheduler address such as "
                            "tcp://HOST:8786")
    return spec, None


@contextlib.contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Worker processes started inside ignore SIGINT (a child keeps an ignored signal ignored):
    Ctrl+C in a terminal reaches the whole process group, and the client, not each worker,
    decides what an interrupted run keeps; closing the cluster ends the workers."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


_LOCAL_CLUSTER_RUNNING = False


def _reset_worker_signals() -> None:
    """In a child forked while a local cluster runs (one of its workers): the single-machine
    pipeline's worker set-up (:func:`core.runtime.signals.init_worker_process`), so a worker does
    not inherit the client's handlers, which turn SIGTERM into KeyboardInterrupt."""
    if _LOCAL_CLUSTER_RUNNING:
        from core.runtime.signals import init_worker_process

        init_worker_process()


@contextlib.contextmanager
def _forked_workers() -> Iterator[None]:
    """While the block runs, a forked child (a worker of the local cluster) resets its signals."""
    global _LOCAL_CLUSTER_RUNNING
    import os

    if not getattr(_reset_worker_signals, "registered", False) and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_reset_worker_signals)
        _reset_worker_signals.registered = True
    _LOCAL_CLUSTER_RUNNING = True
    try:
        yield
    finally:
        _LOCAL_CLUSTER_RUNNING = False


@contextlib.contextmanager
def _quiet_asyncio() -> Iterator[None]:
    """The local cluster's scheduler runs in this process: when its workers end with the run (a
    SIGTERM sent to the whole process group), asyncio would print the closed connections'
    tracebacks. The run's own message says what happened."""
    logger = logging.getLogger("asyncio")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def connect(spec, timeout: float = 30.0) -> Iterator:
    """Connect to the Dask scheduler a ``--scheduler`` string names, for the length of a block.

    A local cluster is started here: single-threaded worker processes (forked where there is
    fork, so they start with torch, RDKit and core imported), no dashboard, workers that ignore
    Ctrl+C; it is closed on the way out, as is a client made here for a running cluster.

    Args:
        spec: a ``--scheduler`` string (:func:`parse_scheduler`), or a ``Client`` already made,
            used as it is and left open.
        timeout: seconds to wait for the scheduler.

    Yields:
        A Dask ``distributed.Client``.

    Raises:
        GLocalKDError: Dask is not installed, the scheduler cannot be reached, or ``spec`` is not
            a scheduler (:func:`parse_scheduler`).
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - dask is a dependency
        raise GLocalKDError("--scheduler needs Dask: pip install 'dask[distributed]'") from None
    if not isinstance(spec, str):
        yield spec
        return
    address, n = parse_scheduler(spec)
    if address == "local":
        import multiprocessing

        import dask

        from core.runtime.threads import usable_cpus

        n = n or usable_cpus()
        # processes, one thread each: RDKit and torch hold the GIL for parts of their work, and
        # one torch thread per core is what the single-machine pipeline uses too. Forked where
        # there is fork (Linux): a worker starts with torch, RDKit and core already imported, as
        # the single-machine pipeline's parsing workers do (a spawned worker imports them anew:
        # on 2 busy cores 2.5-3.3 s to start, 7-9 s of imports, 4 s to close; forked 0.4, 0.02
        # and 0.15 s). No statistical profiler (a stack sample every 10 ms in every worker):
        # nothing here reads it
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        with dask.config.set({"distributed.worker.profile.enabled": False,
                              "distributed.worker.multiprocessing-method": method}), _forked_workers():
            with _workers_ignore_ctrl_c():
                # silence_logs: a failed task is one line from the client, not a worker's traceback
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=logging.CRITICAL,
                                       # no dashboard; the scheduler's small HTTP server on any free port, not 8787
                                       scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}, host="127.0.0.1")
            with cluster, Client(cluster, timeout=timeout) as client, _quiet_asyncio():
                yield client
        return
    try:
        client = (Client(scheduler_file=address, timeout=timeout) if address.endswith(".json")
                  else Client(address, timeout=timeout))
    except (OSError, TimeoutError) as exc:
        raise GLocalKDError(f"--scheduler {address}: cannot reach the scheduler ({exc})") from None
    try:
        yield client
    finally:
        client.close()
