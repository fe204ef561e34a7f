"""What a chemist expects at the desk: sessions that reopen the whole window without training,
standardised molecules chosen on the training form, and score, p, q, flag and heatmap explained
in plain words where they are shown."""
from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox

from app import tasks
from app.main_window import MainWindow
from app.plain_words import COLUMN_TIPS, HEATMAP_LEGEND, TABLE_LEGEND, p_value_text, q_value_text
from app.widgets.table import COLUMNS, sort_values
from tests.app.test_main_window import SMALL, _idle, open_and_wait, train_and_wait

LIBRARY = "smiles id\nCCO a1\nc1ccccc1O a2\nCC(=O)Nc1ccc(O)cc1 a3\nCCCCN a5\n"


def _window(qtbot, settings):
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    return w


def _warnings(w) -> list[str]:
    return [box.text() for box in w.findChildren(QMessageBox, "warning_box") if box.isVisible()]


# ------------------------------------------------------------------------ plain words
def test_a_p_value_reads_as_how_many_normal_compounds_score_this_high():
    assert p_value_text(0.05) == "p = 0.05: about 1 in 20 normal compounds scores this high"
    assert p_value_text(0.001) == "p = 0.001: about 1 in 1,000 normal compounds scores this high"
    assert "most normal compounds" in p_value_text(0.8)
    assert p_value_text(float("nan")) == ""
    assert q_value_text(0.1).startswith("q = 0.1: flag down to here and about 10% of the flagged rows are false")


def test_the_table_explains_its_columns_and_p_values(qtbot, settings, herg_path, no_hang):
    w = _window(qtbot, settings)
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, detector="glocalkd")
    m = w.model_table
    tip = m.headerData(COLUMNS.index("p-value"), Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert tip == COLUMN_TIPS["p-value"] and "1 in 20 normal compounds" in tip
    for name in ("Score", "q-value", "Flag"):
        assert m.headerData(COLUMNS.index(name), Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "false alarms" in COLUMN_TIPS["q-value"]
    p = w.state.p_values()
    top = int(w.scores.ranking()[0])
    cell = m.data(m.index(0, COLUMNS.index("p-value")), Qt.ItemDataRole.ToolTipRole)
    assert cell == p_value_text(float(p[top])) and "normal compounds scores this high" in cell
    legends = [label.text() for label in w.findChildren(QLabel, "table_legend")]
    assert legends == [TABLE_LEGEND] and "1 in 20" in TABLE_LEGEND
    assert w.heatmap.legend.text() == HEATMAP_LEGEND and HEATMAP_LEGEND.startswith("Red atoms differ most")
    w.runner.stop_all()


# ------------------------------------------------------------------------ standardised input
def test_the_form_standardises_and_the_model_decides_when_scoring(herg_path, tmp_path):
    loaded = tasks.load_data(str(herg_path), {}, tasks.Job())
    trained = tasks.train(loaded.graphs, "glocalkd", SMALL, None, tasks.Job(), standardise=True)
    assert trained.model.standardises and trained.graphs.standardised
    salts = [m for m in trained.graphs.meta if "." in m.input_smiles]
    assert salts and all("." not in m.smiles for m in salts)  # counter-ions gone
    scores, _, _, scored, properties = tasks.score(trained.model, loaded.graphs, None, None, tasks.Job())
    assert scored.standardised and len(scores) == len(scored)  # read as the model was trained
    assert "mw" in properties and all(len(v) == len(scored) for v in properties.values())  # their own
    plain = tasks.train(loaded.graphs, "glocalkd", SMALL, None, tasks.Job())
    assert not plain.model.standardises and tasks.score(plain.model, scored, None, None, tasks.Job())[3] is loaded.graphs


def test_the_standardise_box_is_kept_with_the_training_settings(qtbot, settings):
    w = _window(qtbot, settings)
    w.form.standardise.setChecked(True)
    assert w.form.params()["standardise"] is True and "standardise" not in w.form.detector_params()
    w.kept.save()
    again = _window(qtbot, settings)
    assert again.form.standardises()


# ------------------------------------------------------------------------ sessions
def _state_of(w) -> dict:
    st = w.state
    return {"ids": [w.model_table._ids[w.model_table.graph_index(r)] for r in range(w.model_table.rowCount())],
            "scores": None if st.scores is None else np.round(st.scores.score, 5).tolist(),
            "selected": None if st.selected is None else st.graphs.meta[st.selected].id,
            "text": w.filters.text(), "smarts": w.filters.smarts_edit.text(), "rule": w.filters.rule(),
            "threshold": w.filters.threshold.value(), "tabs": [w.results_tabs.tabText(k) for k in
                                                                range(w.results_tabs.count())],
            "current": w.results_tabs.currentIndex(), "epochs": w.form.epochs.value(),
            "flagged_only": w.filters.is_flagged_only(), "ranges": w.filters.ranges(),
            "query": w.query_bar.query(), "minimum": round(w.query_bar.minimum.value(), 3),
            "fingerprint": st.model.fingerprint() if st.model is not None else None, "sort": sort_values(w.table),
            "headings": _visible_headings(w),  # the properties' columns too (a reopened session lost them)
            "reports": [(v.view_values(), [str(v.report.ids[v.model_table.graph_index(r)])
                                           for r in range(v.model_table.rowCount())]) for v in w.report_views]}


def _visible_headings(w) -> list[str]:
    model = w.model_table
    return [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())
            if not w.table.isColumnHidden(c)]


def test_a_mark_whose_verdict_is_not_true_or_false_finds_no_row():
    """marks_on took bool(entry["anomaly"]): "not anomaly" and "false" came back as anomalies."""
    from app.review_book import marks_on

    saved = [{"index": 0, "id": "a1", "smiles": "CCO", "anomaly": "not anomaly"},
             {"index": 1, "id": "a2", "smiles": "CCN", "anomaly": "false"},
             {"index": 2, "id": "a3", "smiles": "CCC", "anomaly": None},
             {"index": 3, "id": "a4", "smiles": "CCCC", "anomaly": False}]
    assert marks_on(["a1", "a2", "a3", "a4"], saved, ["CCO", "CCN", "CCC", "CCCC"]) == {3: False}


def test_review_marks_find_their_graphs_again_by_id():
    from types import SimpleNamespace

    from app.controllers.sessions import _marks_on, _marks_with_ids

    meta = [SimpleNamespace(id=f"m{k}", smiles="C" * (k + 1)) for k in range(5)]
    saved = _marks_with_ids(SimpleNamespace(graphs=SimpleNamespace(meta=meta), review_marks={1: True, 3: False}))
    assert saved == [{"index": 1, "id": "m1", "smiles": "CC", "anomaly": True},
                     {"index": 3, "id": "m3", "smiles": "CCCC", "anomaly": False}]
    moved = [SimpleNamespace(id=i, smiles=t) for i, t in (("m3", "CCCC"), ("m0", "C"), ("m1", "CC"), ("m9", "N"))]
    assert _marks_on(SimpleNamespace(graphs=SimpleNamespace(meta=moved)), saved) == {2: True, 0: False}  # reordered
    changed = [SimpleNamespace(id=i, smiles=t) for i, t in (("m0", "C"), ("m1", "CC"), ("m2", "O"), ("m3", "N"))]
    assert _marks_on(SimpleNamespace(graphs=SimpleNamespace(meta=changed)), saved) == {1: True}  # m3 is another molecule
    old = [{"index": 3, "id": "m3", "anomaly": False}]  # a session saved before marks kept their SMILES
    assert _marks_on(SimpleNamespace(graphs=SimpleNamespace(meta=changed)), old) == {3: False}
    gone = [SimpleNamespace(id="x", smiles="C")]
    assert _marks_on(SimpleNamespace(graphs=SimpleNamespace(meta=gone)), saved) == {}


def test_a_graph_collections_review_marks_come_back_in_another_run_of_the_app(aids_zip):
    """A TU graph has no SMILES: a session knows its marked graphs by their structure's key. The
    key was salted per process, so every mark was lost once the session was opened in another
    run of the app, while a test that saved and reopened in one process passed."""
    import json
    import os
    import subprocess
    import sys
    from types import SimpleNamespace

    from app.controllers.sessions import _marks_on, _marks_with_ids
    from core import load

    graphs = load(aids_zip).subset(range(30))
    saved = _marks_with_ids(SimpleNamespace(graphs=graphs, review_marks={4: True, 17: False}))
    assert all(entry["smiles"].startswith("graph:") for entry in saved)
    script = ("import json, sys\nfrom types import SimpleNamespace\nfrom app.controllers.sessions import _marks_on\n"
              f"from core import load\ngraphs = load({str(aids_zip)!r}).subset(range(30))\n"
              "marks = _marks_on(SimpleNamespace(graphs=graphs), json.loads(sys.stdin.read()))\n"
              "print(json.dumps(sorted(marks.items())))")
    for salt in ("1", "2"):  # two other runs, each hashing bytes its own way
        run = subprocess.run([sys.executable, "-c", script], input=json.dumps(saved), capture_output=True, text=True,
                             env={**os.environ, "PYTHONHASHSEED": salt}, cwd=Path(__file__).parents[2], check=True)
        assert json.loads(run.stdout) == [[4, True], [17, False]]
    assert _marks_on(SimpleNamespace(graphs=graphs), saved) == {4: True, 17: False}


def test_a_session_reopens_the_whole_window_without_training(qtbot, settings, tmp_path, herg_path,
                                                             monkeypatch, no_hang):
    data = tmp_path / "herg.tab"
    shutil.copy(herg_path, data)  # the demo folder's files are never recent; a copy stands for a user's file
    library = tmp_path / "library.smi"
    library.write_text(LIBRARY)
    w = _window(qtbot, settings)
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w, detector="glocalkd")
    w.score_file(str(library))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=120000)
    assert w._unsaved.pending()  # a model and a scored file that exist only in the window
    w.results_tabs.setCurrentIndex(0)
    w.filters.flag_rule.setCurrentIndex(w.filters.flag_rule.findData("p"))
    w.filters.text_edit.setText("C")
    w.results.apply_text_filter()
    first = next(iter(w.filters.range_filter.edits))
    w.filters.range_filter.set_ranges({first: (None, 1e9)})
    w.filters.flagged_only.setChecked(True)
    w.filters.flagged_only.setChecked(False)  # toggled back: the saved value is read, not a default
    w.query_bar.minimum.setValue(0.05)
    w.query_bar.set_query("c1ccccc1")
    qtbot.waitUntil(lambda: "Similarity" in _visible_headings(w), timeout=60000)
    w.table.sortByColumn(COLUMNS.index("MW"), Qt.SortOrder.DescendingOrder)  # sorted by another column than the query's
    w.results.select_graph(int(w.model_table.graph_index(3)))  # a shown row (the filters stay as they are)
    view = w.report_views[0]  # the scored file's tab: filtered, a range, sorted (a session dropped all three)
    view.filter.setText("a")
    view.range_filter.edits["Heavy atoms"][0].setText("6")
    view._filter()
    view.table.sortByColumn(COLUMNS.index("cLogP"), Qt.SortOrder.AscendingOrder)
    before = _state_of(w)
    assert before["ranges"] == {first: (None, 1e9)} and before["query"] == "c1ccccc1"
    assert before["sort"] == ["MW", "descending"] and before["reports"][0][0]["sort"] == ["cLogP", "ascending"]
    assert len(before["reports"][0][1]) == 2  # phenol (7 heavy atoms) and paracetamol (11)
    assert before["selected"] is not None and before["text"] == "C" and before["rule"] == "p"
    path = str(tmp_path / "work")
    w.sessions.save(path)
    qtbot.waitUntil(lambda: _idle(w), timeout=60000)
    assert (tmp_path / "work.glocalkd-session").is_file() and not w._unsaved.pending()  # saved counts as saved
    assert {"session.json", "model.pt", "reports/0.csv"} <= set(zipfile.ZipFile(tmp_path / "work.glocalkd-session")
                                                                 .namelist())
    w.runner.stop_all()

    again = _window(qtbot, settings)
    qtbot.waitUntil(lambda: again.opening.ready, timeout=60000)
    monkeypatch.setattr(tasks, "train", lambda *a, **k: pytest.fail("reopening a session must not train"))
    assert str(tmp_path / "work.glocalkd-session") == again.sessions.recent()[0]
    recent = again.sessions_menu.actions()
    assert recent and recent[0].text().endswith("work.glocalkd-session")
    recent[0].trigger()
    qtbot.waitUntil(lambda: _idle(again) and again.scores is not None and len(again.report_views) == 1,
                    timeout=120000)
    qtbot.waitUntil(lambda: "Similarity" in _visible_headings(again), timeout=60000)
    after = _state_of(again)
    assert after == before
    assert len(again.report_views[0].report) == 4 and not again._unsaved.pending()
    again.runner.stop_all()


@pytest.mark.parametrize("scaffold", ["c1ccccc1", ""])
def test_a_session_keeps_the_scaffold_group_open(qtbot, settings, tmp_path, herg_path, no_hang, scaffold):
    """Saved with benzene's group open (32 of 655 rows), a session reopened with a substructure
    filter on benzene (562 rows); the acyclic molecules' group (18 rows) came back as all 655."""
    data = tmp_path / "herg.tab"
    shutil.copy(herg_path, data)
    w = _window(qtbot, settings)
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w, detector="size")
    from app.widgets.scaffolds import SCAFFOLD

    w.filters.group_scaffolds.setChecked(True)
    view = w.scaffold_view
    qtbot.waitUntil(lambda: len(view.groups) > 10, timeout=60000)
    row = next(r for r in range(view.table.rowCount()) if view.table.item(r, SCAFFOLD).data(Qt.ItemDataRole.UserRole)
               == scaffold)
    view.table.cellDoubleClicked.emit(row, 0)  # the group opened, as a double-click does
    qtbot.waitUntil(lambda: _idle(w) and not w.smarts.is_matching(), timeout=30000)
    shown = sorted(w.model_table.visible_graphs())
    count = w.filters.count.text()
    assert 0 < len(shown) < 100 and f"the group of {scaffold or 'acyclic molecules'}" in count
    w.sessions.save(str(tmp_path / "g.glocalkd-session"))
    qtbot.waitUntil(lambda: _idle(w) and (tmp_path / "g.glocalkd-session").is_file(), timeout=60000)
    w.runner.stop_all()

    again = _window(qtbot, settings)
    qtbot.waitUntil(lambda: again.opening.ready and _idle(again), timeout=60000)
    again.open_session(str(tmp_path / "g.glocalkd-session"))
    qtbot.waitUntil(lambda: _idle(again) and again.scores is not None and not again.smarts.is_matching()
                    and "opening the group" not in again.filters.count.text(), timeout=120000)
    assert sorted(again.model_table.visible_graphs()) == shown
    assert again.filters.count.text() == count and not again.filters.is_grouped() and not _warnings(again)
    again.runner.stop_all()


def test_a_session_without_a_similarity_query_clears_the_windows_query(qtbot, settings, tmp_path,
                                                                       herg_path, no_hang):
    """A session puts back what it saved: no query saved is no query (the window's own query used to
    stay, over the session's rows)."""
    data = tmp_path / "herg.tab"
    shutil.copy(herg_path, data)
    w = _window(qtbot, settings)
    open_and_wait(qtbot, w, data)
    w.sessions.save(str(tmp_path / "plain"))
    qtbot.waitUntil(lambda: _idle(w) and (tmp_path / "plain.glocalkd-session").is_file(), timeout=60000)
    w.query_bar.set_query("c1ccccc1")
    qtbot.waitUntil(lambda: "Similarity" in _visible_headings(w), timeout=60000)
    w.open_session(str(tmp_path / "plain.glocalkd-session"))
    qtbot.waitUntil(lambda: _idle(w) and w.graphs is not None and w.query_bar.query() == "", timeout=60000)
    qtbot.waitUntil(lambda: "Similarity" not in _visible_headings(w), timeout=60000)
    assert w.state.data_options == {} and w.state.data_path == str(data)
    w.runner.stop_all()


def test_a_session_whose_data_file_moved_says_so_and_keeps_the_model(qtbot, settings, tmp_path,
                                                                      herg_path, no_hang):
    data = tmp_path / "herg.tab"
    shutil.copy(herg_path, data)
    w = _window(qtbot, settings)
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w, detector="glocalkd")
    w.sessions.save(str(tmp_path / "s.glocalkd-session"))
    qtbot.waitUntil(lambda: _idle(w), timeout=60000)
    fingerprint = w.model.fingerprint()
    w.runner.stop_all()
    data.unlink()
    again = _window(qtbot, settings)
    qtbot.waitUntil(lambda: again.opening.ready and _idle(again), timeout=60000)  # as a user sees: no busy bar
    again.open_session(str(tmp_path / "s.glocalkd-session"))
    qtbot.waitUntil(lambda: _idle(again) and again.model is not None, timeout=60000)
    assert again.model.fingerprint() == fingerprint and again.graphs is None
    assert any(str(data) in text and "File ▸ Open" in text for text in _warnings(again))
    again.runner.stop_all()


def test_a_file_that_is_not_a_session_is_refused_by_name(qtbot, settings, tmp_path, no_hang):
    bad = tmp_path / "x.glocalkd-session"
    bad.write_text("not a zip")
    w = _window(qtbot, settings)
    qtbot.waitUntil(lambda: w.opening.ready, timeout=60000)
    w.open_session(str(bad))
    qtbot.waitUntil(lambda: _idle(w) and bool(_warnings(w)), timeout=60000)
    assert any(str(bad) in text and "not a GLocalKD Studio session file" in text for text in _warnings(w))


def test_exports_of_standardised_molecules_keep_both_smiles(herg_path, tmp_path):
    import csv

    loaded = tasks.load_data(str(herg_path), {}, tasks.Job())
    trained = tasks.train(loaded.graphs, "glocalkd", SMALL, None, tasks.Job(), standardise=True)
    graphs, scores = trained.graphs, trained.scores
    flagged = np.zeros(len(graphs), dtype=bool)
    tasks.export_csv(str(tmp_path / "t.csv"), graphs, scores, None, flagged)
    with open(tmp_path / "t.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert "standardised_smiles" in rows[0] and list(rows[0])[-1] == "flagged" and all(None not in r for r in rows)
    salt = next(r for r in rows if "." in r["smiles"])
    assert "." not in salt["standardised_smiles"]


def test_a_session_whose_data_file_changed_is_read_as_it_is_now_and_says_so(tmp_path):
    from app.session_file import read_session, write_session
    from core import GLocalKD, graphs_digest, load

    data = tmp_path / "lib.smi"
    data.write_text(LIBRARY)
    model = GLocalKD(epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(load(data))
    doc = {"data": {"path": str(data), "options": {}, "graphs": graphs_digest(load(data))}, "training": {},
           "form": {}}
    write_session(str(tmp_path / "s.glocalkd-session"), doc, model, [])
    same = read_session(str(tmp_path / "s.glocalkd-session"), str(tmp_path), "cpu")
    assert same.problems == [] and same.model.fingerprint() == model.fingerprint()
    assert len(same.scored[0]) == 4
    data.write_text(LIBRARY + "CCCCCCO a6\n")
    changed = read_session(str(tmp_path / "s.glocalkd-session"), str(tmp_path), "cpu")
    assert len(changed.problems) == 1 and "has changed since the session was saved" in changed.problems[0]
    assert len(changed.scored[0]) == 5  # read as it is now, with the session's model


def test_a_session_whose_report_file_is_no_longer_a_report_opens_without_that_tab_and_says_so(tmp_path):
    """A report tab's file replaced by another kind of file failed the whole session ("not a ranked
    report"): the model, the data and the other tabs were lost with it."""
    from app.session_file import read_session, write_session
    from core import GLocalKD, load
    from core.cli.main import main

    data = tmp_path / "lib.smi"
    data.write_text(LIBRARY)
    model = GLocalKD(epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(load(data))
    model.save(tmp_path / "m.pt")
    report = tmp_path / "rep.csv"
    assert main(["score", str(tmp_path / "m.pt"), str(data), "-o", str(report)]) == 0
    doc = {"data": {"path": str(data), "options": {}}, "training": {}, "form": {}}
    write_session(str(tmp_path / "s.glocalkd-session"), doc, model, [{"path": str(report), "title": "rep"}])
    assert len(read_session(str(tmp_path / "s.glocalkd-session"), str(tmp_path), "cpu").reports) == 1
    report.write_text("smiles\nCCO\n")
    now = read_session(str(tmp_path / "s.glocalkd-session"), str(tmp_path), "cpu")
    assert now.reports == [] and len(now.problems) == 1 and str(report) in now.problems[0]
    assert "not a ranked report" in now.problems[0] and "could not be read now" in now.problems[0]
    assert now.model.fingerprint() == model.fingerprint() and len(now.scored[0]) == 4


def test_a_moved_data_files_review_marks_come_back_when_it_is_opened_where_it_is_now(qtbot, settings, tmp_path,
                                                                                     herg_path, no_hang):
    """A session whose data file moved says its marks wait for the file; opening the file where it
    is now (as the message says) scores it with the session's model and puts the marks back on the
    same molecules. Another file gets none of them."""
    from tests.app.test_review import TINY, _select_in

    data = tmp_path / "herg.tab"
    shutil.copy(herg_path, data)
    w = _window(qtbot, settings)
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w, **TINY)
    chosen = _select_in(w, [0, 2, 4])
    w.act_mark_anomaly.trigger()
    qtbot.waitUntil(lambda: _idle(w) and len(w.state.review_marks) == 3 and w.state.reranked is not None,
                    timeout=60000)
    marked = {w.graphs.meta[i].id for i in chosen}
    w.sessions.save(str(tmp_path / "s.glocalkd-session"))
    qtbot.waitUntil(lambda: _idle(w), timeout=60000)
    w.runner.stop_all()
    (tmp_path / "moved").mkdir()
    moved = shutil.move(data, tmp_path / "moved" / "herg.tab")
    other = tmp_path / "other.smi"
    other.write_text("smiles id\nCCO a1\nc1ccccc1O a2\n")
    for opened, back in ((other, set()), (moved, marked)):  # another file first, then the moved one
        again = _window(qtbot, settings)
        _reopen_then_open(qtbot, again, tmp_path / "s.glocalkd-session", opened, bool(back))
        assert {again.graphs.meta[i].id for i in again.state.review_marks} == back
        if opened == other:  # the marks still wait for the moved file (they were dropped for good)
            again.open_path(str(moved))
            qtbot.waitUntil(lambda w=again: _idle(w) and w.state.reranked is not None, timeout=120000)
            assert {again.graphs.meta[i].id for i in again.state.review_marks} == marked
        again.runner.stop_all()


def _reopen_then_open(qtbot, w, session, data, marks_back: bool) -> None:
    """Open ``session`` (its data file gone: the message says its 3 marks wait), then open ``data``."""
    qtbot.waitUntil(lambda: w.opening.ready and _idle(w), timeout=60000)
    w.open_session(str(session))
    qtbot.waitUntil(lambda: _idle(w) and w.model is not None, timeout=60000)
    assert w.graphs is None and not w.state.review_marks
    assert any("3 review marks come back when you open herg.tab" in text for text in _warnings(w))
    w.open_path(str(data))
    qtbot.waitUntil(lambda: _idle(w) and w.scores is not None and (w.state.reranked is not None or not marks_back),
                    timeout=120000)


@pytest.mark.parametrize("damage, field", [({"data": {"options": {}}}, "data"), ({"data": "herg.tab"}, "data"),
                                           ({"reports": [{"title": "x"}]}, "a report entry"),
                                           ({"current_tab": "1"}, "current_tab"), ({"review": {"0": True}}, "review"),
                                           # hand-edited verdicts came back as anomalies ("not anomaly", "false")
                                           ({"review": [{"index": 0, "id": "a", "anomaly": "not anomaly"}]}, "review"),
                                           ({"review": [{"index": 0, "id": "a", "anomaly": None}]}, "review"),
                                           ({"reports": [{"path": "r.csv", "review": [{"id": "a", "anomaly": "false"}]}]},
                                            "a report entry's review"),
                                           ({"filters": {"sort": "MW"}}, "filters")])
def test_a_damaged_session_document_is_refused_as_damaged_by_the_field(tmp_path, damage, field):
    """A session.json that parses but holds a field of the wrong kind is refused before anything is
    restored, as a truncated file is, naming the field; never a KeyError or a half-restored window."""
    import json

    from app import session_file
    from core import GLocalKDError

    path = tmp_path / "bad.glocalkd-session"
    doc = {"format": session_file.FORMAT, "version": session_file.VERSION, "model": None, **damage}
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("session.json", json.dumps(doc))
    with pytest.raises(GLocalKDError, match=f"{path}: not a GLocalKD Studio session file, or damaged "
                                            f"\\({field} is not what a session holds\\)"):
        session_file.read_session(str(path), str(tmp_path), "cpu")


def test_a_session_puts_back_the_known_anomalies_label_in_the_form(qtbot, settings, herg_path, tmp_path):
    """Reopened, a session put the normal label back in the training form but not the known
    anomalies' label: training again from it dropped the known anomalies without a word."""
    w = _window(qtbot, settings)
    qtbot.waitUntil(lambda: w.opening.ready, timeout=60000)
    open_and_wait(qtbot, w, herg_path)
    w.form.normal.setCurrentIndex(w.form.normal.findData("1"))
    w.form.known.setCurrentIndex(w.form.known.findData("0"))
    train_and_wait(qtbot, w, normal="1")
    assert w.state.known_label == "0"
    w.sessions.save(str(tmp_path / "k.glocalkd-session"))
    qtbot.waitUntil(lambda: _idle(w), timeout=60000)
    again = _window(qtbot, settings)
    qtbot.waitUntil(lambda: again.opening.ready, timeout=60000)
    again.open_session(str(tmp_path / "k.glocalkd-session"))
    qtbot.waitUntil(lambda: _idle(again) and again.scores is not None, timeout=120000)
    assert again.form.normal_label() == "1" and again.form.known_label() == "0"


def test_a_window_of_report_tabs_only_saves_its_session_and_reopens_it(qtbot, window, tmp_path, monkeypatch):
    """File ▸ Save session ("Save everything in the window") was off while only report tabs were
    open (no data, no model): it is on as soon as any tab is, and the session brings the tabs back
    with their filters."""
    from core import REPORT_COLUMNS

    report = tmp_path / "ranked.csv"
    rows = [("a1", "c1ccccc1CCO", 0.9), ("b1", "CCCCCC", 0.8), ("a2", "c1ccccc1CCN", 0.7), ("b2", "OC(=O)CC", 0.6)]
    report.write_text(",".join(REPORT_COLUMNS) + "\n" + "".join(
        f"{k},{ident},,{smiles},{score},,,3,,,ok,,\n" for k, (ident, smiles, score) in enumerate(rows, start=1)))
    save = window.actions_by_name["save_session"]
    assert not save.isEnabled()  # nothing open: nothing to save
    window.open_path(str(report))
    qtbot.waitUntil(lambda: _idle(window) and len(window.report_views) == 1, timeout=60000)
    assert window.graphs is None and window.model is None
    assert save.isEnabled()
    window.report_views[0].filter.setText("a")
    window.report_views[0]._filter()
    assert window.report_views[0].count.text() == "2 of 4 shown"
    session = tmp_path / "reports.glocalkd-session"
    monkeypatch.setattr(window.files, "ask_save", lambda *a, **k: (str(session), ""))
    save.trigger()  # as the user's click
    qtbot.waitUntil(lambda: _idle(window) and session.is_file(), timeout=60000)

    window.report_tabs.close_all()
    assert not save.isEnabled()
    window.open_session(str(session))
    qtbot.waitUntil(lambda: _idle(window) and len(window.report_views) == 1, timeout=60000)
    (view,) = window.report_views
    assert view.filter.text() == "a" and view.count.text() == "2 of 4 shown"
    assert list(view.report.ids) == [ident for ident, _s, _v in rows]
