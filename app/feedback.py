"""What the controllers report, shown to the user: the side panel's line and progress bar while a
job runs, the status bar, and message boxes for warnings and failures."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QMainWindow, QMessageBox

from .widgets.side_panel import SidePanel


class Feedback(QObject):
    """Shows the reports of every controller it is attached to (:meth:`attach`).

    Args:
        window: the main window (its status bar; the parent of message boxes).
        side: the side panel (its line and progress bar).
        busy_changed: called with True when a job starts and False when it ends, so that the
            window enables its actions for the new state.
    """

    def __init__(self, window: QMainWindow, side: SidePanel, busy_changed: Callable[[bool], None]):
        super().__init__(window)
        self.window, self.side, self._busy_changed = window, side, busy_changed
        self.last_warning = ""  # the last warning shown (read by tests)

    def attach(self, controller):
        """Show what ``controller`` (an :class:`app.controllers.base.Controller`) reports; returns it."""
        controller.busy.connect(self.busy)
        controller.idle.connect(self.idle)
        controller.said.connect(self.side.say)
        controller.status.connect(self.status)
        controller.warning.connect(self.warn)
        controller.failed.connect(self.failed)
        return controller

    @Slot(str, bool)
    def busy(self, text: str, indeterminate: bool = True) -> None:
        """A job starts: say ``text``; a bar that only says "working" unless it counts itself."""
        self.side.say(text)
        if indeterminate:
            self.side.busy_bar()
        self._busy_changed(True)

    @Slot()
    def idle(self) -> None:
        self.side.done_bar()
        self._busy_changed(False)

    @Slot(str, int)
    def status(self, text: str, ms: int) -> None:
        self.window.statusBar().showMessage(text, ms)

    @Slot(str)
    def failed(self, message: str) -> None:
        """A job failed (worded by the worker, in the app's words): the data and results on screen stay."""
        self.idle()
        self.side.say("")
        self.warn("Something went wrong", message)
        self.status("Failed: " + message.splitlines()[0], 10000)

    @Slot(str, str)
    def warn(self, title: str, message: str, icon: QMessageBox.Icon = QMessageBox.Icon.Warning) -> None:
        """A message box, window-modal without blocking the event loop (jobs and tests go on)."""
        box = QMessageBox(icon, title, message, QMessageBox.StandardButton.Ok, self.window)
        box.setObjectName("warning_box")
        box.open()
        if icon == QMessageBox.Icon.Warning:
            self.last_warning = message
