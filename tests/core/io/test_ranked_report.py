"""Reading ranked reports back (the GUI's view of a screening result)."""
from __future__ import annotations

import numpy as np
import pytest

from core import GLocalKD, REPORT_COLUMNS, load, write_report
from core.errors import DataError
from core.io.ranked_report import is_report, read_report, report_graphs, row_graphs


def test_a_written_report_reads_back_row_for_row(tmp_path, smiles_file):
    graphs = load(smiles_file)
    model = GLocalKD(epochs=2, hidden_dim=8, out_dim=4, device="cpu").fit(graphs)
    scores = model.score(graphs)
    path = tmp_path / "r.csv"
    write_report(path, graphs, scores, top_k=3)
    assert is_report(path) and not is_report(smiles_file)
    report = read_report(path)
    order = scores.ranking()
    assert len(report) == len(graphs)
    assert list(report.ids) == [graphs.meta[i].id for i in order]
    assert np.allclose(report.score, scores.score[order], rtol=1e-5)
    assert np.allclose(report.node_score, scores.node_term[order], rtol=1e-5)
    assert list(report.num_nodes) == [int(graphs.graphs[i].num_nodes) for i in order]
    assert [r.reason for r in report.rejects] == [f"line {r.line}: {r.reason}" for r in graphs.rejects]
    top = report.top_nodes_of(0)
    assert len(top) == 3 and top[0][1] >= top[1][1] >= top[2][1]
    one = row_graphs(report, 0)
    assert one.meta[0].smiles == report.smiles[0]
    assert np.isclose(model.score(one).score[0], report.score[0], rtol=1e-4)


def test_report_graphs_are_the_scored_rows_in_rank_order(tmp_path, smiles_file):
    graphs = load(smiles_file)
    model = GLocalKD(epochs=2, hidden_dim=8, out_dim=4, device="cpu").fit(graphs)
    path = tmp_path / "r.csv"
    write_report(path, graphs, model.score(graphs), top_k=3)
    report = read_report(path)
    rows = report_graphs(report)
    assert len(rows) == len(report) and rows.source == str(report.source) and rows.kind == "molecule"
    assert [m.id for m in rows.meta] == list(report.ids)  # graph i is row i
    assert [m.smiles for m in rows.meta] == list(report.smiles)
    assert [m.name for m in rows.meta] == [str(n) for n in report.names]
    assert [m.label for m in rows.meta] == [str(x) or None for x in report.labels]
    assert [int(g.num_nodes) for g in rows.graphs] == list(report.num_nodes)
    np.testing.assert_allclose(model.score(rows).score, report.score, rtol=1e-4)  # the molecules scored
    one = row_graphs(report, 2)
    assert one.meta[0] == rows.meta[2] and one.graphs[0].x.equal(rows.graphs[2].x)


def test_report_graphs_name_the_file_and_row_that_does_not_parse(tmp_path):
    head = ",".join(REPORT_COLUMNS) + "\n"
    path = tmp_path / "bad.csv"
    path.write_text(head + "1,a,,CCO,0.9,,,3,,,ok,,\n2,b,,C1CC,0.5,,,3,,,ok,,\n3,c,,CC,0.1,,,2,,,ok,,\n")
    with pytest.raises(DataError, match=r"bad\.csv.*row 2 \(b\)"):
        report_graphs(read_report(path))


def test_formula_guard_is_undone_and_bad_rows_name_their_line(tmp_path):
    head = ",".join(REPORT_COLUMNS) + "\n"
    path = tmp_path / "r.csv"
    path.write_text(head + "1,'=cmd,,CCO,0.5,,,3,,,ok,,\n")
    assert read_report(path).ids[0] == "=cmd"
    path.write_text(head + "1,a,,CCO,0.5,,,3,,ok,,\n")
    with pytest.raises(DataError, match=r"r\.csv:2: 12 fields"):
        read_report(path)
    path.write_text("rank,id,score\n1,a,0.5\n")
    with pytest.raises(DataError, match="not a ranked report"):
        read_report(path)
    path.write_text(head + "1,x,,C1CC,0.5,,,3,,,ok,,\n")
    with pytest.raises(DataError, match="row 1 \\(x\\)"):
        row_graphs(read_report(path), 0)


def test_a_report_with_a_non_finite_score_is_refused_with_its_line(tmp_path):
    """Reports written by a damaged model before scores were checked held `inf` for every row;
    opening one showed it, and picking a row then failed."""
    head = ",".join(REPORT_COLUMNS) + "\n"
    path = tmp_path / "r.csv"
    for value in ("inf", "nan", "-inf"):
        path.write_text(head + "1,a,,CCO,0.5,,,3,,,ok,,\n" + f"2,b,,CCC,{value},,,3,,,ok,,\n")
        with pytest.raises(DataError, match=rf"r\.csv:3: the score '{value}' is not a finite number"):
            read_report(path)


def test_properties_and_alerts_round_trip_and_older_reports_still_read(tmp_path, smiles_file):
    from core import PROPERTY_COLUMNS, molecular_properties

    graphs = load(smiles_file)
    model = GLocalKD(epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(graphs)
    scores = model.score(graphs)
    path = tmp_path / "r.csv"
    write_report(path, graphs, scores, properties=True, alerts=True)
    header = path.read_text().splitlines()[0].split(",")
    assert header == [*REPORT_COLUMNS, *PROPERTY_COLUMNS, "alerts"]
    assert is_report(path)
    report = read_report(path)
    order = scores.ranking()
    expected = molecular_properties(graphs)
    assert set(report.properties) == set(PROPERTY_COLUMNS)
    assert np.allclose(report.properties["mw"], expected["mw"][order], atol=0.005)
    assert list(report.properties["heavy_atoms"]) == list(expected["heavy_atoms"][order])
    assert report.alerts is not None and len(report.alerts) == len(graphs)
    assert len(report.rejects) == len(graphs.rejects)  # rejected rows carry empty extra cells
    # properties alone, and a report without either: no properties, no alerts
    write_report(path, graphs, scores, properties=True)
    assert read_report(path).alerts is None and len(read_report(path).properties) == len(PROPERTY_COLUMNS)
    write_report(path, graphs, scores)
    assert read_report(path).properties == {} and read_report(path).alerts is None
    # an unknown extra column is not a report
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0] + ",colour"] + [line + "," for line in lines[1:]]) + "\n")
    assert not is_report(path)
    with pytest.raises(DataError, match="not a ranked report"):
        read_report(path)


def test_reading_a_report_stops_when_asked(tmp_path):
    """``should_stop`` is polled every 10,000 rows: True raises Stopped naming the report."""
    from core import Stopped, make_detector

    path = tmp_path / "r.csv"
    smiles = tmp_path / "m.smi"
    smiles.write_text("".join(f"{'C' * (1 + i % 7)}O m{i}\n" for i in range(10_001)))
    graphs = load(smiles)
    write_report(path, graphs, make_detector("size").fit(graphs).score(graphs))
    assert len(read_report(path, should_stop=lambda: False)) == 10_001
    with pytest.raises(Stopped, match="r.csv"):
        read_report(path, should_stop=lambda: True)


def test_blank_lines_and_rows_a_spreadsheet_cleared_are_no_rows(tmp_path, smiles_file):
    """A blank line at the end (left by hand-editing) refused the whole report ("0 fields where a
    report row has 13"), and a row whose cells a spreadsheet cleared became a phantom reject with
    no id and no reason. Neither holds a row of the run: both are read past."""
    graphs = load(smiles_file)
    path = tmp_path / "r.csv"
    write_report(path, graphs, GLocalKD(epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(graphs).score(graphs))
    whole = read_report(path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    cleared = "," * (len(REPORT_COLUMNS) - 1) + "\r\n"
    path.write_text("".join([*lines[:2], cleared, *lines[2:], "\r\n", cleared]), encoding="utf-8")
    edited = read_report(path)
    assert list(edited.ids) == list(whole.ids) and len(edited.rejects) == len(whole.rejects)
    assert [r.id for r in edited.rejects] == [r.id for r in whole.rejects]
    assert not edited.intact  # a row was added among them: the report is not as its model wrote it


def test_merging_reads_past_a_blank_line_as_reading_back_does(tmp_path):
    """merge-reports refused a report with a blank line after its end row ("rows after the
    end-of-report row") while read_report took it: both read records through one reader now."""
    from core import make_detector, score_file
    from core.screening.merge import merge_reports

    smiles = ["CCO", "CCN", "c1ccccc1", "CCCl", "CC(=O)O", "CCCCO"]
    model = make_detector("size").fit(load_smiles(tmp_path / "train.smi", smiles))
    parts = []
    for k, rows in enumerate((smiles[:2], smiles[2:])):
        library = tmp_path / f"lib{k}.smi"
        library.write_text("".join(f"{s} m{k}_{j}\n" for j, s in enumerate(rows)))
        parts.append(tmp_path / f"p{k}.csv")
        score_file(model, library, parts[-1], workers=1)
        with parts[-1].open("a", encoding="utf-8", newline="") as fh:
            fh.write("\r\n" + "," * (len(REPORT_COLUMNS) - 1) + "\r\n")
        assert read_report(parts[-1]).intact  # after its end row: read past, the report as written
    merge_reports(parts, tmp_path / "m.csv")
    merged = read_report(tmp_path / "m.csv")
    assert len(merged) == len(smiles) and merged.intact


def load_smiles(path, smiles):
    path.write_text("".join(f"{s}\n" for s in smiles))
    return load(path)
