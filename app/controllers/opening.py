"""Opening files in the background: graph data into the state, ranked reports for a tab of their own."""
from __future__ import annotations

import functools
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from .. import tasks
from ..state import AppState
from ..workers import Runner
from .base import Controller


class OpeningController(Controller):
    """Loads graph data (into the state) and reads ranked reports.

    Signals:
        loaded: the state holds the file's graphs (the job's :class:`app.tasks.Loaded`).
        report_read: a ranked report was read (the report).
    """

    loaded = Signal(object)
    report_read = Signal(object)

    def __init__(self, runner: Runner, state: AppState, parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self.state = state

    def load(self, path: str, options: dict) -> None:
        """Load the graphs of ``path`` with the loader's ``options``."""
        self.status.emit(f"Loading {path}…", 0)
        self.busy.emit(f"Loading {Path(path).name}…", True)
        self.runner.start("load", functools.partial(tasks.load_data, path, options), self._loaded, self._failed)

    @Slot(object)
    def _loaded(self, result: tasks.Loaded) -> None:
        self.idle.emit()
        self.state.set_data(result.path, result.graphs, result.schema_text, result.properties)
        self.state.data_options = dict(result.options or {})  # kept by sessions
        self.loaded.emit(result)

    def read_report(self, path: str) -> None:
        """Read the ranked CSV report ``path``, with a count of its rows as they come."""
        self.busy.emit(f"Reading report {Path(path).name}…", True)
        self.runner.start("load", functools.partial(tasks.read_report, path), self._report_read, self._failed,
                          self._progress)

    @Slot(object)
    def _progress(self, rows: int) -> None:
        self.said.emit(f"Reading report: {rows:,} rows…")

    @Slot(object)
    def _report_read(self, report) -> None:
        self.idle.emit()
        self.report_read.emit(report)
