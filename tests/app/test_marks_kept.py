"""Review marks are the user's work: opening over them asks first, exporting or a session keeps
them, and a session put back says which marks it could not find again."""
from __future__ import annotations

import shutil

import pytest

from app.widgets import dialogs
from tests.app.test_main_window import _idle, open_and_wait, train_and_wait


@pytest.fixture
def marked(qtbot, window, herg_path, tmp_path):
    """The demo trained, saved as a session (nothing unsaved), then three rows marked."""
    w = window
    data = tmp_path / "herg.tab"
    shutil.copy(herg_path, data)
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w)
    session = tmp_path / "work.glocalkd-session"
    w.sessions.save(str(session))
    qtbot.waitUntil(lambda: _idle(w) and session.exists(), timeout=60000)
    w.reviewing.mark([0, 1, 2], True)
    qtbot.waitUntil(lambda: _idle(w) and len(w.state.review_marks) == 3 and w.state.reranked is not None,
                    timeout=60000)
    return w


def test_opening_another_file_over_review_marks_asks_first(qtbot, marked, tmp_path, monkeypatch):
    """Marks were dropped without a word when another file opened (only the model was asked about)."""
    asked = []
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda _parent, pending, doing: asked.append((pending, doing))
                        or "cancel")
    other = tmp_path / "other.smi"
    other.write_text("CCO a\nCCN b\n")
    marked.open_path(str(other), {})
    qtbot.waitUntil(lambda: _idle(marked), timeout=60000)
    assert asked and "3 review marks on herg.tab" in asked[0][0] and asked[0][1] == "opening another file"
    assert len(marked.state.review_marks) == 3 and marked.state.data_path.endswith("herg.tab")  # cancelled


def test_exporting_the_rows_with_their_marks_settles_them(qtbot, marked, tmp_path):
    marked.export_report(str(tmp_path / "ranked.csv"))
    qtbot.waitUntil(lambda: _idle(marked) and (tmp_path / "ranked.csv").exists(), timeout=60000)
    assert not [text for text in marked._unsaved.pending() if "review mark" in text]


def test_an_export_of_some_rows_settles_no_marks_and_saving_them_writes_every_row(qtbot, marked, tmp_path,
                                                                                monkeypatch):
    """An export of the visible rows only (one unmarked row) settled the marks of the rows it left
    out: opening another file then dropped them without a question. And the question's Save
    offered the visible rows (its default), so one markless row was "saving" the marks."""
    w = marked
    unmarked = w.model_table.graph_index(10)
    assert unmarked not in w.state.review_marks
    w.filters.text_edit.setText(w.state.graphs.meta[unmarked].smiles)
    w.results.apply_text_filter()
    qtbot.waitUntil(lambda: w.model_table.rowCount() >= 1, timeout=10000)
    w.export_report(str(tmp_path / "visible.csv"), visible_only=True)
    qtbot.waitUntil(lambda: _idle(w) and (tmp_path / "visible.csv").exists(), timeout=60000)
    assert [text for text in w._unsaved.pending() if "3 review marks" in text]
    asked_rows = []
    monkeypatch.setattr(dialogs, "ask_rows", lambda *a: asked_rows.append(a) or "visible")
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda _parent, pending, doing: "save")
    monkeypatch.setattr(w.files, "ask_save", lambda *a, **k: (str(tmp_path / "saved.csv"), "CSV report (*.csv)"))
    assert w.guard.confirm(None, "quitting")
    assert not asked_rows  # every row, without asking
    import csv

    with open(tmp_path / "saved.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert sum(row["review"] != "" for row in rows) == 3 and len(rows) >= len(w.state.graphs)


def _session_reopened_after(qtbot, w, data, session, change) -> str:
    """Save ``session``, apply ``change`` to the data file, open the session again; its warning."""
    w.sessions.save(str(session))
    qtbot.waitUntil(lambda: _idle(w) and session.exists(), timeout=60000)
    change(data)
    w.feedback.last_warning = ""
    w.sessions.open(str(session))
    qtbot.waitUntil(lambda: _idle(w) and bool(w.feedback.last_warning), timeout=60000)
    qtbot.wait(300)
    return w.feedback.last_warning


def _drop_line(number: int):
    def change(data):
        lines = data.read_text().splitlines(keepends=True)
        data.write_text("".join(lines[:number - 1] + lines[number:]))
    return change


def test_a_mark_on_a_row_without_an_id_never_lands_on_another_molecule(qtbot, window, herg_path, tmp_path):
    """herg.tab's line 582 has no Drug_ID, so its ID is its line number: with a line above it
    deleted, the mark went back on the molecule now at that line. Marks keep their SMILES too."""
    w = window
    data = tmp_path / "herg.tab"
    shutil.copy(herg_path, data)
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w)
    row = 580
    assert w.state.graphs.meta[row].id == "582"
    marked_smiles = w.state.graphs.meta[row].smiles
    w.reviewing.mark([row, 5], True)
    qtbot.waitUntil(lambda: _idle(w) and len(w.state.review_marks) == 2 and w.state.reranked is not None,
                    timeout=60000)
    said = _session_reopened_after(qtbot, w, data, tmp_path / "s.glocalkd-session", _drop_line(2))
    meta = w.state.graphs.meta
    assert marked_smiles not in [meta[i].smiles for i in w.state.review_marks if meta[i].id == "582"]
    assert {meta[i].id for i in w.state.review_marks} == {"BENPERIDOL"}  # found again by ID and SMILES
    assert "1 of the session's 2 review marks on herg.tab were not put back" in said


def test_a_sessions_marks_wait_for_its_moved_data_even_with_other_data_open(qtbot, window, herg_path, tmp_path):
    """The window still showed the data when the session's own file had moved: its marks went onto
    the stale rows, then vanished when the moved file was opened."""
    w = window
    data = tmp_path / "herg.tab"
    shutil.copy(herg_path, data)
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w)
    w.reviewing.mark([3, 4], True)
    qtbot.waitUntil(lambda: _idle(w) and len(w.state.review_marks) == 2 and w.state.reranked is not None,
                    timeout=60000)
    (tmp_path / "moved").mkdir()
    moved = tmp_path / "moved" / "herg.tab"
    said = _session_reopened_after(qtbot, w, data, tmp_path / "s.glocalkd-session",
                                   lambda d: shutil.move(str(d), moved))
    assert "not there any more" in said and "2 review marks come back" in said
    open_and_wait(qtbot, w, moved)
    qtbot.waitUntil(lambda: _idle(w) and len(w.state.review_marks) == 2, timeout=60000)
    assert {w.state.graphs.meta[i].id for i in w.state.review_marks} == {w.state.graphs.meta[3].id,
                                                                          w.state.graphs.meta[4].id}


def test_an_exported_tab_opens_again_as_a_ranked_report_with_its_marks(qtbot, marked, tmp_path):
    """The app's own export (its flagged column, its review column) was read as new training data:
    the file's scores, ranks and marks silently gave way to the open model's scores."""
    w = marked
    w.reviewing.mark([3], False)
    qtbot.waitUntil(lambda: _idle(w) and len(w.state.review_marks) == 4, timeout=60000)
    exported = tmp_path / "ranked.csv"
    w.export_report(str(exported))
    qtbot.waitUntil(lambda: _idle(w) and exported.exists(), timeout=60000)
    graphs, marks = w.graphs, dict(w.state.review_marks)
    w.open_path(str(exported), None)
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=60000)
    view = w.report_views[0]
    assert w.graphs is graphs  # the training data stays: the export opened in a tab of its own
    assert len(view.report) == len(graphs) and view.report.review is not None
    ids = [m.id for m in graphs.meta]
    assert {str(view.report.ids[i]): mark for i, mark in view.book.marks.items()} == {
        ids[i]: mark for i, mark in marks.items()}


def _rings_collection(folder, sizes):
    """A TU collection of rings of these sizes (graph i has ``sizes[i]`` nodes), labels 0."""
    from tests.conftest import write_tu

    if folder.exists():
        shutil.rmtree(folder)
    return write_tu(folder, "RINGS", [(n, [(j, (j + 1) % n) for j in range(n)], 0) for n in sizes])


def test_a_tu_collections_session_knows_its_graphs_and_its_marks_find_their_own(qtbot, window, tmp_path):
    """A TU folder had no digest, so a session on a collection rebuilt without its first graph said
    nothing, and its marks (by ID: a position) went on the graphs now at those positions; moved,
    they waited and then went on whatever collection was opened next. The session keeps its graphs'
    digest, and each mark the graph's structure."""
    w = window
    sizes = [5 + i for i in range(60)]  # sixty different rings
    data = _rings_collection(tmp_path / "rings", sizes)
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w)
    w.reviewing.mark([0, 1], True)
    qtbot.waitUntil(lambda: _idle(w) and len(w.state.review_marks) == 2, timeout=60000)
    said = _session_reopened_after(qtbot, w, data, tmp_path / "s.glocalkd-session",
                                   lambda d: _rings_collection(d, sizes[1:] + [90]))  # graph 1 gone
    assert "has changed since the session was saved" in said
    nodes = {int(w.state.graphs.graphs[i].num_nodes) for i in w.state.review_marks}
    assert nodes <= {sizes[1]} and "1 of the session's 2 review marks on rings were not put back" in said
    # moved: its marks wait for their own graphs, not another collection at those positions
    _rings_collection(data, sizes)
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w)
    w.reviewing.mark([0, 1], True)
    qtbot.waitUntil(lambda: _idle(w) and len(w.state.review_marks) == 2, timeout=60000)
    said = _session_reopened_after(qtbot, w, data, tmp_path / "t.glocalkd-session",
                                   lambda d: shutil.move(str(d), tmp_path / "moved"))
    assert "2 review marks come back" in said
    open_and_wait(qtbot, w, _rings_collection(tmp_path / "other", [n + 100 for n in sizes]))
    qtbot.waitUntil(lambda: _idle(w) and w.state.scores is not None, timeout=60000)
    assert not w.state.review_marks
    open_and_wait(qtbot, w, tmp_path / "moved")
    qtbot.waitUntil(lambda: _idle(w) and len(w.state.review_marks) == 2, timeout=60000)
    assert sorted(int(w.state.graphs.graphs[i].num_nodes) for i in w.state.review_marks) == sorted(sizes[:2])


def test_a_session_says_a_data_file_changed_after_it_was_read_and_keeps_its_whole_path(qtbot, window, herg_path,
                                                                                       tmp_path, monkeypatch):
    """The digest was of the file's bytes when the session was saved: 100 lines deleted after the
    window read the file went unnoticed. And a data path given relative to the working folder was
    saved as given, so the session opened from elsewhere said the file was gone."""
    w = window
    data = tmp_path / "herg.tab"
    shutil.copy(herg_path, data)
    monkeypatch.chdir(tmp_path)
    open_and_wait(qtbot, w, "herg.tab")
    train_and_wait(qtbot, w, detector="size")
    _drop_line(5)(data)  # after it was read, before the session is saved
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    said = _session_reopened_after(qtbot, w, data, tmp_path / "s.glocalkd-session",
                                   lambda d: monkeypatch.chdir(elsewhere))
    assert "has changed since the session was saved" in said and "not there any more" not in said
    assert w.state.data_path == str(data) and len(w.state.graphs) == 654


@pytest.mark.parametrize("moved_name", ["ranked.csv", "renamed.csv"])
def test_a_moved_reports_marks_wait_for_it_and_come_back_when_it_is_opened(qtbot, window, settings, herg_path,
                                                                            tmp_path, moved_name):
    """A report tab opened from disk, marked, saved in a session: once the report moved, the session
    said only that its tab was not opened, and the report opened where it is now came back without
    its marks (the data file's marks waited for it). Renamed as well, its bytes find it."""
    from app.main_window import MainWindow
    from core.cli.main import main

    library = tmp_path / "library.smi"
    library.write_text("smiles id\nCCO a1\nc1ccccc1O a2\nCC(=O)Nc1ccc(O)cc1 a3\nCCCCN a5\nCCCl a6\n")
    assert main(["train", str(herg_path), "-o", str(tmp_path / "m.pt"), "--epochs", "1", "--hidden", "8",
                 "--out-dim", "4", "--device", "cpu"]) == 0  # the consensus: its marks re-rank
    report = tmp_path / "ranked.csv"
    assert main(["score", str(tmp_path / "m.pt"), str(library), "-o", str(report)]) == 0
    w = window
    qtbot.waitUntil(lambda: w.opening.ready and _idle(w), timeout=60000)
    w.load_model(str(tmp_path / "m.pt"))
    qtbot.waitUntil(lambda: _idle(w) and w.model is not None, timeout=60000)
    w.open_path(str(report))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=60000)
    view = w.report_views[0]
    w.reviewing.mark([0, 2], True, view)
    qtbot.waitUntil(lambda: _idle(w) and len(view.book.marks) == 2, timeout=60000)
    w.reviewing.mark([1], False, view)
    qtbot.waitUntil(lambda: _idle(w) and len(view.book.marks) == 3, timeout=60000)
    marks = {str(view.report.ids[i]): mark for i, mark in view.book.marks.items()}
    w.sessions.save(str(tmp_path / "s.glocalkd-session"))
    qtbot.waitUntil(lambda: _idle(w) and (tmp_path / "s.glocalkd-session").exists(), timeout=60000)
    (tmp_path / "moved").mkdir()
    moved = shutil.move(report, tmp_path / "moved" / moved_name)

    again = MainWindow(settings)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitUntil(lambda: again.opening.ready and _idle(again), timeout=60000)
    again.sessions.open(str(tmp_path / "s.glocalkd-session"))
    qtbot.waitUntil(lambda: _idle(again) and again.model is not None and bool(again.feedback.last_warning),
                    timeout=60000)
    assert not again.report_views
    assert "ranked.csv is not there any more" in again.feedback.last_warning
    assert "Its 3 review marks come back when you open ranked.csv where it is now" in again.feedback.last_warning
    again.open_path(str(moved))
    qtbot.waitUntil(lambda: _idle(again) and len(again.report_views) == 1, timeout=60000)
    back = again.report_views[0]
    qtbot.waitUntil(lambda: _idle(again) and len(back.book.marks) == 3, timeout=60000)
    assert {str(back.report.ids[i]): mark for i, mark in back.book.marks.items()} == marks
    again.runner.stop_all()
    again.structures.shutdown()
