"""The row under the filters: a similarity query (a SMILES typed or pasted, or the selected row's),
the smallest similarity shown, and the size of the structures drawn in the table. It holds no
data: it says what the user asked for, by signals."""
from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSizePolicy,
                               QWidget)

QUERY_TIP = ("Type or paste a SMILES: every row gets its Tanimoto similarity to it (ECFP4: Morgan radius 2, "
             "2,048 bits) in a Similarity column, most similar first. Empty: no query.")


class QueryBar(QWidget):
    """Similarity query, minimum similarity and structure size, as one row of controls.

    Args:
        sizes: the structure sizes offered, key -> text (:data:`app.structures.STRUCTURE_SIZE_NAMES`).
        parent: the parent widget.

    Signals:
        query_changed: the query SMILES ("" for none), after a pause in typing or at Enter.
        use_selected: the user asked to query with the selected row's molecule.
        minimum_changed: the smallest similarity to show.
        structure_size_changed: the structure size's key.
    """

    query_changed = Signal(str)
    use_selected = Signal()
    minimum_changed = Signal(float)
    structure_size_changed = Signal(str)

    def __init__(self, sizes: dict[str, str], parent=None):
        super().__init__(parent)
        self.query_edit = QLineEdit()
        self.query_edit.setPlaceholderText("Similar to… (paste a SMILES)")
        self.query_edit.setClearButtonEnabled(True)
        self.query_edit.setToolTip(QUERY_TIP)
        self._timer = QTimer(self, singleShot=True, interval=600)
        self._timer.timeout.connect(self._emit_query)
        self.query_edit.textChanged.connect(self._timer.start)
        self.query_edit.returnPressed.connect(self._emit_query)
        self.selected_button = QPushButton("Use selected")
        self.selected_button.setToolTip("Query with the selected row's molecule")
        self.selected_button.clicked.connect(self.use_selected)
        self.minimum = QDoubleSpinBox()
        self.minimum.setRange(0.0, 1.0)
        self.minimum.setSingleStep(0.05)
        self.minimum.setDecimals(2)
        self.minimum.setPrefix("min similarity ")
        self.minimum.setToolTip("Show only the rows at least this similar to the query (0: every row)")
        self.minimum.valueChanged.connect(self.minimum_changed)
        self.note = QLabel("")  # what the query found, or why it is not a SMILES
        self.note.setWordWrap(False)
        self.note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # the query box keeps its room
        self.query_edit.setMinimumWidth(self.query_edit.fontMetrics().horizontalAdvance("c1ccccc1C(=O)NCC") + 30)
        self.structures = QComboBox()
        for key, text in sizes.items():
            self.structures.addItem(text, key)
        self.structures.setToolTip("Draw each molecule's structure in the table, small or large (off: one line a row)")
        self.structures.currentIndexChanged.connect(lambda _i: self.structure_size_changed.emit(self.size_key()))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.query_edit, 2)
        row.addWidget(self.selected_button)
        row.addWidget(self.minimum)
        row.addWidget(self.note, 1)
        row.addWidget(self.structures)

    def query(self) -> str:
        return self.query_edit.text().strip()

    def set_query(self, smiles: str) -> None:
        """Put ``smiles`` in the query box and apply it now."""
        self.query_edit.setText(smiles)
        self._emit_query()

    def size_key(self) -> str:
        return str(self.structures.currentData())

    def say(self, text: str, error: bool = False) -> None:
        """A short note beside the query (red for an error; the whole text as tooltip)."""
        self.note.setStyleSheet("color: #b03a2e;" if error else "")
        self.note.setText(text)
        self.note.setToolTip(text)

    def set_available(self, smiles: bool) -> None:
        """A query needs molecules: the query controls are off for a TU collection."""
        for widget in (self.query_edit, self.selected_button, self.minimum):
            widget.setEnabled(smiles)

    def _emit_query(self) -> None:
        self._timer.stop()
        self.query_changed.emit(self.query())
