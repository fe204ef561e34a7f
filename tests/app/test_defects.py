"""Issue 26's defects, each driven as a user meets it (pytest-qt, offscreen)."""
import csv
from types import SimpleNamespace

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.main_window import MainWindow
from app.widgets.map_view import score_percentiles
from app.widgets.table import COLUMNS
from tests.app.test_main_window import _idle, open_and_wait, train_and_wait


@pytest.fixture
def trained(qtbot, window, herg_path):
    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window)
    return window


def test_a_loaded_model_that_cannot_score_the_data_leaves_no_old_results_shown_as_current(qtbot, trained, tmp_path,
                                                                                           tu_folder):
    """Loading a model that could not score the open molecules (a TU collection's) left the previous
    model's ranks, scores, map and ROC-AUC on screen while the summary named the new model."""
    from core import GLocalKD, load, save_detector

    w = trained
    w.compute_map("predictor", "pca")
    qtbot.waitUntil(lambda: w.map_view.map is not None and _idle(w), timeout=60000)
    assert w.model_table.scores is not None and w.evaluation.auc_label.text()
    save_detector(GLocalKD(epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(load(tu_folder)), tmp_path / "tu.pt")
    w.load_model(str(tmp_path / "tu.pt"))
    qtbot.waitUntil(lambda: _idle(w) and bool(w.feedback.last_warning), timeout=60000)
    assert "cannot be scored with this model" in w.feedback.last_warning
    assert w.state.scores is None and w.model_table.scores is None  # no old score in the table
    assert w.model_table.index(0, COLUMNS.index("Score")).data() in ("", None)
    assert w.map_view.map is None and "ROC" not in w.evaluation.auc_label.text()


# 1 ---------------------------------------------------------------- the map stays still under a tooltip
def test_hovering_the_map_does_not_move_the_points(qtbot, trained):
    w = trained
    w.compute_map("predictor", "pca")
    qtbot.waitUntil(lambda: w.map_view.map is not None and _idle(w), timeout=60000)
    view = w.map_view
    view.canvas.draw()
    before = view._xy_display.copy()
    k = int(np.argmax(before[:, 0]))  # the rightmost point: its label must open leftwards
    x, y = before[k]
    view._hover(SimpleNamespace(inaxes=view.ax, x=x, y=y))
    assert view._annotation is not None
    view.canvas.draw()
    assert np.abs(view._xy_display - before).max() < 0.5  # no point moved (the layout solver jitters < 0.1 px)
    box = view._annotation.get_window_extent(view.canvas.get_renderer())
    assert box.x1 <= view.canvas.figure.bbox.x1 + 1  # not cut off at the right edge


# 2 ---------------------------------------------------------------- the selection follows the molecule
def test_selection_and_heatmap_follow_the_molecule_when_sorting_and_filtering(qtbot, trained):
    w = trained
    w.table.selectRow(3)
    chosen = w.model_table.graph_index(3)
    ident = w.graphs.meta[chosen].id
    assert ident in w.heatmap.title.text()
    w.table.sortByColumn(COLUMNS.index("ID"), Qt.SortOrder.AscendingOrder)
    assert w.model_table.graph_index(w.table.currentIndex().row()) == chosen
    assert w.state.selected == chosen and ident in w.heatmap.title.text()
    assert [w.model_table.graph_index(ix.row()) for ix in w.table.selectionModel().selectedRows()] == [chosen]
    # a filter that hides it: nothing selected, and the heatmap no longer shows it
    other = next(m.id for m in w.graphs.meta if ident not in m.id and m.id not in ident)
    w.filters.text_edit.setText(other)
    qtbot.waitUntil(lambda: w.model_table.visible_count() < 655, timeout=5000)
    assert w.model_table.row_of(chosen) is None
    assert w.state.selected is None and ident not in w.heatmap.title.text()
    assert not w.table.selectionModel().selectedRows()


# 3 ---------------------------------------------------------------- saved models can be found again
def test_saved_model_gets_its_extension_and_dialogs_remember_the_folder(qtbot, trained, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    w = trained
    folder = tmp_path / "models"
    folder.mkdir()
    seen = {}

    def save_name(parent, title, start, filters):
        seen["save_start"] = start
        return str(folder / "herg_model"), filters

    def open_name(parent, title, start, filters):
        seen["open_start"] = start
        return "", ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_name)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", open_name)
    w.save_model_dialog()
    qtbot.waitUntil(lambda: _idle(w), timeout=30000)
    assert (folder / "herg_model.pt").is_file() and not (folder / "herg_model").exists()
    w.load_model_dialog()
    assert seen["open_start"] == str(folder)  # the Load dialog starts where the model was saved
    w.export_dialog  # noqa: B018
    assert w.files.last_dir() == str(folder)


# 4 ---------------------------------------------------------------- readable heatmaps
def test_heatmap_scale_is_shared_by_default_robust_a_choice_and_pictures_carry_id_and_score(qtbot, trained, tmp_path):
    from core import node_error_norm

    errors = np.array([1.0] * 29 + [56.0])  # one metal atom
    assert node_error_norm(errors)(1.0) >= 0.99  # robust: the ordinary atoms keep a full colour
    assert node_error_norm(errors, "linear")(1.0) < 0.05  # the old linear scale washed them out
    assert node_error_norm(errors, "linear", vmax=10.0)(1.0) == pytest.approx(0.1)  # a fixed scale

    w = trained
    assert w.heatmap.scale.currentData() == "fixed"  # one scale for every molecule (issue: per molecule misled)
    assert w.heatmap.scale_choice() == ("linear", w.heatmap.fixed_vmax) and w.heatmap.fixed_vmax > 0
    w.heatmap.scale.setCurrentIndex(w.heatmap.scale.findData("robust"))
    assert w.heatmap.scale_choice() == ("robust", None)
    i = w.state.selected
    meta = w.graphs.meta[i]
    title = w.heatmap.picture_title()
    assert meta.id in title and f"{w.scores.score[i]:.4g}" in title
    svg = tmp_path / "h.svg"
    w.heatmap.save_to(str(svg))
    assert meta.id in svg.read_text()
    w.heatmap.save_to(str(tmp_path / "h.png"))
    assert (tmp_path / "h.png").stat().st_size > 1000


def test_an_active_smarts_filter_is_highlighted_in_the_drawing(qtbot, trained):
    w = trained
    w.filters.smarts_edit.setText("c1ccccc1")
    qtbot.waitUntil(lambda: w.model_table.visible_count() < 655, timeout=5000)
    w.table.selectRow(0)
    graphs, i, scores, highlight = w.heatmap._current
    assert highlight and len(highlight) >= 6


# 5 ---------------------------------------------------------------- export follows the filters
def test_export_visible_or_all_rows_with_a_flag_column(qtbot, trained, tmp_path):
    w = trained
    w.filters.text_edit.setText("CHEMBL1")
    qtbot.waitUntil(lambda: w.model_table.visible_count() < 655, timeout=5000)
    shown = w.model_table.visible_count()
    out = tmp_path / "visible.csv"
    w.export_report(str(out), visible_only=True)
    qtbot.waitUntil(lambda: not w.runner.busy() and out.exists(), timeout=180000)  # written in the background
    rows = list(csv.DictReader(out.open()))[:-1]  # less the end row
    assert len(rows) == shown and set(r["flagged"] for r in rows) <= {"0", "1"}
    w.export_report(str(tmp_path / "all.csv"))
    qtbot.waitUntil(lambda: not w.runner.busy() and (tmp_path / "all.csv").exists(), timeout=180000)
    rows = list(csv.DictReader((tmp_path / "all.csv").open()))[:-1]
    assert len(rows) == 655 and sum(r["flagged"] == "1" for r in rows) == int(w.state.flagged().sum())


# 6 ---------------------------------------------------------------- both filters apply as you type
def test_smarts_filter_applies_as_you_type_like_the_text_filter(qtbot, trained):
    w = trained
    w.filters.smarts_edit.setText("[Cl]")  # no Enter
    qtbot.waitUntil(lambda: 0 < w.model_table.visible_count() < 655, timeout=5000)
    w.filters.smarts_edit.setText("[[bad")
    qtbot.waitUntil(lambda: w.filters.note.text() == "not a valid SMARTS", timeout=5000)
    assert not w.feedback.last_warning  # said beside the box, no pop-up while typing
    assert w.model_table.visible_count() == 655


# 7 ---------------------------------------------------------------- the normal class is explained
def test_normal_graphs_default_to_all_and_are_explained(qtbot, window, herg_path):
    open_and_wait(qtbot, window, herg_path)
    assert window.form.normal_label() is None and window.form.normal.currentText() == "All graphs (655)"
    assert window.form.normal.itemText(window.form.normal.findData("1")) == "Label 1 (451 graphs)"
    assert "glocalkd train" in window.form.normal_note.text()


# 8 ---------------------------------------------------------------- score another file in a tab beside
def test_score_another_file_opens_a_tab_beside_with_progress(qtbot, trained, smiles_file):
    w = trained
    progress = []
    w.runner.changed.connect(lambda: None)
    w.score_file(str(smiles_file))
    assert w.side.stop_button.isEnabled()  # stoppable
    task = w.runner._running["score_file"][1]
    task.progress.connect(progress.append)
    qtbot.waitUntil(lambda: _idle(w) and bool(w.report_views), timeout=60000)
    view = w.report_views[-1]
    assert len(view.report) == 4 and len(view.report.rejects) == 2
    assert w.results_tabs.count() == 2 and w.results_tabs.currentWidget() is view
    assert len(w.graphs) == 655 and w.model_table.rowCount() == 655  # the open results stay
    assert w.side.progress_label.text().startswith("Scored 4 molecules of mols.smi")  # not "Scoring…" any more
    w.results_tabs.setCurrentIndex(0)


# 9 ---------------------------------------------------------------- map colours, ROC baseline, ties
def test_map_colours_by_rank_and_ties_keep_rank_order(qtbot, window, smiles_file):
    assert list(score_percentiles(np.array([1.0, 1000.0, 2.0, 3.0]))) == pytest.approx([0, 100, 100 / 3, 200 / 3])
    open_and_wait(qtbot, window, smiles_file)
    from core import Scores

    n = len(window.graphs)
    counts = np.array([int(g.num_nodes) for g in window.graphs.graphs])
    ptr = np.concatenate([[0], np.cumsum(counts)])
    scores = Scores.graph_only(np.array([0.5, 0.9, 0.5, 0.5], dtype=np.float32)[:n], ptr)
    m = window.model_table
    m.set_data(window.graphs, scores)
    rank_col, score_col = COLUMNS.index("Rank"), COLUMNS.index("Score")
    for order in (Qt.SortOrder.DescendingOrder, Qt.SortOrder.AscendingOrder):
        m.sort(score_col, order)
        ranks = [int(m.data(m.index(r, rank_col))) for r in range(n)]
        tied = [r for r in ranks if r != 1]
        assert tied == sorted(tied), (order, ranks)


def test_a_loaded_model_keeps_the_size_baseline_in_the_roc(qtbot, trained, tmp_path):
    w = trained
    path = tmp_path / "m.pt"
    w.model.save(path)
    w.load_model(str(path))
    qtbot.waitUntil(lambda: _idle(w) and w.scores is not None, timeout=60000)
    qtbot.waitUntil(lambda: "graph size alone" in w.evaluation.auc_label.text(), timeout=30000)  # computed in a job
    assert w.evaluation.plot.reference_shown


# 10 --------------------------------------------------------------- start-up, file order, wording
def test_before_training_the_table_shows_file_order_without_a_sort_arrow(qtbot, window, herg_path):
    open_and_wait(qtbot, window, herg_path)
    assert window.table.horizontalHeader().sortIndicatorSection() == -1
    assert [window.model_table.graph_index(r) for r in range(20)] == list(range(20))


def test_the_window_shows_before_torch_has_loaded(qtbot, settings):
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    assert w.isVisible() and not w.opening.ready  # torch and RDKit load behind a busy bar, after the window shows
    assert w.opening.warm_timer.isActive() or w.runner.busy("warmup")
    assert w.side.progress.maximum() == 0 and "Loading torch" in w.side.progress_label.text()
    qtbot.waitUntil(lambda: w.opening.ready and _idle(w), timeout=60000)
    assert "torch sees" in w.form.device_note.text()


def test_a_file_without_a_smiles_column_is_explained_in_the_apps_words(qtbot, window, tmp_path, monkeypatch):
    from app.widgets import dialogs as mw  # the column dialog lives there

    table = tmp_path / "odd.csv"
    table.write_text("compound,struct\nA,CCO\n")
    monkeypatch.setattr(mw.ColumnDialog, "exec", lambda self: mw.ColumnDialog.DialogCode.Accepted)
    qtbot.waitUntil(lambda: window.opening.ready and _idle(window), timeout=60000)
    window.open_path(str(table), {"smiles_column": "compound"})
    qtbot.waitUntil(lambda: _idle(window) and bool(window.feedback.last_warning), timeout=20000)
    assert "option" not in window.feedback.last_warning and "--" not in window.feedback.last_warning


# share and explain ------------------------------------------------ scaffold groups
def test_scaffold_groups_count_and_best_score_and_open_their_molecules(qtbot, trained):
    from app.widgets.scaffolds import SCAFFOLD, group_by_scaffold

    groups = group_by_scaffold(["a", "b", "a", ""], np.arange(4), np.array([1.0, 5.0, 3.0, 2.0]),
                               np.array([4, 1, 2, 3]), np.array([False, True, True, False]))
    assert groups[0][:5] == ("b", 1, 1, 5.0, 1) and groups[1][:5] == ("a", 2, 1, 3.0, 2)
    w = trained
    w.filters.group_scaffolds.setChecked(True)
    view = w.scaffold_view
    assert w.table_stack.currentWidget() is view  # at once, saying the scaffolds are being found
    qtbot.waitUntil(lambda: len(view.groups) > 10, timeout=30000)
    assert view.table.rowCount() == len(view.groups)
    assert sum(g[1] for g in view.groups) == 655
    assert view.table.item(0, 0).text() == "1"  # the top-ranked molecule's group first
    row = next(r for r in range(view.table.rowCount()) if view.table.item(r, SCAFFOLD).text() == "c1ccccc1")
    members = int(view.table.item(row, 1).text())
    scaffold_of = w.results._scaffolds[1]
    view.table.cellDoubleClicked.emit(row, 0)
    assert w.table_stack.currentWidget() is w.table and w.filters.smarts_edit.text() == "c1ccccc1"
    qtbot.waitUntil(lambda: not w.smarts.is_matching(), timeout=10000)
    # the group's molecules, not every one that contains a benzene ring (562 rows for 32)
    shown = w.model_table.visible_graphs()
    assert len(shown) == members and all(scaffold_of[i] == "c1ccccc1" for i in shown)
    w.filters.show_substructure("c1ccccc1N")  # typing a substructure leaves the group
    qtbot.waitUntil(lambda: not w.smarts.is_matching(), timeout=10000)
    assert w.model_table.visible_count() != members and w.results._group_open is None


def test_scaffold_groups_follow_the_filters_and_a_map_click_shows_a_hidden_molecule(qtbot, trained):
    """Grouped, the groups kept the rows and flags they had when grouping was switched on; a map
    click on a molecule *Flagged only* hid did nothing."""
    w = trained
    w.filters.group_scaffolds.setChecked(True)
    view = w.scaffold_view
    qtbot.waitUntil(lambda: len(view.groups) > 10, timeout=30000)
    w.filters.flagged_only.setChecked(True)
    qtbot.waitUntil(lambda: sum(g[1] for g in view.groups) == w.model_table.visible_count() < 655, timeout=10000)
    hidden = int(np.nonzero(~w.state.flagged())[0][0])
    w.results.select_graph(hidden)
    assert w.state.selected == hidden and not w.filters.flagged_only.isChecked()


def test_copy_while_grouped_by_scaffold_copies_the_groups_in_sight(qtbot, trained):
    """Grouped, Edit ▸ Copy copied the selected rows of the molecule table hidden behind the
    groups; it now copies the groups selected, and Copy as image draws their scaffolds."""
    from PySide6.QtCore import QItemSelectionModel
    from PySide6.QtWidgets import QApplication

    from app.widgets.scaffolds import HEADERS, SCAFFOLD

    w = trained
    w.table.selectRow(0)  # a molecule row selected behind the groups
    w.filters.group_scaffolds.setChecked(True)
    view = w.scaffold_view
    qtbot.waitUntil(lambda: len(view.groups) > 10, timeout=30000)
    ringed = [r for r in range(view.table.rowCount()) if view.table.item(r, SCAFFOLD).text() != "(acyclic)"][:2]
    view.table.clearSelection()
    for r in ringed:
        view.table.selectionModel().select(view.table.model().index(r, 0), QItemSelectionModel.SelectionFlag.Select
                                           | QItemSelectionModel.SelectionFlag.Rows)
    w.actions_by_name["copy"].trigger()
    lines = QApplication.clipboard().text().splitlines()
    assert lines[0].split("\t") == list(HEADERS)
    assert [line.split("\t") for line in lines[1:]] == [
        [view.table.item(r, c).text() for c in range(len(HEADERS))] for r in ringed]
    QApplication.clipboard().clear()
    w.actions_by_name["copy_image"].trigger()
    qtbot.waitUntil(lambda: not QApplication.clipboard().image().isNull(), timeout=60000)
    assert QApplication.clipboard().image().width() == 260 * len(ringed)
    w.filters.group_scaffolds.setChecked(False)  # the molecule table again: Copy copies its rows
    w.actions_by_name["copy"].trigger()
    assert QApplication.clipboard().text().splitlines()[0].split("\t")[0] != HEADERS[0]


def test_score_another_file_asks_a_tables_columns_as_opening_does(qtbot, trained, tmp_path, monkeypatch):
    """A table whose SMILES column has no common name: Score another file shows the column
    dialog (as File ▸ Open does) and scores the column picked; cancelling it scores nothing."""
    from app.widgets import dialogs

    table = tmp_path / "picked.csv"
    table.write_text("code,structure,activity\nA,CCO,1\nB,c1ccccc1O,0\nC,xx(,1\n")
    asked = []

    def pick(parent, path, warn):
        asked.append(path)
        return None if len(asked) == 1 else {"smiles_column": "structure", "id_column": "code",
                                             "label_column": "activity"}

    monkeypatch.setattr(dialogs, "ask_load_options", pick)
    w = trained
    tabs = len(w.report_views)
    w.score_file(str(table))  # cancelled
    assert asked == [str(table)] and not w.runner.busy("score_file") and len(w.report_views) == tabs
    w.score_file(str(table))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == tabs + 1, timeout=60000)
    report = w.report_views[-1].report
    assert sorted(report.ids) == ["A", "B"] and [r.id for r in report.rejects] == ["C"]


def test_the_column_dialog_asks_when_the_column_named_smiles_holds_none(qtbot, tmp_path, monkeypatch):
    """A table whose 'smiles' column holds ids: opening (or scoring) it asks for the column, saying
    why, instead of rejecting every row and pointing at a dialog that would not open."""
    from PySide6.QtWidgets import QLabel

    from app.widgets import dialogs

    table = tmp_path / "ids.csv"
    table.write_text("smiles,structure\n" + "".join(f"ZINC{k:08d}xx,CCO\n" for k in range(5)))
    shown = []

    def accept(dialog):
        shown.append([label.text() for label in dialog.findChildren(QLabel)])
        dialog.smiles.setCurrentText("structure")
        return dialogs.ColumnDialog.DialogCode.Accepted

    monkeypatch.setattr(dialogs.ColumnDialog, "exec", accept)
    options = dialogs.ask_load_options(None, str(table), lambda *a: pytest.fail(f"warned: {a}"))
    assert options["smiles_column"] == "structure"
    assert any("'smiles' holds no molecule in its first rows" in text for text in shown[0])
    good = tmp_path / "good.csv"
    good.write_text("smiles,id\nCCO,a\n")
    assert dialogs.ask_load_options(None, str(good), lambda *a: None) == {} and len(shown) == 1


def test_the_column_dialog_opens_a_table_whose_columns_share_a_name(qtbot, tmp_path, monkeypatch):
    """A header that named a column twice was refused as the file opened, even when neither column
    was read (``note,note``). Such a file opens as it did; one whose SMILES or id column, found by
    its name, is two columns asks which to read, saying why, and the exact name chosen is read."""
    from PySide6.QtWidgets import QLabel

    from app.widgets import dialogs
    from core import NO_COLUMN, load

    notes = tmp_path / "notes.csv"
    notes.write_text("smiles,id,note,note\nCCO,a,x,y\nCCN,b,x,y\n")
    monkeypatch.setattr(dialogs.ColumnDialog, "exec", lambda dialog: pytest.fail("asked"))
    assert dialogs.ask_load_options(None, str(notes), lambda *a: pytest.fail(f"warned: {a}")) == {}
    shown = []

    def accept(dialog):
        shown.append([label.text() for label in dialog.findChildren(QLabel)])
        dialog.smiles.setCurrentText("smiles")
        return dialogs.ColumnDialog.DialogCode.Accepted

    monkeypatch.setattr(dialogs.ColumnDialog, "exec", accept)
    cased = tmp_path / "cased.csv"
    cased.write_text("SMILES,id,smiles\nCCO,a,OCC\nCCN,b,NCC\n")
    options = dialogs.ask_load_options(None, str(cased), lambda *a: pytest.fail(f"warned: {a}"))
    assert any("More than one column is named 'SMILES': choose the one to read" in text for text in shown[0])
    assert [m.smiles for m in load(cased, **options).meta] == ["OCC", "NCC"]
    ids = tmp_path / "ids.csv"
    ids.write_text("smiles,id,id\nCCO,a,b\nCCN,c,d\n")
    options = dialogs.ask_load_options(None, str(ids), lambda *a: pytest.fail(f"warned: {a}"))
    assert any("More than one column is named 'id'" in text for text in shown[1])
    assert options["id_column"] == NO_COLUMN and len(load(ids, **options)) == 2


def test_stop_right_after_score_another_file_says_nothing_was_scored(qtbot, trained, tmp_path):
    """Stop pressed before the first row of a scored file is scored: a plain note, no tab, no error
    naming the scratch report that was never written; the window is ready for the next job."""
    library = tmp_path / "lib.smi"
    library.write_text("smiles id\n" + "".join(f"{'C' * (1 + i % 9)}O m{i}\n" for i in range(2000)))
    w = trained
    w.feedback.last_warning = ""
    tabs = w.results_tabs.count()
    w.score_file(str(library))
    w.act_stop.trigger()  # Model > Stop (Esc), at once
    qtbot.waitUntil(lambda: _idle(w), timeout=120000)
    assert not w.feedback.last_warning and w.results_tabs.count() == tabs
    assert "Stopped before any row of lib.smi was scored" in w.statusBar().currentMessage()
    assert w.act_score_file.isEnabled() and w.act_train.isEnabled()


# hunt: drops ------------------------------------------------------- several files, a TU collection's files
def _drop(window, paths) -> None:
    """Drop ``paths`` on the window at once, as a file manager does."""
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    window.dropEvent(QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                                Qt.KeyboardModifier.NoModifier))


def test_dropping_a_tu_collections_files_or_opening_one_of_them_opens_the_collection(qtbot, window, tu_folder,
                                                                                      monkeypatch):
    """The files of a TU collection selected and dropped together (or one of them opened with
    File ▸ Open) open the collection, not one text file read as a table of SMILES."""
    from PySide6.QtWidgets import QFileDialog

    from app.widgets import dialogs

    asked = []
    monkeypatch.setattr(dialogs, "ask_load_options",  # a text file asks for its SMILES column (None: cancelled)
                        lambda parent, path, warn: asked.append(path) if path.endswith(".txt") else {})
    w = window
    qtbot.waitUntil(lambda: w.opening.ready and _idle(w), timeout=60000)
    _drop(w, sorted(tu_folder.iterdir()))
    qtbot.waitUntil(lambda: _idle(w) and (w.graphs is not None or bool(asked or w.feedback.last_warning)),
                    timeout=60000)
    assert not asked and not w.feedback.last_warning
    assert w.state.data_path == str(tu_folder) and len(w.graphs) == 12
    w.state.graphs = None
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(tu_folder / "TOY_A.txt"), ""))
    w.act_open.trigger()
    qtbot.waitUntil(lambda: _idle(w) and (w.graphs is not None or bool(asked or w.feedback.last_warning)),
                    timeout=60000)
    assert not asked and w.state.data_path == str(tu_folder) and len(w.graphs) == 12


def test_dropping_several_files_opens_none_and_names_them(qtbot, window, tmp_path):
    """Two unrelated files dropped at once: the window holds one data set, so it opens neither
    (not one chosen by the file manager's order, the other silently dropped) and says which."""
    first, second = tmp_path / "first.smi", tmp_path / "second.smi"
    first.write_text("CCO a\n")
    second.write_text("CCN b\n")
    w = window
    qtbot.waitUntil(lambda: w.opening.ready and _idle(w), timeout=60000)
    _drop(w, [first, second])
    qtbot.waitUntil(lambda: _idle(w) and (w.graphs is not None or bool(w.feedback.last_warning)), timeout=60000)
    assert w.graphs is None
    assert "first.smi" in w.feedback.last_warning and "second.smi" in w.feedback.last_warning


# hunt: exports ----------------------------------------------------- Stop and closing while one is written
@pytest.fixture
def slow_alerts(monkeypatch):
    """Each molecule's structural alerts take 50 ms (a slow machine's 20 ms, and more): herg's CSV
    export takes over 30 s."""
    import time

    import core
    import core.data.alerts

    alerts = core.data.alerts.structural_alerts
    calls = []

    def slow(molecule, *args, **kwargs):
        calls.append(molecule)
        time.sleep(0.05)
        return alerts(molecule, *args, **kwargs)

    # every export finds a molecule's alerts through core.data.alerts (graph_alerts) or core's name
    monkeypatch.setattr(core.data.alerts, "structural_alerts", slow)
    monkeypatch.setattr(core, "structural_alerts", slow)
    return calls


def _started_writing(folder, name: str) -> bool:
    return any(p.name.startswith(f".{name}.") for p in folder.iterdir())


def test_stop_stops_an_export_and_writes_nothing_half(qtbot, trained, tmp_path, slow_alerts):
    """Stop (Esc) while an export is written: it ends at once, no file and no half-written
    temporary file is left, and the window says the export was stopped (no error box)."""
    w = trained
    w.feedback.last_warning = ""
    out = tmp_path / "ranked.csv"
    w.export_report(str(out))
    qtbot.waitUntil(lambda: (slow_alerts and _started_writing(tmp_path, out.name)) or _idle(w), timeout=30000)
    assert not _idle(w), "the export ended before it could be stopped"
    assert w.act_stop.isEnabled() and w.side.stop_button.isEnabled()
    w.act_stop.trigger()
    qtbot.waitUntil(lambda: _idle(w), timeout=10000)
    assert not out.exists() and not _started_writing(tmp_path, out.name)
    assert not w.feedback.last_warning
    assert "Export stopped" in w.statusBar().currentMessage() and "ranked.csv" in w.statusBar().currentMessage()
    assert w.act_export.isEnabled() and not w.act_stop.isEnabled()


def test_closing_the_window_while_an_export_is_written_stops_it_at_once(qtbot, trained, tmp_path, slow_alerts):
    """Quitting while an export is written: the window closes at once (it waited 30 s, then quit
    with the job still writing), and no half-written temporary file is left beside the file."""
    import time

    w = trained
    out = tmp_path / "ranked.csv"
    w.export_report(str(out))
    qtbot.waitUntil(lambda: (slow_alerts and _started_writing(tmp_path, out.name)) or _idle(w), timeout=30000)
    assert not _idle(w), "the export ended before it could be stopped"
    threads = [t for t, *_ in w.runner._running.values()]
    start = time.perf_counter()
    w.close()
    assert time.perf_counter() - start < 10
    assert threads and all(t.isFinished() for t in threads)
    assert not out.exists() and not _started_writing(tmp_path, out.name)


def test_a_second_drop_while_torch_loads_replaces_the_first_and_says_so(qtbot, window, tmp_path):
    """Two files dropped one after the other before the warm-up ends: the newest opens once it
    has, and the window said which one it replaced (the first was dropped without a word)."""
    first, second = tmp_path / "first.smi", tmp_path / "second.smi"
    first.write_text("CCO a\n")
    second.write_text("CCN b\nCCC c\n")
    w = window
    said = []
    w.opening.said.connect(said.append)
    assert not w.opening.ready  # the warm-up starts a moment after the window shows
    _drop(w, [first])
    _drop(w, [second])
    assert "then second.smi (instead of first.smi)" in said[-1]
    qtbot.waitUntil(lambda: _idle(w) and w.graphs is not None, timeout=60000)
    assert w.state.data_path == str(second) and len(w.graphs) == 2


def test_opening_a_file_whose_ids_repeat_keeps_every_row_and_says_which_repeat(qtbot, window, tmp_path):
    """IDs that name several rows loaded with no word; the rows are all kept, and the data summary
    and the status bar now say which IDs repeat and where."""
    path = tmp_path / "repeats.csv"
    path.write_text("smiles,id\nCCO,A\nCCN,B\nCCC,A\nCCCl,C\n")
    w = window
    open_and_wait(qtbot, w, path)
    assert len(w.graphs) == 4
    assert "Repeated IDs: 1 (every row is kept)" in w.side.summary.text()
    assert "1 ID names more than one row: A (lines 2, 4)" in w.statusBar().currentMessage()


def test_opening_a_collection_that_lists_each_edge_once_says_its_edges_were_made_both_ways(qtbot, window, tmp_path):
    """A TU collection whose DS_A.txt lists each edge one way is read as undirected graphs, the
    reverse edges added: the CLI warned of it, but the app said nothing (the warning went to stderr
    from the loading thread). The note the set carries is said in the status bar and the summary."""
    from tests.conftest import ring, write_tu

    folder = write_tu(tmp_path / "ONE", "ONE", [(5, ring(5), 1), (6, ring(6), 0)])
    edges = (folder / "ONE_A.txt").read_text().splitlines()
    (folder / "ONE_A.txt").write_text("".join(f"{e}\n" for e in edges if int(e.split(",")[0]) < int(e.split(",")[1])))
    messages = []
    window.statusBar().messageChanged.connect(messages.append)
    open_and_wait(qtbot, window, folder)
    said = "ONE_A.txt: 11 edges listed one way only (a TU collection lists each edge both ways): read as undirected"
    assert len(window.graphs) == 2 and window.graphs.graphs[0].edge_index.shape == (2, 10)
    assert any("Note: " in m and said in m for m in messages)
    assert any(said in line for line in window.state.summary_lines())
    # scored as another file with a model of the both-ways collection, it is said with the results
    both = write_tu(tmp_path / "both" / "ONE", "ONE", [(5, ring(5), 1), (6, ring(6), 0), (7, ring(7), 1)])
    open_and_wait(qtbot, window, both)
    train_and_wait(qtbot, window, detector="size")
    messages.clear()
    window.score_file(str(folder))
    qtbot.waitUntil(lambda: _idle(window) and (bool(window.report_views) or bool(window.feedback.last_warning)),
                    timeout=60000)
    assert not window.feedback.last_warning
    assert any(m.startswith("Scored 2 ") and said in m for m in messages), messages


def test_a_label_with_too_few_graphs_is_shown_but_cannot_be_chosen_as_known_anomalies(qtbot, window, tmp_path):
    """The form offered "Label 0 (1 graphs)", and the training failed only after it had run."""
    from core import MIN_KNOWN_ANOMALIES

    rows = [f"C{'C' * (i % 7)}O,m{i},1" for i in range(40)] + ["c1ccccc1,a0,0", "c1ccncc1,a1,0"]
    path = tmp_path / "few.csv"
    path.write_text("smiles,id,label\n" + "\n".join(rows) + "\n")
    open_and_wait(qtbot, window, path)
    form = window.form
    form.normal.setCurrentIndex(form.normal.findData("1"))
    index = form.known.findData("0")
    assert index > 0 and form.known.itemText(index) == f"Label 0 (2 graphs: too few, at least {MIN_KNOWN_ANOMALIES})"
    assert not form.known.model().item(index).isEnabled()
    assert form.known_label() is None


def test_opening_graphs_the_open_model_cannot_read_names_them_and_says_what_to_do(qtbot, window, smiles_file,
                                                                                  tu_folder):
    """Score another file named the file and what to do; opening the same graphs said neither."""
    open_and_wait(qtbot, window, smiles_file)
    train_and_wait(qtbot, window, detector="glocalkd")
    window.feedback.last_warning = ""
    window.open_path(str(tu_folder), None)
    qtbot.waitUntil(lambda: _idle(window) and bool(window.feedback.last_warning), timeout=60000)
    said = window.feedback.last_warning
    assert said.startswith("TOY cannot be scored with this model") and "train on this one" in said


def test_stop_is_offered_only_while_a_training_polls_it_and_a_failed_one_keeps_the_loss_curve(qtbot, trained,
                                                                                              monkeypatch):
    """Stop was enabled while a one-step detector fitted (it polls no Stop) and did nothing; and a
    training that failed or stopped before its first epoch blanked the kept model's loss curve."""
    import threading

    from app import tasks
    from core import GLocalKDError

    w = trained
    kept = list(w.state.model.loss_history_)
    assert kept
    gate, real = threading.Event(), tasks.train

    def held(*args, **kwargs):
        gate.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(tasks, "train", held)
    w.form.detector.setCurrentIndex(w.form.detector.findData("size"))
    w.train()
    qtbot.waitUntil(lambda: w.runner.busy("train"), timeout=10000)
    assert not w.act_stop.isEnabled() and not w.side.stop_button.isEnabled()
    gate.set()
    qtbot.waitUntil(lambda: _idle(w) and w.state.model.name == "size", timeout=60000)
    gate.clear()
    w.form.detector.setCurrentIndex(w.form.detector.findData("consensus"))
    w.train()
    qtbot.waitUntil(lambda: w.runner.busy("train"), timeout=10000)
    assert w.act_stop.isEnabled() and w.side.stop_button.isEnabled()  # a training by epochs polls it
    gate.set()
    qtbot.waitUntil(lambda: _idle(w) and w.state.model.name == "consensus", timeout=120000)
    kept = list(w.state.model.loss_history_)
    drawn = []
    w.training.losses_changed.connect(lambda losses: drawn.append(list(losses)))

    def failing(*args, **kwargs):
        raise GLocalKDError("training failed (a test)")

    monkeypatch.setattr(tasks, "train", failing)
    w.train()
    qtbot.waitUntil(lambda: _idle(w) and bool(w.feedback.last_warning), timeout=30000)
    assert drawn[0] == [] and drawn[-1] == kept  # cleared as training began, the kept model's again after


def test_every_training_shows_its_loss_curve_not_only_the_first(qtbot, trained):
    """A training clears the loss curve (its placeholder shows) and then draws its epochs on the
    figure the first training made: the figure was drawn but never shown again, so from the second
    training on the tab said "Train a model to see its loss curve"."""
    w = trained
    plot = w.loss_plot
    assert plot.currentWidget() is not plot.placeholder
    train_and_wait(qtbot, w, epochs=2)
    assert plot.currentWidget() is not plot.placeholder
    assert len(plot.ax.lines[0].get_xdata()) == 2  # the new training's epochs, drawn and in sight


def test_quitting_while_a_training_runs_stops_it_and_asks_about_the_model_it_trained(qtbot, trained, tmp_path,
                                                                                  monkeypatch):
    """Quit asked about the model in the window while a training ran on: Save saved that older model,
    waited for the whole training, then left the new model unsaved and the window open without a
    word. Quitting now asks whether to stop the training; Stop and quit stops it (as Stop does,
    keeping its epochs), asks about the model it trained, saves that one and closes; Cancel touches
    nothing."""
    from app.widgets import dialogs
    from core import load_detector

    w = trained
    w.form.epochs.setValue(100000)
    w.train()
    qtbot.waitUntil(lambda: len(w.training.losses) >= 2, timeout=60000)
    asked, stop_asked = [], []
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda _parent, pending, doing: asked.append(pending) or "save")
    monkeypatch.setattr(w.files, "ask_save", lambda *a, **k: (str(tmp_path / "quit.pt"), ""))
    # first asked whether to stop it: Cancel goes on training, the window open
    monkeypatch.setattr(dialogs, "ask_stop_to_quit", lambda _parent, jobs: stop_asked.append(jobs) or False)
    assert not w.close()
    assert stop_asked == [["train"]] and not asked and w.isVisible() and w.runner.busy("train")
    monkeypatch.setattr(dialogs, "ask_stop_to_quit", lambda _parent, jobs: True)
    assert w.close()
    assert not w.runner.busy("train") and not w.isVisible()
    saved = load_detector(tmp_path / "quit.pt")
    assert saved.stopped_early_ and len(saved.loss_history_) >= 2  # the training stopped by quitting, not the first
    assert any("model" in text for text in asked[0])


def test_busy_offers_stop_only_while_a_job_that_stop_stops_runs(qtbot, trained, monkeypatch):
    """Compute map clicked while a map was computed said "or press Stop", with Stop off (a map runs
    to its end). Each use case refused while busy says it through one controller method now."""
    w = trained
    w.compute_map("predictor", "tsne")
    assert w.runner.busy("map") and not w.act_stop.isEnabled()
    w.compute_map("predictor", "pca")
    assert w.feedback.last_warning.startswith("Wait for the current work to finish before computing the map")
    qtbot.waitUntil(lambda: _idle(w), timeout=120000)
    w.form.epochs.setValue(100000)
    w.train()
    qtbot.waitUntil(lambda: len(w.training.losses) >= 1, timeout=60000)
    w.compute_map("predictor", "pca")
    assert "(or press Stop) before computing the map" in w.feedback.last_warning and w.act_stop.isEnabled()
    w.stop()
    qtbot.waitUntil(lambda: _idle(w), timeout=60000)
    # a one-step fit does not poll Stop: Stop stays off, Busy does not offer it, quitting asks nothing of it
    import time

    from app import tasks
    from app.widgets import dialogs

    fit = tasks.train
    monkeypatch.setattr(tasks, "train", lambda *a, **k: time.sleep(2) or fit(*a, **k))
    w.form.detector.setCurrentIndex(w.form.detector.findData("size"))
    w.train()
    assert w.runner.busy("train") and not w.act_stop.isEnabled() and not w.runner.stoppable()
    w.compute_map("predictor", "pca")
    assert w.feedback.last_warning.startswith("Wait for the current work to finish before computing the map")
    # quitting asks nothing of the fit: it waits for it, then asks about the model it fitted (Cancel: kept)
    monkeypatch.setattr(dialogs, "ask_stop_to_quit", lambda *a: pytest.fail("asked to stop a fit Stop cannot stop"))
    asked = []
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda _parent, pending, doing: asked.append(pending) or "cancel")
    assert not w.close()
    assert _idle(w) and w.isVisible() and w.state.model.name == "size"
    assert any("Graph size" in text for text in asked[0]), asked


def test_the_column_dialogs_none_reads_no_id_and_no_label(qtbot, tmp_path, monkeypatch):
    """Choosing "(none)" for the ID and Label columns gave the loader None, "find one by its name":
    ids came from ``name`` and labels from ``activity``, the columns the user had said were neither."""
    from core import load
    from app.widgets import dialogs

    table = tmp_path / "nolabel.csv"
    table.write_text("SMILES_CANONICAL,activity,name\nCCO,1,a\nCCC,0,b\nCCN,1,c\n")
    offered = []

    def accept(dialog):
        offered.append((dialog.ident.currentText(), dialog.label.currentText()))
        dialog.smiles.setCurrentText("SMILES_CANONICAL")
        dialog.ident.setCurrentText(dialogs.NONE)
        dialog.label.setCurrentText(dialogs.NONE)
        return dialogs.ColumnDialog.DialogCode.Accepted

    monkeypatch.setattr(dialogs.ColumnDialog, "exec", accept)
    options = dialogs.ask_load_options(None, str(table), lambda *a: pytest.fail(f"warned: {a}"))
    assert offered == [("name", "activity")]  # what the dialog found by name, before the user's choice
    graphs = load(table, **options)
    assert [(m.id, m.label) for m in graphs.meta] == [("2", None), ("3", None), ("4", None)]
    assert graphs.label_counts() == {}


def test_a_saved_picture_never_replaces_the_data_gets_its_suffix_and_says_why_it_cannot_be_written(
        qtbot, window, herg_path, tmp_path, monkeypatch):
    """The heatmap's and the map's Save picture wrote straight to the path chosen: over the open
    data file (which every export refuses), without a suffix for a name typed without one, and a
    folder that could not be written ended the click in a traceback, the user told nothing."""
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    import shutil

    w = window
    shutil.copy(herg_path, tmp_path / "herg.tab")  # the picture is offered its name: never the repository's file
    open_and_wait(qtbot, w, tmp_path / "herg.tab")
    train_and_wait(qtbot, w)
    w.compute_map("predictor", "pca")
    qtbot.waitUntil(lambda: w.map_view.map is not None and _idle(w), timeout=60000)
    w.table.selectRow(0)
    qtbot.waitUntil(lambda: w.heatmap.save_button.isEnabled() and w.map_view.save_button.isEnabled(), timeout=30000)
    data = w.state.data_path
    before = open(data, "rb").read()
    warned = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _parent, title, text, *a: warned.append((title, text)))
    for widget in (w.heatmap, w.map_view):
        for chosen in (data, str(tmp_path / "missing" / "p.png"), str(tmp_path / f"{id(widget)}")):
            monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, c=chosen, **k: (c, "PNG image (*.png)"))
            warned.clear()
            widget.save_button.click()
            if chosen == data:  # the picture gets its suffix: written beside the data, never over it
                assert open(data, "rb").read() == before and not warned
                assert open(f"{data}.png", "rb").read(4) == b"\x89PNG"
            elif "missing" in chosen:
                assert warned and chosen in warned[0][1]  # named, not a traceback
            else:
                assert not warned and open(f"{chosen}.png", "rb").read(4) == b"\x89PNG"


def test_the_question_about_a_scored_files_marks_names_its_tab(qtbot, trained, smiles_file):
    """Marks on a scored file's tab made the unsaved work "the results of mols_ranked.csv": the
    report's scratch file, a name the user never saw, while the tab says "mols.smi (scored)"."""
    from tests.app.test_review import _select_in

    w = trained
    w.score_file(str(smiles_file))
    qtbot.waitUntil(lambda: _idle(w) and bool(w.report_views), timeout=60000)
    view = w.report_views[-1]
    title = w.results_tabs.tabText(w.results_tabs.indexOf(view))
    assert title == "mols.smi (scored)"
    _select_in(view, [0])
    w.act_mark_anomaly.trigger()
    qtbot.waitUntil(lambda: _idle(w) and bool(view.book.marks), timeout=60000)
    pending = w._unsaved.pending()
    assert f"the results of {title} and their review marks, not exported" in pending
    assert not any("_ranked" in text or "glocalkd" in text for text in pending), pending
