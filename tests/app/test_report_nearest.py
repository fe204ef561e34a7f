"""A scored file's tab: the selected row's similar training molecules and the row drawn beside the
nearest, driven as a user drives them (pytest-qt, offscreen)."""
from __future__ import annotations

import threading

import numpy as np
from PySide6.QtCore import Qt

import core
from app import tasks
from app.controllers.nearest import NO_MODEL
from tests.app.test_main_window import _idle, open_and_wait
from tests.conftest import moses_library


def _train_size(qtbot, window, herg_path):
    """hERG open, the graph-size detector trained (a model in a moment), the training tab's top row
    listed with its similar training molecules."""
    open_and_wait(qtbot, window, herg_path)
    window.form.detector.setCurrentIndex(window.form.detector.findData("size"))
    window.train()
    qtbot.waitUntil(lambda: _idle(window) and window.scores is not None and window.heatmap.neighbours.count() > 0,
                    timeout=120000)


def _library_report(window, tmp_path):
    """30 MOSES molecules (not hERG's) scored with the window's model, as a ranked report."""
    graphs = core.load(str(moses_library(tmp_path / "library.smi", 30, {})))
    report = tmp_path / "library_ranked.csv"
    core.write_report(report, graphs, window.model.score(graphs))
    return report


def _open_report(qtbot, window, path):
    window.open_path(str(path))
    qtbot.waitUntil(lambda: _idle(window) and bool(window.report_views), timeout=60000)
    return window.report_views[-1]


def _listed(view) -> list[tuple[int, str]]:
    items = [view.heatmap.neighbours.item(k) for k in range(view.heatmap.neighbours.count())]
    return [(int(item.data(256)), item.text()) for item in items]


def _expected(window, smiles: str) -> list[tuple[int, float]]:
    """The row's 5 nearest training molecules, found directly with core's SimilarityIndex."""
    train = window.state.training_indices()
    index = SIMILARITY_INDEX([window.graphs.meta[j].smiles for j in train])
    return [(int(train[j]), sim) for j, sim in index.nearest(smiles, 5)]


SIMILARITY_INDEX = core.SimilarityIndex


def test_a_scored_files_row_lists_its_similar_training_molecules_and_is_drawn_beside_the_nearest(
        qtbot, window, herg_path, tmp_path, monkeypatch):
    built, searched_on_gui = [], []

    def counted(*args, **kwargs):
        built.append(threading.current_thread() is threading.main_thread())
        return SIMILARITY_INDEX(*args, **kwargs)

    similar_training = tasks.similar_training

    def watched(*args, **kwargs):
        searched_on_gui.append(threading.current_thread() is threading.main_thread())
        return similar_training(*args, **kwargs)

    monkeypatch.setattr(core, "SimilarityIndex", counted)
    monkeypatch.setattr(tasks, "similar_training", watched)
    _train_size(qtbot, window, herg_path)
    view = _open_report(qtbot, window, _library_report(window, tmp_path))
    row = 3
    view.table.selectRow(row)
    i = view.model_table.graph_index(row)
    ident = str(view.report.ids[i])
    expected = _expected(window, view.report.scored_smiles(i))
    assert len(expected) == 5 and expected[0][1] < 1  # a MOSES molecule is none of hERG's
    qtbot.waitUntil(lambda: [j for j, _ in _listed(view)] == [j for j, _ in expected], timeout=60000)
    scores = window.scores.score
    for (j, text), (_, sim) in zip(_listed(view), expected):  # similarity, training score, id
        assert text.split(maxsplit=2) == [f"{sim:.2f}", f"{scores[j]:.3g}", window.graphs.meta[j].id]
    panel = view.nearest_panel
    qtbot.waitUntil(lambda: panel.has_picture() and ident in panel.caption.text(), timeout=60000)
    j, sim = expected[0]
    caption = panel.caption.text()
    assert f"<b>{window.graphs.meta[j].id}</b>" in caption and f"<b>{sim:.2f}</b>" in caption
    assert (panel._image.width(), panel._image.height()) == (2 * 380, 300)  # the two molecules side by side
    assert built == [False]  # the fingerprints built once, off the GUI thread: the training tab's, shared
    assert searched_on_gui and not any(searched_on_gui)
    # double-clicking a similar training molecule shows it on the training tab
    where = view.heatmap.neighbours.visualItemRect(view.heatmap.neighbours.item(1)).center()
    qtbot.mouseClick(view.heatmap.neighbours.viewport(), Qt.MouseButton.LeftButton, pos=where)
    qtbot.mouseDClick(view.heatmap.neighbours.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert window.results_tabs.currentIndex() == 0 and window.state.selected == expected[1][0]


def test_a_row_that_is_a_training_molecule_is_said_to_be_one(qtbot, window, herg_path, tmp_path):
    _train_size(qtbot, window, herg_path)
    training = window.graphs.subset(np.arange(5))  # five of hERG's own molecules, scored as a new file
    report = tmp_path / "again_ranked.csv"
    core.write_report(report, training, window.model.score(training))
    view = _open_report(qtbot, window, report)
    view.table.selectRow(0)
    ident = str(view.report.ids[view.model_table.graph_index(0)])
    panel = view.nearest_panel
    qtbot.waitUntil(lambda: panel.has_picture() and ident in panel.caption.text(), timeout=60000)
    caption = panel.caption.text()
    assert "<b>1.00</b>" in caption and "same molecule</b>: this row is in the training data" in caption


def test_a_stale_rows_neighbours_are_never_shown(qtbot, window, herg_path, tmp_path, monkeypatch):
    _train_size(qtbot, window, herg_path)
    view = _open_report(qtbot, window, _library_report(window, tmp_path))
    qtbot.waitUntil(lambda: view.heatmap.neighbours.count() == 5, timeout=60000)
    gate, asked = threading.Event(), []
    similar_training = tasks.similar_training

    def held(*args, **kwargs):  # the first row asked about waits until the gate opens
        asked.append(args[4])
        if len(asked) == 1:
            assert gate.wait(30)
        return similar_training(*args, **kwargs)

    shown, drawn = [], []
    set_neighbours, draw = view.heatmap.set_neighbours, view.nearest.pair.draw
    monkeypatch.setattr(tasks, "similar_training", held)
    monkeypatch.setattr(view.heatmap, "set_neighbours", lambda rows: shown.append(rows) or set_neighbours(rows))
    monkeypatch.setattr(view.nearest.pair, "draw", lambda *args: drawn.append(args) or draw(*args))
    first, second = (view.model_table.graph_index(r) for r in (5, 6))
    view.table.selectRow(5)
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=10000)
    view.table.selectRow(6)  # a newer row while the first is still searched
    assert view.heatmap.neighbours.isHidden() and "finding them" in view.heatmap.neighbours_label.text()
    gate.set()
    expected = _expected(window, view.report.scored_smiles(second))
    qtbot.waitUntil(lambda: [j for j, _ in _listed(view)] == [j for j, _ in expected], timeout=30000)
    qtbot.wait(200)
    assert [[row[0] for row in rows] for rows in shown if rows] == [[j for j, _ in expected]]
    assert [args[0][0] for args in drawn] == [str(view.report.ids[second])]
    assert f"<b>{view.report.ids[first]}</b>" not in view.nearest_panel.caption.text()

    # new data while a row is searched: the search for the old data is not shown, it is searched again
    asked.clear()
    gate.clear()
    shown.clear()
    view.table.selectRow(7)
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=10000)
    st = window.state
    st.set_data(st.data_path, st.graphs, st.schema_text)  # the same molecules, opened again: no scores yet
    gate.set()
    qtbot.waitUntil(lambda: len(asked) == 2 and any(shown), timeout=30000)
    qtbot.wait(200)
    assert all(score is None for rows in shown for *_rest, score in rows)  # none of the old scores shown

    # the tab closed while its row is searched: the tab waits for the job, and nothing is shown
    asked.clear()
    gate.clear()
    shown.clear()
    view.table.selectRow(8)
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=10000)
    threading.Timer(0.3, gate.set).start()
    window.report_tabs.close(window.results_tabs.indexOf(view))
    assert not window.report_views
    qtbot.wait(300)
    assert not any(shown)


def test_without_a_model_the_tab_says_why_and_a_model_trained_later_fills_it(qtbot, window, herg_path,
                                                                             tmp_path):
    from core import REPORT_COLUMNS

    path = tmp_path / "ranked.csv"
    rows = [("a", "c1ccccc1CCO", 0.9), ("b", "CCCCCC", 0.8)]
    path.write_text(",".join(REPORT_COLUMNS) + "\n" + "".join(
        f"{k},{ident},,{smiles},{score},,,3,,,ok,,\n" for k, (ident, smiles, score) in enumerate(rows, start=1)))
    qtbot.waitUntil(lambda: window.opening.ready and _idle(window), timeout=60000)
    view = _open_report(qtbot, window, path)
    assert view.nearest_panel.caption.text() == NO_MODEL and not view.nearest_panel.has_picture()
    assert view.heatmap.neighbours.isHidden() and view.heatmap.neighbours.count() == 0
    _train_size(qtbot, window, herg_path)  # the report's selected row is compared with the new model's molecules
    expected = _expected(window, "c1ccccc1CCO")
    qtbot.waitUntil(lambda: [j for j, _ in _listed(view)] == [j for j, _ in expected], timeout=60000)
    qtbot.waitUntil(lambda: view.nearest_panel.has_picture() and "<b>a</b>" in view.nearest_panel.caption.text(),
                    timeout=60000)
