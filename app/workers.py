"""Background work: the plain functions of :mod:`app.tasks` run in QThreads, reporting through signals.

Long work (loading, training, scoring) never runs on the GUI thread, so the window
stays responsive; Stop sets a flag that core polls between batches. A :class:`Task` is
the ``job`` a task function receives: ``report``, ``stopped`` and ``abandoned``.
"""
from __future__ import annotations

import traceback
from typing import Any
from collections.abc import Callable, Iterable

from PySide6.QtCore import QEventLoop, QObject, Qt, QThread, Signal, Slot

from .actions import STOPPABLE
from .state import app_wording
from .tasks import Job


class Task(QObject, Job):
    """Runs ``fn(job=task)`` in a thread: always by keyword, so the task never lands in a
    parameter with a default that the caller left out (e.g. ``top_n``). It is the
    :class:`app.tasks.Job` the function receives (``report``, ``stopped``, ``abandoned``; ``stop``
    and ``abandon`` for the window), whose progress reports are also emitted as a signal.

    A job that Stop ended raises :class:`core.Stopped` (a reader or writer polling ``job.stopped``):
    the task then finishes with None, the one way every job says "stopped, nothing made"."""

    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, fn: Callable[[Task], Any]):
        QObject.__init__(self)
        Job.__init__(self, on_progress=self.progress.emit)
        self._fn = fn

    @Slot()
    def run(self) -> None:
        from core import Stopped

        try:
            result = self._fn(job=self)
        except Stopped:
            self.finished.emit(None)
        except MemoryError:
            self.failed.emit("Out of memory. Try a smaller batch size or narrower layers.")
        except Exception as exc:  # every failure becomes a message; the app stays usable
            from core import GLocalKDError

            if "out of memory" in str(exc).lower():  # raw, or "training failed (out of memory)"
                self.failed.emit("Out of memory. Try a smaller batch size or narrower layers.\n\n" + str(exc))
            elif isinstance(exc, GLocalKDError):
                self.failed.emit(app_wording(exc))
            elif isinstance(exc, OSError) and exc.filename:  # a file the job read or wrote: its name and why
                self.failed.emit(f"{exc.filename}: {exc.strerror or exc}")
            else:
                self.failed.emit(f"Unexpected error: {exc}\n\n{traceback.format_exc(limit=6)}")
        else:
            self.finished.emit(result)


class _Relay(QObject):
    """Calls a task's callbacks on the thread that started it (the GUI thread): it lives there, so
    Qt queues the task's signals to its slots. (A plain function or lambda connected to the task
    itself would run on the worker thread.)"""

    handled = Signal()  # the job's result or failure was handed over

    def __init__(self, on_done: Callable[[object], None], on_fail: Callable[[str], None],
                 on_progress: Callable[[object], None] | None, parent: QObject):
        super().__init__(parent)  # freed with its runner: then no one is told how the job ended
        self._on_done, self._on_fail, self._on_progress = on_done, on_fail, on_progress
        self.abandoned = False  # the window is closing: no one reads what the job says any more

    @Slot(object)
    def done(self, result: object) -> None:
        self._end(self._on_done, result)

    @Slot(str)
    def fail(self, message: str) -> None:
        self._end(self._on_fail, message)

    def _end(self, callback: Callable[[object], None], value: object) -> None:
        """Let the runner (this relay's parent) drop the job, hand its result over, then say it was
        handled. In one event: a look at the runner between the two sees no gap."""
        runner = self.parent()
        if isinstance(runner, Runner):
            runner._let_go(self)
        try:
            if not self.abandoned:
                callback(value)
        finally:
            self.handled.emit()

    @Slot(object)
    def progress(self, value: object) -> None:
        if not self.abandoned:
            self._on_progress(value)


# Every job thread started and not yet exited, with its task: a QThread freed while its thread
# runs takes the process down, and the runner that started it (or the tab owning that runner)
# may be freed first. Its runner lets go of both once the thread has exited.
_ALIVE: dict[QThread, Task] = {}


class Runner(QObject):
    """Owns at most one running Task per name, each on its own QThread.

    Its callbacks (any callables) run on the thread that called :meth:`start`, the GUI thread:
    a Task's results never touch widgets or the state from the worker thread. A job counts as
    running until its result or failure is handled: from then on (its callback included) the
    runner is no longer busy with it, while its thread winds down out of sight.
    """

    changed = Signal()  # a task started or ended

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._running: dict[str, tuple[QThread, Task, _Relay]] = {}
        self._stoppable: set[str] = set()  # the running jobs that poll Stop (:meth:`stoppable`)
        self._background: set[str] = set()  # the running jobs that hold nothing up (:meth:`blocking`)
        self._ending: list[tuple[QThread, Task, _Relay]] = []  # ended jobs whose threads still exit

    def busy(self, name: str | None = None) -> bool:
        return bool(self._running) if name is None else name in self._running

    def running(self) -> list[str]:
        """The names of the tasks running now."""
        return list(self._running)

    def blocking(self) -> list[str]:
        """The names of the running jobs that other work waits for: the one meaning of "busy" that the
        window's actions are enabled by and that a controller refuses work by
        (:meth:`app.controllers.base.Controller.refused_while_busy`). A background job (a re-ranking
        by review marks, a moment) is not one: the actions looked enabled while one ran, then
        answered "Busy"."""
        return [name for name in self._running if name not in self._background]

    def stoppable(self) -> list[str]:
        """The names of the running tasks that Stop stops (a training by epochs, a file scored, ...;
        not a one-step fit nor a map, which run to their end)."""
        return [name for name in self._running if name in self._stoppable]

    def start(self, name: str, fn: Callable[[Task], Any], on_done: Callable[[object], None],
              on_fail: Callable[[str], None], on_progress: Callable[[object], None] | None = None,
              stoppable: bool | None = None, background: bool = False) -> Task:
        """Run ``fn(job=task)`` on a new thread under ``name``.

        Args:
            name: the job's name; one job per name runs at a time.
            fn: the job (a plain function of :mod:`app.tasks`, its inputs bound).
            on_done: called with its result, on this (the GUI) thread.
            on_fail: called with its failure, in the app's words, on this thread.
            on_progress: called with each progress report, on this thread.
            stoppable: whether the job polls Stop (None: by its name, :data:`app.actions.STOPPABLE`);
                the one rule the Stop button, the "Busy" message and quitting follow.
            background: a job of a moment that holds no other work up (:meth:`blocking` leaves it out).

        Returns:
            The task (its ``stop`` asks the job to stop).
        """
        if name in self._running:
            raise RuntimeError(f"a job named {name!r} is running")
        thread = QThread()
        task = Task(fn)
        task.moveToThread(thread)
        relay = _Relay(on_done, on_fail, on_progress, self)
        thread.started.connect(task.run)
        if on_progress is not None:
            task.progress.connect(relay.progress)
        # the relay lets the runner drop the job, then hands its result over (it reaches the runner
        # as its parent: no reference back to it, no cycle to collect)
        task.finished.connect(relay.done)
        task.failed.connect(relay.fail)
        relay.handled.connect(self.changed)
        # quit() directly from the worker thread: the GUI thread may be blocked in wait() (closing)
        task.finished.connect(thread.quit, Qt.ConnectionType.DirectConnection)
        task.failed.connect(thread.quit, Qt.ConnectionType.DirectConnection)
        thread.finished.connect(self._thread_finished)
        self._running[name] = (thread, task, relay)
        polls_stop = name in STOPPABLE if stoppable is None else stoppable
        (self._stoppable.add if polls_stop else self._stoppable.discard)(name)
        (self._background.add if background else self._background.discard)(name)
        _ALIVE[thread] = task
        thread.start()
        self.changed.emit()
        return task

    def _let_go(self, relay: _Relay) -> None:
        """The job of ``relay`` has said how it ended: it no longer runs, though its thread may still exit."""
        for name, entry in list(self._running.items()):
            if entry[2] is relay:
                del self._running[name]
                self._ending.append(entry)

    @Slot()
    def _thread_finished(self) -> None:
        thread = self.sender()
        for name, entry in list(self._running.items()):
            if entry[0] is thread:  # a thread that ended without a word (it cannot, but never hang on to it)
                del self._running[name]
                self._ending.append(entry)
        for entry in [e for e in self._ending if e[0] is thread]:
            t, task, relay = entry
            # finished() is emitted just before the thread exits, and Python owns the QThread:
            # wait for the exit, so it is never freed while its thread still runs.
            t.wait()
            self._ending.remove(entry)
            _ALIVE.pop(t, None)
            task.deleteLater()
            relay.deleteLater()
            t.deleteLater()
        self.changed.emit()

    def stop(self, name: str) -> None:
        if name in self._running:
            self._running[name][1].stop()

    def stop_all(self, wait_ms: int = 30000) -> None:
        """Abandon every task and wait for its thread (used when the window or a tab closes)."""
        for _thread, task, relay in list(self._running.values()):
            task.abandon()
            relay.abandoned = True
        for thread, _task, _relay in [*self._running.values(), *self._ending]:
            thread.wait(wait_ms)

    def wait(self, names: Iterable[str]) -> None:
        """Wait until none of the jobs ``names`` runs, the GUI's events going on
        meanwhile (a local event loop, as a modal dialog runs): for a save that must end before the
        window goes on, e.g. to close. Name the jobs waited for: a save waited for every job, a
        training of minutes included, and the window went on after it with the training's model unsaved."""
        names = tuple(names)
        loop = QEventLoop()
        self.changed.connect(loop.quit)
        while any(n in self._running for n in names):
            loop.exec()
        self.changed.disconnect(loop.quit)


class LatestJob(QObject):
    """One kind of job on a runner of its own, where only the newest request counts: a request made
    while one runs waits (replacing any request that waited) and the running job is asked to stop;
    the running job's result, once newer requests exist, is not delivered (``on_stale`` may still keep
    what it built). Used for work that follows the selection or a view's choice (similar molecules,
    scaffold groups, the evaluation): quick to ask again, never to be shown out of date.

    Args:
        name: the jobs' name (one runs at a time).
        parent: the owning QObject.
    """

    def __init__(self, name: str, parent: QObject | None = None):
        super().__init__(parent)
        self.name = name
        self.runner = Runner(self)
        self.runner.changed.connect(self._next)
        self._serial = 0  # the newest request's number
        self._waiting: tuple | None = None  # (serial, fn, on_done, on_fail, on_stale) not started yet

    def request(self, fn: Callable[[Task], Any], on_done: Callable[[object], None],
                on_fail: Callable[[str], None] | None = None,
                on_stale: Callable[[object], None] | None = None) -> None:
        """Run ``fn(job=task)`` now, or when the running job has ended (asking it to stop).

        Args:
            fn: the job (a plain function of :mod:`app.tasks`, its inputs bound).
            on_done: called with its result on the GUI thread, unless a newer request was made since.
            on_fail: called with its failure in the app's words (same rule); None: dropped.
            on_stale: called with its result when a newer request was made since.
        """
        self._serial += 1
        self._waiting = (self._serial, fn, on_done, on_fail, on_stale)
        if self.runner.busy(self.name):
            self.runner.stop(self.name)
        else:
            self._next()

    def cancel(self) -> None:
        """Forget the waiting request and drop the running job's result."""
        self._serial += 1
        self._waiting = None
        self.runner.stop(self.name)

    def busy(self) -> bool:
        """Whether a job runs or waits."""
        return self.runner.busy(self.name) or self._waiting is not None

    def stop_all(self) -> None:
        """Forget every request and wait for the running job (the window is closing)."""
        self.cancel()
        self.runner.stop_all()

    @Slot()
    def _next(self) -> None:
        if self._waiting is None or self.runner.busy(self.name):
            return
        serial, fn, on_done, on_fail, on_stale = self._waiting
        self._waiting = None
        self.runner.start(self.name, fn, lambda result: self._done(serial, result, on_done, on_stale),
                          lambda message: self._done(serial, message, on_fail, None))

    def _done(self, serial: int, value: object, deliver, on_stale) -> None:
        if serial == self._serial:
            if deliver is not None:
                deliver(value)
        elif on_stale is not None:
            on_stale(value)
