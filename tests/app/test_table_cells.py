"""The results table answers from cells built once per row and paints a row at a time: what it
shows must be what the model's state says, at once after every change (marks, scores' threshold,
p-values, properties, similarity, sorting, filters), and painted as Qt's own table and delegate
paint it."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QStyledItemDelegate, QTableView

from app.widgets.table import COLUMNS, STRUCTURE_ROLE, ResultsDelegate, ResultsModel, ResultsTable, results_view
from core import PROPERTY_COLUMNS

N = 120
ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.TextAlignmentRole, Qt.ItemDataRole.ToolTipRole,
         STRUCTURE_ROLE)


def _report(n: int = N) -> SimpleNamespace:
    rng = np.random.default_rng(7)
    obj = lambda values: np.array(values, dtype=object)  # noqa: E731
    names = [f"name {k}" for k in range(n)]
    score = rng.random(n)
    names[int(np.argmax(score))] = "two\nlines"  # in the top row; Qt shows a line break as a line separator
    score[5] = np.nan
    graph_term = rng.random(n)
    graph_term[6] = np.inf  # shown empty
    return SimpleNamespace(score=score, graph_score=graph_term, node_score=rng.random(n),
                           ids=obj([f"M-{k}" for k in range(n)]), names=obj(names),
                           smiles=obj(["C" * (1 + k % 9) + "O" for k in range(n)]),
                           labels=obj(["active" if k % 5 == 0 else "" for k in range(n)]),
                           num_nodes=rng.integers(2, 30, n))


def _properties(n: int = N, shift: float = 0.0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    properties = {name: rng.random(n) * 400 + shift for name in PROPERTY_COLUMNS}
    properties[PROPERTY_COLUMNS[0]][8] = np.nan  # no value: an empty cell
    return properties


def _shown(model: ResultsModel) -> list:
    """Every cell of every row, as the model answers each role a view asks."""
    out = []
    for row in range(model.rowCount()):
        for column in range(model.columnCount()):
            index = model.index(row, column)
            brush = model.data(index, Qt.ItemDataRole.BackgroundRole)
            out.append((*(model.data(index, role) for role in ROLES), None if brush is None else brush.color().name()))
    return out


def _table(qtbot, model: ResultsModel):
    """The app's table over ``model``, shown, in rank order, with the review column."""
    table = results_view(model)
    qtbot.addWidget(table)
    table.sortByColumn(COLUMNS.index("Rank"), Qt.SortOrder.AscendingOrder)
    table.setColumnHidden(COLUMNS.index("Review"), False)
    table.resize(1600, 600)
    table.show()
    return table


def _paint(table) -> None:
    """Paint every row once, so that the model has built (and kept) every row's cells."""
    bar = table.verticalScrollBar()
    for value in range(0, bar.maximum() + bar.pageStep(), max(bar.pageStep(), 1)):
        bar.setValue(value)
        table.viewport().repaint()


# each step changes what the table shows; a fresh model given the same steps is the truth
STEPS = {
    "marks": lambda m: m.set_review({0: True, 7: False, 20: True}, None),
    "marks ranked": lambda m: m.set_review({4: True}, np.arange(N, 0, -1)),
    "threshold": lambda m: m.set_threshold(0.3),
    "no threshold": lambda m: m.set_threshold(None),
    "p-values": lambda m: m.set_p_values(np.linspace(0, 1, N - 4), np.linspace(0.5, 1, N)),
    "properties": lambda m: m.set_properties(_properties(shift=10.0)),
    "similarity": lambda m: m.set_similarity(np.linspace(0, 1, N), 0.25),
    "sorted by score": lambda m: m.sort(COLUMNS.index("Score"), Qt.SortOrder.DescendingOrder),
    "sorted by review": lambda m: m.sort(COLUMNS.index("Review")),
    "text filter": lambda m: m.set_text_filter("m-1"),
    "range filter": lambda m: m.set_mask("ranges", m.ranges_mask({"Score": (0.2, 0.8)})),
    "file order": lambda m: m.sort(-1),
}


def _model(steps) -> ResultsModel:
    model = ResultsModel()
    model.set_report(_report(), threshold=0.6)
    model.set_properties(_properties())
    model.sort(COLUMNS.index("Rank"), Qt.SortOrder.AscendingOrder)  # as _table shows it
    for step in steps:
        STEPS[step](model)
    return model


def test_every_change_shows_at_once_in_a_painted_table(qtbot):
    model = _model([])
    table = _table(qtbot, model)
    done = []
    for step in STEPS:
        _paint(table)  # the rows' cells are built and kept before the change
        STEPS[step](model)
        done.append(step)
        assert _shown(model) == _shown(_model(done)), f"after {', '.join(done)}"
    assert model.rowCount() > 0


def test_a_mark_shows_in_the_painted_row_at_once(qtbot):
    model = _model([])
    table = _table(qtbot, model)
    table.viewport().repaint()
    review = COLUMNS.index("Review")
    row = 2
    assert model.cells(model.index(row, 0))[review] == ""
    model.set_review({model.graph_index(row): True}, None)
    assert model.index(row, review).data() == "● anomaly"
    assert model.cells(model.index(row, 0))[review] == "● anomaly"


def test_a_row_outside_the_table_has_no_cells(qtbot):
    model = _model([])
    assert model.data(QModelIndex()) is None
    assert model.data(QModelIndex(), Qt.ItemDataRole.TextAlignmentRole) is None
    assert set(model.cells(QModelIndex())) == {None}
    assert model.index(N, 0).data() is None


def _pixels(image) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    return rows[:, :image.width() * 4].reshape(image.height(), image.width(), 4)[..., :3].astype(int)


def _ink(cell: np.ndarray) -> tuple[tuple[int, ...], tuple[int, int, int], int, np.ndarray]:
    """A cell's background (its commonest colour), the box around what is drawn on it, how much is
    drawn and its mean colour."""
    colours, counts = np.unique(cell.reshape(-1, 3), axis=0, return_counts=True)
    background = colours[np.argmax(counts)]
    ink = (cell != background).any(-1)
    if not ink.any():
        return (), tuple(background), 0, background
    ys, xs = np.nonzero(ink)
    return (ys.min(), ys.max(), xs.min(), xs.max()), tuple(background), int(ink.sum()), cell[ink].mean(0)


def _qt_table(qtbot, table: QTableView) -> QTableView:
    """Qt's own table and delegate over the same model, laid out, selected and focused as ``table``."""
    qt = QTableView()
    qtbot.addWidget(qt)
    qt.setModel(table.model())
    qt.setItemDelegate(QStyledItemDelegate(qt))  # every cell from the model's roles
    qt.setSelectionModel(table.selectionModel())
    qt.setWordWrap(False)
    qt.verticalHeader().setVisible(False)
    qt.verticalHeader().setDefaultSectionSize(table.verticalHeader().defaultSectionSize())
    qt.verticalHeader().setMinimumSectionSize(table.verticalHeader().minimumSectionSize())
    qt.horizontalHeader().setStretchLastSection(True)
    ours, theirs = table.horizontalHeader(), qt.horizontalHeader()
    for column in range(len(COLUMNS)):
        qt.setColumnWidth(column, table.columnWidth(column))
        qt.setColumnHidden(column, table.isColumnHidden(column))
    for visual in range(ours.count()):
        theirs.moveSection(theirs.visualIndex(ours.logicalIndex(visual)), visual)
    qt.resize(table.size())
    qt.show()
    qt.activateWindow()
    qt.setFocus()
    qtbot.waitUntil(qt.hasFocus)
    assert qt.viewport().size() == table.viewport().size() and qt.currentIndex() == table.currentIndex()
    return qt


def test_the_table_paints_what_qt_paints(qtbot):
    """Flagged rows, marks, properties, right-aligned and elided texts, a line break in a name, a
    selection and the current cell: painted a row at a time, each cell has the background and
    the text (where, and about how much ink) that Qt's own table and delegate give it."""
    model = _model(["marks", "p-values"])
    model.set_threshold(0.9)
    table = _table(qtbot, model)
    assert isinstance(table, ResultsTable) and isinstance(table.itemDelegate(), ResultsDelegate)
    table.setColumnWidth(COLUMNS.index("Name"), 40)  # names cut short: elided
    table.selectRow(1)
    table.selectionModel().select(model.index(3, 0), QItemSelectionModel.SelectionFlag.Select
                                  | QItemSelectionModel.SelectionFlag.Rows)
    table.activateWindow()
    table.setFocus()
    qtbot.waitUntil(table.hasFocus)  # the current cell has its focus frame
    flagged = model.flagged()
    assert flagged[model.visible_graphs()[:25]].any() and not flagged[model.visible_graphs()[:25]].all()
    ours = _pixels(table.viewport().grab().toImage())
    qt = _qt_table(qtbot, table)
    qts = _pixels(qt.viewport().grab().toImage())
    compared = inked = 0
    for row in range(25):
        for column in range(len(COLUMNS)):
            rect = table.visualRect(model.index(row, column))
            if table.isColumnHidden(column) or rect.right() >= ours.shape[1] - 1 or rect.bottom() >= ours.shape[0]:
                continue
            cut = np.s_[rect.top():rect.bottom() + 1, rect.left():rect.right() + 1]
            (box_a, back_a, ink_a, colour_a), (box_b, back_b, ink_b, colour_b) = _ink(ours[cut]), _ink(qts[cut])
            where = f"row {row}, {COLUMNS[column]}"
            assert back_a == back_b, where
            assert bool(box_a) == bool(box_b), where
            if box_a:
                assert np.abs(np.subtract(box_a, box_b)).max() <= 2, where
                assert abs(ink_a - ink_b) <= 0.35 * max(ink_a, ink_b), where
                assert np.abs(colour_a - colour_b).max() <= 40, where  # e.g. white text on a selection
                inked += 1
            # the grid's lines at the cell's right and bottom
            assert (ours[rect.top():rect.bottom() + 2, rect.right() + 1] ==
                    qts[rect.top():rect.bottom() + 2, rect.right() + 1]).all(), where
            assert (ours[rect.bottom() + 1, rect.left():rect.right() + 2] ==
                    qts[rect.bottom() + 1, rect.left():rect.right() + 2]).all(), where
            compared += 1
    assert compared > 300 and inked > 150


def test_the_structures_are_painted_as_their_delegate_paints_them(qtbot):
    """The pictures, drawn straight onto each row, land where the structure delegate puts them, on
    the same background (flagged and selected rows too)."""
    from app.structures import StructureDelegate, StructureImages, show_structures

    model = _model([])
    model.set_threshold(0.5)
    images = StructureImages()
    images.set_size("small")
    table = _table(qtbot, model)
    show_structures(table, images)
    table.selectRow(2)
    column = COLUMNS.index("Structure")
    assert not table.isColumnHidden(column)
    rows = [r for r in range(model.rowCount()) if table.visualRect(model.index(r, column)).bottom()
            < table.viewport().height()]
    table.viewport().repaint()  # asks for the pictures in sight
    qtbot.waitUntil(lambda: all(images.is_known(model.index(r, column).data(STRUCTURE_ROLE)) for r in rows),
                    timeout=60000)
    ours = _pixels(table.viewport().grab().toImage())
    qt = _qt_table(qtbot, table)
    qt.setItemDelegateForColumn(column, StructureDelegate(images, qt))
    qts = _pixels(qt.viewport().grab().toImage())
    assert len(rows) >= 5 and model.flagged()[model.visible_graphs()[rows]].any()
    for row in rows:
        rect = table.visualRect(model.index(row, column))
        cut = np.s_[rect.top():rect.bottom() + 1, rect.left():rect.right() + 1]
        assert (ours[cut] == qts[cut]).all(), f"row {row}"
        assert _ink(ours[cut])[2] > 100  # a molecule is drawn there
    images.shutdown()


@pytest.mark.parametrize("column", ["Score", "Review", "MW"])
def test_sorting_a_painted_table_orders_its_cells(qtbot, column):
    model = _model(["marks"])
    table = _table(qtbot, model)
    _paint(table)
    c = COLUMNS.index(column)
    table.sortByColumn(c, Qt.SortOrder.AscendingOrder)
    cells = [model.index(r, c).data() for r in range(model.rowCount())]
    fresh = _model(["marks"])
    fresh.sort(c, Qt.SortOrder.AscendingOrder)
    assert cells == [fresh.index(r, c).data() for r in range(fresh.rowCount())]
    if column != "Review":
        values = [float(v) for v in cells if v not in ("", "nan")]
        assert values == sorted(values)


def test_scrolling_through_more_rows_than_are_kept_keeps_every_row_right(qtbot):
    n = 9000  # more rows than the model keeps the cells of: the oldest are dropped, a block at a time
    model, fresh = ResultsModel(), ResultsModel()
    for m in (model, fresh):
        m.set_report(_report(n), threshold=0.6)
        m.sort(COLUMNS.index("Score"))
    for row in [*range(n), *range(n - 1, -1, -97)]:  # down through every row, then back up
        model.cells(model.index(row, 0))
    rows = range(0, n, 7)
    assert [model.index(r, c).data() for r in rows for c in range(len(COLUMNS))] == \
        [fresh.index(r, c).data() for r in rows for c in range(len(COLUMNS))]
