"""The signals every controller reports through."""
from __future__ import annotations

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

    def refused_while_busy(self, doing: str) -> bool:
        """When a job runs (on the controller's ``runner``), say that ``doing`` waits for it, and
        offer Stop only when a running job is one Stop stops (the map's "or press Stop" pointed at a
        Stop that was off); True when refused.

        Args:
            doing: what waits, as the message ends it (e.g. "computing the map").

        Returns:
            Whether a job runs (``doing`` is then refused).
        """
        if not self.runner.busy():
            return False
        stop = " (or press Stop)" if self.runner.stoppable() else ""
        self.warning.emit("Busy", f"Wait for the current work to finish{stop} before {doing}.")
        return True

    @Slot(str)
    def _failed(self, message: str) -> None:
        """A job's failure, passed on (a slot of this object: it runs on the GUI thread)."""
        self.failed.emit(message)
