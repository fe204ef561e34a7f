"""A chemist's properties beside the score (table columns, exports) and the filters on them:
flagged only, numeric ranges, the count of rows shown, and their persistence (pytest-qt, offscreen)."""
from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app import tasks
from app.main_window import MainWindow
from app.widgets.table import COLUMNS
from core import (PROPERTY_COLUMNS, REPORT_COLUMNS, GLocalKD, fit_with_calibration, load, molecular_properties,
                  read_report, write_report)
from tests.app.test_every_tab import ROOT_SMILES, open_report
from tests.app.test_main_window import _idle


@pytest.fixture(scope="module")
def herg(tmp_path_factory):
    """A tiny calibrated GLocalKD on hERG, its scores, p-values and properties, and a report it wrote
    without properties (as older versions wrote them)."""
    from tests.conftest import DEMO_DATA

    graphs = load(str(DEMO_DATA / "herg.tab"))
    model = GLocalKD(epochs=2, hidden_dim=16, out_dim=8, batch_size=128)
    fit_with_calibration(model, graphs)
    scores = model.score(graphs)
    folder = tmp_path_factory.mktemp("report")
    smi = folder / "library.smi"
    smi.write_text(ROOT_SMILES)
    lib = load(str(smi))
    report = folder / "library_ranked.csv"
    write_report(report, lib, model.score(lib))
    return {"graphs": graphs, "model": model, "scores": scores, "properties": tasks.graph_properties(graphs),
            "report": str(report)}


def show(qtbot, w, herg) -> None:
    qtbot.waitUntil(lambda: w.opening.ready and _idle(w), timeout=60000)
    w.state.set_data("herg.tab", herg["graphs"], "", herg["properties"])
    w.state.set_trained(herg["model"], herg["scores"], len(herg["graphs"]), None, None, None)  # the views follow


def count_text(w) -> str:
    return w.filters.count.text()


def test_properties_are_sortable_columns_of_the_training_table(qtbot, window, herg):
    w = window
    show(qtbot, w, herg)
    mw = herg["properties"]["mw"]
    col = COLUMNS.index("MW")
    assert not w.table.isColumnHidden(col) and not w.table.isColumnHidden(COLUMNS.index("Charge"))
    first = w.model_table.graph_index(0)
    assert w.model_table.index(0, col).data() == f"{mw[first]:.2f}"
    w.table.sortByColumn(col, Qt.SortOrder.DescendingOrder)  # the heaviest first
    shown = [mw[w.model_table.graph_index(r)] for r in range(w.model_table.rowCount())]
    assert shown == sorted(shown, reverse=True) and shown[0] == mw.max()


def test_flagged_only_and_ranges_combine_with_the_text_filter_and_the_count_says_so(qtbot, window, herg):
    w = window
    show(qtbot, w, herg)
    total = len(herg["graphs"])
    assert count_text(w).startswith(f"{total:,} of {total:,} shown")
    flagged = w.state.flagged()
    assert 0 < flagged.sum() < total
    w.filters.flagged_only.setChecked(True)
    assert w.model_table.visible_count() == flagged.sum()
    assert count_text(w).startswith(f"{flagged.sum():,} of {total:,} shown")
    w.filters.flagged_only.setChecked(False)
    mw, charge = herg["properties"]["mw"], herg["properties"]["formal_charge"]
    low, high = w.filters.range_filter.edits["MW"]
    high.setText("350")
    qtbot.waitUntil(lambda: w.model_table.visible_count() == int((mw <= 350).sum()), timeout=5000)
    assert count_text(w).startswith(f"{int((mw <= 350).sum()):,} of {total:,} shown")
    assert w.filters.range_filter.text() == "Ranges (1)"
    w.filters.range_filter.edits["Charge"][0].setText("1")  # charged and light
    expected = (mw <= 350) & (charge >= 1)
    qtbot.waitUntil(lambda: w.model_table.visible_count() == int(expected.sum()), timeout=5000)
    w.filters.flagged_only.setChecked(True)  # and flagged
    assert w.model_table.visible_count() == int((expected & flagged).sum())
    w.filters.text_edit.setText("CHEMBL")  # and the text filter
    ids = np.array(["chembl" in f"{m.id}\t{m.name}\t{m.smiles}\t{m.label or ''}".lower() for m in herg["graphs"].meta])
    qtbot.waitUntil(lambda: w.model_table.visible_count() == int((expected & flagged & ids).sum()), timeout=5000)
    w.filters.range_filter.edits["Score"][0].setText(f"{np.max(herg['scores'].score) + 1}")  # above every score
    qtbot.waitUntil(lambda: w.model_table.visible_count() == 0, timeout=5000)
    assert count_text(w).startswith(f"0 of {total:,} shown")
    w.filters.range_filter.clear()
    w.filters.flagged_only.setChecked(False)
    w.filters.text_edit.clear()
    qtbot.waitUntil(lambda: w.model_table.visible_count() == total, timeout=5000)


def test_filters_persist_across_relaunch(qtbot, settings, herg):
    first = MainWindow(settings)
    qtbot.addWidget(first)
    first.filters.flagged_only.setChecked(True)
    first.filters.range_filter.edits["TPSA"][1].setText("90")
    first.filters.range_filter.edits["q-value"][1].setText("0.1")
    first.close()
    second = MainWindow(settings)
    qtbot.addWidget(second)
    assert second.filters.is_flagged_only()
    assert second.filters.ranges() == {"TPSA": (None, 90.0), "q-value": (None, 0.1)}
    show(qtbot, second, herg)
    tpsa = herg["properties"]["tpsa"]
    expected = (tpsa <= 90) & second.state.flagged() & (second.state.q_values() <= 0.1)
    assert second.model_table.visible_count() == int(expected.sum())
    second.runner.stop_all()


def test_a_scored_file_tab_shows_properties_even_from_an_older_report_and_filters_them(qtbot, window,
                                                                                        herg):
    view = open_report(qtbot, window, herg["report"])
    assert read_report(herg["report"]).properties == {}  # written without them: the app computed them
    col = COLUMNS.index("Heavy atoms")
    assert not view.table.isColumnHidden(col)
    heavy = {view.report.ids[i]: view.report.properties["heavy_atoms"][i] for i in range(len(view.report))}
    assert heavy["a1"] == 3 and heavy["a3"] == 11
    assert view.count.text() == "4 of 4 shown"
    view.range_filter.edits["Heavy atoms"][0].setText("7")  # phenol (7) and paracetamol (11)
    qtbot.waitUntil(lambda: view.count.text() == "2 of 4 shown", timeout=5000)
    shown = {view.report.ids[view.model_table.graph_index(r)] for r in range(view.model_table.rowCount())}
    assert shown == {k for k, v in heavy.items() if v >= 7}


def test_a_range_on_a_column_without_values_filters_nothing_on_a_scored_files_tab(qtbot, window, herg):
    """A report of a model without calibration has no p-values: a p-value range hid every row of
    its tab (its NaN counted as outside), where the training tab's filtered nothing."""
    view = open_report(qtbot, window, herg["report"])
    assert not np.isfinite(view.report.p_value).any()
    view.range_filter.edits["p-value"][1].setText("0.5")
    view.range_filter.edits["Heavy atoms"][0].setText("7")  # a column with values still filters
    qtbot.waitUntil(lambda: view.count.text() == "2 of 4 shown", timeout=5000)
    view.range_filter.edits["Heavy atoms"][0].setText("")
    qtbot.waitUntil(lambda: view.count.text() == "4 of 4 shown", timeout=5000)


def test_csv_exports_carry_properties_and_alerts_and_read_back(herg, tmp_path):
    g = herg["graphs"]
    flagged = np.zeros(len(g), dtype=bool)
    rows = np.arange(10)
    assert tasks.export_csv(str(tmp_path / "t.csv"), g, herg["scores"], rows, flagged,
                            properties=herg["properties"]) == 10
    with open(tmp_path / "t.csv", newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
        fh.seek(0)
        read = list(csv.DictReader(fh))
    assert header == [*REPORT_COLUMNS, *PROPERTY_COLUMNS, "alerts", "flagged"]
    by_id = {r["id"]: r for r in read}
    expected = molecular_properties(g)
    for i in rows:
        row = by_id[g.meta[i].id]
        assert float(row["mw"]) == pytest.approx(expected["mw"][i], abs=0.005)
        assert int(row["formal_charge"]) == expected["formal_charge"][i]
    assert any(r["alerts"] for r in read)  # hERG blockers match Brenk alerts
    # a scored file's tab writes a ranked report with the columns: it reads back as one
    report = read_report(herg["report"])
    tasks.add_report_properties(report)
    assert tasks.export_report_csv(str(tmp_path / "r.csv"), report, None) == 5  # 4 scored, 1 rejected
    again = read_report(tmp_path / "r.csv")
    assert set(again.properties) == set(PROPERTY_COLUMNS) and again.alerts is not None
    assert np.allclose(again.properties["mw"], report.properties["mw"], atol=0.005)
    assert [r.id for r in again.rejects] == ["bad1"]


def test_a_tu_molecule_set_shows_and_exports_its_properties_and_alerts(qtbot, window, aids_zip, tmp_path):
    """Opened and exported as a user does: AIDS's labels name elements, so the table has the
    property columns and the exported report the properties and alerts, as its SD export has."""
    from tests.app.test_main_window import open_and_wait, train_and_wait

    w = window
    open_and_wait(qtbot, w, aids_zip)
    assert w.state.properties is not None and not w.table.isColumnHidden(COLUMNS.index("MW"))
    train_and_wait(qtbot, w, detector="size")
    out = tmp_path / "aids.csv"
    w.export_report(str(out))
    qtbot.waitUntil(lambda: _idle(w) and out.exists(), timeout=180000)
    rows = list(csv.DictReader(open(out, encoding="utf-8")))[:-1]  # less the end row
    assert len(rows) == 2000 and all(r["mw"] and r["tpsa"] for r in rows)
    assert sum(bool(r["alerts"]) for r in rows) > 200
    expected = molecular_properties(w.graphs)
    by_id = {r["id"]: r for r in rows}
    for i in range(0, 2000, 97):
        assert float(by_id[w.graphs.meta[i].id]["mw"]) == pytest.approx(expected["mw"][i], abs=0.005)


def test_a_range_bound_that_is_not_a_clear_number_is_marked_not_guessed(qtbot):
    """"1,000" was read as 1.0 and "abc" dropped, each without a word: the table showed rows the
    user had meant to hide."""
    from app.widgets.filter_bar import RangeFilter, _number

    assert [_number(t) for t in ("1000", "1.5", "1,5", "-2,25", "1e3", "1,000", "1.000,5", "abc", "inf")] == [
        1000.0, 1.5, 1.5, -2.25, 1000.0, None, None, None, None]
    ranges = RangeFilter()
    qtbot.addWidget(ranges)
    heading = next(iter(ranges.edits))
    lo, hi = ranges.edits[heading]
    lo.setText("1,000")
    ranges._emit()
    assert ranges.ranges() == {} and ranges.text() == "Ranges: 1 to check" and "1000 or 1.5" in lo.toolTip()
    lo.setText("5")
    hi.setText("2")
    ranges._emit()
    assert ranges.text() == "Ranges (1): 2 to check" and "above the maximum" in hi.toolTip()
    hi.setText("50")
    ranges._emit()
    assert ranges.text() == "Ranges (1)" and not lo.toolTip() and not lo.styleSheet()
