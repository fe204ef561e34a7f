"""The ranked results table: a Qt model over numpy arrays, sorted and filtered with numpy,
so a million rows cost no more than the rows on screen."""
from __future__ import annotations

import math
from itertools import islice
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import (QAbstractTableModel, QEvent, QModelIndex, QObject, QPersistentModelIndex, QPointF, QRect,
                            Qt)
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainter, QPalette
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QStyle, QStyledItemDelegate, QStyleOptionViewItem,
                               QTableView)

from ..plain_words import COLUMN_TIPS, p_value_text, q_value_text

if TYPE_CHECKING:  # core's data classes load torch; the window appears first
    from core import GraphSet, Scores

# a chemist's properties (core.PROPERTY_COLUMNS, in that order), after the score columns
PROPERTY_HEADINGS = ("MW", "cLogP", "TPSA", "HBD", "HBA", "Rot. bonds", "Heavy atoms", "Rings", "Charge")
COLUMNS = ("Rank", "ID", "Name", "SMILES", "Score", "p-value", "q-value", "Graph term", "Node term", "Nodes", "Label",
           "Flag", "Review", *PROPERTY_HEADINGS, "Structure", "Similarity")
REVIEW_TEXT = {True: "● anomaly", False: "○ not anomaly"}  # the Review column's cells
NUMERIC = {"Rank", "Score", "p-value", "q-value", "Graph term", "Node term", "Nodes", "Flag", *PROPERTY_HEADINGS,
           "Similarity"}
BESIDE_SCORE = ("MW", "cLogP", "TPSA", "Charge")  # shown right after the q-value; the other counts come last
_INTEGER_PROPERTIES = {"HBD", "HBA", "Rot. bonds", "Heavy atoms", "Rings", "Charge"}
STRUCTURE_ROLE = int(Qt.ItemDataRole.UserRole) + 1  # a row's SMILES, for the Structure column's pictures
_FLAG_BRUSH = QBrush(QColor(255, 228, 220))
# what data() answers, by role, without going through Qt's enums at each call
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_ALIGNMENT_ROLE = int(Qt.ItemDataRole.TextAlignmentRole)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_UNSET_ROLES = frozenset(int(r) for r in (Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ForegroundRole,
                                          Qt.ItemDataRole.CheckStateRole, Qt.ItemDataRole.DecorationRole))
_ALIGNMENT = {c: int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
              for c, name in enumerate(COLUMNS) if name in NUMERIC}  # the others: the style's default
_SMILES_COLUMN = COLUMNS.index("SMILES")
_BRUSH = len(COLUMNS)  # a row's cells: one text per column, then the row's background
_NO_CELLS = (None,) * (len(COLUMNS) + 1)
_ALIGNMENT_FLAGS = {c: Qt.AlignmentFlag(v) for c, v in _ALIGNMENT.items()}
_HAS_TEXT = QStyleOptionViewItem.ViewItemFeature.HasDisplay
_WITH_TEXT: dict = {}  # a view's features -> the same with HasDisplay (Python's enum "|" is slow)
_NO_BRUSH = QBrush()
_CELLS_KEPT = 4096  # rows whose cells are kept (about 4 MB)
_BLOCK = 64  # rows whose cells are built together


class ResultsModel(QAbstractTableModel):
    """Rows are graphs of a GraphSet (score columns empty until it is scored) or the rows of a
    ranked report read back from CSV."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.graphs: GraphSet | None = None
        self.scores: Scores | None = None
        self.threshold: float | None = None
        self._view = np.zeros(0, dtype=np.int64)
        self._hay: list[str] | None = None
        self._text_mask: np.ndarray | None = None
        self._smarts_mask: np.ndarray | None = None
        self._sort: tuple[int, Qt.SortOrder] | None = None  # None: file order (rank order once scored)
        self._p: np.ndarray | None = None  # a calibrated model's p- and q-values, per graph
        self._q: np.ndarray | None = None
        self._similarity: np.ndarray | None = None  # Tanimoto similarity to a query, per graph
        self._similarity_mask: np.ndarray | None = None
        self._any_smiles: bool | None = None
        self._properties: dict[str, np.ndarray] = {}  # table heading -> one value per graph (NaN: none)
        self._masks: dict[str, np.ndarray] = {}  # more filters by name (ranges, flagged only): rows they keep
        self._marks: dict[int, bool] = {}  # the analyst's review: graph index -> anomaly or not
        self._cells: dict[int, tuple] = {}  # table row -> its cells, built when first painted (_build)
        # connected before any view: the cells are dropped before a view asks for the new ones
        for signal in (self.modelReset, self.layoutChanged, self.dataChanged, self.rowsInserted, self.rowsRemoved):
            signal.connect(self._forget)

    # ---------------------------------------------------------------- content
    def set_data(self, graphs: GraphSet, scores: Scores | None, threshold: float | None = None) -> None:
        """Rows are the graphs of ``graphs``, scored by ``scores`` (or not yet)."""
        meta = graphs.meta
        if scores is not None:  # node counts are in the scores already: no pass over the graphs
            nodes = np.diff(scores.node_ptr).astype(np.int64)
        else:
            nodes = np.array([int(g.num_nodes) for g in graphs.graphs], dtype=np.int64)
        self._set_columns(graphs, scores, threshold, _objects([m.id for m in meta]), _objects([m.name for m in meta]),
                          _objects([m.smiles for m in meta]), _objects([m.label or "" for m in meta]), nodes)

    def set_report(self, report, threshold: float | None = None) -> None:
        """Rows are the scored rows of a ranked report (:class:`core.io.ranked_report.RankedReport`)."""
        scores = _ReportScores(report.score, report.graph_score, report.node_score)
        self._set_columns(report, scores, threshold, report.ids, report.names, report.smiles, report.labels,
                          report.num_nodes)

    def _set_columns(self, source, scores, threshold, ids, names, smiles, labels, nodes) -> None:
        self.beginResetModel()
        self.graphs, self.scores, self.threshold = source, scores, threshold
        self._ids, self._names, self._smiles, self._labels, self._nodes = ids, names, smiles, labels, nodes
        n = len(nodes)
        self._rank = np.zeros(n, dtype=np.int64)
        if scores is not None:
            self._rank[scores.ranking()] = np.arange(1, n + 1)
        self._text_mask = None
        self._smarts_mask = None
        self._hay = None
        self._p = self._q = None
        self._similarity = self._similarity_mask = None
        self._any_smiles = None
        self._properties = {}
        self._masks = {}
        self._marks = {}
        self._free_rank = self._rank
        self._refresh()
        self.endResetModel()

    def set_review(self, marks: dict[int, bool], rank: np.ndarray | None) -> None:
        """Show the analyst's marks and rank the rows by the review (``rank``: 1-based, per graph;
        None: the scores' own ranking)."""
        self._marks = dict(marks)
        self._rank = self._free_rank if rank is None else np.asarray(rank, dtype=np.int64)
        self._relayout(lambda: self._ordered(self._view))
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, len(COLUMNS) - 1))

    def set_p_values(self, p: np.ndarray | None, q: np.ndarray | None) -> None:
        """Show p- and q-values (None: the columns stay empty)."""
        self._p, self._q = p, q
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, len(COLUMNS) - 1))

    def set_similarity(self, similarity: np.ndarray | None, minimum: float = 0.0) -> None:
        """Show each graph's similarity to a query and hide those below ``minimum`` (None: no query).

        Args:
            similarity: one Tanimoto similarity per graph (NaN: no molecule), or None.
            minimum: the smallest similarity shown; 0 shows every row.
        """
        self._similarity = similarity
        self._similarity_mask = None
        if similarity is not None and minimum > 0:
            self._similarity_mask = np.nan_to_num(similarity, nan=-1.0) >= minimum
        self._apply()
        if self.rowCount():
            column = COLUMNS.index("Similarity")
            self.dataChanged.emit(self.index(0, column), self.index(self.rowCount() - 1, column))

    def smiles(self) -> np.ndarray:
        """Every graph's SMILES ("" where it has none), by graph index."""
        return self._smiles if self.graphs is not None else np.empty(0, dtype=object)

    def has_smiles(self) -> bool:
        """True when some row has a SMILES (a molecule to draw)."""
        if self._any_smiles is None:
            self._any_smiles = self.graphs is not None and any(bool(s) for s in self._smiles)
        return self._any_smiles

    def set_properties(self, properties: dict[str, np.ndarray] | None) -> None:
        """Show the chemist's properties (``core.PROPERTY_COLUMNS`` name -> one value per row; None or
        an empty dict: the columns stay empty)."""
        from core import PROPERTY_COLUMNS

        self._properties = {heading: np.asarray(properties[name], dtype=np.float64)
                            for name, heading in zip(PROPERTY_COLUMNS, PROPERTY_HEADINGS)
                            if properties and name in properties}
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, len(COLUMNS) - 1))

    def has_properties(self) -> bool:
        return bool(self._properties)

    def empty_columns(self) -> list[str]:
        """The data columns that say nothing for these rows: Name when no row has a name other than its
        ID, SMILES and Label when no row has one, the chemist's properties when there are none (a TU
        collection's rows have neither SMILES nor properties)."""
        empty = [] if any(n and n != i for n, i in zip(self._names, self._ids)) else ["Name"]
        empty += [] if self.has_smiles() else ["SMILES"]
        empty += [] if any(bool(label) for label in self._labels) else ["Label"]
        return empty + ([] if self._properties else list(PROPERTY_HEADINGS))

    def values(self, heading: str) -> np.ndarray | None:
        """One number per row of a numeric column (``Score``, ``p-value``, ``q-value`` or a property's
        heading), None when the table has no such values."""
        if heading == "Score":
            return None if self.scores is None else np.asarray(self.scores.score, dtype=np.float64)
        if heading in ("p-value", "q-value"):
            return self._p if heading == "p-value" else self._q
        return self._properties.get(heading)

    def ranges_mask(self, ranges: dict[str, tuple[float | None, float | None]]) -> np.ndarray | None:
        """The rows within every range of ``ranges`` (column heading -> (min or None, max or None),
        inclusive; a row without a value is outside); None when no range applies (none set, or only
        on columns without values)."""
        mask = None
        for heading, (low, high) in ranges.items():
            values = self.values(heading)
            if values is None or len(values) != self.total_rows():
                continue
            values = np.asarray(values, dtype=np.float64)
            inside = np.isfinite(values)
            if not inside.any():  # a column without values (a report's NaN p-values: a model without
                continue          # calibration), as one that is None: it hid every row of a report's tab
            if low is not None:
                inside &= values >= low
            if high is not None:
                inside &= values <= high
            mask = inside if mask is None else mask & inside
        return mask

    def set_mask(self, name: str, mask: np.ndarray | None) -> None:
        """Filter by ``mask`` (one flag per row: shown or not) under ``name``; None removes it. All
        masks, the text and the SMARTS filters combine (a row must pass every one)."""
        if mask is None:
            self._masks.pop(name, None)
        else:
            self._masks[name] = mask
        self._apply()

    def set_threshold(self, threshold: float | None) -> None:
        self.threshold = threshold
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, len(COLUMNS) - 1))

    def flagged(self) -> np.ndarray:
        if self.scores is None or self.threshold is None:
            return np.zeros(len(self._nodes) if self.graphs else 0, dtype=bool)
        return self.scores.score > self.threshold

    def graph_index(self, row: int) -> int:
        return int(self._view[row])

    def row_of(self, graph_index: int) -> int | None:
        hits = np.nonzero(self._view == graph_index)[0]
        return int(hits[0]) if hits.size else None

    def total_rows(self) -> int:
        """All rows, shown or filtered out."""
        return len(self._nodes) if self.graphs is not None else 0

    def visible_count(self) -> int:
        return int(self._view.size)

    # ---------------------------------------------------------------- filtering
    def set_text_filter(self, text: str) -> None:
        text = text.strip().lower()
        if not text or self.graphs is None:
            self._text_mask = None
        else:
            if self._hay is None:  # built once per data set: a million rows take about a second
                self._hay = [f"{i}\t{n}\t{s}\t{lab}".lower() for i, n, s, lab in
                             zip(self._ids, self._names, self._smiles, self._labels)]
            hay = self._hay
            self._text_mask = np.fromiter((text in h for h in hay), dtype=bool, count=len(hay))
        self._apply()

    def set_smarts_mask(self, mask: np.ndarray | None) -> None:
        self._smarts_mask = mask
        self._apply()

    def visible_graphs(self) -> np.ndarray:
        """The graph indices the filters let through, in table order."""
        return self._view.copy()

    def ranks(self) -> np.ndarray | None:
        """The Rank column, per graph index: the review's once rows are marked (None: no scores)."""
        return self._rank.copy() if self.scores is not None else None

    def _apply(self) -> None:
        self._relayout(self._filtered)

    def _filtered(self) -> np.ndarray:
        n = len(self._nodes) if self.graphs is not None else 0
        keep = np.ones(n, dtype=bool)
        for mask in (self._text_mask, self._smarts_mask, self._similarity_mask, *self._masks.values()):
            if mask is not None and len(mask) == n:
                keep &= mask
        return self._ordered(np.nonzero(keep)[0])

    def _refresh(self) -> None:
        self._view = self._filtered()

    def _relayout(self, new_view) -> None:
        """Change the rows shown, moving every persistent index (the view's selection and current
        row) to its graph's new row, or invalidating it when the graph is no longer shown: the
        selection follows the molecule, not the row number."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        graphs = [int(self._view[ix.row()]) if ix.row() < self._view.size else -1 for ix in old]
        self._view = new_view()
        where = {int(g): r for r, g in enumerate(self._view.tolist())}
        new = [self.index(where[g], ix.column()) if g in where else QModelIndex() for g, ix in zip(graphs, old)]
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    # ---------------------------------------------------------------- sorting
    def _key(self, column: int) -> np.ndarray:
        name = COLUMNS[column]
        s = self.scores
        if name == "Rank":
            return self._rank if s is not None else np.arange(len(self._nodes))
        if name in ("Score", "Graph term", "Node term", "Flag") and s is None:
            return np.zeros(len(self._nodes))
        if name in ("p-value", "q-value"):
            values = self._p if name == "p-value" else self._q
            return np.zeros(len(self._nodes)) if values is None else values
        if name == "Similarity":
            values = self._similarity
            return np.zeros(len(self._nodes)) if values is None else np.nan_to_num(values, nan=-1.0)
        if name in PROPERTY_HEADINGS:
            values = self._properties.get(name)
            return np.zeros(len(self._nodes)) if values is None else values
        if name == "Review":  # anomalies, then graphs marked normal, then the rest
            key = np.zeros(len(self._nodes), dtype=np.int8)
            for i, anomalous in self._marks.items():
                key[i] = 2 if anomalous else 1
            return -key
        return {
            "Score": s.score if s is not None else None,
            "Graph term": s.graph_term if s is not None else None,
            "Node term": s.node_term if s is not None else None,
            "Flag": self.flagged().astype(np.int8),
            "Nodes": self._nodes,
            "ID": self._ids, "Name": self._names, "SMILES": self._smiles, "Label": self._labels,
            "Structure": self._smiles,
        }[name]

    def _ordered(self, rows: np.ndarray) -> np.ndarray:
        """``rows`` in the sort order; ties keep rank order (file order before scoring) in both directions."""
        if self.graphs is None or rows.size == 0:
            return rows
        rows = np.sort(rows)  # file order
        if self.scores is not None:
            rows = rows[np.argsort(self._rank[rows], kind="stable")]  # rank order
        if self._sort is None:
            return rows
        column, order = self._sort
        key = self._key(column)[rows]
        if key.dtype == object:
            key = key.astype(str)
        if order == Qt.SortOrder.DescendingOrder:  # stable descending: ties stay in rank order
            idx = len(key) - 1 - np.argsort(key[::-1], kind="stable")[::-1]
        else:
            idx = np.argsort(key, kind="stable")
        return rows[idx]

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if column < 0:
            self._sort = None
        else:
            self._sort = (column, order)
        self._relayout(lambda: self._ordered(self._view))

    def sort_column(self) -> int:
        """The column the rows are sorted by; -1 for file order."""
        return -1 if self._sort is None else self._sort[0]

    # ---------------------------------------------------------------- Qt model API
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else int(self._view.size)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return COLUMN_TIPS.get(COLUMNS[section])  # what the column means, in plain words
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        # Qt's delegates ask seven roles a cell (the table's own delegate reads cells() instead):
        # the common roles come first and answer from the row's cells, built once per row.
        if role == _DISPLAY:
            return (self._cells.get(index.row()) or self._build(index))[index.column()]
        if role == _ALIGNMENT_ROLE:
            return _ALIGNMENT.get(index.column())
        if role == _BACKGROUND:
            return (self._cells.get(index.row()) or self._build(index))[_BRUSH]
        if role in _UNSET_ROLES:  # the delegate asks; this model never sets them
            return None
        if role == STRUCTURE_ROLE:
            return (self._cells.get(index.row()) or self._build(index))[_SMILES_COLUMN]
        if role == _TOOLTIP and index.isValid():
            return self._tooltip(index)
        return None

    def row_cells(self, row: int) -> tuple:
        """The cells of table row ``row`` (see :meth:`cells`), for a view that paints a row at a time."""
        return self._cells.get(row) or self._build(self.index(row, 0))

    def cells(self, index: QModelIndex | QPersistentModelIndex) -> tuple:
        """The cells of ``index``'s row as the table paints them.

        Args:
            index: any cell of the row.

        Returns:
            The display text of each column of :data:`COLUMNS` (None for a row outside the
            table), then the row's background brush (None: the style's).
        """
        return self._cells.get(index.row()) or self._build(index)

    def _tooltip(self, index: QModelIndex | QPersistentModelIndex) -> str | None:
        name = COLUMNS[index.column()]
        if name in ("SMILES", "ID", "Name", "Structure"):
            cells = self._cells.get(index.row()) or self._build(index)
            return cells[_SMILES_COLUMN if name == "Structure" else index.column()]
        if name in ("p-value", "q-value"):
            i = int(self._view[index.row()])
            values = self._p if name == "p-value" else self._q
            if values is None or i >= len(values):
                return None
            return (p_value_text if name == "p-value" else q_value_text)(float(values[i])) or None
        return None

    def _forget(self) -> None:
        """Drop the rows' built cells: what they show changed (or which graph a row shows)."""
        self._cells.clear()

    def _build(self, index: QModelIndex | QPersistentModelIndex) -> tuple:
        """The cells of ``index``'s row (every column's text, then its background), built with the
        rows around it (a screenful costs one pass over each column) and kept until the model
        changes; a row outside the table has none."""
        row = index.row()
        if not index.isValid() or row >= self._view.size:
            return _NO_CELLS
        if len(self._cells) >= _CELLS_KEPT:  # scrolled through many rows: drop the oldest block
            for old in list(islice(self._cells, _BLOCK)):
                del self._cells[old]
        start = row - row % _BLOCK
        rows = self._block_cells(self._view[start:start + _BLOCK])
        self._cells.update(zip(range(start, start + len(rows)), rows))
        return rows[row - start]

    def _block_cells(self, graphs: np.ndarray) -> list[tuple]:
        """The cells of the rows showing ``graphs`` (graph indices): per row, the text of each
        column of :data:`COLUMNS`, then the row's background."""
        n = len(graphs)
        s = self.scores
        empty = [""] * n

        def texts(values: np.ndarray | None, spec: str, finite: bool = True) -> list[str]:
            """``values`` of the rows' graphs as ``spec`` says; "" where a graph has none (beyond
            ``values``, or NaN/inf when ``finite``)."""
            if values is None:
                return empty
            inside = graphs < len(values)
            picked = np.asarray(values)[np.where(inside, graphs, 0)].astype(np.float64).tolist()
            return [format(v, spec) if ok and (not finite or math.isfinite(v)) else ""
                    for v, ok in zip(picked, inside.tolist())]

        def strings(values: np.ndarray) -> list[str]:
            return [str(v) for v in values[graphs].tolist()]

        properties = [texts(self._properties.get(h), ".0f" if h in _INTEGER_PROPERTIES else ".2f")
                      for h in PROPERTY_HEADINGS]
        if s is None:
            flagged = [False] * n
            rank = score = p = q = graph_term = node_term = empty
        else:
            flagged = ((np.asarray(s.score)[graphs] > self.threshold) if self.threshold is not None
                       else np.zeros(n, dtype=bool)).tolist()
            rank = strings(self._rank)
            score = texts(s.score, ".4g", finite=False)
            p, q = texts(self._p, ".3g", finite=False), texts(self._q, ".3g", finite=False)
            graph_term, node_term = texts(s.graph_term, ".4g"), texts(s.node_term, ".4g")
        marks = self._marks
        review = [REVIEW_TEXT.get(marks.get(g), "") for g in graphs.tolist()] if marks else empty
        flag = ["▲ flagged" if f else "" for f in flagged]
        brush = [_FLAG_BRUSH if f else None for f in flagged]
        columns = (rank, strings(self._ids), strings(self._names), strings(self._smiles), score, p, q, graph_term,
                   node_term, strings(self._nodes), strings(self._labels), flag, review, *properties, empty,
                   texts(self._similarity, ".2f"), brush)
        return list(zip(*columns))


class ResultsDelegate(QStyledItemDelegate):
    """Paints a results table's cells from its model's built cells (:meth:`ResultsModel.cells`):
    one Python call a cell where Qt's own delegate asks the model seven times.

    The style option is filled as :class:`QStyledItemDelegate` fills it from the model's roles
    (display text, alignment and background; the model sets no font, colour, check or icon).

    Args:
        model: the table's model.
        parent: the owning QObject (the table).
    """

    def __init__(self, model: ResultsModel, parent: QObject | None = None):
        super().__init__(parent)
        self._model = model

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        cells = self._model.cells(index)
        column = index.column()
        option.index = index
        text = cells[column]
        if text is not None:
            features = option.features
            option.features = _WITH_TEXT.get(features) or _WITH_TEXT.setdefault(features, features | _HAS_TEXT)
            option.text = text.replace("\n", "\u2028") if "\n" in text else text  # as Qt shows a line break
        alignment = _ALIGNMENT_FLAGS.get(column)
        if alignment is not None:
            option.displayAlignment = alignment
        brush = cells[_BRUSH]
        option.backgroundBrush = _NO_BRUSH if brush is None else brush
        option.styleObject = None  # as Qt's: no style animations in item views


_SELECTED = QStyle.StateFlag.State_Selected
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_ELIDED_KEPT = 50_000  # (text, width, alignment) -> the text as it fits and where, for the cells painted lately
_NUMBER_CHARACTERS = frozenset("0123456789.-+e")  # a number's width is its digits' (no kerning between them)
_RIGHT, _CENTRE = int(Qt.AlignmentFlag.AlignRight), int(Qt.AlignmentFlag.AlignHCenter)  # ints: enum "&" is slow


class ResultsTable(QTableView):
    """The results table, painting its text cells a row at a time.

    Qt's table asks its delegate to paint each cell, a call into Python per cell; with 1,000 cells
    in sight that was most of a frame. Here one Python call paints every row in sight: each
    row's background (selected, flagged), each text cell's text as its cells are built
    (:meth:`ResultsModel.row_cells`), elided to its width, then the grid. A column whose delegate
    draws pictures (``paint_picture``: the structures) draws them straight onto the row; other
    delegates of a column, and the current cell with its focus frame, paint as Qt paints them. A model that is not a :class:`ResultsModel`, or a
    right-to-left layout, is painted by Qt.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._placed: dict[tuple[str, int, int], tuple[str, float]] = {}
        self._advances: dict[str, float] = {}  # a character's width in the table's font

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._placed.clear()  # texts fit to the old font
            self._advances.clear()
        super().changeEvent(event)

    def _place(self, text: str, width: int, alignment: int, metrics: QFontMetricsF,
               margin: int) -> tuple[str, float]:
        """``text`` as it fits a cell ``width`` wide (elided as Qt elides it) and its left edge in the
        cell, as Qt's aligned ``drawText`` places it. A text shorter than the cell by its characters'
        widths (with a pixel to spare) is shown whole without asking Qt to elide it, which costs more
        than the sum."""
        room = width - 2 * margin
        advances = self._advances
        estimate = 0.0
        for character in text:
            advance = advances.get(character)
            if advance is None:
                advance = advances[character] = metrics.horizontalAdvance(character)
            estimate += advance
            if estimate + 2 > room:  # too long: elided
                break
        if estimate + 2 <= room:
            shown = text
            if not alignment & (_RIGHT | _CENTRE):
                return shown, float(margin)
            advance = estimate if _NUMBER_CHARACTERS.issuperset(text) else metrics.horizontalAdvance(text)
        else:
            shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
            advance = metrics.horizontalAdvance(shown)
        if alignment & _RIGHT:
            return shown, width - margin - advance
        if alignment & _CENTRE:
            return shown, margin + (room - advance) / 2
        return shown, float(margin)

    def paintEvent(self, event) -> None:
        model = self.model()
        if not isinstance(model, ResultsModel) or self.isRightToLeft() or not model.rowCount():
            super().paintEvent(event)
            return
        area = event.rect()
        first, last = self.rowAt(area.top()), self.rowAt(area.bottom())
        if first < 0:
            super().paintEvent(event)  # the empty space below the rows
            return
        last = model.rowCount() - 1 if last < 0 else last
        header = self.horizontalHeader()
        grid = 1 if self.showGrid() else 0
        columns, own, pictures = [], {}, {}
        for visual in range(header.count()):
            logical = header.logicalIndex(visual)
            if header.isSectionHidden(logical):
                continue
            x, width = header.sectionViewportPosition(logical), header.sectionSize(logical)
            if x + width <= area.left() or x > area.right():
                continue
            columns.append((logical, x, width - grid, _ALIGNMENT.get(logical, _LEFT)))
            delegate = self.itemDelegateForColumn(logical)
            if delegate is not None:
                own[logical] = delegate
                if hasattr(delegate, "paint_picture"):  # draws into a cell without Qt's cell painting
                    pictures[logical] = delegate.paint_picture
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        style = self.style()
        group = (QPalette.ColorGroup.Disabled if not self.isEnabled() else
                 QPalette.ColorGroup.Active if self.isActiveWindow() else QPalette.ColorGroup.Inactive)
        palette = self.palette()
        highlight = palette.brush(group, QPalette.ColorRole.Highlight)
        colours = (palette.color(group, QPalette.ColorRole.Text), palette.color(group, QPalette.ColorRole.HighlightedText))
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self) + 1
        metrics = QFontMetricsF(self.font())
        line_height, ascent = metrics.ascent() + metrics.descent(), metrics.ascent()
        placed = self._placed
        if len(placed) > _ELIDED_KEPT:
            placed.clear()
        current = self.currentIndex() if self.hasFocus() else QModelIndex()
        focus = (current.row(), current.column()) if current.isValid() else (-1, -1)
        selection = self.selectionModel()
        right = self.viewport().width()
        painter = QPainter(self.viewport())
        for row in range(first, last + 1):
            y, height = self.rowViewportPosition(row), self.rowHeight(row) - grid
            baseline = y + (height - line_height) / 2 + ascent  # vertically centred, as Qt aligns a line
            cells = model.row_cells(row)
            selected = selection is not None and selection.isRowSelected(row, QModelIndex())
            if selected:
                painter.fillRect(0, y, right, height, highlight)
            elif cells[_BRUSH] is not None:
                painter.fillRect(0, y, right, height, cells[_BRUSH])
            painter.setPen(colours[selected])
            for logical, x, width, alignment in columns:
                picture = pictures.get(logical)
                if picture is not None and (row, logical) != focus:  # a molecule's picture, on the row's background
                    picture(painter, QRect(x, y, width, height), cells[_SMILES_COLUMN])
                    continue
                if logical in own or (row, logical) == focus:  # as Qt paints it
                    self._paint_cell(painter, option, row, logical, QRect(x, y, width, height), selected,
                                     own.get(logical) or self.itemDelegate())
                    painter.setPen(colours[selected])
                    continue
                text = cells[logical]
                if not text:
                    continue
                key = (text, width, alignment)
                place = placed.get(key)
                if place is None:
                    plain = text.replace("\n", "\u2028") if "\n" in text else text  # a line break, as Qt shows it
                    place = placed[key] = self._place(plain, width, alignment, metrics, margin)
                painter.drawText(QPointF(x + place[1], baseline), place[0])
        if grid:
            self._paint_grid(painter, option, columns, first, last)
        painter.end()

    def _paint_cell(self, painter: QPainter, option: QStyleOptionViewItem, row: int, column: int, rect: QRect,
                    selected: bool, delegate) -> None:
        """One cell painted by its delegate, as Qt's table paints it (its focus frame included)."""
        cell = QStyleOptionViewItem(option)
        cell.rect = rect
        if selected:
            cell.state |= _SELECTED
        index = self.model().index(row, column)
        if index == self.currentIndex() and self.hasFocus():
            cell.state |= QStyle.StateFlag.State_HasFocus
        painter.save()
        delegate.paint(painter, cell, index)
        painter.restore()

    def _paint_grid(self, painter: QPainter, option: QStyleOptionViewItem, columns: list, first: int,
                    last: int) -> None:
        """The grid's lines, at the right and bottom of each cell, as Qt's table draws them."""
        hint = self.style().styleHint(QStyle.StyleHint.SH_Table_GridLineColor, option, self)
        colour = QColor.fromRgba(hint & 0xFFFFFFFF)  # lines one pixel wide, filled: faster than drawn
        top = self.rowViewportPosition(first)
        height = self.rowViewportPosition(last) + self.rowHeight(last) - top
        for _logical, x, width, _alignment in columns:
            painter.fillRect(x + width, top, 1, height, colour)
        right = self.viewport().width()
        for row in range(first, last + 1):
            painter.fillRect(0, self.rowViewportPosition(row) + self.rowHeight(row) - 1, right + 1, 1, colour)


def selected_rows(table: QTableView) -> list[int]:
    """The table rows selected, top to bottom; the current row when none is (what Copy copies
    and the Review actions mark, on every tab).

    Args:
        table: a results table.

    Returns:
        Table rows (not graph indices: the table's model maps them, ``graph_index``).
    """
    rows = sorted({index.row() for index in table.selectionModel().selectedRows()})
    if not rows and table.currentIndex().isValid():
        rows = [table.currentIndex().row()]
    return rows


SORT_ORDERS = {"ascending": Qt.SortOrder.AscendingOrder, "descending": Qt.SortOrder.DescendingOrder}


def sort_values(table: QTableView) -> list[str] | None:
    """The column (its heading) and order a results table is sorted by, as a session keeps them.

    Args:
        table: a results table (:func:`results_view`).

    Returns:
        ``[heading, "ascending" | "descending"]``, or None in file order.
    """
    column = table.model().sort_column()
    if column < 0:
        return None
    order = table.horizontalHeader().sortIndicatorOrder()
    return [COLUMNS[column], next(k for k, v in SORT_ORDERS.items() if v == order)]


def set_sort_values(table: QTableView, values) -> None:
    """Sort a results table as :func:`sort_values` said; anything else (None, an unknown column)
    leaves it as it is.

    Args:
        table: a results table.
        values: what :func:`sort_values` gave.
    """
    if isinstance(values, list) and len(values) == 2 and values[0] in COLUMNS and values[1] in SORT_ORDERS:
        table.sortByColumn(COLUMNS.index(values[0]), SORT_ORDERS[values[1]])


def results_view(model: ResultsModel) -> QTableView:
    """A table view over ``model`` as both windows show it: one row per line (no wrapping), sortable,
    whole-row selection of one row or several (Shift, Ctrl), columns sized for ids, SMILES and
    scores, which come right after the ID with the structure and the similarity to a query before
    them (the model's column order stays :data:`COLUMNS`); the last two are hidden until shown."""
    table = ResultsTable()
    table.setModel(model)
    table.setItemDelegate(ResultsDelegate(model, table))
    table.setSortingEnabled(True)
    table.setWordWrap(False)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(22)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().setStretchLastSection(True)
    header = table.horizontalHeader()
    widths = (50, 120, 130, 240, 75, 75, 75, 85, 85, 60, 60)
    more = [*((COLUMNS.index(h), 55) for h in PROPERTY_HEADINGS), (COLUMNS.index("Structure"), 114),
            (COLUMNS.index("Similarity"), 70)]
    for col, width in [*zip(range(len(COLUMNS)), widths), *more]:
        # never narrower than its header's name (with room for the sort arrow)
        table.setColumnWidth(col, max(width, header.fontMetrics().horizontalAdvance(COLUMNS[col]) + 28))
    for place, name in enumerate(("Structure", "Similarity", "Score", "p-value", "q-value"), start=2):
        header.moveSection(header.visualIndex(COLUMNS.index(name)), place)  # shown after the ID, in sight
    for place, name in enumerate(BESIDE_SCORE, start=7):  # large, greasy, polar or charged: at a glance
        header.moveSection(header.visualIndex(COLUMNS.index(name)), place)
    for name in ("Structure", "Similarity"):  # until structures are on or a query is given
        table.setColumnHidden(COLUMNS.index(name), True)
    header.moveSection(header.visualIndex(COLUMNS.index("Review")), 1)  # beside the rank; shown when reviewable
    table.setColumnWidth(COLUMNS.index("Review"), 100)
    table.setColumnHidden(COLUMNS.index("Review"), True)
    return table


def show_data_columns(table: QTableView, model: ResultsModel) -> None:
    """Hide the data columns that say nothing for ``model``'s rows (:meth:`ResultsModel.empty_columns`)
    and show the others: the one rule of the training tab and of every report tab, so that neither
    shows, nor copies (Ctrl+C copies the shown columns), an empty column.

    Args:
        table: the tab's table.
        model: its rows (their data and properties set).
    """
    empty = set(model.empty_columns())
    for heading in ("Name", "SMILES", "Label", *PROPERTY_HEADINGS):
        table.setColumnHidden(COLUMNS.index(heading), heading in empty)


def legend_label():
    """The one line under a results table that says what score, p, q and the flag mean."""
    from PySide6.QtWidgets import QLabel

    from ..plain_words import TABLE_LEGEND

    label = QLabel(TABLE_LEGEND)
    label.setObjectName("table_legend")
    label.setWordWrap(True)
    label.setStyleSheet("color: palette(placeholder-text);")
    return label


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


class _ReportScores:
    """The score columns of a ranked report, shaped like :class:`core.Scores` for the table."""

    def __init__(self, score: np.ndarray, graph_term: np.ndarray, node_term: np.ndarray):
        self.score, self.graph_term, self.node_term = score, graph_term, node_term
        self._ranking: np.ndarray | None = None
        self.has_node_scores = bool(len(score) == 0 or np.isfinite(graph_term).any())

    def ranking(self) -> np.ndarray:
        # a report's scores are read from its text, so they are the written ones already: rounding them
        # again (core.written_scores) cost 0.64 s a million rows on the window's thread for nothing
        if self._ranking is None:
            self._ranking = np.argsort(-self.score, kind="stable")
        return self._ranking
