"""A ranked report's rows written as SDF, and the words for an FDR that flags nothing."""
import numpy as np
from rdkit import Chem

from core import fdr_unreached_note, load, make_detector, read_report, write_report, write_report_sdf


def test_a_reports_rows_become_sdf_records_with_its_columns(tmp_path):
    smi = tmp_path / "m.smi"
    smi.write_text("smiles id\nCCO a\nc1ccccc1O b\nCCN c\nnonsense d\n")
    graphs = load(str(smi))
    scores = make_detector("size").fit(graphs).score(graphs)
    write_report(tmp_path / "r.csv", graphs, scores, p_values=np.array([0.01, 0.2, 0.5]))
    report = read_report(tmp_path / "r.csv")
    assert write_report_sdf(tmp_path / "r.sdf", report, rows=[2, 0]) == 2
    mols = list(Chem.SDMolSupplier(str(tmp_path / "r.sdf")))
    assert [m.GetIntProp("rank") for m in mols] == [1, 3]  # rank order whatever the order asked
    assert [m.GetProp("id") for m in mols] == [report.ids[0], report.ids[2]]
    assert all(m.HasProp("p_value") and m.HasProp("q_value") for m in mols)
    assert not any(m.HasProp("review") for m in mols)  # no marks, no review property
    assert write_report_sdf(tmp_path / "marked.sdf", report, review={2: "not anomaly", 1: "anomaly"}) == 4
    marked = list(Chem.SDMolSupplier(str(tmp_path / "marked.sdf")))
    assert [m.GetProp("review") for m in marked[:3]] == ["", "anomaly", "not anomaly"]  # row i's mark on row i
    assert marked[3].GetNumAtoms() == 0 and marked[3].GetProp("id") == "d"  # every row: the rejected one too
    assert marked[3].GetProp("status").startswith("rejected: ")


def test_the_fdr_note_gives_the_smallest_p_and_the_rows_needed():
    text = fdr_unreached_note(131, 655, 0.05)
    assert "1/132 = 0.0076" in text and "at least 100 rows" in text and "calibration" in text


def test_the_fdr_note_says_when_no_q_value_can_reach_the_rate():
    """Below the smallest p-value no q-value reaches the rate, however many rows score: the note
    asked for "at least 5 rows" of 3 scored (and 300 digits of rows for 1e-300)."""
    text = fdr_unreached_note(131, 3, 0.005)
    assert "no q-value can reach 0.005" in text and "at least 199 calibration graphs" in text
    assert "rows score" not in text and "fewer rows" not in text
    tiny = fdr_unreached_note(131, 3, 1e-300)
    assert "no q-value can reach 1e-300" in tiny and len(tiny) < 300


def test_sdf_writers_stopped_midway_write_nothing_and_leave_no_temporary_file(tmp_path):
    """``should_stop`` polled between molecules: True raises Stopped, and neither the file nor a
    half-written temporary file is left (an existing file stays as it was)."""
    import pytest

    from core import Stopped, write_sdf

    smi = tmp_path / "m.smi"
    smi.write_text("smiles id\nCCO a\nc1ccccc1O b\nCCN c\n")
    graphs = load(str(smi))
    scores = make_detector("size").fit(graphs).score(graphs)
    write_report(tmp_path / "r.csv", graphs, scores)
    report = read_report(tmp_path / "r.csv")
    (tmp_path / "kept.sdf").write_text("before\n")
    for write, out in ((lambda path, stop: write_sdf(path, graphs, scores, should_stop=stop), "kept.sdf"),
                       (lambda path, stop: write_report_sdf(path, report, should_stop=stop), "new.sdf")):
        polled = iter([False, False, True])  # stops at the third molecule
        with pytest.raises(Stopped):
            write(tmp_path / out, lambda polled=polled: next(polled))
        assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.sdf", "m.smi", "r.csv"]
    assert (tmp_path / "kept.sdf").read_text() == "before\n"
