"""Defects a new user met on the app's actions and tabs, each driven as the user met it
(pytest-qt, offscreen): exports, p- and q-values, the mouse wheel, unsaved work, settings,
heatmap colours, FDR, known anomalies, and the smaller ones."""
from __future__ import annotations

import csv
import dataclasses
import functools
import subprocess
import sys

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, QSettings, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QMessageBox
from rdkit import Chem

from app import tasks
from app.main_window import MainWindow
from app.widgets.report_view import ReportView
from app.widgets.table import COLUMNS
from app.workers import Runner
from core import GLocalKD, GLocalKDError, fit_with_calibration, load, write_report
from tests.app.test_main_window import _idle, open_and_wait

ROOT_SMILES = "smiles id\nCCO a1\nc1ccccc1O a2\nCC(=O)Nc1ccc(O)cc1 a3\nnot_a_smiles bad1\nCCCCN a5\n"


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """A tiny calibrated GLocalKD on hERG, its scores and p-values, and a ranked report it wrote."""
    from tests.conftest import DEMO_DATA

    graphs = load(str(DEMO_DATA / "herg.tab"))
    model = GLocalKD(epochs=2, hidden_dim=16, out_dim=8, batch_size=128)
    fit_with_calibration(model, graphs)
    scores = model.score(graphs)
    p = model.p_values(scores.score)
    folder = tmp_path_factory.mktemp("report")
    smi = folder / "library.smi"
    smi.write_text(ROOT_SMILES)
    lib = load(str(smi))
    report = folder / "library_ranked.csv"
    write_report(report, lib, model.score(lib), p_values=model.p_values(model.score(lib).score))
    return {"graphs": graphs, "model": model, "scores": scores, "p": p, "report": str(report)}


def open_report(qtbot, window, path) -> ReportView:
    qtbot.waitUntil(lambda: window.opening.ready and _idle(window), timeout=60000)
    window.open_path(str(path))
    qtbot.waitUntil(lambda: _idle(window) and bool(window.report_views), timeout=60000)
    return window.report_views[-1]


# 1 ---------------------------------------------------------------- the runner and defaulted parameters
def test_the_runner_never_passes_the_job_into_a_defaulted_parameter(qtbot):
    def job_with_default(value, top_n=25, job=None):
        return value, top_n, job is not None

    runner = Runner()
    results = []
    runner.start("probe", functools.partial(job_with_default, 1), results.append, results.append)
    qtbot.waitUntil(lambda: bool(results) and not runner.busy(), timeout=10000)
    assert results == [(1, 25, True)]


def test_the_html_export_runs_through_the_runner(qtbot, window, calibrated, tmp_path):
    w = window
    qtbot.waitUntil(lambda: w.opening.ready and _idle(w), timeout=60000)
    c = calibrated
    w.state.set_data("herg.tab", c["graphs"], "")
    w.state.set_trained(c["model"], c["scores"], len(c["graphs"]), None, None, None)
    out = tmp_path / "r.html"
    w.export_html(str(out))
    qtbot.waitUntil(lambda: _idle(w), timeout=120000)
    assert out.is_file() and not w.feedback.last_warning


# 2 ---------------------------------------------------------------- p- and q-values everywhere
def test_a_scored_file_tab_shows_its_p_and_q_values(qtbot, window, calibrated):
    view = open_report(qtbot, window, calibrated["report"])
    m = view.model_table
    for name in ("p-value", "q-value"):
        col = COLUMNS.index(name)
        assert not view.table.isColumnHidden(col)
        assert all(m.index(r, col).data() for r in range(m.rowCount())), name


def test_csv_and_sdf_exports_of_the_training_table_carry_p_and_q(calibrated, tmp_path):
    c = calibrated
    flagged = np.zeros(len(c["graphs"]), dtype=bool)
    tasks.export_csv(str(tmp_path / "t.csv"), c["graphs"], c["scores"], None, flagged, c["p"])
    rows = [r for r in csv.DictReader((tmp_path / "t.csv").open()) if r["status"] == "ok"]
    assert len(rows) == 655 and all(r["p_value"] and r["q_value"] for r in rows)
    tasks.export_sdf(str(tmp_path / "t.sdf"), c["graphs"], c["scores"], np.arange(20), flagged, c["p"])
    mols = [m for m in Chem.SDMolSupplier(str(tmp_path / "t.sdf")) if m is not None]
    assert len(mols) == 20 and all(m.HasProp("q_value") for m in mols)


# 3 ---------------------------------------------------------------- export writes the active tab
def test_export_from_a_scored_file_tab_writes_its_rows_and_rejects(qtbot, window, calibrated, tmp_path):
    view = open_report(qtbot, window, calibrated["report"])
    assert window.act_export.isEnabled() and window.act_html.isEnabled()
    table = window.export_table()
    assert table.stem == "library" and table.total == 4
    window.export_report(str(tmp_path / "x.csv"))
    qtbot.waitUntil(lambda: not window.runner.busy() and (tmp_path / "x.csv").exists(), timeout=180000)
    rows = list(csv.DictReader((tmp_path / "x.csv").open()))
    assert [r["id"] for r in rows if r["status"] == "ok"] == list(view.report.ids)
    assert [r["id"] for r in rows if r["status"].startswith("rejected")] == ["bad1"]
    assert all(r["p_value"] and r["q_value"] for r in rows if r["status"] == "ok")
    view.filter.setText("a1")
    view._filter()
    window.export_report(str(tmp_path / "x.sdf"), visible_only=True)
    qtbot.waitUntil(lambda: not window.runner.busy() and (tmp_path / "x.sdf").exists(), timeout=180000)
    mols = [m for m in Chem.SDMolSupplier(str(tmp_path / "x.sdf")) if m is not None]
    assert [m.GetProp("id") for m in mols] == ["a1"] and mols[0].HasProp("q_value")


# 4 ---------------------------------------------------------------- the wheel and unfocused boxes
def _wheel(widget, steps: int = -1) -> None:
    pos = QPointF(widget.rect().center())
    event = QWheelEvent(pos, QPointF(widget.mapToGlobal(pos.toPoint())), QPoint(), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_spin_and_combo_boxes_ignore_the_wheel_unless_focused(qtbot, window):
    w = window
    qtbot.waitUntil(lambda: w.opening.ready, timeout=60000)
    lam, detector = w.form.lam, w.form.detector
    w.form.setEnabled(True)
    lam.setValue(1.0)
    before = detector.currentIndex()
    w.table.setFocus()
    _wheel(lam)
    _wheel(detector)
    assert lam.value() == 1.0 and detector.currentIndex() == before
    assert lam.focusPolicy() == Qt.FocusPolicy.StrongFocus
    lam.setFocus()
    qtbot.waitUntil(lambda: lam.hasFocus(), timeout=2000)
    _wheel(lam)
    assert lam.value() != 1.0  # focused, it takes the wheel: the event itself is a real one


# 5 ---------------------------------------------------------------- unsaved work
def test_quitting_or_opening_over_a_trained_model_asks_first(qtbot, settings, herg_path, tmp_path,
                                                              monkeypatch):
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    open_and_wait(qtbot, w, herg_path)
    w.form.detector.setCurrentIndex(w.form.detector.findData("size"))  # a model in a moment
    w.train()
    qtbot.waitUntil(lambda: _idle(w) and w.scores is not None, timeout=60000)
    asked = []
    answer = [QMessageBox.StandardButton.Cancel]
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: asked.append(a[2]) or answer[0])
    w.close()
    assert w.isVisible() and "Save it before quitting" in asked[-1]
    w.open_path(str(herg_path))  # cancelled: the results stay
    assert len(asked) == 2 and _idle(w) and w.scores is not None
    saved = tmp_path / "size_model.pt"
    monkeypatch.setattr("PySide6.QtWidgets.QFileDialog.getSaveFileName", lambda *a, **k: (str(saved), ""))
    answer[0] = QMessageBox.StandardButton.Save
    w.close()  # Save: the model is saved, then the window closes
    assert saved.is_file() and not w.isVisible()


# 6 ---------------------------------------------------------------- readable columns
def test_score_p_and_q_are_in_view_and_headers_are_not_cut(qtbot, window, calibrated):
    w = window
    w.resize(1280, 800)
    view = open_report(qtbot, w, calibrated["report"])
    for table in (w.table, view.table):
        header = table.horizontalHeader()
        for name in ("Score", "p-value", "q-value", "Graph term", "Node term"):
            col = COLUMNS.index(name)
            assert table.columnWidth(col) >= header.fontMetrics().horizontalAdvance(name) + 16, name
    qtbot.waitUntil(lambda: view.table.viewport().width() > 0, timeout=2000)
    q = COLUMNS.index("q-value")
    right = view.table.columnViewportPosition(q) + view.table.columnWidth(q)
    assert right <= view.table.viewport().width()


# 7 ---------------------------------------------------------------- one colour scale for every molecule
def test_heatmap_colours_are_shared_across_molecules_by_default(qtbot, window, calibrated, tmp_path):
    from core import fixed_error_scale

    w = window
    qtbot.waitUntil(lambda: w.opening.ready and _idle(w), timeout=60000)
    c = calibrated
    w.state.set_data("herg.tab", c["graphs"], "")
    w.state.set_trained(c["model"], c["scores"], len(c["graphs"]), None, None, None)
    assert w.heatmap.scale.currentData() == "fixed"
    assert w.heatmap.scale_choice() == ("linear", pytest.approx(fixed_error_scale(c["scores"].node_errors)))
    view = open_report(qtbot, w, c["report"])  # a scored file's tab: the same scale
    assert view.heatmap.scale_choice() == w.heatmap.scale_choice()
    w.heatmap.scale.setCurrentIndex(w.heatmap.scale.findData("robust"))  # per molecule stays a choice
    assert w.heatmap.scale_choice() == ("robust", None)
    tasks.export_html(str(tmp_path / "r.html"), c["graphs"], c["scores"], c["model"], None, None, c["p"], top_n=3)
    text = (tmp_path / "r.html").read_text()
    assert "colour scale shared by every molecule" in text and text.count("<svg") >= 5  # legend, plots, 3 drawings


# 8 ---------------------------------------------------------------- FDR that flags nothing says why
def test_an_fdr_that_flags_nothing_says_why_and_what_to_do(qtbot, window, calibrated, capsys):
    from core.cli.options import report_flagged

    w = window
    qtbot.waitUntil(lambda: w.opening.ready and _idle(w), timeout=60000)
    c = calibrated
    w.state.set_data("herg.tab", c["graphs"], "")
    w.state.set_trained(c["model"], c["scores"], len(c["graphs"]), None, None, None)
    w.filters.set_rate(0.0011)
    w.filters.flag_rule.setCurrentIndex(w.filters.flag_rule.findData("q"))
    n_cal = len(c["model"].calibration_scores_)
    assert int(w.state.flagged().sum()) == 0
    text = w.side.progress_label.text()
    assert f"1/{n_cal + 1}" in text and "no q-value can reach 0.001" in text  # below the smallest p-value
    assert "Hold out at least 999 calibration graphs" in text
    report_flagged(0, 0.05, 655, n_cal)
    err = capsys.readouterr().err
    assert "ranks 1 to 0" not in err and f"1/{n_cal + 1}" in err and "--calibration" in err


# 9 ---------------------------------------------------------------- known anomalies must be anomalies
def test_weighing_refuses_the_training_file_and_a_file_of_two_labels(calibrated, tmp_path, herg_path):
    from core import make_detector

    consensus = make_detector("consensus")  # refused before any use of the model
    with pytest.raises(GLocalKDError, match="is the data file itself"):
        tasks.weigh(consensus, str(herg_path), {}, load(str(herg_path)), job=tasks.Job())
    two = tmp_path / "two.csv"
    two.write_text("smiles,label\nCCO,1\nCCN,0\nCCC,1\n")
    with pytest.raises(GLocalKDError, match="2 labels"):
        tasks.weigh(consensus, str(two), {}, None, job=tasks.Job())


# 10 --------------------------------------------------------------- every choice survives a relaunch
def test_every_view_choice_survives_a_relaunch(qtbot, tmp_path):
    from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QSpinBox

    path = str(tmp_path / "s.ini")
    first = MainWindow(QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(first)
    kept = first._view_choices()
    # every combo box, spin box and check box of the views is kept, save the few the data decide
    data_decided = {first.evaluation.anomaly_class, first.filters.group_scaffolds,
                    first.query_bar.minimum}  # the smallest similarity goes with its query, which is not kept
    offered = [x for kind in (QComboBox, QSpinBox, QDoubleSpinBox) for x in first.findChildren(kind)
               if not first.form.isAncestorOf(x) and x not in data_decided and x is not first.filters.threshold]
    assert set(offered) <= set(kept.values()), [x for x in offered if x not in kept.values()]
    def choice(widget):
        return widget.currentIndex() if isinstance(widget, QComboBox) else widget.isChecked()

    for widget in kept.values():
        if isinstance(widget, QComboBox):
            widget.setCurrentIndex(widget.count() - 1)
        else:  # a check box (Flagged only): the other way round from its default
            widget.setChecked(not widget.isChecked())
    first.filters.set_rate(0.01)
    choices = {key: choice(w) for key, w in kept.items()}
    first.close()
    second = MainWindow(QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(second)
    assert {key: choice(w) for key, w in second._view_choices().items()} == choices
    assert second.filters.rate() == 0.01 and second.state.flag_rule == second.filters.rule()
    for name in ("a.csv", "b.csv", "c.csv"):
        second.files.add_recent(str(tmp_path / name))
    second.close()
    third = MainWindow(QSettings(path, QSettings.Format.IniFormat))
    qtbot.addWidget(third)
    assert len(third.recent_menu.actions()) == 3


# 11 --------------------------------------------------------------- the smaller ones
def test_smaller_things_read_right(qtbot, window):
    w = window
    assert w.filters.threshold.text() == "95th percentile"
    qtbot.waitUntil(lambda: w.opening.ready and _idle(w), timeout=60000)
    assert w.side.progress.value() < w.side.progress.maximum()  # idle: an empty bar, not a full one
    layout = w.side.widget().layout()
    train_box = layout.itemAt(1).widget()
    order = [train_box.layout().itemAt(k).widget() for k in range(train_box.layout().count())]
    assert order.index(w.side.progress) < order.index(w.form)  # progress above the settings, in sight


def test_name_column_is_hidden_when_it_repeats_the_id(qtbot, window, tmp_path):
    smi = tmp_path / "m.smi"
    smi.write_text("CCO\nCCN\nc1ccccc1\n")  # no names: the loader uses the id
    open_and_wait(qtbot, window, smi)
    assert window.table.isColumnHidden(COLUMNS.index("Name"))


def test_train_on_the_command_line_explains_its_options_and_reports_progress_when_piped(tmp_path, smiles_file):
    help_text = subprocess.run([sys.executable, "-m", "core", "train", "--help"], capture_output=True, text=True,
                               check=True).stdout
    for option, default in (("--epochs", "150"), ("--lr", "0.0001"), ("--batch-size", "300"), ("--layers", "3"),
                            ("--seed", "0")):
        part = help_text[help_text.index(f"\n  {option} "):]
        assert f"(default: {default}" in " ".join(part.split()[:40]), option
    data = tmp_path / "many.smi"
    data.write_text("".join(f"{'C' * (k % 7 + 1)}O m{k}\n" for k in range(40)))
    run = subprocess.run([sys.executable, "-m", "core", "train", str(data), "-o", str(tmp_path / "m.pt"),
                          "--epochs", "4", "--hidden", "16", "--out-dim", "8", "--threads", "1"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "Consensus(" not in run.stderr and "GLocalKD(" not in run.stderr
    assert "epoch 4/4" in run.stderr  # progress, though stderr is a pipe


def test_a_scored_tu_collections_tab_shows_and_copies_the_columns_its_training_tab_does(qtbot, window,
                                                                                        tu_folder):
    """A scored TU collection's tab showed, and Ctrl+C copied, an empty SMILES column; its training
    tab had none: the report tab hid empty Name and Label columns by a rule of its own, without
    SMILES. Both tabs now follow one rule (:func:`app.widgets.table.show_data_columns`)."""
    from app.widgets.table import PROPERTY_HEADINGS

    data = ("Name", "SMILES", "Label", *PROPERTY_HEADINGS)

    def shown(table):
        return [h for h in data if not table.isColumnHidden(COLUMNS.index(h))]

    open_and_wait(qtbot, window, tu_folder)
    window.form.detector.setCurrentIndex(window.form.detector.findData("size"))
    window.train()
    qtbot.waitUntil(lambda: _idle(window) and window.scores is not None, timeout=120000)
    window.screening.score_file(str(tu_folder), {})
    qtbot.waitUntil(lambda: _idle(window) and len(window.report_views) == 1, timeout=120000)
    (view,) = window.report_views
    assert shown(view.table) == shown(window.table) == ["Name", "Label"]  # no SMILES, no properties
    window.results_tabs.setCurrentWidget(view)
    view.table.selectRow(0)
    window.actions_by_name["copy"].trigger()
    header = QApplication.clipboard().text().splitlines()[0].split("\t")
    assert "SMILES" not in header and "Label" in header
    # its rows are drawn from the file they were scored from, as the HTML report draws them: the panel
    # said "Row 1 cannot be drawn: <a scratch file>: row 1 (...): empty SMILES"
    qtbot.waitUntil(lambda: "score" in view.heatmap.title.text() and "Reading" not in view.heatmap.title.text(),
                    timeout=60000)
    assert "cannot be drawn" not in view.heatmap.title.text()
    assert view.heatmap.title.text().startswith(f"<b>{view.report.ids[0]}</b>")
    view.report = dataclasses.replace(view.report, scored_input=None)  # its file not at hand: said, no scratch path
    view.show_row(1)
    qtbot.waitUntil(lambda: "cannot be drawn" in view.heatmap.title.text(), timeout=60000)
    assert "not at hand" in view.heatmap.title.text() and "glocalkd-studio-" not in view.heatmap.title.text()
