"""Small dialogs: the rejected-rows list and the CSV column chooser."""
from __future__ import annotations

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QHeaderView, QLabel,
                               QTableWidget, QTableWidgetItem, QVBoxLayout)

from typing import TYPE_CHECKING

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
                 source: str, parent=None):
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
        form.addRow(QLabel(f"Which columns of {source} hold the molecules?"))
        form.addRow("SMILES column", self.smiles)
        form.addRow("ID column", self.ident)
        form.addRow("Label column", self.label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def options(self) -> dict:
        pick = lambda box: None if box.currentText() == NONE else box.currentText()  # noqa: E731
        return {"smiles_column": self.smiles.currentText(), "id_column": pick(self.ident),
                "label_column": pick(self.label)}
