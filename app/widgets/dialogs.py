"""Small dialogs: the rejected-rows list and the CSV column chooser."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QHeaderView, QLabel,
                               QMessageBox, QTableWidget, QTableWidgetItem, QVBoxLayout)

from typing import TYPE_CHECKING

from core import counted

if TYPE_CHECKING:
    from core import Reject

NONE = "(none)"


class RejectsDialog(QDialog):
    """Every row that could not be read, with its line and reason."""

    def __init__(self, rejects: list[Reject], source: str, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Rejected rows — {len(rejects)}")
        self.resize(820, 420)
        table = QTableWidget(len(rejects), 4)
        table.setHorizontalHeaderLabels(["Line", "ID", "Reason", "Input"])
        for r, rej in enumerate(rejects):
            for c, value in enumerate((rej.line if rej.line is not None else "", rej.id, rej.reason, rej.text)):
                table.setItem(r, c, QTableWidgetItem(str(value)))
        table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"{source}: these rows are not scored; the exported report lists them "
                                "at the end with their reason."))
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.table = table


class ColumnDialog(QDialog):
    """Choose the SMILES, id and label columns of a table whose columns are not obvious."""

    def __init__(self, header: list[str], smiles: str | None, ident: str | None, label: str | None,
                 source: str, parent=None, note: str = ""):
        super().__init__(parent)
        self.setWindowTitle("Choose columns")
        self.smiles = QComboBox()
        self.smiles.addItems(header)
        if smiles in header:
            self.smiles.setCurrentText(smiles)
        self.ident = QComboBox()
        self.ident.addItems([NONE] + header)
        self.ident.setCurrentText(ident if ident in header else NONE)
        self.label = QComboBox()
        self.label.addItems([NONE] + header)
        self.label.setCurrentText(label if label in header else NONE)
        form = QFormLayout(self)
        if note:  # why the dialog asks (e.g. the column named SMILES holds none)
            said = QLabel(note)
            said.setWordWrap(True)
            form.addRow(said)
        form.addRow(QLabel(f"Which columns of {source} hold the molecules?"))
        form.addRow("SMILES column", self.smiles)
        form.addRow("ID column", self.ident)
        form.addRow("Label column", self.label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def options(self) -> dict:
        """The loader's column options; "(none)" is ``NO_COLUMN`` (no such column), not None (found by name)."""
        from core import NO_COLUMN  # here: core.io loads torch, which the window's import must not

        pick = lambda box: NO_COLUMN if box.currentText() == NONE else box.currentText()  # noqa: E731
        return {"smiles_column": self.smiles.currentText(), "id_column": pick(self.ident),
                "label_column": pick(self.label)}


def ask_export_path(parent, files, table, filters: dict[str, str],
                    all_rows: bool = False) -> tuple[str, bool] | None:
    """Where to export ``table`` (an :class:`app.export_tables.ExportTable`) and whether only its
    visible rows: (path with a .csv or .sdf suffix, visible only), or None when cancelled.

    Args:
        files: the window's :class:`app.file_memory.FileMemory` (the Save dialog's folder).
        filters: the Save dialog's filters, each with the suffix it writes (CSV first).
        all_rows: every row, without asking (an export that saves unsaved work must hold it all).
    """
    visible_only = False
    if not all_rows and len(table.visible) < table.total:
        choice = ask_rows(parent, len(table.visible), table.total)
        if choice is None:
            return None
        visible_only = choice == "visible"
    offered = ";;".join(filters) if table.has_molecules else next(iter(filters))
    path, chosen = files.ask_save(parent, "Export ranked rows", f"{table.stem}_ranked.csv", offered)
    if not path:
        return None
    if Path(path).suffix.lower() not in set(filters.values()):
        path += filters.get(chosen, ".csv")
    return path, visible_only


def ask_rows(parent, shown: int, total: int) -> str | None:
    """Export the rows the filters show ("visible") or all of them ("all"); None when cancelled."""
    buttons = QMessageBox.StandardButton
    answer = QMessageBox.question(parent, "Export", f"The filters show {shown:,} of {counted(total, 'row')}.\n\n"
                                  f"Yes: export the {shown:,} visible rows. No: export all {counted(total, 'row')}.",
                                  buttons.Yes | buttons.No | buttons.Cancel, buttons.Yes)
    return {buttons.Yes: "visible", buttons.No: "all"}.get(answer)


def ask_unsaved(parent, pending: list[str], doing: str) -> str:
    """Before ``doing`` (e.g. "quitting") over unsaved work: "save", "discard" or "cancel"."""
    buttons = QMessageBox.StandardButton
    listed = "".join(f"\n• {text}" for text in pending)
    answer = QMessageBox.question(parent, "Unsaved work", f"This work is not saved:{listed}\n\nSave it before "
                                  f"{doing}?", buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save)
    return {buttons.Save: "save", buttons.Discard: "discard"}.get(answer, "cancel")


def ask_load_options(parent, path: str, warn) -> dict | None:
    """The loader's options for ``path``: none for most files; for a table whose SMILES column is
    not obvious (no common name, or the column so named holds no molecule in its first rows), the
    columns the user picks.

    Args:
        parent: the dialog's parent window.
        path: the file to open.
        warn: called with a title and a message when the table cannot be read.

    Returns:
        The options, or None when cancelled or the table is unreadable.
    """
    from core import GLocalKDError, is_table, smiles_column_reads, table_columns

    from ..state import app_wording

    if not is_table(path):
        return {}
    try:
        cols = table_columns(path)
        if cols.headerless or (not cols.repeated and cols.smiles is not None
                               and smiles_column_reads(path, cols.smiles)):
            return {}
    except GLocalKDError as exc:
        warn("Cannot open file", app_wording(exc))
        return None
    if cols.repeated:  # a column found by its name is not the only one so named: loading would refuse it
        note = (f"More than one column is named {' or '.join(repr(n) for n in cols.repeated)}: choose the one to "
                "read (two names spelt the same cannot be told apart: rename one in the file).")
    else:
        note = "" if cols.smiles is None else (f"The column {cols.smiles!r} holds no molecule in its first rows: "
                                               "choose the column with the SMILES.")
    dialog = ColumnDialog(cols.header, cols.smiles, cols.id, cols.label, Path(path).name, parent, note)
    if dialog.exec() != ColumnDialog.DialogCode.Accepted:
        return None
    return dialog.options()


PICTURE_FILTERS = "PNG image (*.png);;SVG image (*.svg)"


def save_picture(parent, title: str, name: str, folder: str, inputs, write) -> str | None:
    """Ask where to save a picture and write it: the one way the heatmap and the map save theirs.

    Each wrote straight to the path chosen: over the open data file (which every export refuses),
    without a suffix for a name typed without one, and a folder that could not be written ended the
    click in a traceback on stderr, the user told nothing.

    Args:
        parent: the dialog's parent.
        title: the dialog's title.
        name: the file name offered.
        folder: the folder offered.
        inputs: the files the picture's data came from, which it may not replace.
        write: writes the picture to the path it is given (PNG, or SVG by the suffix).

    Returns:
        The path written, or None (cancelled, or refused with a message).
    """
    from PySide6.QtWidgets import QFileDialog

    from core import GLocalKDError, check_outputs

    path, chosen = QFileDialog.getSaveFileName(parent, title, str(Path(folder) / name), PICTURE_FILTERS)
    if not path:
        return None
    if Path(path).suffix.lower() not in (".png", ".svg"):
        path += ".svg" if "svg" in chosen.lower() else ".png"
    try:
        check_outputs([path], [p for p in inputs if p])
        write(path)
    except GLocalKDError as exc:
        QMessageBox.warning(parent, "Cannot save picture", str(exc))
        return None
    except OSError as exc:
        QMessageBox.warning(parent, "Cannot save picture", f"{path}: {exc.strerror or exc}")
        return None
    return path


def about(parent) -> None:
    """The About box."""
    QMessageBox.about(parent, "About GLocalKD Studio", "<b>GLocalKD Studio</b><br>Graph-level anomaly detection by "
                      "glocal knowledge distillation (Ma, Pang, Chen, van den Hengel, WSDM 2022).")


JOB_WORDS = {"train": "A training", "score_file": "The scoring of a file", "export": "An export",
             "load": "The reading of a data file", "weigh": "The weighing of the views",
             "score": "The scoring of the open graphs"}  # else: a tab's rows scored again for its review


def ask_stop_to_quit(parent, jobs: list[str]) -> bool:
    """Before quitting while jobs that Stop stops run: stop them and quit, or go on working.

    Args:
        parent: the question's parent.
        jobs: the running jobs' names (:meth:`app.workers.Runner.stoppable`).

    Returns:
        True to stop them (what they did is kept, and asked about as unsaved work) and quit.
    """
    doing = [JOB_WORDS.get(name, "The scoring of a tab's rows for its review") for name in jobs]
    box = QMessageBox(QMessageBox.Icon.Question, "Quit", f"{' and '.join(doing)} {'is' if len(doing) == 1 else 'are'} "
                      "still running. Quitting stops it; what it has done so far is kept, and you are asked "
                      "about it if it is not saved.", QMessageBox.StandardButton.Cancel, parent)
    stop = box.addButton("Stop and quit", QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    return box.clickedButton() is stop

