"""The review loop in the app: rows marked as anomalies or not re-rank the others at once (no
training), the marks show in a Review column, stay with the results and go into every export."""
from __future__ import annotations

import csv

import numpy as np
import pytest
from rdkit import Chem

from app.state import AppState
from app.widgets.table import COLUMNS
from core import apply_marks
from tests.app.test_main_window import _idle, open_and_wait, train_and_wait

TINY = {"epochs": 2, "hidden_dim": 16, "out_dim": 8, "batch_size": 64}


def _select(w, rows: list[int]) -> list[int]:
    """Select the training tab's table rows as a user does (Ctrl+click); returns their graph indices."""
    return _select_in(w, rows)


def _column(w, name: str, row: int) -> str:
    return w.model_table.index(row, COLUMNS.index(name)).data()


def test_marks_rerank_the_unreviewed_rows_and_go_into_every_export(qtbot, window, herg_path, tmp_path):
    w = window
    open_and_wait(qtbot, w, herg_path)
    assert not w.act_mark_anomaly.isEnabled()  # nothing scored yet
    train_and_wait(qtbot, w, **TINY)
    assert w.act_mark_anomaly.isEnabled() and not w.table.isColumnHidden(COLUMNS.index("Review"))
    free_order = [w.model_table.graph_index(r) for r in range(w.model_table.rowCount())]

    anomalies = _select(w, [3, 5])  # two rows below the top, several at once
    w.act_mark_anomaly.trigger()
    qtbot.waitUntil(lambda: w.state.reranked is not None and _idle(w), timeout=60000)
    assert {w.model_table.graph_index(r) for r in (0, 1)} == set(anomalies)  # reviewed rows first
    normal = _select(w, [2])  # the top unreviewed row
    w.act_mark_normal.trigger()
    qtbot.waitUntil(lambda: w.state.reranked is not None and _idle(w) and len(w.state.review_marks) == 3,
                    timeout=60000)
    assert w.state.review_marks == {anomalies[0]: True, anomalies[1]: True, normal[0]: False}
    # the reviewed rows first, with their marks; then the others, re-ranked by the marks
    shown = [w.model_table.graph_index(r) for r in range(w.model_table.rowCount())]
    assert set(shown[:3]) == {*anomalies, *normal}
    assert [_column(w, "Review", r) for r in range(3)].count("● anomaly") == 2
    assert _column(w, "Review", 3) == ""
    rest = [i for i in shown if i not in w.state.review_marks]
    statistic = w.state.reranked.statistic
    assert all(statistic[a] >= statistic[b] for a, b in zip(rest, rest[1:]))
    assert rest != [i for i in free_order if i not in w.state.review_marks]  # the marks changed the order
    # the marks are a dict the results keep; core.apply_marks puts them back on a review
    review = apply_marks(w.state.review, {str(k): v for k, v in w.state.review_marks.items()})
    np.testing.assert_array_equal(review.rerank().statistic, statistic)

    # exports: CSV, SDF and HTML say which rows were reviewed, and how
    w.export_report(str(tmp_path / "reviewed.csv"))
    qtbot.waitUntil(lambda: _idle(w) and (tmp_path / "reviewed.csv").exists(), timeout=180000)  # in the background
    with open(tmp_path / "reviewed.csv", newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["status"] == "ok"]
    by_id = {r["id"]: r["review"] for r in rows}
    meta = w.state.graphs.meta
    assert by_id[meta[anomalies[0]].id] == "anomaly" and by_id[meta[normal[0]].id] == "not anomaly"
    assert sum(bool(v) for v in by_id.values()) == 3
    w.export_report(str(tmp_path / "reviewed.sdf"))
    qtbot.waitUntil(lambda: _idle(w) and (tmp_path / "reviewed.sdf").exists(), timeout=180000)
    mols = [m for m in Chem.SDMolSupplier(str(tmp_path / "reviewed.sdf")) if m is not None]
    assert sorted(m.GetProp("review") for m in mols if m.GetProp("review")) == ["anomaly", "anomaly", "not anomaly"]
    w.export_html(str(tmp_path / "reviewed.html"))
    qtbot.waitUntil(lambda: _idle(w), timeout=120000)
    text = (tmp_path / "reviewed.html").read_text(encoding="utf-8")
    assert "Reviewed (3)" in text and text.count("<td>not anomaly</td>") == 1

    # clearing every mark gives the scores' own ranking back
    _select(w, [0, 1, 2])
    w.act_clear_mark.trigger()
    qtbot.waitUntil(lambda: not w.state.review_marks and _idle(w), timeout=60000)
    assert [w.model_table.graph_index(r) for r in range(w.model_table.rowCount())] == free_order
    assert _column(w, "Review", 0) == ""


def test_only_the_consensus_offers_the_review(qtbot, window, herg_path):
    w = window
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, detector="size")
    assert not w.act_mark_anomaly.isEnabled()
    assert "consensus" in w.act_mark_anomaly.toolTip() and w.table.isColumnHidden(COLUMNS.index("Review"))


def test_marks_belong_to_the_graphs_not_the_model():
    state = AppState()
    state.mark([1, 2], True)
    state.mark([2], False)
    state.mark([1], None)
    assert state.review_marks == {2: False} and state.review_words() == {2: "not anomaly"}
    state.set_scores(scores=None)  # new scores: the review is built again, the marks stay
    assert state.review_marks == {2: False} and state.reranked is None


def test_saved_marks_come_back_as_the_state_keeps_them():
    state = AppState()
    state.graphs = [object()] * 10  # ten open graphs: only their count matters here
    state.restore_review({"3": "anomaly", "4": "not anomaly", 5: True})
    assert state.review_marks == {3: True, 4: False, 5: True}
    assert state.review_words() == {3: "anomaly", 4: "not anomaly", 5: "anomaly"}
    for bad in ({"12": "anomaly"}, {"1": "maybe"}, {"x": True}):
        with pytest.raises(ValueError):
            state.restore_review(bad)
    assert state.review_marks == {3: True, 4: False, 5: True}  # a bad file changes nothing


LIBRARY = ("smiles id\nCCO a1\nc1ccccc1O a2\nCC(=O)Nc1ccc(O)cc1 a3\nCCCCN a4\nClc1ccccc1 a5\nCCN(CC)CC a6\n"
           "c1ccncc1 a7\nOCC(O)CO a8\nCC(C)Cc1ccc(cc1)C(C)C(=O)O a9\n")


def _select_in(view, rows: list[int]) -> list[int]:
    """Select the table rows of ``view`` (the window's training tab, or a report tab) as a user
    does (Ctrl+click); returns their graph indices (a report's rows)."""
    from PySide6.QtCore import QItemSelectionModel

    sel = view.table.selectionModel()
    sel.clearSelection()
    for r in rows:
        sel.select(view.model_table.index(r, 0), QItemSelectionModel.SelectionFlag.Select |
                   QItemSelectionModel.SelectionFlag.Rows)
    return [view.model_table.graph_index(r) for r in rows]


def _reviewed(qtbot, w, view, count: int) -> None:
    qtbot.waitUntil(lambda: _idle(w) and len(view.book.marks) == count and view.book.reranked is not None,
                    timeout=120000)


def _scored_tab(qtbot, w, herg_path, tmp_path):
    """Open the demo, train the tiny consensus and score LIBRARY in the app, as a user does: its tab."""
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, **TINY)
    library = tmp_path / "library.smi"
    library.write_text(LIBRARY)
    w.score_file(str(library))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=120000)
    return w.report_views[0]


def test_a_scored_files_review_is_the_one_path_and_kept_in_a_session(qtbot, window, herg_path,
                                                                       tmp_path):
    from core import Review, report_graphs

    w = window
    view = _scored_tab(qtbot, w, herg_path, tmp_path)
    assert w.results_tabs.currentWidget() is view and w.act_mark_anomaly.isEnabled()
    review_column = COLUMNS.index("Review")
    assert view.table.isColumnHidden(review_column)  # shown once a row is marked
    free_order = [view.model_table.graph_index(r) for r in range(view.model_table.rowCount())]

    anomalies = _select_in(view, [3, 5])
    w.act_mark_anomaly.trigger()
    _reviewed(qtbot, w, view, 2)
    normal = _select_in(view, [2])  # the top unreviewed row
    w.act_mark_normal.trigger()
    _reviewed(qtbot, w, view, 3)
    marks = {anomalies[0]: True, anomalies[1]: True, normal[0]: False}
    assert view.book.marks == marks and not w.state.review_marks  # the training tab's review is its own
    assert not view.table.isColumnHidden(review_column) and "views' scores in this report" in view.status.text()
    shown = [view.model_table.graph_index(r) for r in range(view.model_table.rowCount())]
    assert set(shown[:3]) == set(marks) and view.model_table.index(3, review_column).data() == ""
    # the one path: core.Review run directly on the report's rows with the same marks
    direct = apply_marks(Review(w.model, report_graphs(view.report)), marks).rerank().statistic
    np.testing.assert_allclose(view.book.reranked.statistic, direct, rtol=1e-6)
    rest = shown[3:]
    assert rest == sorted(rest, key=lambda i: (-direct[i], free_order.index(i)))
    # its export carries the marks
    w.export_report(str(tmp_path / "reviewed.csv"))
    qtbot.waitUntil(lambda: _idle(w) and (tmp_path / "reviewed.csv").exists(), timeout=180000)
    with open(tmp_path / "reviewed.csv", newline="", encoding="utf-8") as fh:
        by_id = {r["id"]: r["review"] for r in csv.DictReader(fh) if r["status"] == "ok"}
    ids = view.report.ids
    assert by_id[ids[anomalies[0]]] == "anomaly" and by_id[ids[normal[0]]] == "not anomaly"
    assert sum(bool(v) for v in by_id.values()) == 3

    # a saved session keeps the tab's marks; reopening puts them back and re-ranks by them
    w.sessions.save(str(tmp_path / "work"))
    qtbot.waitUntil(lambda: _idle(w), timeout=60000)
    w.sessions.open(str(tmp_path / "work.glocalkd-session"))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1 and w.report_views[0] is not view, timeout=120000)
    again = w.report_views[0]
    _reviewed(qtbot, w, again, 3)
    # the session's model, read back from its file, is the model that wrote the report: no row is scored again
    from app.review_book import reads_view_scores

    assert reads_view_scores(w.model, again.report)
    _says_whose_scores(again, w.model)
    assert again.book.marks == marks
    np.testing.assert_allclose(again.book.reranked.statistic, direct, rtol=1e-6)
    assert [again.model_table.graph_index(r) for r in range(again.model_table.rowCount())] == shown

    # a new model (one more epoch): the tab's review is built again with it, the marks kept
    old_review = again.book.review
    w.results_tabs.setCurrentIndex(0)
    train_and_wait(qtbot, w, **{**TINY, "epochs": TINY["epochs"] + 1})
    qtbot.waitUntil(lambda: _idle(w) and again.book.review is not None and again.book.review is not old_review
                    and again.book.reranked is not None, timeout=120000)
    assert again.book.marks == marks
    fresh = apply_marks(Review(w.model, report_graphs(again.report)), marks).rerank().statistic
    np.testing.assert_allclose(again.book.reranked.statistic, fresh, rtol=1e-6)
    assert not reads_view_scores(w.model, again.report)  # another model: its views score the rows
    _says_whose_scores(again, w.model)


def _says_whose_scores(view, model) -> None:
    """The tab's status line names the scores its review re-ranks from: the report's own views'
    scores when the open model wrote them, else the open model's scores of the rows."""
    from app.review_book import reads_view_scores

    ours, theirs = "views' scores in this report", "views of the model open"
    if not reads_view_scores(model, view.report):
        ours, theirs = theirs, ours
    assert ours in view.status.text() and theirs not in view.status.text()


def test_a_scored_files_first_mark_reads_the_views_scores_the_scoring_made(qtbot, window, herg_path, tmp_path,
                                                                           monkeypatch):
    """Scoring a file in the app with the consensus keeps each view's score in the report; the tab's
    review starts from them: nothing parses or scores the rows again (both are made to fail)."""
    import core
    from core import Review, report_graphs

    w = window
    view = _scored_tab(qtbot, w, herg_path, tmp_path)
    assert set(view.report.view_scores) == set(w.model.views)
    assert view.report.model_fingerprint == w.model.fingerprint()
    anomalies = _select_in(view, [1, 4])
    marks = {anomalies[0]: True, anomalies[1]: True}
    direct = apply_marks(Review(w.model, report_graphs(view.report)), marks).rerank()

    def fails(*args, **kwargs):
        raise AssertionError("the review parsed or scored the rows again")

    monkeypatch.setattr(core, "report_graphs", fails)
    monkeypatch.setattr(core, "report_view_scores", fails)
    for component in w.model.components_.values():
        monkeypatch.setattr(type(component), "score", fails)
    w.act_mark_anomaly.trigger()
    _reviewed(qtbot, w, view, 2)
    assert view.book.marks == marks
    np.testing.assert_array_equal(view.book.reranked.statistic, direct.statistic)
    np.testing.assert_array_equal(view.book.reranked.p_values, direct.p_values)
    assert "views' scores in this report" in view.status.text()


def test_a_report_without_this_models_view_scores_is_scored_again(herg_path, tmp_path, monkeypatch):
    """The fallback: a report written without view columns, or by another model, is reviewed by
    scoring its rows again with each view of the open model, through the screening pipeline, and
    re-ranks exactly as a review of its rows as graphs."""
    import core
    from types import SimpleNamespace

    from app import tasks
    from app.review_book import model_fingerprint, reads_view_scores, report_unavailable
    from core import Review, load, make_detector, read_report, report_graphs, screen

    graphs = load(herg_path)
    model = make_detector("consensus", seed=0, component_params={"glocalkd": {"epochs": 2, "hidden_dim": 16,
                                                                             "out_dim": 8, "device": "cpu"}})
    model.fit(graphs.subset(range(300)))
    library = tmp_path / "library.smi"
    library.write_text(LIBRARY)
    job = SimpleNamespace(report=lambda progress: None, stopped=lambda: False)
    with_views, _ = tasks.screen_file(model, str(library), str(tmp_path / "with.csv"), job)
    assert reads_view_scores(model, with_views)
    screen(model, str(library), str(tmp_path / "without.csv"), workers=1)
    without = read_report(tmp_path / "without.csv")
    assert without.view_scores == {} and not reads_view_scores(model, without)
    other = make_detector("consensus", seed=1, component_params={"glocalkd": {"epochs": 2, "hidden_dim": 16,
                                                                             "out_dim": 8, "device": "cpu"}})
    other.fit(graphs.subset(range(300)))
    assert not reads_view_scores(other, with_views)  # scored by another model
    raw = (tmp_path / "with.csv").read_bytes()
    copy, edited = tmp_path / "copy.csv", tmp_path / "edited.csv"
    copy.write_bytes(raw)
    assert reads_view_scores(model, read_report(copy))  # the same bytes elsewhere: the same report
    first = raw.split(b"\r\n")[1]  # the top row; its last cell is a view's score
    edited.write_bytes(raw.replace(first, first.rsplit(b",", 1)[0] + b",0.5", 1))
    assert read_report(edited).model_fingerprint == model_fingerprint(model)
    assert not reads_view_scores(model, read_report(edited))  # an edited report: its rows are scored again
    marks = {0: True, 3: False}
    rescored = []
    real = core.report_view_scores
    monkeypatch.setattr(core, "report_view_scores", lambda *a, **k: rescored.append(a[1]) or real(*a, **k))
    for report, reviewer in ((without, model), (with_views, other)):
        said = []
        job = SimpleNamespace(report=said.append, stopped=lambda: False)
        review, reranked, _, rows = tasks.rerank(None, reviewer, None, marks, job=job, report=report)
        assert rows is None and rescored[-1] is report  # the rows were scored again, as a file is
        assert said and (said[-1].scored, said[-1].total) == (len(report), len(report))  # the status bar's progress
        direct = apply_marks(Review(reviewer, report_graphs(report)), marks).rerank()
        np.testing.assert_array_equal(reranked.statistic, direct.statistic)
        np.testing.assert_array_equal(reranked.p_values, direct.p_values)
    _, from_views, _, rows = tasks.rerank(None, model, None, marks, report=with_views)
    assert rows is None and len(rescored) == 2
    np.testing.assert_array_equal(from_views.statistic,
                                  apply_marks(Review(model, report_graphs(with_views)), marks).rerank().statistic)
    # over the row limit: a report holding this model's view scores stays reviewable, the others do not
    import app.review_book as book

    small = book.MAX_REPORT_ROWS
    try:
        book.MAX_REPORT_ROWS = 3
        assert report_unavailable(model, with_views) == ""
        assert "rows, over the 3" in report_unavailable(other, with_views)
        assert "rows, over the 3" in report_unavailable(model, without)
    finally:
        book.MAX_REPORT_ROWS = small


def test_a_scored_graph_collection_is_reviewed_from_its_view_scores(tmp_path):
    """A TU collection scored in the app (in memory, no SMILES to score again) keeps the views'
    scores too, so its tab can be reviewed: the review is the one of its graphs."""
    from types import SimpleNamespace

    from app import tasks
    from app.review_book import reads_view_scores, report_unavailable
    from core import Review, load, make_detector
    from tests.conftest import path, ring, write_tu

    graphs = [(5 + i % 4, ring(5 + i % 4), 1) for i in range(40)] + [(6, path(6), 0) for _ in range(20)]
    folder = write_tu(tmp_path / "TOY", "TOY", graphs)
    data = load(folder)
    model = make_detector("consensus", seed=0, component_params={"glocalkd": {"epochs": 2, "hidden_dim": 16,
                                                                             "out_dim": 8, "device": "cpu"}})
    model.fit(data)
    job = SimpleNamespace(report=lambda progress: None, stopped=lambda: False)
    report, _ = tasks.screen_file(model, str(folder), str(tmp_path / "toy.csv"), job)
    assert not any(report.smiles) and list(report.view_scores) == model.views
    assert reads_view_scores(model, report) and report_unavailable(model, report) == ""
    marks = {0: True, 2: True, 5: True, 7: False}
    _, reranked, _, rows = tasks.rerank(None, model, None, marks, report=report)
    assert rows is None
    where = {g.id: i for i, g in enumerate(data.meta)}
    in_rank_order = data.subset([where[i] for i in report.ids])
    direct = apply_marks(Review(model, in_rank_order), marks).rerank()
    np.testing.assert_array_equal(reranked.statistic, direct.statistic)
    report.model_fingerprint = "another model's"  # then it could only be scored again, and cannot be
    assert "no SMILES" in report_unavailable(model, report)


def test_a_report_tab_says_what_its_review_lacks():
    from types import SimpleNamespace

    from app.review_book import MAX_REPORT_ROWS, report_unavailable

    class Rows(SimpleNamespace):
        def __len__(self):
            return self.n

    consensus = SimpleNamespace(name="consensus", rule="fisher")
    assert report_unavailable(consensus, Rows(n=3, smiles=["C", "CC", "CCC"])) == ""
    assert "consensus" in report_unavailable(SimpleNamespace(name="glocalkd"), Rows(n=3, smiles=["C"] * 3))
    assert "train or load" in report_unavailable(None, Rows(n=3, smiles=["C"] * 3))
    assert "no SMILES" in report_unavailable(consensus, Rows(n=3, smiles=["", "", ""]))
    big = report_unavailable(consensus, Rows(n=MAX_REPORT_ROWS + 1, smiles=["C"]))
    assert f"{MAX_REPORT_ROWS + 1:,} rows" in big and "SMILES" not in big
    # a report holding the open model's views' scores is scored again never: no SMILES, no row limit needed
    scored = SimpleNamespace(name="consensus", rule="fisher", views=["glocalkd", "size"],
                             reported_views=lambda: ["glocalkd", "size"], fingerprints=lambda: ("f1",))
    views = {"glocalkd": np.zeros(3), "size": np.ones(3)}
    assert report_unavailable(scored, Rows(n=3, smiles=[""] * 3, view_scores=views, model_fingerprint="f1",
                                           intact=True)) == ""
    huge = Rows(n=MAX_REPORT_ROWS + 1, smiles=["C"], view_scores=views, model_fingerprint="f1", intact=True)
    assert report_unavailable(scored, huge) == ""
    assert "rows" in report_unavailable(scored, Rows(n=MAX_REPORT_ROWS + 1, smiles=["C"], view_scores=views,
                                                     model_fingerprint="f1", intact=False))  # edited
    assert "rows" in report_unavailable(scored, Rows(n=MAX_REPORT_ROWS + 1, smiles=["C"], view_scores=views,
                                                     model_fingerprint="another model"))
    assert "no SMILES" in report_unavailable(scored, Rows(n=3, smiles=[""] * 3, view_scores={"glocalkd": views["size"]},
                                                          model_fingerprint="f1"))  # not every view


def test_a_report_screened_with_view_scores_and_opened_is_reviewed_from_them(qtbot, window, herg_path, tmp_path,
                                                                            monkeypatch):
    """The command line's report (``glocalkd screen MODEL LIBRARY --view-scores``) opened in the app
    with that model: the first mark reads the report's views' scores, no row is scored again."""
    from app.review_book import reads_view_scores
    from core import Review, load_detector, report_graphs
    from core.cli.main import main

    w = window
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, **TINY)
    w.model.save(tmp_path / "model.pt")
    library = tmp_path / "library.smi"
    library.write_text(LIBRARY)
    out = tmp_path / "ranked.csv"
    assert main(["screen", str(tmp_path / "model.pt"), str(library), "-o", str(out), "--view-scores",
                 "--device", "cpu", "--workers", "1"]) == 0
    w.open_path(str(out))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=60000)
    view = w.report_views[0]
    assert reads_view_scores(w.model, view.report)  # the window's model is the file's, read back or not
    anomalies = _select_in(view, [1])
    import core

    monkeypatch.setattr(core, "report_view_scores", lambda *a, **k: pytest.fail("the rows were scored again"))
    w.act_mark_anomaly.trigger()
    _reviewed(qtbot, w, view, 1)
    direct = apply_marks(Review(load_detector(tmp_path / "model.pt"), report_graphs(view.report)),
                         {anomalies[0]: True}).rerank().statistic
    np.testing.assert_allclose(view.book.reranked.statistic, direct, rtol=1e-6)
    assert "views' scores in this report" in view.status.text()


def test_an_exported_report_keeps_its_views_scores_and_model_and_merges(qtbot, window, herg_path, tmp_path):
    """A screened report with view scores, opened and exported: the export had neither the views'
    scores nor an end row, so a merge refused it as cut short, and the export opened again could
    not be reviewed without scoring its rows again. It is written by core's one report writer now."""
    from app.review_book import reads_view_scores
    from core import merge_reports, read_report
    from core.cli.main import main

    w = window
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, **TINY)
    w.model.save(tmp_path / "model.pt")
    library = tmp_path / "library.smi"
    library.write_text(LIBRARY + "not_a_smiles bad\n")
    out = tmp_path / "ranked.csv"
    assert main(["screen", str(tmp_path / "model.pt"), str(library), "-o", str(out), "--view-scores",
                 "--device", "cpu", "--workers", "1"]) == 0
    w.open_path(str(out))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=60000)
    exported = tmp_path / "exported.csv"
    w.export_report(str(exported))
    qtbot.waitUntil(lambda: _idle(w) and exported.exists(), timeout=120000)
    original, back = read_report(out), read_report(exported)
    assert back.intact and back.model_fingerprint == original.model_fingerprint == w.model.fingerprint()
    assert list(back.view_scores) == list(original.view_scores)
    for name, values in original.view_scores.items():
        np.testing.assert_array_equal(back.view_scores[name], values)
    assert reads_view_scores(w.model, back) and len(back.rejects) == 1
    assert merge_reports([exported], tmp_path / "merged.csv") == len(original) + 1
    # a part of the report, or a report edited since, exported: named by no model, so no merge takes it
    # for whole and no review trusts its views' scores
    from app import tasks
    from core import DataError

    tasks.export_report_csv(str(tmp_path / "part.csv"), original, np.arange(3))
    edited = tmp_path / "edited.csv"
    text = out.read_text(encoding="utf-8").splitlines(keepends=True)
    cells = text[1].split(",")
    cells[-2] = "999"  # a view's score (the last columns are the views') changed by hand
    edited.write_text("".join([text[0], ",".join(cells), *text[2:]]), encoding="utf-8")
    assert not read_report(edited).intact
    tasks.export_report_csv(str(tmp_path / "edited_export.csv"), read_report(edited), None)
    for name in ("part.csv", "edited_export.csv"):
        back = read_report(tmp_path / name)
        assert back.intact and back.model_fingerprint == "" and not reads_view_scores(w.model, back)
        with pytest.raises(DataError, match="does not name the model"):
            merge_reports([tmp_path / name], tmp_path / "merged.csv")


def _shown_ranks(view) -> list[tuple[str, int]]:
    """The tab's rows as the user reads them: (ID, Rank), in rank order."""
    m = view.model_table
    rows = [(m.index(r, COLUMNS.index("ID")).data(), int(m.index(r, COLUMNS.index("Rank")).data()))
            for r in range(m.rowCount())]
    return sorted(rows, key=lambda row: row[1])


def _written_ranks(qtbot, w, tmp_path, stem: str) -> dict[str, list[tuple[str, int]]]:
    """Export the active tab as CSV, SDF and HTML by the window's actions; each file's (id, rank), in file order."""
    import re

    files = {kind: tmp_path / f"{stem}.{kind}" for kind in ("csv", "sdf", "html")}
    for kind, path in files.items():
        (w.export_html if kind == "html" else w.export_report)(str(path))
        qtbot.waitUntil(lambda p=path: _idle(w) and p.exists(), timeout=180000)
    with open(files["csv"], newline="", encoding="utf-8") as fh:
        written = {"csv": [(r["id"], int(r["rank"])) for r in csv.DictReader(fh) if r["status"] == "ok"]}
    written["sdf"] = [(m.GetProp("id"), m.GetIntProp("rank")) for m in Chem.SDMolSupplier(str(files["sdf"]))
                      if m is not None]
    html = files["html"].read_text(encoding="utf-8")
    written["html"] = [(name, int(rank)) for rank, name in
                       re.findall(r"<tr><td>(\d+)</td><td class='mol'>.*?<b>(.*?)</b>", html, flags=re.S)]
    return written


def test_every_file_a_tab_writes_ranks_its_rows_as_the_tab_shows_them(qtbot, window, herg_path, tmp_path):
    """Once rows are marked the Rank column is the review's: the CSV, the SDF and the HTML report of
    both kinds of tab (the training data's, a scored file's) list the rows in that order, with those
    ranks. Each tab hands its own Rank column to every writer, so no writer ranks by the scores."""
    w = window
    view = _scored_tab(qtbot, w, herg_path, tmp_path)
    marked = {view: _select_in(view, [view.model_table.rowCount() - 1])}  # the lowest-ranked row
    w.act_mark_anomaly.trigger()
    _reviewed(qtbot, w, view, 1)
    w.results_tabs.setCurrentIndex(0)
    last = w.model_table.rowCount() - 1
    marked[w] = _select_in(w, [last - 1, last])
    w.act_mark_anomaly.trigger()
    qtbot.waitUntil(lambda: w.state.reranked is not None and _idle(w) and len(w.state.review_marks) == 2,
                    timeout=60000)
    for tab, stem in ((w, "training"), (view, "scored")):
        w.results_tabs.setCurrentWidget(w.results_tabs.widget(0) if tab is w else view)
        shown = _shown_ranks(tab)
        assert [rank for _, rank in shown] == list(range(1, len(shown) + 1))
        # the marked rows, last by their scores, are the review's first: the two orders differ
        free = [int(i) for i in tab.model_table.scores.ranking()]
        assert set(free[-len(marked[tab]):]) == set(marked[tab])
        assert {shown[k][0] for k in range(len(marked[tab]))} == {_id(tab, i) for i in marked[tab]}
        written = _written_ranks(qtbot, w, tmp_path, stem)
        assert written["csv"] == shown, stem
        assert written["sdf"] == shown, stem  # every row here is a molecule
        top = min(25, len(shown))  # the HTML report draws the top 25
        assert len(written["html"]) == top and written["html"] == shown[:top], stem


def _id(view, graph: int) -> str:
    """A row's ID by its graph index (a report's row index on a scored file's tab)."""
    return view.state.graphs.meta[graph].id if hasattr(view, "state") else str(view.report.ids[graph])


def test_scoring_a_tabs_rows_again_for_its_review_is_busy_stoppable_and_ends_its_status(qtbot, window, herg_path,
                                                                                        tmp_path):
    """A scored file's tab whose report another model wrote scores its rows again on the first
    mark: long, so the window is busy (Train, Open ... off), Stop stops it (the marks stay, a plain
    note, no error), closing the tab stops it too, and "Preparing the review" never outlives it."""
    from core import load

    w = window
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, **TINY)
    smiles = [m.smiles for m in load(herg_path).meta]
    library = tmp_path / "big.smi"
    library.write_text("smiles id\n" + "".join(f"{s} m{k}\n" for k in range(12) for s in smiles[:655]))
    w.score_file(str(library))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=300000)
    view = w.report_views[0]
    w.results_tabs.setCurrentIndex(0)
    w.form.seed.setValue(w.form.seed.value() + 1)  # another model: the tab's report is not its own
    train_and_wait(qtbot, w, **TINY)
    w.feedback.last_warning = ""
    for ending in ("stop", "close"):
        w.results_tabs.setCurrentWidget(view)
        marked = _select_in(view, [2])
        w.act_mark_anomaly.trigger()
        qtbot.waitUntil(lambda: bool(w.reviewing.scoring_jobs()), timeout=30000)
        assert w.statusBar().currentMessage().startswith("Preparing the review")
        assert w.act_stop.isEnabled() and w.side.stop_button.isEnabled()
        assert not any(a.isEnabled() for a in (w.act_train, w.act_score_file, w.act_open, w.act_save_session))
        if ending == "stop":
            w.act_stop.trigger()
        else:
            w.report_tabs.close(w.results_tabs.indexOf(view))
        qtbot.waitUntil(lambda: not w.runner.running(), timeout=120000)
        said = w.statusBar().currentMessage()
        assert not said.startswith("Preparing the review") and not w.feedback.last_warning, said
        assert w.act_train.isEnabled() and w.act_open.isEnabled()
        if ending == "stop":
            assert said.startswith("Review stopped") and view.book.marks == {marked[0]: True}
            assert view.book.reranked is None  # not re-ranked from rows half scored


def test_scaffold_groups_follow_the_review_and_take_no_marks(qtbot, window, herg_path):
    """Grouped by scaffold, the groups were ranked by the label-free scores (a rank of their own),
    and Ctrl+1 marked the hidden table's selected row, not the group the user picked."""
    from app.actions import GROUPED_NOTE

    w = window
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, **TINY)
    last = _select_in(w, [w.model_table.rowCount() - 1])[0]
    w.act_mark_anomaly.trigger()
    qtbot.waitUntil(lambda: w.state.reranked is not None and _idle(w), timeout=60000)
    assert w.model_table.ranks()[last] == 1
    w.filters.group_scaffolds.setChecked(True)
    view = w.scaffold_view
    qtbot.waitUntil(lambda: view.table.rowCount() > 0, timeout=60000)
    first = min(range(view.table.rowCount()), key=lambda r: view.table.item(r, 0).data(0))
    assert view.table.item(first, 0).data(0) == 1 and view.table.item(first, 4).text() == w.state.graphs.meta[last].id
    assert not w.act_mark_anomaly.isEnabled() and w.act_mark_anomaly.toolTip() == GROUPED_NOTE
    w.filters.group_scaffolds.setChecked(False)
    assert w.act_mark_anomaly.isEnabled()


def test_marks_follow_their_rows_when_standardising_rejects_one(qtbot, window, herg_path, monkeypatch):
    """Marks are kept by row index: when training again with standardising rejected a row (RDKit's
    standardiser failing on a molecule, simulated), every mark after it moved to the next
    molecule. They follow their rows now, and a mark on the rejected row is dropped, and said."""
    import core.data.standardise as std

    w = window
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, **TINY)
    meta = w.state.graphs.meta
    first = 0
    chosen = [w.model_table.row_of(i) for i in (first, 5, 7, 9)]
    _select_in(w, chosen)
    w.act_mark_anomaly.trigger()
    qtbot.waitUntil(lambda: w.state.reranked is not None and _idle(w), timeout=60000)
    kept = {(meta[i].line, meta[i].id) for i in (5, 7, 9)}
    rejected = Chem.MolToSmiles(Chem.MolFromSmiles(meta[first].smiles))
    real = std.standardise_mol

    def failing(mol):
        if Chem.MolToSmiles(mol) == rejected:
            return None, "standardisation failed (simulated)"
        return real(mol)

    monkeypatch.setattr(std, "standardise_mol", failing)
    w.form.standardise.setChecked(True)
    messages = []
    w.statusBar().messageChanged.connect(messages.append)
    train_and_wait(qtbot, w, **TINY)
    after = w.state.graphs.meta
    assert len(after) < len(meta)
    assert {(after[i].line, after[i].id) for i in w.state.review_marks} == kept
    assert any("1 review mark was on rows the standardisation rejected: dropped." in m for m in messages)


def test_the_status_says_the_views_weigh_as_before_when_the_marked_anomalies_weigh_nothing(qtbot, window,
                                                                                           herg_path):
    """Three anomalies marked at the bottom of the ranking rank no higher than the normal graphs
    under any view: the weights stay as they were, and the status line said the views were weighed."""
    w = window
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, **TINY)
    said = []
    w.reviewing.status.connect(lambda text, _ms: said.append(text))
    last = w.model_table.rowCount() - 1
    _select(w, [last - 2, last - 1, last])  # the three lowest-ranked rows
    w.act_mark_anomaly.trigger()
    qtbot.waitUntil(lambda: w.state.reranked is not None and _idle(w) and len(w.state.review_marks) == 3,
                    timeout=60000)
    assert w.state.reranked.weights == w.state.review.weights_before
    assert "the views weigh as before" in said[-1] and "weighed by the marked anomalies" not in said[-1]
    _select(w, [3, 4, 5])  # three of the top unreviewed rows: now some view ranks anomalies high
    w.act_mark_anomaly.trigger()
    qtbot.waitUntil(lambda: w.state.reranked is not None and _idle(w) and len(w.state.review_marks) == 6,
                    timeout=60000)
    assert w.state.reranked.weights != w.state.review.weights_before
    assert "weighed by the marked anomalies" in said[-1]


def test_a_scored_tabs_status_drops_its_review_note_once_the_open_model_cannot_review(qtbot, window, herg_path,
                                                                                      tmp_path):
    """Trained again with GLocalKD (a single view), a scored tab's status line still said how the
    consensus's views re-rank its marked rows, while its review was off."""
    w = window
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, **TINY)
    library = tmp_path / "lib.smi"
    library.write_text("CCO a\nc1ccccc1O b\nCC(=O)Nc1ccc(O)cc1 c\nCCCCN d\nCCCl e\n")
    w.score_file(str(library))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=60000)
    view = w.report_views[0]
    _select_in(view, [0])
    w.act_mark_anomaly.trigger()
    _reviewed(qtbot, w, view, 1)
    assert "Reviewed rows re-rank the others" in view.status.text()
    train_and_wait(qtbot, w, detector="glocalkd", **TINY)
    assert view.book.marks and "Reviewed rows re-rank" not in view.status.text()


def test_while_marks_re_rank_the_actions_that_look_enabled_are_not_refused_as_busy(qtbot, window, herg_path,
                                                                                  monkeypatch):
    """For a moment after a mark, Open and Score another file looked enabled (the window left the
    re-ranking out of "busy") but answered "Busy: wait for the current work..." with no Stop (the
    controllers counted it). One meaning of busy (:meth:`app.workers.Runner.blocking`) serves both."""
    import threading

    from app import tasks

    w = window
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, **TINY)
    release, rerank = threading.Event(), tasks.rerank

    def held_rerank(*args, **kwargs):  # the re-ranking, held while the window is looked at
        release.wait(60)
        return rerank(*args, **kwargs)

    monkeypatch.setattr(tasks, "rerank", held_rerank)
    try:
        _select(w, [3])
        w.act_mark_anomaly.trigger()
        assert w.runner.running() == ["review"]
        w._update_state()
        for action, controller, doing in ((w.act_open, w.opening, "opening a file"),
                                          (w.act_score_file, w.screening, "scoring a file"),
                                          (w.act_train, w.training, "training")):
            w.feedback.last_warning = ""
            assert action.isEnabled() and not controller.refused_while_busy(doing), doing
            assert not w.feedback.last_warning
    finally:
        release.set()
    qtbot.waitUntil(lambda: w.state.reranked is not None and _idle(w), timeout=60000)
