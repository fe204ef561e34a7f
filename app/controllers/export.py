"""Exporting the active tab's rows: CSV or SDF, and the one-file HTML report."""
from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QWidget

from core import counted

from .. import tasks
from ..file_memory import FileMemory
from ..state import with_suffix
from ..widgets import dialogs
from ..workers import Runner
from .base import Controller

EXPORT_FILTERS = {"CSV report (*.csv)": ".csv", "SDF with scores as properties (*.sdf)": ".sdf"}


class ExportController(Controller):
    """Writes the rows of the table ``rows`` returns (:class:`app.export_tables.ExportTable`, or
    None when the active tab has no scores).

    Signals:
        exported: rows were written (the path, the number of rows, the unsaved work it settles:
            the table's ``work``, or None for an export of only the rows the filters show).
    """

    exported = Signal(str, int, object)

    def __init__(self, runner: Runner, files: FileMemory, rows: Callable[[], object], parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self.files = files
        self.rows = rows
        self._path, self._work = "", None

    def export_dialog(self, window: QWidget, all_rows: bool = False) -> None:
        """Ask for a CSV or SDF file (and whether only the rows shown, unless ``all_rows``: an
        export that saves unsaved work writes every row) and write it."""
        table = self.rows()
        if table is None:
            self.warning.emit("Nothing to export", "Train or load a model and score a data set first.")
            return
        answer = dialogs.ask_export_path(window, self.files, table, EXPORT_FILTERS, all_rows)
        if answer is not None:
            self.export_report(*answer)

    def export_report(self, path: str, visible_only: bool = False) -> None:
        """Write the rows (all, or those the filters show) as CSV, or as SDF (by the extension) with
        the scores, p- and q-values as SD properties, in the background (the structural alerts of
        each molecule are searched as it is written: about 10-20 ms a molecule)."""
        table = self.rows()
        if table is None:
            return
        if self.runner.busy("export"):
            self.warning.emit("Busy", "An export is still being written; wait for it to finish.")
            return
        self.busy.emit(f"Writing {Path(path).name}…", True)
        # only an export of every row holds the tab's work (its scores and review marks): a part of
        # it settled the marks of rows it left out, and they were lost without a question
        self._path = path
        self._work = None if visible_only and len(table.visible) < table.total else table.work
        self.runner.start("export", functools.partial(tasks.export_rows, table, path, visible_only), self._written,
                          self._cannot_export)

    @Slot(object)
    def _written(self, n: int | None) -> None:
        self.idle.emit()
        if n is None:  # stopped: the file was not written (nor left half-written)
            text = f"Export stopped: {self._path} was not written."
            self.said.emit(f"Export stopped: {Path(self._path).name} was not written.")
            self.status.emit(text, 15000)
            return
        self.said.emit(f"{counted(n, 'row')} written to {Path(self._path).name}.")
        self.exported.emit(self._path, n, self._work)
        self.status.emit(f"{counted(n, 'row')} written to {self._path}", 8000)

    @Slot(str)
    def _cannot_export(self, message: str) -> None:
        self.idle.emit()
        self.said.emit("")
        self.warning.emit("Cannot export", message)

    def html_dialog(self, window: QWidget) -> None:
        """Ask for an HTML file and write the report there."""
        table = self.rows()
        if table is None:
            self.warning.emit("Nothing to report", "Train or load a model and score a data set first.")
            return
        path, _ = self.files.ask_save(window, "Export HTML report", f"{table.stem}_report.html", "HTML (*.html)")
        if path:
            self.export_html(with_suffix(path, ".html"))

    def export_html(self, path: str) -> None:
        """Write the one-file HTML report in the background (drawing the top molecules takes a moment)."""
        table = self.rows()
        self.busy.emit("Writing the HTML report…", True)
        self.runner.start("html", functools.partial(tasks.export_table_html, table, path),
                          functools.partial(self._html_written, path), self._failed)

    def _html_written(self, path: str, drawn: int) -> None:
        self.idle.emit()
        self.said.emit(f"HTML report written: {Path(path).name} ({counted(drawn, 'molecule')} drawn).")
        self.status.emit(f"HTML report written to {path}", 8000)
