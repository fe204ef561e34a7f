"""The app's exports (CSV, SDF, pictures) go through core's one writer: a link planted at the
export's name, or at the fixed temporary name the exports once used, is never written through."""
from __future__ import annotations

import os

import numpy as np
import pytest

from app import tasks
from core import GLocalKD, load


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    data = tmp_path_factory.mktemp("d") / "lib.smi"
    data.write_text("CCO a\nCCN b\nc1ccccc1 c\nCC(=O)O d\nCCCl e\n")
    graphs = load(data)
    model = GLocalKD(epochs=2, hidden_dim=16, out_dim=8, seed=0).fit(graphs)
    return graphs, model.score(graphs)


def _plant(folder, name):
    victim = folder / "victim.txt"
    victim.write_text("precious\n")
    for planted in (name, f".{name}.tmp"):
        (folder / planted).symlink_to(victim)
    return victim


def _usual_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@pytest.mark.parametrize("name", ["export.csv", "export.sdf"])
def test_exports_never_write_through_a_planted_link(tmp_path, scored, name):
    graphs, scores = scored
    victim = _plant(tmp_path, name)
    flagged = np.zeros(len(graphs), dtype=bool)
    if name.endswith(".csv"):
        assert tasks.export_csv(str(tmp_path / name), graphs, scores, None, flagged) == len(graphs)
    else:
        assert tasks.export_sdf(str(tmp_path / name), graphs, scores, None, flagged, None) == len(graphs)
    out = tmp_path / name
    assert victim.read_text() == "precious\n"
    assert out.is_file() and not out.is_symlink() and out.stat().st_mode & 0o777 == _usual_mode()


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_a_saved_picture_is_written_whole_and_never_through_a_link(qtbot, tmp_path, suffix):
    from app.widgets.plots import LossPlot

    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.show_losses([3.0, 2.0, 1.5])
    name = f"loss.{suffix}"
    victim = _plant(tmp_path, name)
    plot.save_to(str(tmp_path / name))
    out = tmp_path / name
    assert victim.read_text() == "precious\n" and not out.is_symlink()
    head = out.read_bytes()[:200]
    assert head.startswith(b"\x89PNG") if suffix == "png" else b"<svg" in head or b"<?xml" in head


def test_an_sd_file_of_graphs_that_are_not_molecules_is_refused_not_written_empty(qtbot, window, tu_folder, tmp_path,
                                                                                  monkeypatch):
    """File > Export offers only CSV for graphs that are not molecules, but a name typed with .sdf
    kept its suffix, and the SD writer skipped every graph: an empty file, counted as exported."""
    from PySide6.QtWidgets import QFileDialog

    from tests.app.test_main_window import _idle, open_and_wait, train_and_wait

    open_and_wait(qtbot, window, tu_folder)
    train_and_wait(qtbot, window, detector="size")
    target = tmp_path / "toy_ranked.sdf"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    exported = []
    window.exporter.exported.connect(lambda *args: exported.append(args))
    window.act_export.trigger()
    qtbot.waitUntil(lambda: _idle(window) and bool(window.feedback.last_warning), timeout=60000)
    assert "not molecules" in window.feedback.last_warning and "toy_ranked.sdf" in window.feedback.last_warning
    assert not target.exists() and not exported  # nothing written, nothing counted as saved


def test_a_stopped_scored_files_export_lists_the_rows_never_read(tmp_path):
    """Score another file, Stop, Export: the CSV held the rows scored so far and nothing said the
    rest of the file was never read."""
    import csv

    from core import make_detector, read_report, screen
    from tests.conftest import moses_library

    library = moses_library(tmp_path / "lib.smi", 300, {})
    model = make_detector("size").fit(load(str(library)).subset(range(100)))
    calls = []
    summary = screen(model, library, tmp_path / "s.csv", chunk_size=50, workers=1,
                     on_progress=lambda read, scored: calls.append(read), should_stop=lambda: len(calls) >= 3)
    report = read_report(tmp_path / "s.csv")
    assert summary.stopped and report.stopped_after == summary.last_line
    tasks.export_report_csv(str(tmp_path / "tab.csv"), report, None)
    rows = list(csv.DictReader((tmp_path / "tab.csv").open(encoding="utf-8")))
    assert sum(r["status"] == "ok" for r in rows) == len(report)
    assert rows[-2]["status"] == (f"not scored: the run was stopped after input line {summary.last_line:,}; the rows "
                                  "after it were not read")
    # then the end row, which says so too: a merge refuses the export as it refuses the stopped run's report
    assert rows[-1]["status"].startswith("end of report: ") and rows[-1]["status"].endswith(
        f"stopped after input line {summary.last_line}")
    # read back, that row says where the run stopped, and is exported again as it was ("rejected: not scored")
    again = read_report(tmp_path / "tab.csv")
    assert again.stopped_after == summary.last_line and not again.rejects
    tasks.export_report_csv(str(tmp_path / "again.csv"), again, None)
    assert list(csv.DictReader((tmp_path / "again.csv").open(encoding="utf-8")))[-2]["status"] == rows[-2]["status"]
    assert again.intact


def test_a_stopped_runs_export_is_merged_and_resumed_as_the_stopped_runs_report(tmp_path):
    """The export's row for the lines never read is not counted by its end row: merge-reports and a
    resumed screen counted it ("7 rows where the end-of-report row says 6: the report was cut or
    edited"), so the export was neither refused as a stopped run's nor resumed. Both readers skip
    that row, as read_report does."""
    from core import DataError, make_detector, merge_reports, read_report, screen
    from tests.conftest import moses_library

    library = moses_library(tmp_path / "lib.smi", 200, {10: "C1CC"})
    model = make_detector("size").fit(load(str(library)).subset(range(100)))
    calls = []
    screen(model, library, tmp_path / "s.csv", chunk_size=50, workers=1,
           on_progress=lambda read, scored: calls.append(read), should_stop=lambda: len(calls) >= 2)
    export = tmp_path / "tab.csv"
    tasks.export_report_csv(str(export), read_report(tmp_path / "s.csv"), None)
    with pytest.raises(DataError, match="a stopped run's report is not merged"):
        merge_reports([export], tmp_path / "m.csv")
    resumed = screen(model, library, export, chunk_size=50, workers=1, resume=True)
    assert not resumed.stopped and (resumed.rows, resumed.scored, resumed.rejected) == (200, 199, 1)
    screen(model, library, tmp_path / "whole.csv", chunk_size=50, workers=1)
    assert export.read_bytes() == (tmp_path / "whole.csv").read_bytes()


def test_an_export_in_a_reviews_rank_order_is_refused_by_merge_as_such(tmp_path):
    """A tab with marked rows exports them in its review's rank order, with a review column: a merge
    of that file said "rows are not in rank order (was the report edited?)". It says the rows follow
    a review's ranks, and what to merge instead."""
    from core import DataError, make_detector, merge_reports, read_report, screen
    from tests.conftest import moses_library

    library = moses_library(tmp_path / "lib.smi", 30, {})
    model = make_detector("size").fit(load(str(library)))
    screen(model, library, tmp_path / "s.csv", workers=1)
    report = read_report(tmp_path / "s.csv")
    assert report.score[0] > report.score[-1]
    rank = np.arange(1, len(report) + 1)
    rank[[0, -1]] = rank[[-1, 0]]  # the analyst put the last row first
    export = tmp_path / "tab.csv"
    tasks.export_report_csv(str(export), report, None, review={len(report) - 1: "anomaly"}, rank=rank)
    with pytest.raises(DataError, match="tab.csv:3: its rows follow the ranks of an analyst's review .*not the "
                       "scores', so it cannot be merged: export it before marking rows, or merge the reports"):
        merge_reports([export], tmp_path / "m.csv")
    tasks.export_report_csv(str(export), report, None, rank=rank)  # no review column: as edited
    with pytest.raises(DataError, match="rows are not in rank order"):
        merge_reports([export], tmp_path / "m.csv")


def test_a_report_tabs_html_is_of_its_own_rows_whatever_became_of_its_file(qtbot, window, tmp_path):
    """The HTML export of a report tab read the report file again (as a molecule table): a file
    deleted since failed, a row rejected for its id but with a parsable SMILES made "3 molecules
    read back for 2 scored rows", and a file replaced by another report of as many rows gave that
    file's molecules under the tab's name. It draws the tab's rows, as the other exports do."""
    from core.cli.main import main
    from tests.app.test_main_window import _idle

    model = tmp_path / "m.pt"
    lib = tmp_path / "lib.smi"
    lib.write_text("CCO m1\nCCN m2\nc1ccccc1 m3\nCC(=O)O m4\nCCCl m5\nCCCCO m6\n")
    GLocalKD(epochs=2, hidden_dim=16, out_dim=8, seed=0, device="cpu").fit(load(lib)).save(model)
    table = tmp_path / "missing.csv"
    table.write_text("smiles,id\nCCO,alpha\nCCC\nc1ccccc1,gamma\n")  # line 3 lacks its id: rejected, its SMILES kept
    report = tmp_path / "rep.csv"
    assert main(["score", str(model), str(table), "-o", str(report)]) == 0
    other = tmp_path / "other.csv"
    (tmp_path / "x.smi").write_text("CCCCCCCC X1\nOCCO X2\n")
    assert main(["score", str(model), str(tmp_path / "x.smi"), "-o", str(other)]) == 0
    w = window
    qtbot.waitUntil(lambda: w.opening.ready, timeout=60000)
    w.open_path(str(report))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=60000)
    w.results_tabs.setCurrentWidget(w.report_views[0])
    for step, change in enumerate([lambda: None, lambda: other.replace(report), report.unlink]):
        change()  # as it was; replaced by another report of as many rows; then gone
        out = tmp_path / f"r{step}.html"
        w.feedback.last_warning = ""
        w.export_html(str(out))
        qtbot.waitUntil(lambda out=out: _idle(w) and (out.is_file() or bool(w.feedback.last_warning)), timeout=60000)
        assert not w.feedback.last_warning and out.is_file()
        text = out.read_text(encoding="utf-8")
        assert "alpha" in text and "gamma" in text and "X1" not in text and "X2" not in text


def test_a_report_tabs_html_shows_its_own_scores_on_the_shared_colour_scale(tmp_path, monkeypatch):
    """After another model was trained, the tab's HTML printed that model's scores beside the
    report's ranks; and its heatmaps took a colour scale of their own, not the tab's shared one."""
    import core
    from app import tasks
    from core.cli.main import main
    from core.io.ranked_report import read_report

    lib = tmp_path / "lib.smi"
    lib.write_text("CCO m1\nCCN m2\nc1ccccc1 m3\nCC(=O)O m4\nCCCl m5\nCCCCO m6\n")
    wrote = GLocalKD(epochs=2, hidden_dim=16, out_dim=8, seed=0, device="cpu").fit(load(lib))
    wrote.save(tmp_path / "m.pt")
    assert main(["score", str(tmp_path / "m.pt"), str(lib), "-o", str(tmp_path / "rep.csv")]) == 0
    report = read_report(tmp_path / "rep.csv")
    drawn = []
    monkeypatch.setattr(core, "html_report", lambda path, graphs, scores, settings, **kw: drawn.append(
        (scores, settings, kw["vmax"])) or len(graphs))
    since = GLocalKD(epochs=3, hidden_dim=16, out_dim=8, seed=1, device="cpu").fit(load(lib))
    for model, heatmaps in ((wrote, True), (since, False)):
        tasks.export_report_html(str(tmp_path / "r.html"), report, model, vmax=2.5)
        scores, settings, vmax = drawn[-1]
        np.testing.assert_allclose(scores.score, report.score, rtol=1e-5)
        assert vmax == 2.5 and scores.has_node_scores == heatmaps and ("detector" in settings) == heatmaps


def test_no_export_replaces_the_file_its_rows_came_from(qtbot, window, tmp_path):
    """Export named like the training data file replaced it with the report (status: "81 rows
    written to victim.csv"), and a scored file's tab could replace the file it scored: every
    export of a tab (CSV, SDF, HTML) refuses the files its rows came from, and writes elsewhere."""
    from tests.app.test_main_window import _idle, open_and_wait, train_and_wait

    data = tmp_path / "victim.csv"
    data.write_text("id,smiles\n" + "".join(f"m{i},{'C' * (1 + i % 7)}O\n" for i in range(40)))
    scored = tmp_path / "scored.smi"
    scored.write_text("CCO a\nCCN b\nc1ccccc1 c\n")
    before = {p: p.read_bytes() for p in (data, scored)}
    w = window
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w, detector="size")
    w.score_file(str(scored))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=120000)
    for tab, victim in ((0, data), (1, scored)):
        w.results_tabs.setCurrentIndex(tab)
        for export in (w.export_report, w.export_html):
            w.feedback.last_warning = ""
            export(str(victim))
            qtbot.waitUntil(lambda: _idle(w) and bool(w.feedback.last_warning), timeout=60000)
            assert "is an input" in w.feedback.last_warning and victim.name in w.feedback.last_warning
        assert {p: p.read_bytes() for p in (data, scored)} == before
        out = tmp_path / f"tab{tab}.csv"
        w.export_report(str(out))
        qtbot.waitUntil(lambda out=out: _idle(w) and out.is_file(), timeout=60000)


def test_a_scored_tabs_exports_keep_the_molecules_that_were_scored(tmp_path):
    """A standardising model's scored file: the tab's CSV left out ``standardised_smiles``, its SD
    file wrote the salt as read with the top atoms of the molecule scored (atom 2 of
    ``CCN(CC)CC.Cl`` is not the N the top atoms name), and its weights were the salts'."""
    import csv

    from rdkit import Chem

    from core import make_detector, read_report, screen
    from tests.conftest import DEMO_DATA

    model = make_detector("glocalkd", epochs=1, hidden_dim=8, out_dim=4, device="cpu")
    model.fit(load(DEMO_DATA / "herg.tab", standardise=True).subset(range(80)))
    table = tmp_path / "salts.csv"
    table.write_text("id,smiles\nsalt1,[Na+].[O-]C(=O)c1ccccc1\nsalt2,Cl.CCN(CC)CC\nok1,CCOc1ccccc1\n")
    screen(model, table, tmp_path / "r.csv", workers=1)
    report = read_report(tmp_path / "r.csv")
    tasks.add_report_properties(report)
    tasks.export_report_csv(str(tmp_path / "tab.csv"), report, None)
    rows = {r["id"]: r for r in csv.DictReader((tmp_path / "tab.csv").open(encoding="utf-8"))}
    assert rows["salt2"]["standardised_smiles"] == "CCN(CC)CC" and rows["salt2"]["smiles"] == "Cl.CCN(CC)CC"
    assert float(rows["salt1"]["mw"]) == pytest.approx(122.12, abs=0.01)  # benzoic acid's, not the salt's
    tasks.export_report_sdf(str(tmp_path / "tab.sdf"), report, None)
    for mol in Chem.SDMolSupplier(str(tmp_path / "tab.sdf")):
        if mol is not None and mol.GetNumAtoms():
            assert "." not in Chem.MolToSmiles(mol)  # the molecule scored, whose atoms the top atoms number
            top = mol.GetProp("top_atoms").split(";")[0].split(":")[0]
            atom = mol.GetAtomWithIdx(int("".join(c for c in top if c.isdigit())))
            assert top.startswith(atom.GetSymbol())


def test_a_scored_tu_collections_tab_writes_its_html_report(qtbot, window, aids_zip, tmp_path):
    """The HTML export of a scored TU collection's tab was refused ("graphs without SMILES"), while
    the training tab of the same collection wrote one. It is drawn from the file the tab was scored
    from when the window knows it, and otherwise lists the rows as the report holds them."""
    from core import make_detector
    from tests.app.test_main_window import _idle

    aids = load(aids_zip)
    w = window
    qtbot.waitUntil(lambda: w.opening.ready, timeout=60000)
    w.state.set_data(str(aids_zip), aids, "")
    w.state.set_trained(make_detector("size").fit(aids), None, len(aids), None, None, None)
    w.score_file(str(aids_zip))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=120000)
    view = w.report_views[0]
    assert len(view.report) == 2000 and not any(view.report.smiles)
    w.results_tabs.setCurrentWidget(view)
    drawn = tmp_path / "drawn.html"
    w.export_html(str(drawn))
    qtbot.waitUntil(lambda: _idle(w) and (drawn.is_file() or bool(w.feedback.last_warning)), timeout=120000)
    assert not w.feedback.last_warning
    text = drawn.read_text(encoding="utf-8")
    assert text.count("<td class='mol'><svg") == 25 and str(view.report.ids[0]) in text and "2,000 (" in text

    listed = tmp_path / "listed.html"  # the same report opened from its file: no scored file known
    w.open_path(str(view.report.source))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 2, timeout=60000)
    w.results_tabs.setCurrentWidget(w.report_views[1])
    assert w.report_views[1].report.scored_input is None
    w.export_html(str(listed))
    qtbot.waitUntil(lambda: _idle(w) and (listed.is_file() or bool(w.feedback.last_warning)), timeout=120000)
    assert not w.feedback.last_warning
    text = listed.read_text(encoding="utf-8")
    assert "<td class='mol'><svg" not in text and text.count("<td class='mol'></td>") == 25
    assert str(view.report.ids[0]) in text


def test_a_file_scored_twice_gets_a_tab_of_its_own_name(qtbot, window, tmp_path):
    """Scoring a file again (after training another model) opened a second tab of the same title,
    and nothing told the two apart."""
    from core import make_detector
    from tests.app.test_main_window import _idle

    w = window
    qtbot.waitUntil(lambda: w.opening.ready, timeout=60000)
    library = tmp_path / "lib.smi"
    library.write_text("CCO a\nCCN b\nc1ccccc1 c\nCCCl d\n")
    graphs = load(library)
    w.state.set_data(str(library), graphs, "")
    w.state.set_trained(make_detector("size").fit(graphs), None, len(graphs), None, None, None)
    for tabs in (1, 2):
        w.score_file(str(library))
        qtbot.waitUntil(lambda tabs=tabs: _idle(w) and len(w.report_views) == tabs, timeout=60000)
    titles = [w.results_tabs.tabText(w.results_tabs.indexOf(v)) for v in w.report_views]
    assert titles == ["lib.smi (scored)", "lib.smi (scored 2)"]


def test_a_scored_tab_never_says_the_open_model_scored_it_once_another_is_open(qtbot, window, tmp_path):
    """A scored file's tab said "scored with the current model" for good, also after another model
    was trained or loaded: the status line now follows the model open, by the report's fingerprint."""
    from core import make_detector
    from tests.app.test_main_window import _idle

    w = window
    qtbot.waitUntil(lambda: w.opening.ready, timeout=60000)
    library = tmp_path / "lib.smi"
    library.write_text("CCO a\nCCN b\nc1ccccc1 c\nCCCl d\nCCCCO e\n")
    graphs = load(library)
    first = make_detector("size").fit(graphs)
    w.state.set_data(str(library), graphs, "")
    w.state.set_trained(first, None, len(graphs), None, None, None)
    w.score_file(str(library))
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=60000)
    view = w.report_views[0]
    assert "scored by the open model" in view.status.text()
    other = make_detector("size").fit(graphs.subset([0, 1, 2]))
    assert other.fingerprint() != first.fingerprint()
    w.state.set_trained(other, None, 3, None, None, None)
    assert "scored by another model than the one open now" in view.status.text()
    assert "scored by the open model" not in view.status.text()
    w.state.set_trained(first, None, len(graphs), None, None, None)  # the model that scored it, opened again
    assert "scored by the open model" in view.status.text()


def test_an_export_of_every_row_keeps_the_reports_cut_and_a_stopped_runs_reading_checks(tmp_path):
    """The export's end row dropped what the report's said beyond its model: a --top report's export
    merged as a whole library (q-values over its 10 rows), and a stopped run's export resumed over a
    library changed since, mixing its rows with the stopped run's."""
    import shutil

    from core import DataError, make_detector, merge_reports, read_report, screen
    from tests.conftest import moses_library

    library = moses_library(tmp_path / "lib.smi", 200, {})
    model = make_detector("size").fit(load(str(library)).subset(range(100)))
    screen(model, library, tmp_path / "top.csv", workers=1, top=10)
    top = read_report(tmp_path / "top.csv")
    tasks.export_report_csv(str(tmp_path / "top_export.csv"), top, None)
    assert read_report(tmp_path / "top_export.csv").end.cut_from == top.end.cut_from == 200
    with pytest.raises(DataError, match="summary"):  # its rows are the best of 200: the summary counts the rest
        merge_reports([tmp_path / "top_export.csv"], tmp_path / "m.csv")

    changed = tmp_path / "changed.smi"
    shutil.copy(library, changed)
    calls = []
    screen(model, changed, tmp_path / "s.csv", chunk_size=50, workers=1,
           on_progress=lambda read, scored: calls.append(read), should_stop=lambda: len(calls) >= 2)
    export = tmp_path / "tab.csv"
    tasks.export_report_csv(str(export), read_report(tmp_path / "s.csv"), None)
    lines = changed.read_text().splitlines(keepends=True)
    changed.write_text("".join(["CCO x\n"] * 20 + lines[20:]))  # the rows the stopped run read, replaced
    with pytest.raises(DataError, match="not the ones the stopped run read"):
        screen(model, changed, export, chunk_size=50, workers=1, resume=True)


def test_a_labelled_report_tabs_html_has_the_roc_of_the_training_tabs_anomalous_class(tmp_path):
    """A labelled scored file's HTML report had no ROC curve (the training tab's had one): the tab's
    export never passed an anomalous class. It now takes the class the training tab's rule picks
    (the minority class, :func:`app.state.default_anomaly_label`)."""
    from core import read_report, roc_auc, score_file

    lib = tmp_path / "lib.csv"
    rows = [("CCO", 0), ("CCN", 0), ("c1ccccc1", 1), ("CC(=O)O", 0), ("CCCl", 0), ("CCCCO", 0), ("c1ccncc1", 1),
            ("CCOC", 0)]
    lib.write_text("smiles,id,label\n" + "".join(f"{s},m{k},{lab}\n" for k, (s, lab) in enumerate(rows)))
    model = GLocalKD(epochs=2, hidden_dim=16, out_dim=8, seed=0, device="cpu").fit(load(lib))
    scored = score_file(model, lib, tmp_path / "rep.csv", label_column="label")
    report = read_report(scored.report)
    out = tmp_path / "r.html"
    tasks.export_report_html(str(out), report, model)
    auc = roc_auc(np.array([lab == "1" for lab in report.labels]), report.score)
    assert f"ROC-AUC {auc:.3f}" in out.read_text(encoding="utf-8")
