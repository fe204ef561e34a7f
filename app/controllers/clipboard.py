"""Edit ▸ Copy and Copy as image: the selected rows of the active table as tab-separated text
(a header, the columns shown, and the SMILES, as Excel and DataWarrior paste them), or their
structures as one grid picture with each molecule's ID and score."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QMimeData, QObject, Signal, Slot
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtWidgets import QTableView

from core import counted

from ..structures import StructureImages
from ..widgets.scaffolds import ScaffoldView
from ..widgets.table import COLUMNS, ResultsModel, selected_rows

GRID_LIMIT = 48  # molecules in a copied picture (more would not be legible)
NOT_COPIED = {"Structure"}  # a picture column: Copy as image copies the pictures


def rows_as_text(table: QTableView, model: ResultsModel, rows: list[int]) -> str:
    """The rows as tab-separated text: a header, then one line a row, the shown columns in the
    table's order and the SMILES (even when its column is hidden) when the rows have molecules.

    Args:
        table: the table (its column order and hidden columns).
        model: its model.
        rows: table rows.

    Returns:
        The text, ending with a line break.
    """
    from core import safe_cell  # here: the window's module loads no torch (core.io does)

    header = table.horizontalHeader()
    columns = [header.logicalIndex(v) for v in range(header.count())]
    columns = [c for c in columns if not table.isColumnHidden(c) and COLUMNS[c] not in NOT_COPIED]
    smiles = COLUMNS.index("SMILES")
    if smiles not in columns and model.has_smiles():
        columns.append(smiles)
    lines = ["\t".join(COLUMNS[c] for c in columns)]
    for row in rows:
        cells = (str(model.index(row, c).data() or "") for c in columns)
        # no tab or line break inside a cell, and a cell a spreadsheet would run (=HYPERLINK(...), @cmd)
        # guarded as the report files guard it: the copy is for pasting into Excel
        lines.append("\t".join(safe_cell(" ".join(cell.split())) for cell in cells))
    return "\n".join(lines) + "\n"


def grid_job(smiles: list[str], legends: list[str]) -> bytes:
    """The grid picture of the copied molecules (runs in the drawing process)."""
    from core import structure_grid_png

    return structure_grid_png(smiles, legends, per_row=min(4, len(smiles)))


class ClipboardController(QObject):
    """Copies the active table's selected rows to the clipboard.

    Args:
        active: returns the active tab's (table, model), or (the scaffold groups' table, their
            :class:`ScaffoldView`) while the training tab shows those.
        images: the window's drawing process (the grid picture is drawn there, off the GUI thread).
        parent: the owning QObject.

    Signals:
        status: a status-bar message and how long it stays (ms).
        copied: what was put on the clipboard ("text" or "image"), once it is there.
    """

    status = Signal(str, int)
    copied = Signal(str)

    def __init__(self, active: Callable[[], tuple[QTableView, ResultsModel | ScaffoldView]], images: StructureImages,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.active = active
        self.images = images
        self._request = 0

    def copy_rows(self) -> None:
        """The selected rows (or scaffold groups) as text with a header (tab-separated)."""
        table, model = self.active()
        rows = selected_rows(table)
        if not rows:
            self.status.emit("Select rows to copy.", 5000)
            return
        mime = QMimeData()
        groups = isinstance(model, ScaffoldView)
        mime.setText(model.groups_as_text(rows) if groups else rows_as_text(table, model, rows))
        QGuiApplication.clipboard().setMimeData(mime)
        self.status.emit(f"Copied {counted(len(rows), 'scaffold group' if groups else 'row')} (tab-separated, with a "
                         "header).", 5000)
        self.copied.emit("text")

    def copy_image(self) -> None:
        """The selected rows' structures as one picture, each with its ID and score (of scaffold
        groups, their scaffolds, each with its count and best molecule)."""
        table, model = self.active()
        rows = selected_rows(table)
        if isinstance(model, ScaffoldView):  # scaffold groups: their scaffolds
            if rows:
                scaffolds = model.scaffolds(rows)
                self._draw(scaffolds, len(scaffolds), "scaffold")
            else:
                self.status.emit("Select groups to copy.", 5000)
            return
        if not model.has_smiles():
            self.status.emit("These graphs are not molecules: there are no structures to copy.", 6000)
            return
        if not rows:
            self.status.emit("Select rows to copy.", 5000)
            return
        score = COLUMNS.index("Score")
        pictures = []
        for r in rows[:GRID_LIMIT]:
            ident = str(model.index(r, COLUMNS.index("ID")).data())
            value = model.index(r, score).data()
            pictures.append((str(model.smiles()[model.graph_index(r)]), f"{ident}  score {value}" if value else ident))
        self._draw(pictures, len(rows), "row")

    def _draw(self, pictures: list[tuple[str, str]], total: int, what: str) -> None:
        """Draw the first :data:`GRID_LIMIT` of ``pictures`` (SMILES, legend) as one grid, off the GUI
        thread; ``total``: how many ``what`` (rows or scaffolds) were selected."""
        if not pictures:
            self.status.emit("The selected groups are acyclic: there is no scaffold to draw.", 6000)
            return
        cut = pictures[:GRID_LIMIT]
        self._request += 1
        request = self._request
        self.status.emit(f"Drawing {len(cut)} structures…", 0)
        self.images.submit(grid_job, ([s for s, _ in cut], [legend for _, legend in cut]),
                           lambda result: self._drawn(request, result, total, what))

    @Slot()
    def _drawn(self, request: int, result, total: int, what: str = "row") -> None:
        if request != self._request:  # copied again since
            return
        if isinstance(result, BaseException) or not result:
            self.status.emit(f"Could not draw the structures: {result}", 8000)
            return
        image = QImage.fromData(result, "PNG")
        QGuiApplication.clipboard().setImage(image)
        more = f" (the first {GRID_LIMIT} of {total:,} selected)" if total > GRID_LIMIT else ""
        self.status.emit(f"Copied the structures of {counted(min(total, GRID_LIMIT), what)} as a picture{more}.", 6000)
        self.copied.emit("image")
