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


def test_the_library_never_writes_a_report_over_what_it_reads_nor_under_another_formats_name(shards, tmp_path):
    """Only the command line checked its outputs: ``screen(m, "a.smi", "a.smi")`` and
    ``merge_reports([a, b], a)`` replaced the library and the shard with a report, and
    ``write_report("x.tsv", ...)`` wrote CSV under a table's name. Every report writer checks."""
    from core import GLocalKDError, score_file, write_report

    model = GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(load(shards / "a.csv"))
    library = tmp_path / "lib.smi"
    library.write_text("CCO a\nCCN b\n")
    before = library.read_text()
    with pytest.raises(GLocalKDError, match="is an input"):
        screen(model, library, library, workers=1)
    with pytest.raises(GLocalKDError, match="is an input"):
        score_file(model, library, library, workers=1)
    shard = tmp_path / "a.report.csv"
    shard.write_bytes((shards / "a.report.csv").read_bytes())
    kept = shard.read_bytes()
    with pytest.raises(GLocalKDError, match="is an input"):
        merge_reports([shard, shards / "b.report.csv"], shard)
    assert library.read_text() == before and shard.read_bytes() == kept
    graphs = load(library)
    for name in ("x.tsv", "x.csv.gz"):
        with pytest.raises(GLocalKDError, match="written as CSV"):
            write_report(tmp_path / name, graphs, model.score(graphs))
        with pytest.raises(GLocalKDError, match="written as CSV"):
            screen(model, library, tmp_path / name, workers=1)
        assert not (tmp_path / name).exists()


def test_a_merged_reports_rejected_rows_say_which_shard_they_came_from(tmp_path):
    """Merged rejects read ``rejected: line 2: ...`` with no shard named, while a multi-file screen
    names the file: a row that could not be traced back."""
    from core.cli.main import main

    (tmp_path / "a.smi").write_text("CCO a1\nC1CC a2\nCCN a3\n")
    (tmp_path / "b.smi").write_text("c1ccccc1 b1\nCCCl b2\nC(C b3\n")
    assert main(["train", str(tmp_path / "a.smi"), "-o", str(tmp_path / "m.pt"), "--detector", "size"]) == 0
    for name in ("a", "b"):
        assert main(["score", str(tmp_path / "m.pt"), str(tmp_path / f"{name}.smi"), "-o",
                     str(tmp_path / f"r{name}.csv")]) == 0
    merge_reports([tmp_path / "ra.csv", tmp_path / "rb.csv"], tmp_path / "all.csv")
    reasons = sorted(r.reason for r in read_report(tmp_path / "all.csv").rejects)
    assert reasons[0].startswith("line 2 of the shard scored into ra.csv: ")
    assert reasons[1].startswith("line 3 of the shard scored into rb.csv: ")
    (tmp_path / "c.smi").write_text("CCCC c1\nC1C c2\n")
    assert main(["score", str(tmp_path / "m.pt"), str(tmp_path / "c.smi"), "-o", str(tmp_path / "rc.csv")]) == 0
    merge_reports([tmp_path / "all.csv", tmp_path / "rc.csv"], tmp_path / "again.csv")  # the merged one merges on
    again = {r.reason for r in read_report(tmp_path / "again.csv").rejects}
    assert again == {*reasons, "line 2 of the shard scored into rc.csv: invalid SMILES syntax: C1C"}


def test_blank_rows_at_the_same_line_of_two_shards_are_not_one_molecule(shards, tmp_path):
    """Files without ids number their rows by line: a blank SMILES cell at line 3 of each shard was
    refused as "the same molecule in two shards", though a blank cell names no molecule."""
    model = GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(load(shards / "a.csv"))
    reports = []
    for name, rows in (("p", ["CCO,1.5", ",105.0", "CCN,2.5"]), ("q", ["c1ccccc1,3.5", ",7.0", "CC(=O)O,4.5"])):
        data = tmp_path / f"{name}.csv"
        data.write_text("smiles,price\n" + "\n".join(rows) + "\n")
        reports.append(tmp_path / f"{name}.report.csv")
        screen(model, data, reports[-1], workers=1)
    merged = tmp_path / "m.csv"
    merge_reports(reports, merged)
    report = read_report(merged)
    assert len(report) == 4 and len(report.rejects) == 2


def test_a_formula_guarded_cell_is_guarded_once_in_the_merged_report(tmp_path):
    """A report writes ``=cmd`` as ``'=cmd`` so that a spreadsheet shows it rather than runs it;
    merge-reports read that cell as the text and guarded it again (``''=cmd``), so the merged
    report, read back, held another id than the shard."""
    from core import make_detector

    data = tmp_path / "f.csv"
    data.write_text("id,smiles\n=cmd,CCO\n@x,CCN\n+1a,c1ccccc1\n'-b,CC\n")
    model = make_detector("size").fit(load(data))
    screen(model, data, tmp_path / "r.csv", workers=1)
    assert merge_reports([tmp_path / "r.csv"], tmp_path / "m.csv") == 4
    shard, merged = _lines(tmp_path / "r.csv"), _lines(tmp_path / "m.csv")
    assert merged[:-1] == shard[:-1]
    assert sorted(read_report(tmp_path / "m.csv").ids) == sorted(["=cmd", "@x", "+1a", "'-b"])


def _no_work(*args, **kwargs):
    raise AssertionError("the work began before every output was checked")


def test_a_top_run_refuses_an_unwritable_summary_before_any_work_and_keeps_the_old_report(shards, tmp_path,
                                                                                         monkeypatch):
    """``screen(top=...)`` and a merge of cut shards write REPORT.summary.json too: a folder of that
    name failed the run after the report had replaced the old one. It is checked with the report."""
    from core.screening import merge, pipeline

    model = GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(load(shards / "a.csv"))
    cut = [tmp_path / "a.top.csv", tmp_path / "b.top.csv"]
    for data, report in zip((shards / "a.csv", shards / "b.csv"), cut):
        screen(model, data, report, workers=1, top=1)
    report = tmp_path / "r.csv"
    report.write_text("old\n")
    (tmp_path / "r.csv.summary.json").mkdir()
    with monkeypatch.context() as m:
        m.setattr(pipeline, "_source_rows", _no_work)
        m.setattr(merge, "read_report_part", _no_work)
        with pytest.raises(IsADirectoryError, match="cannot write the summary .*r.csv.summary.json"):
            screen(model, shards / "a.csv", report, workers=1, top=1)
        with pytest.raises(IsADirectoryError, match="cannot write the summary .*r.csv.summary.json"):
            merge_reports(cut, report)
    assert report.read_text() == "old\n"
    # the summary is written before the report replaces the old one: past the check, a failure keeps it too
    monkeypatch.setattr(pipeline, "check_summary_output", lambda *args: None)
    monkeypatch.setattr(merge, "check_summary_output", lambda *args: None)
    with pytest.raises(IsADirectoryError):
        screen(model, shards / "a.csv", report, workers=1, top=1)
    with pytest.raises(IsADirectoryError):
        merge_reports(cut, report)
    assert report.read_text() == "old\n"
    monkeypatch.undo()
    screen(model, shards / "a.csv", report, workers=1)  # a report of every row writes no summary: the folder stays
    assert len(read_report(report)) == 2 and (tmp_path / "r.csv.summary.json").is_dir()


def test_a_report_of_a_legal_long_name_merges(shards, tmp_path):
    """REPORT.summary.json of a legal report name of 246 characters and .csv is too long for the file
    system: looking it up raised "[Errno 36] File name too long" and no such report merged. A summary
    name too long to exist means no summary."""
    long = tmp_path / ("x" * 246 + ".csv")
    long.write_bytes((shards / "a.report.csv").read_bytes())
    assert merge_reports([long, shards / "b.report.csv"], tmp_path / "m.csv") == 5
    assert merge_reports([shards / "b.report.csv", long], tmp_path / "m.csv") == 5


def test_shards_of_models_trained_on_cpu_and_on_auto_merge(tmp_path):
    """The device is where a model ran, not what it scores: a consensus trained with ``device="cpu"``
    and one trained with the command's ``auto`` held the device in their GLocalKD view's settings,
    so their fingerprints differed and merge-reports refused shards of identical rows."""
    from core import TrainSpec, train_model
    from tests.conftest import moses_library

    data = load(moses_library(tmp_path / "train.csv", 60, {}))
    params = {"epochs": 1, "hidden_dim": 16, "out_dim": 8, "component_params": {"wl-lesinn": {"ensemble_size": 8}}}
    cpu, auto = (train_model(data, TrainSpec(detector="consensus", params=params, device=device)).model
                 for device in ("cpu", "auto"))
    assert cpu.component_params["glocalkd"]["device"] == "cpu" and auto.component_params["glocalkd"]["device"] == "auto"
    assert cpu.fingerprint() == auto.fingerprint()
    shards = [tmp_path / "a.csv", tmp_path / "b.csv"]
    shards[0].write_text("id,smiles\na,CCO\nb,CCN\n")
    shards[1].write_text("id,smiles\nc,c1ccccc1\n")
    screen(cpu, shards[0], tmp_path / "a.report.csv", workers=1)
    screen(auto, shards[1], tmp_path / "b.report.csv", workers=1)
    assert merge_reports([tmp_path / "a.report.csv", tmp_path / "b.report.csv"], tmp_path / "m.csv") == 3


@pytest.mark.parametrize("edit", [(",ok,", ",OK,"), (",ok,", ",ok ,"), ('\n,x,,', '\n3,x,,')],
                         ids=["OK", "ok and a space", "a rejection with a rank"])
def test_a_row_whose_status_was_edited_is_refused_by_every_reader(shards, tmp_path, edit):
    """A scored row whose status was edited (``OK``) was taken for a rejected row by merge-reports and
    --resume: it went among the rejects keeping its rank and p-value, and the BH counts dropped."""
    text = (shards / "a.report.csv").read_text(encoding="utf-8")
    assert edit[0] in text
    edited = tmp_path / "edited.csv"
    edited.write_text(text.replace(edit[0], edit[1], 1), encoding="utf-8")
    for read in (lambda: merge_reports([edited, shards / "b.report.csv"], tmp_path / "m.csv"), lambda: read_report(edited)):
        with pytest.raises(DataError, match="was the report edited") as refused:
            read()
        assert refused.value.path == str(edited) and refused.value.line is not None
    assert not (tmp_path / "m.csv").exists()


def test_scores_of_two_precisions_are_neither_merged_nor_resumed_together(shards, tmp_path):
    """``--precision`` was recorded nowhere: a float32 shard and a bfloat16 shard merged without a
    word, and a float32 run resumed in bfloat16 mixed the two (their scores differ by up to 0.46).
    The end row names the precision with the model, so both are refused, saying which is which."""
    import warnings

    from core import read_report
    from tests.conftest import moses_library

    model = GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(load(shards / "a.csv"))
    half = tmp_path / "b16.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bfloat16 is slow on a CPU without its instructions: said, not refused
        screen(model, shards / "b.csv", half, workers=1, precision="bfloat16")
    fingerprint = model.fingerprint()
    assert read_report(half).model_fingerprint == f"{fingerprint}+bfloat16"
    assert read_report(shards / "a.report.csv").model_fingerprint == fingerprint  # float32 names the model alone
    with pytest.raises(DataError, match="b16.csv: scored in bfloat16 precision, not float32 .--precision."):
        merge_reports([shards / "a.report.csv", half], tmp_path / "m.csv")
    library = moses_library(tmp_path / "lib.smi", 120, {})
    report = tmp_path / "r.csv"
    done = []
    first = screen(model, library, report, chunk_size=20, workers=1, on_progress=lambda read, scored: done.append(read),
                   should_stop=lambda: len(done) >= 2)
    assert first.stopped
    before = report.read_bytes()
    with warnings.catch_warnings(), pytest.raises(DataError, match="r.csv: scored in float32 precision, not bfloat16"):
        warnings.simplefilter("ignore")
        screen(model, library, report, chunk_size=20, workers=1, resume=True, precision="bfloat16")
    assert report.read_bytes() == before
