"""The ranked rows grouped by Bemis-Murcko scaffold: each scaffold's count, best score and rank,
so a series of related anomalies reads as one finding."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

HEADERS = ("Best rank", "Molecules", "Flagged", "Best score", "Best molecule", "Scaffold")
SCAFFOLD = HEADERS.index("Scaffold")
NOTE = ("Rows grouped by Bemis-Murcko scaffold (RDKit). Double-click a group to list the molecules that contain "
        "its scaffold.")


def group_by_scaffold(scaffold_of: list[str], rows: np.ndarray, score: np.ndarray, rank: np.ndarray,
                      flagged: np.ndarray) -> list[tuple[str, int, int, float, int, int]]:
    """Groups of ``rows`` (graph indices) by scaffold: (scaffold, count, flagged, best score, best rank,
    best graph), best-ranked group first; acyclic molecules form the group ``""``."""
    groups: dict[str, list[int]] = {}
    for i in rows.tolist():
        groups.setdefault(scaffold_of[i], []).append(i)
    out = []
    for scaffold, members in groups.items():
        m = np.asarray(members)
        best = int(m[np.argmin(rank[m])])
        out.append((scaffold, len(m), int(flagged[m].sum()), float(score[best]), int(rank[best]), best))
    return sorted(out, key=lambda g: g[4])


class ScaffoldView(QWidget):
    """A table of scaffold groups; double-clicking one emits ``scaffold_chosen(scaffold SMILES)``."""

    scaffold_chosen = Signal(str)

    def __init__(self):
        super().__init__()
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)  # the scaffold's SMILES
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.setSortingEnabled(True)
        self.table.cellDoubleClicked.connect(self._chosen)
        note = self.note = QLabel(NOTE)
        note.setWordWrap(True)
        note.setStyleSheet("color: #555;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(note)
        layout.addWidget(self.table, 1)
        self.groups: list = []

    def finding(self) -> None:
        """Say that the scaffolds are being found (in the background): no groups until they are."""
        self.groups = []
        self.table.setRowCount(0)
        self.note.setText("Finding the scaffolds of the molecules…")

    def say(self, text: str) -> None:
        """Say ``text`` in place of the note (a failure)."""
        self.note.setText(text)

    def set_rows(self, graphs, scores, rows: np.ndarray, flagged: np.ndarray, scaffold_of: list[str],
                 rank: np.ndarray) -> None:
        """Show the groups of ``rows`` (graph indices) by their scaffolds.

        Args:
            graphs: the open graphs.
            scores: their scores.
            rows: the graphs the table shows.
            flagged: which graphs are flagged.
            scaffold_of: each graph's scaffold SMILES (``""``: acyclic), found in the background.
            rank: each graph's rank as the table shows it (the review's once rows are marked: a
                rank of its own here put the label-free ranking's groups first).
        """
        self.note.setText(NOTE)
        self.groups = group_by_scaffold(scaffold_of, rows, scores.score, rank, flagged)
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(self.groups))
        for r, (scaffold, count, n_flagged, best, best_rank, i) in enumerate(self.groups):
            cells = (best_rank, count, n_flagged, best, graphs.meta[i].id, scaffold or "(acyclic)")
            for c, value in enumerate(cells):
                item = QTableWidgetItem()
                if isinstance(value, (int, float)):
                    item.setData(Qt.ItemDataRole.DisplayRole, value if isinstance(value, int) else float(f"{value:.4g}"))
                else:
                    item.setText(str(value))
                if c == SCAFFOLD:
                    item.setData(Qt.ItemDataRole.UserRole, scaffold)
                self.table.setItem(r, c, item)
        self.table.setSortingEnabled(True)
        self.table.sortItems(0, Qt.SortOrder.AscendingOrder)  # the group of the top-ranked molecule first
        for c, width in enumerate((75, 85, 65, 85, 170)):
            self.table.setColumnWidth(c, width)

    def groups_as_text(self, rows: list[int]) -> str:
        """Table rows ``rows`` of the groups as tab-separated text with the header, as shown.

        Args:
            rows: the groups' table rows (as sorted now).

        Returns:
            The text, ending with a line break.
        """
        from core import safe_cell

        lines = ["\t".join(HEADERS)]
        for r in rows:
            cells = (self.table.item(r, c).text() if self.table.item(r, c) else "" for c in range(len(HEADERS)))
            lines.append("\t".join(safe_cell(" ".join(cell.split())) for cell in cells))
        return "\n".join(lines) + "\n"

    def scaffolds(self, rows: list[int]) -> list[tuple[str, str]]:
        """The scaffolds of table rows ``rows`` (acyclic groups have none), each with its picture's
        legend: how many molecules hold it and the best-ranked one's ID.

        Args:
            rows: the groups' table rows (as sorted now).

        Returns:
            (scaffold SMILES, legend) per group with a scaffold.
        """
        from core import counted

        out = []
        for r in rows:
            item = self.table.item(r, SCAFFOLD)
            scaffold = item.data(Qt.ItemDataRole.UserRole) if item is not None else ""
            if scaffold:
                count, best = int(self.table.item(r, 1).text()), self.table.item(r, 4).text()
                out.append((scaffold, f"{counted(count, 'molecule')} · best {best}"))
        return out

    def _chosen(self, row: int, _column: int) -> None:
        self.scaffold_chosen.emit(self.table.item(row, SCAFFOLD).data(Qt.ItemDataRole.UserRole) or "")
