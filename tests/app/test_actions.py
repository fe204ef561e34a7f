"""Every action of the menus and the toolbar, triggered as a user triggers it (``action.trigger()``),
on the training data's tab after a short training and again on a scored file's tab.

File dialogs are answered with temporary paths and message boxes are answered; no exception may
escape (pytest-qt fails a test on an exception in a slot; ``sys.excepthook`` is watched too), and
each export's file must read back with the rows and columns of the tab it came from. The actions
are found at run time: an action without a case here fails the test.
"""
from __future__ import annotations

import csv
import sys
import zipfile

import pytest
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox
from rdkit import Chem

from app.main_window import MainWindow
from app.widgets.report_view import ReportView
from app.widgets.table import COLUMNS
from core import PROPERTY_COLUMNS, REPORT_COLUMNS, merge_reports, read_report, save_detector, structural_alerts
from tests.app.test_main_window import _idle, open_and_wait, train_and_wait

TINY = {"epochs": 2, "hidden_dim": 16, "out_dim": 8}


def menu_and_toolbar_actions(window: MainWindow) -> list[tuple[str, QAction]]:
    """(menu path, action) of every action a user can trigger: the menus' items (submenus
    included) and the toolbar's buttons."""
    found: list[tuple[str, QAction]] = []

    def walk(menu, prefix: str) -> None:
        for action in menu.actions():
            if action.isSeparator():
                continue
            name = f"{prefix}/{action.text().replace('&', '')}"
            if action.menu() is not None:
                walk(action.menu(), name)
            else:
                found.append((name, action))

    for top in window.menuBar().actions():
        walk(top.menu(), top.text().replace("&", ""))
    from PySide6.QtWidgets import QToolBar

    for bar in window.findChildren(QToolBar):
        for action in bar.actions():  # a toolbar button of its own, or a menu's action again
            if not action.isSeparator() and all(action is not a for _, a in found):
                found.append((f"toolbar/{action.text().replace('&', '')}", action))
    return found


def case_of(name: str) -> str:
    """The case an action's menu path falls under: recent files are paths, demo items are data sets."""
    if name.startswith("File/Open recent/"):
        return "File/Open recent/*"
    if name.startswith("File/Open demo data/"):
        return "File/Open demo data/*"
    if name.startswith("File/Recent sessions/"):
        return "File/Recent sessions/*"
    return name.removeprefix("toolbar/")


class Answers:
    """The answers a user gives to the dialogs: the next file to open or write."""

    def __init__(self, monkeypatch, tmp_path):
        self.open_path = ""
        self.save_path = ""
        self.questions: list[str] = []
        self.hook_errors: list = []
        monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (self.open_path, ""))
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (self.save_path, ""))
        monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: "")
        monkeypatch.setattr(QMessageBox, "about", lambda *a, **k: self.questions.append("about"))
        monkeypatch.setattr(QMessageBox, "question", self._question)
        monkeypatch.setattr(sys, "excepthook", lambda *exc: self.hook_errors.append(exc))
        self.answer = QMessageBox.StandardButton.No  # "export all rows"; "discard" is asked for by name

    def _question(self, parent, title, text, *args, **kwargs):
        self.questions.append(title)
        if title == "Unsaved work":
            return QMessageBox.StandardButton.Discard if self.answer != "cancel" else QMessageBox.StandardButton.Cancel
        return self.answer


def check_csv(path, tab_rows: int, with_flag: bool, marks: dict | None = None, model: str = "",
              views: tuple[str, ...] = ()) -> list[dict]:
    """The checks of an exported CSV; ``model``: the fingerprint of the model that scored the tab,
    ``views``: the views whose scores its report holds. The file is a whole ranked report: it reads
    back intact, names that model, keeps the views' scores and merges as a shard (the exports had
    no end row, so a merge refused them as cut short)."""
    back = read_report(path)
    assert back.intact and back.model_fingerprint == model and tuple(back.view_scores) == views
    if not marks:  # rows in the review's order are not in the scores' order, which a merge requires
        assert merge_reports([path], f"{path}.merged.csv") == tab_rows + len(back.rejects)
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["status"] == "ok"]
        fh.seek(0)
        header = next(csv.reader(fh))
    assert header[:len(REPORT_COLUMNS)] == list(REPORT_COLUMNS) and ("flagged" in header) == with_flag
    assert header[len(REPORT_COLUMNS):len(REPORT_COLUMNS) + len(PROPERTY_COLUMNS) + 1] == [*PROPERTY_COLUMNS, "alerts"]
    assert len(rows) == tab_rows
    assert ("review" in header) == bool(marks)  # the analyst's marks, when there are any
    if marks:
        assert sorted(r["review"] for r in rows if r["review"]) == sorted(
            "anomaly" if a else "not anomaly" for a in marks.values())
    assert all(r["score"] and r["p_value"] and r["q_value"] for r in rows)  # what the table shows
    assert all(r["mw"] and r["heavy_atoms"] for r in rows)  # both tabs hold molecules
    return rows


def check_sdf(path, tab_rows: int, marks: dict | None = None) -> None:
    records = [m for m in Chem.SDMolSupplier(str(path)) if m is not None]
    mols = [m for m in records if m.GetNumAtoms()]
    assert len(mols) == tab_rows
    assert all(m.GetProp("status").startswith(("rejected: ", "not scored: ")) for m in records if not m.GetNumAtoms())
    assert sorted(m.GetProp("review") for m in mols if m.HasProp("review") and m.GetProp("review")) == sorted(
        "anomaly" if a else "not anomaly" for a in (marks or {}).values())  # the analyst's marks, if any
    assert all(m.HasProp("score") and m.HasProp("p_value") and m.HasProp("q_value") for m in mols)
    assert all(m.HasProp("mw") and m.HasProp("clogp") and m.HasProp("formal_charge") for m in mols)


def run_every_action(qtbot, window: MainWindow, answers: Answers, tmp_path, tag: str, files: dict) -> None:
    """Trigger every action once on the window's active tab (exports first, quitting last)."""
    w = window
    tab = {"start": None}  # the tab under test (opening a session puts new tabs in place of the open ones)

    def table_rows() -> int:
        view = w.results_tabs.currentWidget()
        model = view.model_table if isinstance(view, ReportView) else w.model_table
        return model.rowCount()

    def export(suffix):
        def run(action):
            answers.save_path = str(tmp_path / f"{tag}_export{suffix}")
            view = w.results_tabs.currentWidget()
            rows, on_report = table_rows(), isinstance(view, ReportView)
            action.trigger()
            qtbot.waitUntil(lambda: _idle(w), timeout=180000)  # written in the background (alerts are searched)
            marks = view.book.marks if on_report else w.state.review_marks
            if suffix == ".csv":
                model = view.report.model_fingerprint if on_report else w.model.fingerprint()
                views = tuple(view.report.view_scores) if on_report else ()
                check_csv(answers.save_path, rows, with_flag=not on_report, marks=marks, model=model, views=views)
            else:
                check_sdf(answers.save_path, rows, marks=marks)
        return run

    def html(action):
        answers.save_path = str(tmp_path / f"{tag}_report.html")
        view = w.results_tabs.currentWidget()
        top_id = (view.report.ids[0] if isinstance(view, ReportView) else
                  w.graphs.meta[int(w.scores.ranking()[0])].id)
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w), timeout=120000)
        text = open(answers.save_path, encoding="utf-8").read()
        assert "<svg" in text and str(top_id) in text and "colour scale" in text
        marks = view.book.marks if isinstance(view, ReportView) else w.state.review_marks
        assert marks and f"Reviewed ({len(marks)})" in text  # the analyst's marks, on either tab

    def save_model(action):
        answers.save_path = str(tmp_path / f"{tag}_model")
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w), timeout=60000)  # written in the background
        assert (tmp_path / f"{tag}_model.pt").is_file() or not w.model.can_save

    def load_model(action):
        answers.open_path = files["model"]
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w) and w.scores is not None, timeout=120000)

    def score_file(action):
        answers.open_path = files["smiles"]
        before = len(w.report_views)
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == before + 1, timeout=120000)

    def resume(action):  # on a stopped scoring's tab only (tests/app/test_resume_scoring.py stops one)
        view = w.results_tabs.currentWidget()
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w) and view not in w.report_views, timeout=120000)
        assert w.results_tabs.currentWidget().report.stopped_after is None

    def weigh(action):
        answers.open_path = files["known"]
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w), timeout=120000)

    def mark(value):
        def run(action):  # on the active tab: the training tab's graphs or a scored file's rows
            view = w.results_tabs.currentWidget()
            on_report = isinstance(view, ReportView)
            table, model = (view.table, view.model_table) if on_report else (w.table, w.model_table)
            book = view.book if on_report else w.state.review_book
            review = COLUMNS.index("Review")
            if value is None:  # clear the first reviewed row's mark
                rows = [r for r in range(model.rowCount()) if model.index(r, review).data()][:1]
            else:  # two unreviewed rows at once
                rows = [r for r in range(model.rowCount()) if not model.index(r, review).data()][:2]
            chosen = [model.graph_index(r) for r in rows]
            table.clearSelection()
            for r in rows:
                table.selectionModel().select(model.index(r, 0), QItemSelectionModel.SelectionFlag.Select |
                                              QItemSelectionModel.SelectionFlag.Rows)
            action.trigger()
            qtbot.waitUntil(lambda: _idle(w) and all(book.marks.get(i) == value for i in chosen)
                            and (book.reranked is not None or not book.marks), timeout=120000)
            marked = len(book.marks)  # the reviewed rows on top, showing their marks
            assert marked and {model.graph_index(r) for r in range(marked)} == set(book.marks)
            assert all(model.index(r, review).data() for r in range(marked)) and not model.index(marked, review).data()
            assert not table.isColumnHidden(review)
            rest = [model.graph_index(r) for r in range(marked, model.rowCount())]  # re-ranked by the marks
            statistic = book.reranked.statistic
            assert len(statistic) == (len(view.report) if on_report else len(w.graphs))
            assert all(statistic[a] >= statistic[b] for a, b in zip(rest, rest[1:]))
        return run

    def train(action):
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w) and w.scores is not None, timeout=300000)

    def stop(action):
        action.trigger()  # nothing runs: nothing happens

    def open_file(action):
        answers.open_path = files["data"]
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w) and w.graphs is not None, timeout=120000)

    def plain(action):
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w), timeout=120000)

    def save_session(action):
        answers.save_path = str(tmp_path / f"{tag}_work")
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w), timeout=120000)
        path = tmp_path / f"{tag}_work.glocalkd-session"
        names = zipfile.ZipFile(path).namelist()
        assert "session.json" in names and ("model.pt" in names) == w.model.can_save
        assert len([n for n in names if n.startswith("reports/")]) == len(w.report_views)  # scored tabs inside
        assert not w._unsaved.pending()  # a saved session counts as saved
        assert w.sessions.recent()[0] == str(path)
        files["session"] = str(path)

    def open_session(action):
        answers.open_path = files["session"]
        before = (w.model.fingerprint(), len(w.report_views), w.results_tabs.count(), w.results_tabs.currentIndex(),
                  report_marks())
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w) and w.scores is not None, timeout=120000)
        after = (w.model.fingerprint(), len(w.report_views), w.results_tabs.count(), w.results_tabs.currentIndex(),
                 report_marks())
        assert after == before  # the same model (not trained again), tabs, active tab and scored tabs' marks
        for view in w.report_views:  # a scored tab's marks re-rank its rows again: the reviewed rows on top
            marked = len(view.book.marks)
            assert (view.book.reranked is not None) == bool(marked)
            assert {view.model_table.graph_index(r) for r in range(marked)} == set(view.book.marks)
        tab["start"] = w.results_tabs.currentWidget()  # the session's tabs replaced the open ones

    def report_marks() -> list[dict]:
        return [dict(v.book.marks) for v in sorted(w.report_views, key=w.results_tabs.indexOf)]

    def recent_session(action):
        count = w.results_tabs.count()
        action.trigger()
        qtbot.waitUntil(lambda: _idle(w) and w.scores is not None, timeout=120000)
        assert w.results_tabs.count() == count and not w._unsaved.pending()
        tab["start"] = w.results_tabs.currentWidget()

    def select_rows(count: int):
        """Select the tab's first ``count`` rows (Ctrl-click); return its table and model."""
        table, model = w.report_tabs.active_table((w.table, w.model_table))
        table.selectionModel().clearSelection()
        for row in range(min(count, model.rowCount())):
            table.selectionModel().select(model.index(row, 0), QItemSelectionModel.SelectionFlag.Select
                                          | QItemSelectionModel.SelectionFlag.Rows)
        return table, model

    def copy_text(action):
        _table, model = select_rows(3)
        action.trigger()
        lines = QApplication.clipboard().text().splitlines()
        header = lines[0].split("\t")
        assert {"ID", "SMILES", "Score"} <= set(header) and len(lines) == 1 + min(3, model.rowCount())
        for row, line in enumerate(lines[1:]):
            cells = line.split("\t")
            assert len(cells) == len(header)
            assert cells[header.index("ID")] == model.index(row, COLUMNS.index("ID")).data()
            assert cells[header.index("Score")] == model.index(row, COLUMNS.index("Score")).data() != ""
            assert cells[header.index("SMILES")] == model.smiles()[model.graph_index(row)]

    def copy_image(action):
        _table, model = select_rows(2)
        QApplication.clipboard().clear()
        action.trigger()
        qtbot.waitUntil(lambda: not QApplication.clipboard().image().isNull(), timeout=60000)
        image = QApplication.clipboard().image()
        assert image.width() == 260 * min(2, model.rowCount()) and image.height() == 220

    def quit_cancelled(action):
        answers.answer = "cancel"
        w._unsaved.add("probe", "a probe")  # something unsaved: Cancel keeps the window open
        action.trigger()
        assert w.isVisible()
        w._unsaved.done("probe")
        answers.answer = QMessageBox.StandardButton.No

    cases = {  # in the order they run
        "Review/Mark as anomaly": mark(True),
        "Review/Mark as not anomaly": mark(False),
        "Review/Clear mark": mark(None),
        "File/Export…": export(".csv"),
        "File/Export… (SDF)": export(".sdf"),
        "File/Export HTML report…": html,
        "File/Save model…": save_model,
        "Model/Weigh views by known anomalies…": weigh,
        "File/Score another file…": score_file,
        "File/Resume stopped scoring": resume,
        "Model/Stop": stop,
        "Model/Train": train,
        "File/Load model…": load_model,
        "Help/About": plain,
        "Edit/Copy": copy_text,
        "Edit/Copy as image": copy_image,
        "File/Open…": open_file,
        "File/Open TU folder…": plain,
        "File/Open demo data/*": plain,
        "File/Open recent/*": plain,
        "File/Save session…": save_session,
        "File/Open session…": open_session,
        "File/Recent sessions/*": recent_session,
        "File/Quit": quit_cancelled,
    }
    missing = sorted({case_of(name) for name, _ in menu_and_toolbar_actions(w)} - set(cases))
    assert not missing, f"actions without a case in this test: {missing}"
    tab["start"] = w.results_tabs.currentWidget()
    done = []
    for case, run in cases.items():
        key = case.removesuffix(" (SDF)")
        # the actions again: opening a file rebuilds the recent files' menu
        chosen = [(name, a) for name, a in menu_and_toolbar_actions(w) if case_of(name) == key and a.isEnabled()
                  and "AIDS" not in name]  # one item of each list is enough; AIDS takes long to load
        if not chosen:
            continue
        if w.results_tabs.indexOf(tab["start"]) >= 0:  # each action on the tab under test
            w.results_tabs.setCurrentWidget(tab["start"])
        name, action = chosen[0]
        run(action)
        done.append(case)
        assert not answers.hook_errors, (name, answers.hook_errors)
    for case in ("File/Export…", "File/Export HTML report…", "Model/Train", "File/Score another file…", "Edit/Copy",
                 "Edit/Copy as image"):
        assert case in done, f"{case} was never triggered on the {tag} tab"
    if w.results_tabs.indexOf(tab["start"]) >= 0:
        w.results_tabs.setCurrentWidget(tab["start"])
        pick_an_alert(qtbot, w)


def pick_an_alert(qtbot, window: MainWindow) -> None:
    """On the active tab, select the first molecule with a structural alert and click its first
    alert, as a user does: the drawing highlights exactly that alert's atoms; a second click clears."""
    from PySide6.QtCore import Qt

    view = window.results_tabs.currentWidget()
    on_report = isinstance(view, ReportView)
    table, model = (view.table, view.model_table) if on_report else (window.table, window.model_table)
    heatmap = view.heatmap if on_report else window.heatmap
    smiles = view.report.smiles if on_report else [m.smiles for m in window.graphs.meta]
    row = next(r for r in range(model.rowCount()) if structural_alerts(smiles[model.graph_index(r)]))
    table.selectRow(row)
    alerts = heatmap.alerts
    assert alerts.alerts() == structural_alerts(smiles[model.graph_index(row)]) and alerts.list.count() > 0
    rect = alerts.list.visualItemRect(alerts.list.item(0))
    qtbot.mouseClick(alerts.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert heatmap.highlighted_atoms() == list(alerts.alerts()[0].atoms)
    qtbot.mouseClick(alerts.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert heatmap.highlighted_atoms() is None  # no SMARTS filter: nothing marked


@pytest.fixture
def files(tmp_path, herg_path):
    smiles = tmp_path / "library.smi"
    smiles.write_text("smiles id\nCCO a1\nc1ccccc1O a2\nCC(=O)Nc1ccc(O)cc1 a3\nnot_a_smiles bad1\nCCCCN a5\n"
                      "Clc1ccccc1 a6\n")
    known = tmp_path / "known.smi"
    known.write_text("smiles id\nCCCCCCCCCCCCCCCCCC k1\nC1CCCCCCCCCCC1 k2\nCC(C)(C)C(C)(C)C k3\nOCCOCCOCCO k4\n")
    return {"smiles": str(smiles), "known": str(known), "data": str(herg_path), "model": str(tmp_path / "tiny.pt")}


def test_every_action_on_the_training_tab_and_on_a_scored_file_tab(qtbot, settings, tmp_path, files,
                                                                    herg_path, monkeypatch, no_hang):
    answers = Answers(monkeypatch, tmp_path)
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, **TINY, batch_size=64)
    save_detector(w.model, files["model"])
    run_every_action(qtbot, w, answers, tmp_path, "training", files)

    # a scored file's tab, active: every action again, the exports writing its rows
    answers.open_path = files["smiles"]
    w.act_score_file.trigger()
    qtbot.waitUntil(lambda: _idle(w) and isinstance(w.results_tabs.currentWidget(), ReportView), timeout=120000)
    view = w.results_tabs.currentWidget()
    assert view.model_table.rowCount() == 5 and len(view.report.rejects) == 1
    p_col = COLUMNS.index("p-value")
    assert view.model_table.index(0, p_col).data()  # the tab shows its p-values
    assert w.act_mark_anomaly.isEnabled() and w.act_mark_anomaly.toolTip().startswith("Mark the selected rows")
    run_every_action(qtbot, w, answers, tmp_path, "scored", files)
    with open(tmp_path / "scored_export.csv", newline="", encoding="utf-8") as fh:
        statuses = [r["status"] for r in csv.DictReader(fh)]
    assert sum(s.startswith("rejected") for s in statuses) == 1  # all rows: its rejected row too
    w.runner.stop_all()
    w.structures.shutdown()


def test_every_action_that_writes_a_file_names_a_missing_folder_by_the_users_path(qtbot, settings, tmp_path,
                                                                                  herg_path, monkeypatch):
    """Every File action that asks where to write (Export, Save ...), given a path in a folder that
    does not exist, says so by the user's path: no traceback, no hidden temporary file's name. All of
    them write through core's one writer and fail through the one runner, which word it."""
    answers = Answers(monkeypatch, tmp_path)
    asked: list[str] = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (asked.append(answers.save_path)
                                                                         or answers.save_path, ""))
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, **TINY, batch_size=64)
    gone = tmp_path / "gone"
    writers = [(name, action) for name, action in menu_and_toolbar_actions(w)
               if name.startswith(("File/Export", "File/Save")) and action.isEnabled()]
    assert {case_of(name) for name, _ in writers} >= {"File/Export…", "File/Export HTML report…", "File/Save model…",
                                                      "File/Save session…"}
    for name, action in writers:
        for suffix in (".csv", ".sdf") if case_of(name) == "File/Export…" else ("",):
            answers.save_path = str(gone / f"out{suffix}")
            w.feedback.last_warning = ""
            action.trigger()
            qtbot.waitUntil(lambda: _idle(w) and bool(w.feedback.last_warning), timeout=120000)
            said = w.feedback.last_warning
            assert asked[-1] == answers.save_path, name
            assert said.startswith(str(gone / "out")) and f"no folder {gone}" in said, (name, said)
            assert "Traceback" not in said and "Unexpected" not in said and ".tmp" not in said, (name, said)
    assert not gone.exists() and not answers.hook_errors
    w.runner.stop_all()
    w.structures.shutdown()


def test_every_menu_gives_each_of_its_items_a_mnemonic_of_its_own(window):
    """Alt+F, I highlighted "Open session…" and did nothing: "Recent sessions" had the same letter,
    and Qt cycles between items of one mnemonic; the next keys typed landed on other items (a
    session's path typed after it saved a model named after it). Each menu bar item and each item
    of a menu the window builds has a letter no other item of its menu has."""
    import re

    def letters(actions) -> list[str]:
        found = []
        for action in actions:
            if not action.isSeparator():
                match = re.search(r"&(?!&)(\w)", action.text())
                assert match, f"{action.text()!r} has no mnemonic"
                found.append(match.group(1).lower())
        return found

    menus = [("menu bar", window.menuBar().actions())]
    menus += [(top.text(), top.menu().actions()) for top in window.menuBar().actions()]
    for name, actions in menus:
        taken = letters(actions)
        assert len(taken) == len(set(taken)), f"{name}: {sorted(taken)}"
