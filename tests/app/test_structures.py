"""Structures in the table, copying rows, similarity to a query and the nearest training molecule,
driven as a user drives them (pytest-qt, offscreen)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, Qt
from PySide6.QtWidgets import QApplication

from app.main_window import MainWindow
from app.structures import STRUCTURE_SIZES, StructureImages, show_structures
from app.widgets.table import COLUMNS, STRUCTURE_ROLE, ResultsModel, results_view
from core import query_similarities
from tests.app.test_main_window import open_and_wait, train_and_wait

STRUCTURE, SIMILARITY = COLUMNS.index("Structure"), COLUMNS.index("Similarity")


def _select(window, rows) -> None:
    sel = window.table.selectionModel()
    sel.clearSelection()
    for r in rows:
        sel.select(window.model_table.index(r, 0),
                   QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)


def test_structures_are_drawn_at_the_size_picked_and_the_size_is_kept(qtbot, window, settings, herg_path):
    open_and_wait(qtbot, window, herg_path)
    assert window.table.isColumnHidden(STRUCTURE)  # off by default: one line a row
    window.query_bar.structures.setCurrentIndex(window.query_bar.structures.findData("large"))
    assert not window.table.isColumnHidden(STRUCTURE)
    width, height = STRUCTURE_SIZES["large"]
    assert window.table.verticalHeader().defaultSectionSize() == height + 4
    first = str(window.model_table.index(0, STRUCTURE).data(STRUCTURE_ROLE))
    assert first == window.graphs.meta[window.model_table.graph_index(0)].smiles
    window.table.viewport().repaint()  # the paint asks for the rows on screen
    qtbot.waitUntil(lambda: window.structures.image(first) is not None, timeout=60000)
    image = window.structures.image(first)
    assert (image.width(), image.height()) == (width, height)
    window.query_bar.structures.setCurrentIndex(window.query_bar.structures.findData("off"))
    assert window.table.isColumnHidden(STRUCTURE) and window.table.verticalHeader().defaultSectionSize() == 22
    window.query_bar.structures.setCurrentIndex(window.query_bar.structures.findData("small"))
    window.kept.save()
    again = MainWindow(settings)
    qtbot.addWidget(again)
    assert again.query_bar.size_key() == "small" and again.structures.size_key() == "small"
    again.structures.shutdown()


def test_graphs_without_molecules_have_no_structure_column(qtbot):
    images = StructureImages()
    images.set_size("small")
    model = ResultsModel()
    n = 3
    report = SimpleNamespace(score=np.arange(n, dtype=float), graph_score=np.full(n, np.nan),
                             node_score=np.full(n, np.nan), ids=np.array(["a", "b", "c"], dtype=object),
                             names=np.array([""] * n, dtype=object), smiles=np.array([""] * n, dtype=object),
                             labels=np.array([""] * n, dtype=object), num_nodes=np.array([3, 4, 5]))
    model.set_report(report)
    table = results_view(model)
    qtbot.addWidget(table)
    show_structures(table, images)
    assert not model.has_smiles() and table.isColumnHidden(STRUCTURE)
    assert images.image("") is None


def test_similarity_to_a_query_sorts_filters_and_says_when_the_smiles_is_invalid(qtbot, window, herg_path):
    open_and_wait(qtbot, window, herg_path)
    smiles = [m.smiles for m in window.graphs.meta]
    query = smiles[10]
    window.query_bar.set_query(query)
    qtbot.waitUntil(lambda: not window.table.isColumnHidden(SIMILARITY), timeout=60000)
    model = window.model_table
    shown = [float(model.index(r, SIMILARITY).data()) for r in range(model.rowCount())]
    assert shown[0] == 1.0 and shown == sorted(shown, reverse=True)  # most similar first
    expected = query_similarities(query, smiles)
    top = model.graph_index(0)
    assert expected[top] == pytest.approx(1.0)
    assert shown[:20] == [round(float(v), 2) for v in np.sort(expected)[::-1][:20]]

    window.query_bar.minimum.setValue(0.5)
    keep = int((expected >= 0.5).sum())
    assert model.rowCount() == keep < len(smiles)
    assert window.filters.count.text().startswith(f"{keep:,} of 655 shown")
    assert all(float(model.index(r, SIMILARITY).data()) >= 0.5 for r in range(model.rowCount()))

    window.query_bar.set_query("C1CC(")  # not a SMILES: said in place, no query applied
    qtbot.waitUntil(lambda: "not a valid SMILES" in window.query_bar.note.text(), timeout=60000)
    assert window.table.isColumnHidden(SIMILARITY) and model.rowCount() == 655
    window.query_bar.set_query("")
    assert window.table.isColumnHidden(SIMILARITY) and model.rowCount() == 655

    window.table.selectRow(3)  # Use selected: the selected row's molecule is the query
    picked = smiles[model.graph_index(3)]
    window.query_bar.minimum.setValue(0.0)
    window.query_bar.selected_button.click()
    assert window.query_bar.query() == picked
    qtbot.waitUntil(lambda: not window.table.isColumnHidden(SIMILARITY), timeout=60000)
    assert model.index(0, SIMILARITY).data() == "1.00"


def test_copy_puts_the_selected_rows_as_text_and_their_structures_as_a_picture(qtbot, window, herg_path):
    open_and_wait(qtbot, window, herg_path)
    _select(window, [0, 2, 5])
    window.act_copy.trigger()
    lines = QApplication.clipboard().text().splitlines()
    header = lines[0].split("\t")
    assert len(lines) == 4 and {"ID", "SMILES", "Nodes"} <= set(header) and "Structure" not in header
    assert all(len(line.split("\t")) == len(header) for line in lines)
    model = window.model_table
    rows = [line.split("\t") for line in lines[1:]]
    assert [r[header.index("ID")] for r in rows] == [window.graphs.meta[model.graph_index(k)].id for k in (0, 2, 5)]
    assert [r[header.index("SMILES")] for r in rows] == [window.graphs.meta[model.graph_index(k)].smiles
                                                         for k in (0, 2, 5)]
    window.activateWindow()  # Ctrl+C in the table: the rows, not one cell as the view alone would copy
    window.table.setFocus()
    qtbot.waitUntil(window.isActiveWindow, timeout=10000)
    _select(window, [1, 3])
    QApplication.clipboard().clear()
    qtbot.keyClick(window.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    pasted = QApplication.clipboard().text().splitlines()
    assert pasted[0] == lines[0] and len(pasted) == 3
    QApplication.clipboard().clear()
    _select(window, [0, 2, 5])
    window.act_copy_image.trigger()
    qtbot.waitUntil(lambda: not QApplication.clipboard().image().isNull(), timeout=60000)
    image = QApplication.clipboard().image()
    assert (image.width(), image.height()) == (3 * 260, 220)  # three molecules in one row


def test_the_nearest_training_molecule_is_drawn_beside_the_selected_one(qtbot, window, herg_path):
    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window, detector="glocalkd", epochs=1)
    window.table.selectRow(4)
    i = window.model_table.graph_index(4)
    j, sim = window.state.similar_training_molecules(i)[0]
    panel = window.nearest_panel
    qtbot.waitUntil(panel.has_picture, timeout=60000)
    text = panel.caption.text()
    assert window.graphs.meta[i].id in text and window.graphs.meta[j].id in text and f"{sim:.2f}" in text
    assert (panel._image.width(), panel._image.height()) == (2 * 380, 300)  # the two molecules side by side


def test_a_scored_files_tab_has_the_query_and_the_structures(qtbot, tmp_path):
    from app.widgets.report_view import ReportView
    from core import REPORT_COLUMNS, read_report

    path = tmp_path / "ranked.csv"
    rows = [("a", "c1ccccc1CCO", 0.9), ("b", "CCCCCC", 0.8), ("c", "c1ccccc1CCN", 0.7), ("d", "OC(=O)CC", 0.6)]
    path.write_text(",".join(REPORT_COLUMNS) + "\n" + "".join(
        f"{k},{ident},,{smiles},{score},,,3,,,ok,,\n" for k, (ident, smiles, score) in enumerate(rows, start=1)))
    images = StructureImages()
    images.set_size("small")
    view = ReportView(read_report(str(path)), images=images)
    qtbot.addWidget(view)
    assert not view.table.isColumnHidden(STRUCTURE)
    view.query_bar.set_query("OCCc1ccccc1")  # row a, written otherwise
    qtbot.waitUntil(lambda: not view.table.isColumnHidden(SIMILARITY), timeout=60000)
    model = view.model_table
    order = [model.index(r, COLUMNS.index("ID")).data() for r in range(model.rowCount())]
    assert order[0] == "a" and model.index(0, SIMILARITY).data() == "1.00" and order[1] == "c"
    view.query_bar.minimum.setValue(0.3)
    assert [model.index(r, COLUMNS.index("ID")).data() for r in range(model.rowCount())] == ["a", "c"]
    assert view.count.text() == "2 of 4 shown"
    images.shutdown()


class _PaintedRects(QObject):
    """Records the rectangles a widget is asked to paint."""

    def __init__(self):
        super().__init__()
        self.rects = []

    def eventFilter(self, watched, event):  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Paint:
            self.rects.append(event.rect())
        return False


def test_arriving_pictures_repaint_only_their_own_cells(qtbot):
    """Pictures arrive while the user scrolls: only the cells in sight that show them are
    repainted, not the whole table."""
    smiles = ["CCO", "c1ccccc1", "CCN", "CC(=O)O", "CCCl", "c1ccncc1", "CCOCC", "CC#N"]
    n = len(smiles)
    report = SimpleNamespace(score=np.arange(n, dtype=float)[::-1], graph_score=np.full(n, np.nan),
                             node_score=np.full(n, np.nan), ids=np.array(list("abcdefgh"), dtype=object),
                             names=np.array([""] * n, dtype=object), smiles=np.array(smiles, dtype=object),
                             labels=np.array([""] * n, dtype=object), num_nodes=np.arange(3, 3 + n))
    model = ResultsModel()
    model.set_report(report)
    table = results_view(model)
    qtbot.addWidget(table)
    images = StructureImages()
    images.set_size("small")
    show_structures(table, images)
    table.resize(900, 400)
    table.show()
    qtbot.waitExposed(table)
    in_sight = [model.index(r, STRUCTURE).data(STRUCTURE_ROLE) for r in range(table.rowAt(300) + 1)]
    with qtbot.waitSignal(images.arrived, timeout=60000) as arrival:
        qtbot.waitUntil(lambda: all(images.is_known(s) for s in in_sight), timeout=60000)
    assert isinstance(arrival.args[0], frozenset) and arrival.args[0] <= set(smiles)
    QApplication.processEvents()
    painted = _PaintedRects()
    table.viewport().installEventFilter(painted)
    images.arrived.emit(frozenset({model.index(2, STRUCTURE).data(STRUCTURE_ROLE)}))  # one more picture, row 2's
    qtbot.waitUntil(lambda: bool(painted.rects))
    QApplication.processEvents()
    cell = table.visualRect(model.index(2, STRUCTURE))
    assert painted.rects and all(cell.contains(rect) for rect in painted.rects), (painted.rects, cell)
    table.viewport().removeEventFilter(painted)
    images.shutdown()


def test_the_picture_cache_keeps_to_its_budget(qtbot):
    width, height = STRUCTURE_SIZES["small"]
    images = StructureImages(budget=2 * (width * height * 4 + 64))  # two pictures' worth
    images.set_size("small")
    smiles = ["CCO", "c1ccccc1", "CCN"]
    with qtbot.waitSignal(images.arrived, timeout=60000):
        assert all(images.image(s) is None for s in smiles)  # asked for, not drawn yet
    assert sum(images.is_known(s) for s in smiles) == 2  # the least recently drawn one was let go
    kept = [s for s in smiles if images.is_known(s)]
    assert all(images.image(s).size().width() == width for s in kept)
    images.shutdown()


def test_copied_rows_carry_no_cell_a_spreadsheet_would_run(qtbot, window, tmp_path):
    """Edit ▸ Copy is for pasting into Excel, and put ``=HYPERLINK(...)`` and ``@cmd`` on the
    clipboard as they were: guarded as the report files guard them, numbers left alone."""
    data = tmp_path / "ids.csv"
    data.write_text('id,smiles\n"=HYPERLINK(""http://x"",""y"")",CCO\n@cmd,CCN\n-1.5,CCC\n')
    open_and_wait(qtbot, window, data)
    _select(window, [0, 1, 2])
    window.act_copy.trigger()
    lines = QApplication.clipboard().text().splitlines()
    ids = [line.split("\t")[lines[0].split("\t").index("ID")] for line in lines[1:]]
    assert sorted(ids) == sorted(['\'=HYPERLINK("http://x","y")', "'@cmd", "-1.5"])
