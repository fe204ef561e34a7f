"""The results table answers from cells built once per row and painted by its own delegate: what
it shows must be what the model's state says, at once after every change (marks, scores' threshold,
p-values, properties, similarity, sorting, filters), and painted as Qt's own delegate paints it."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from PySide6.QtWidgets import QStyledItemDelegate

from app.widgets.table import COLUMNS, STRUCTURE_ROLE, ResultsDelegate, ResultsModel, results_view
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


def test_the_table_delegate_paints_what_qt_paints(qtbot):
    """Flagged rows, marks, properties, right-aligned numbers, a line break in a name and a
    selection: the same pixels as Qt's own delegate reading the model's roles."""
    model = _model(["marks", "p-values"])
    model.set_threshold(0.9)
    table = _table(qtbot, model)
    assert isinstance(table.itemDelegate(), ResultsDelegate)
    table.selectRow(1)
    table.selectionModel().select(model.index(3, 0), QItemSelectionModel.SelectionFlag.Select
                                  | QItemSelectionModel.SelectionFlag.Rows)
    flagged = model.flagged()
    assert flagged[model.visible_graphs()[:25]].any() and not flagged[model.visible_graphs()[:25]].all()
    ours = table.viewport().grab().toImage()
    table.setItemDelegate(QStyledItemDelegate(table))
    qts = table.viewport().grab().toImage()
    assert ours == qts


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
