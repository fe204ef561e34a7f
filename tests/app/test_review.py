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
    """Select table rows as a user does (Ctrl+click); returns their graph indices."""
    from PySide6.QtCore import QItemSelectionModel

    sel = w.table.selectionModel()
    sel.clearSelection()
    for r in rows:
        sel.select(w.model_table.index(r, 0), QItemSelectionModel.SelectionFlag.Select |
                   QItemSelectionModel.SelectionFlag.Rows)
    return [w.model_table.graph_index(r) for r in rows]


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
