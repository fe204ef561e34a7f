"""merge-reports keeps every cell as written and refuses shards that do not belong together."""
import csv

import pytest

from core import GLocalKD, load
from core.errors import DataError
from core.io.ranked_report import read_report
from core.screening.merge import merge_reports
from core.screening.pipeline import screen


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shards")
    data = [folder / "a.csv", folder / "b.csv"]
    data[0].write_text('id,smiles\n"a\nb",CCO\nx,"CC\nO"\ny,CCN\n')
    data[1].write_text("id,smiles\nz,c1ccccc1\nw,CC(=O)O\n")
    model = GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(load(data[0]))
    other = GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=1).fit(load(data[0]))
    for path in data:
        screen(model, path, path.with_suffix(".report.csv"), workers=1)
    screen(other, data[1], folder / "other.report.csv", workers=1)
    return folder


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def test_line_breaks_in_cells_survive_merging(shards, tmp_path):
    assert merge_reports([shards / "a.report.csv", shards / "b.report.csv"], tmp_path / "m.csv") == 5
    merged = read_report(tmp_path / "m.csv")
    assert "a\nb" in list(merged.ids)
    assert [r.text for r in merged.rejects] == ["CC\nO"]
    assert len(merged) == 4
    again = read_report(shards / "a.report.csv")
    assert "a\nb" in list(again.ids) and again.rejects[0].text == "CC\nO"


def test_the_merged_report_merges_again(shards, tmp_path):
    merge_reports([shards / "a.report.csv"], tmp_path / "m1.csv")
    assert merge_reports([tmp_path / "m1.csv", shards / "b.report.csv"], tmp_path / "m2.csv") == 5


@pytest.mark.parametrize("case, message", [
    ("other model", "scored with another model"),
    ("twice", "a shard given twice"),
    ("nan", "not a finite number"),
    ("cut at a row", "the end-of-report row says"),
    ("no end row", "no end-of-report row"),
])
def test_shards_that_do_not_belong_are_refused(shards, tmp_path, case, message):
    a, b = shards / "a.report.csv", shards / "b.report.csv"
    if case == "other model":
        inputs = [a, shards / "other.report.csv"]
    elif case == "twice":
        copy = tmp_path / "copy.csv"
        copy.write_bytes(b.read_bytes())
        inputs = [a, b, copy]
    else:
        lines = _lines(b)
        if case == "nan":
            first = next(csv.reader([lines[1]]))
            first[4] = "nan"
            lines[1] = ",".join(first) + "\r\n"
        elif case == "cut at a row":
            del lines[-2]
        else:
            lines = lines[:-1]
        bad = tmp_path / "bad.csv"
        bad.write_text("".join(lines), encoding="utf-8")
        inputs = [a, bad]
    with pytest.raises(DataError, match=message):
        merge_reports(inputs, tmp_path / "m.csv")
    assert not (tmp_path / "m.csv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".glocalkd-merge-")]
