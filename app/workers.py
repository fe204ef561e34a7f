"""Background work: the plain functions of :mod:`app.tasks` run in QThreads, reporting through signals.

Long work (loading, training, scoring) never runs on the GUI thread, so the window
stays responsive; Stop sets a flag that core polls between batches. A :class:`Task` is
the ``job`` a task function receives: ``report``, ``stopped`` and ``abandoned``.
"""
from __future__ import annotations

import traceback
from typing import Any
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

from .state import app_wording
from .tasks import Job


class Task(QObject, Job):
    """Runs ``fn(job=task)`` in a thread: always by keyword, so the task never lands in a
    parameter with a default that the caller left out (e.g. ``top_n``). It is the
    :class:`app.tasks.Job` the function receives (``report``, ``stopped``, ``abandoned``; ``stop``
    and ``abandon`` for the window), whose progress reports are also emitted as a signal."""

    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, fn: Callable[[Task], Any]):
        QObject.__init__(self)
        Job.__init__(self, on_progress=self.progress.emit)
        self._fn = fn

    @Slot()
    def run(self) -> None:
        try:
            result = self._fn(job=self)
        except MemoryError:
            self.failed.emit("Out of memory. Try a smaller batch size or narrower layers.")
        except Exception as exc:  # every failure becomes a message; the app stays usable
            from core import GLocalKDError

            if "out of memory" in str(exc).lower():  # raw, or "training failed (out of memory)"
                self.failed.emit("Out of memory. Try a smaller batch size or narrower layers.\n\n" + str(exc))
            elif isinstance(exc, GLocalKDError):
                self.failed.emit(app_wording(exc))
            else:
                self.failed.emit(f"Unexpected error: {exc}\n\n{traceback.format_exc(limit=6)}")
        else:
            self.finished.emit(result)


class Runner(QObject):
    """Owns at most one running Task per name, each on its own QThread.

    Callbacks must be bound methods of QObjects living in the GUI thread (so Qt queues
    them there); a Task's signals then never touch widgets from the worker thread.
    """

    changed = Signal()  # a task started or its thread ended

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._running: dict[str, tuple[QThread, Task]] = {}

    def busy(self, name: str | None = None) -> bool:
        return bool(self._running) if name is None else name in self._running

    def running(self) -> list[str]:
        """The names of the tasks running now."""
        return list(self._running)

    def start(self, name: str, fn: Callable[[Task], Any], on_done: Callable[[object], None],
              on_fail: Callable[[str], None], on_progress: Callable[[object], None] | None = None) -> Task:
        thread = QThread()
        task = Task(fn)
        task.moveToThread(thread)
        thread.started.connect(task.run)
        if on_progress is not None:
            task.progress.connect(on_progress)
        task.finished.connect(on_done)
        task.failed.connect(on_fail)
        # quit() directly from the worker thread: the GUI thread may be blocked in wait() (closing)
        task.finished.connect(thread.quit, Qt.ConnectionType.DirectConnection)
        task.failed.connect(thread.quit, Qt.ConnectionType.DirectConnection)
        thread.finished.connect(self._thread_finished)
        self._running[name] = (thread, task)
        thread.start()
        self.changed.emit()
        return task

    @Slot()
    def _thread_finished(self) -> None:
        thread = self.sender()
        for name, (t, task) in list(self._running.items()):
            if t is thread:
                # finished() is emitted just before the thread exits, and Python owns the QThread:
                # wait for the exit, so it is never freed while its thread still runs.
                t.wait()
                del self._running[name]
                task.deleteLater()
                t.deleteLater()
        self.changed.emit()

    def stop(self, name: str) -> None:
        if name in self._running:
            self._running[name][1].stop()

    def stop_all(self, wait_ms: int = 30000) -> None:
        """Abandon every task and wait for its thread (used when the window closes)."""
        for _thread, task in list(self._running.values()):
            task.abandon()
        for thread, _ in list(self._running.values()):
            thread.wait(wait_ms)
