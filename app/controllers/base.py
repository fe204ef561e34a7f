"""The signals every controller reports through."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot


class Controller(QObject):
    """A use case's controller: it runs jobs on :class:`app.workers.Runner` and says what happens.

    Signals:
        busy: a job starts (the text to show; whether the progress bar is indeterminate).
        idle: the job has ended.
        said: a line for the side panel.
        status: a status-bar message and how long it stays (ms).
        warning: a message box (title, text).
        failed: a job failed (its message, in the app's words).
    """

    busy = Signal(str, bool)
    idle = Signal()
    said = Signal(str)
    status = Signal(str, int)
    warning = Signal(str, str)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._serving: dict[str, object] = {}  # a running job's name -> the report tab it serves
        self._orphaned: set[str] = set()  # of those, the jobs whose tab was closed: their results are dropped

    def start_job(self, name: str, fn: Callable[..., Any], on_done: Callable[[object], None],
                  on_fail: Callable[[str], None], on_progress: Callable[[object], None] | None = None,
                  tab: object = None, stoppable: bool | None = None, background: bool = False) -> None:
        """Start ``fn`` on the controller's ``runner`` (:meth:`app.workers.Runner.start`), for the report
        tab ``tab`` when given: the one rule every job serving a tab follows, that a tab's jobs end when
        it closes (:meth:`tab_closed`) and what they return, result, failure or progress, is then
        dropped (:meth:`job_dropped` is told instead). A resumed scoring whose tab was closed came
        back as a new tab when it ended.

        Args:
            name: the job's name (one per name runs at a time).
            fn: the job (a plain function of :mod:`app.tasks`, its inputs bound).
            on_done: called with its result (not when its tab was closed meanwhile).
            on_fail: called with its failure (same rule).
            on_progress: called with each progress report (same rule).
            tab: the report tab (view) the job serves; None: none.
            stoppable, background: as :meth:`app.workers.Runner.start`.
        """
        if tab is None:
            self._serving.pop(name, None)
        else:
            self._serving[name] = tab
        self._orphaned.discard(name)

        def ended(callback: Callable[[object], None], value: object) -> None:
            tab_of = self._serving.pop(name, None)
            if name in self._orphaned:
                self._orphaned.discard(name)
                self.job_dropped(name, tab_of)
            else:
                callback(value)

        def progressed(value: object) -> None:
            if name not in self._orphaned:
                on_progress(value)

        self.runner.start(name, fn, lambda result: ended(on_done, result), lambda message: ended(on_fail, message),
                          progressed if on_progress is not None else None, stoppable=stoppable, background=background)

    @Slot(object)
    def tab_closed(self, tab: object) -> None:
        """A report tab was closed (:attr:`app.controllers.report_tabs.ReportTabs.closed`): each running
        job of this controller that serves it is stopped, and its result dropped when it ends."""
        for name, served in list(self._serving.items()):
            if served is tab and self.runner.busy(name):
                self._orphaned.add(name)
                self.runner.stop(name)

    def job_dropped(self, name: str, tab: object) -> None:
        """The job ``name`` ended after its tab ``tab`` was closed: nothing of it is shown. A controller
        ends here what the job began (its busy bar, its status line)."""

    def refused_while_busy(self, doing: str) -> bool:
        """When a job that other work waits for runs (:meth:`app.workers.Runner.blocking`, the rule the
        window's actions are enabled by), say that ``doing`` waits for it, and offer Stop only when a
        running job is one Stop stops (the map's "or press Stop" pointed at a Stop that was off); True
        when refused.

        Args:
            doing: what waits, as the message ends it (e.g. "computing the map").

        Returns:
            Whether a job runs (``doing`` is then refused).
        """
        if not self.runner.blocking():  # the window's own "busy" (MainWindow._update_state): one meaning
            return False
        stop = " (or press Stop)" if self.runner.stoppable() else ""
        self.warning.emit("Busy", f"Wait for the current work to finish{stop} before {doing}.")
        return True

    @Slot(str)
    def _failed(self, message: str) -> None:
        """A job's failure, passed on (a slot of this object: it runs on the GUI thread)."""
        self.failed.emit(message)
