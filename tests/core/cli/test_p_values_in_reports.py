"""Calibrated models put p- and q-values in every report, and --fdr flags at a false-discovery rate."""
from __future__ import annotations

import numpy as np
import pytest

from core import read_report
from core.cli.main import main
from core.data.pvalues import benjamini_hochberg

TINY = ["--epochs", "2", "--hidden", "16", "--out-dim", "8", "--device", "cpu"]


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    from tests.conftest import DEMO_DATA

    folder = tmp_path_factory.mktemp("model")
    model = folder / "m.pt"
    assert main(["train", str(DEMO_DATA / "herg.tab"), "-o", str(model), *TINY]) == 0
    return model


def test_score_and_screen_write_p_and_q_values_and_flag_at_a_false_discovery_rate(calibrated, herg_path, tmp_path,
                                                                                  capsys):
    assert main(["score", str(calibrated), str(herg_path), "-o", str(tmp_path / "a.csv"), "--fdr", "0.2"]) == 0
    said = capsys.readouterr().err
    assert main(["screen", str(calibrated), str(herg_path), "-o", str(tmp_path / "b.csv"), "--workers", "1",
                 "--fdr", "0.2"]) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    report = read_report(tmp_path / "a.csv")
    assert np.isfinite(report.p_value).all() and np.isfinite(report.q_value).all()
    assert np.all(np.diff(report.p_value) >= 0)  # rank order is p order
    np.testing.assert_allclose(report.q_value, benjamini_hochberg(report.p_value), rtol=1e-5)
    flagged = int((report.q_value <= 0.2).sum())
    if flagged:
        assert f"{flagged:,} of 655 scored rows flagged at a false-discovery rate of 0.2" in said
    else:  # "ranks 1 to 0" said nothing: now why, and what to do
        assert "no row of 655 flagged at a false-discovery rate of 0.2" in said and "smallest p-value is 1/" in said
        assert "ranks 1 to 0" not in said
    assert np.all(report.q_value[:flagged] <= 0.2)


def test_merged_shards_get_q_values_over_the_whole_set(calibrated, herg_path, tmp_path):
    lines = herg_path.read_text().splitlines()
    header, body = lines[0], lines[1:]
    shards = []
    for k, part in enumerate((body[:300], body[300:])):
        shard = tmp_path / f"shard{k}.tab"
        shard.write_text("\n".join([header, *part]) + "\n")
        out = tmp_path / f"r{k}.csv"
        assert main(["screen", str(calibrated), str(shard), "-o", str(out), "--workers", "1"]) == 0
        shards.append(out)
    assert main(["merge-reports", *map(str, shards), "-o", str(tmp_path / "all.csv")]) == 0
    assert main(["screen", str(calibrated), str(herg_path), "-o", str(tmp_path / "one.csv"), "--workers", "1"]) == 0
    merged, whole = read_report(tmp_path / "all.csv"), read_report(tmp_path / "one.csv")
    np.testing.assert_array_equal(np.sort(merged.p_value), np.sort(whole.p_value))
    np.testing.assert_allclose(merged.q_value, benjamini_hochberg(merged.p_value), rtol=1e-5)


def test_an_uncalibrated_model_leaves_the_columns_empty_and_fdr_is_refused_before_any_work(herg_path, tmp_path,
                                                                                            capsys):
    """--fdr with a model without p-values was refused only after the whole file (or library) was
    scored, with exit status 0; it is refused first, exit 2, and nothing is written."""
    model = tmp_path / "plain.pt"
    assert main(["train", str(herg_path), "-o", str(model), "--calibration", "0", *TINY]) == 0
    assert main(["score", str(model), str(herg_path), "-o", str(tmp_path / "r.csv")]) == 0
    report = read_report(tmp_path / "r.csv")
    assert np.isnan(report.p_value).all() and np.isnan(report.q_value).all()
    capsys.readouterr()
    for command in ("score", "screen"):
        out = tmp_path / f"{command}.csv"
        assert main([command, str(model), str(herg_path), "-o", str(out), "--fdr", "0.1"]) == 2
        assert "plain.pt: --fdr needs p-values, and this model is not calibrated" in capsys.readouterr().err
        assert not out.exists()
    assert main(["score", str(model), str(herg_path), "-o", str(tmp_path / "r.csv"), "--fdr", "2"]) == 2


def test_reports_written_before_p_values_still_open(tmp_path):
    legacy = tmp_path / "old.csv"
    legacy.write_text("rank,id,name,smiles,score,graph_score,node_score,num_nodes,label,top_nodes,status\n"
                      "1,a,,CCO,2.5,1,1.5,3,,O2:1.2,ok\n")
    report = read_report(legacy)
    assert len(report) == 1 and report.score[0] == 2.5 and np.isnan(report.p_value[0])


def _rows(path) -> list[tuple]:
    """A report's scored rows as the whole library's screen ranks them (ids are line numbers: left out)."""
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        return [(r["rank"], r["smiles"], r["score"], r["p_value"], r["q_value"]) for r in csv.DictReader(fh)
                if r["status"] == "ok"]


def test_shards_screened_with_top_merge_into_the_whole_librarys_top(calibrated, herg_path, tmp_path, capsys):
    """Merged ``--top`` shards had q-values over their kept rows only (0.085 where the library's
    are 0.50: far too many discoveries) and kept every shard's rows. The shards' summaries count
    the p-values of the rows they did not keep, so the merge is the whole library's ``--top``."""
    import json

    lines = herg_path.read_text().splitlines()
    shards = []
    for k, part in enumerate((lines[1:300], lines[300:])):
        shard = tmp_path / f"shard{k}.tab"
        shard.write_text("\n".join([lines[0], *part]) + "\n")
        shards.append(tmp_path / f"r{k}.csv")
        assert main(["screen", str(calibrated), str(shard), "-o", str(shards[-1]), "--top", str(40 + 20 * k),
                     "--workers", "1"]) == 0
    assert main(["screen", str(calibrated), str(herg_path), "-o", str(tmp_path / "one.csv"), "--top", "40",
                 "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["merge-reports", *map(str, shards), "-o", str(tmp_path / "all.csv")]) == 0
    assert "(the best 40 of 655 scored rows: a shard kept only its best 40" in capsys.readouterr().err  # not only "40 rows"
    merged = _rows(tmp_path / "all.csv")
    assert merged == _rows(tmp_path / "one.csv") and len(merged) == 40  # the smaller cut: past it rows are missing
    summary = json.loads((tmp_path / "all.csv.summary.json").read_text())
    assert (summary["scored"], summary["kept"], sum(summary["p_counts"].values())) == (655, 40, 655)
    assert main(["merge-reports", str(tmp_path / "all.csv"), "-o", str(tmp_path / "again.csv")]) == 0
    assert _rows(tmp_path / "again.csv") == merged  # a merged report merges again, its summary beside it

    # a cut report whose summary lacks the other rows' p-values (an older version's) is refused
    old = json.loads((tmp_path / "r0.csv.summary.json").read_text())
    del old["p_counts"]
    (tmp_path / "r0.csv.summary.json").write_text(json.dumps(old))
    capsys.readouterr()
    assert main(["merge-reports", *map(str, shards), "-o", str(tmp_path / "bad.csv")]) == 2
    err = capsys.readouterr().err
    assert "keeps its best 40 of 299 rows (--top)" in err and "screen that shard again" in err
    assert not (tmp_path / "bad.csv").exists()

    # a cut report says so itself: merged without its summary (copied without it), it is refused,
    # where it merged as a whole report with q-values over its kept rows only
    (tmp_path / "moved").mkdir()
    moved = [tmp_path / "moved" / s.name for s in shards]
    for shard, copy in zip(shards, moved):
        copy.write_bytes(shard.read_bytes())
    assert main(["merge-reports", *map(str, moved), "-o", str(tmp_path / "moved" / "m.csv")]) == 2
    err = capsys.readouterr().err
    assert "keeps its best 40 of 299 scored rows (--top), and its summary" in err and "is not beside it" in err
    assert not (tmp_path / "moved" / "m.csv").exists()


def test_a_report_written_again_without_top_drops_the_summary_an_earlier_run_left(calibrated, herg_path, tmp_path,
                                                                                  capsys):
    """A report screened with --top, then screened again whole under the same name, kept the old
    summary beside it, which refused every later merge as "a summary of another run"."""
    lines = herg_path.read_text().splitlines()
    shards = []
    for k, part in enumerate((lines[1:300], lines[300:])):
        shard = tmp_path / f"shard{k}.tab"
        shard.write_text("\n".join([lines[0], *part]) + "\n")
        shards.append(shard)
    report = tmp_path / "r0.csv"
    assert main(["screen", str(calibrated), str(shards[0]), "-o", str(report), "--top", "20", "--workers", "1"]) == 0
    assert (tmp_path / "r0.csv.summary.json").exists()
    assert main(["screen", str(calibrated), str(shards[0]), "-o", str(report), "--workers", "1"]) == 0
    assert not (tmp_path / "r0.csv.summary.json").exists()
    assert main(["screen", str(calibrated), str(shards[1]), "-o", str(tmp_path / "r1.csv"), "--workers", "1"]) == 0
    assert main(["merge-reports", str(report), str(tmp_path / "r1.csv"), "-o", str(tmp_path / "all.csv")]) == 0
    assert main(["screen", str(calibrated), str(herg_path), "-o", str(tmp_path / "one.csv"), "--workers", "1"]) == 0
    assert _rows(tmp_path / "all.csv") == _rows(tmp_path / "one.csv")



def test_flagged_rows_beyond_top_are_said_to_be_left_out(capsys):
    """With --top 10 and --fdr, it said "ranks 1 to 147 of the report" of a report of 10 rows."""
    from core.cli.options import report_flagged

    report_flagged(147, 0.5, 204, kept=10)
    said = capsys.readouterr().err
    assert "147 of 204 scored rows flagged" in said and "the report keeps the best 10 of them (--top 10)" in said
    assert "ranks 1 to" not in said
    report_flagged(7, 0.5, 204, kept=10)
    assert "ranks 1 to 7 of the report" in capsys.readouterr().err
