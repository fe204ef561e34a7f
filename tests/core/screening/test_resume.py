"""A stopped screen resumed from its report writes the report an unstopped run writes: the same
bytes (ranks, scores, q-values over every scored row, rejects in input order, the end row), with
and without ``--top`` and deferred properties, stopped and resumed more than once. A report it
cannot continue (another model, another or changed library, a whole run's, other columns,
shards) is refused and left as it was."""
from __future__ import annotations

import json
import re

import pytest

from core import DataError, ParameterError, load, make_detector
from core.screening.pipeline import screen
from tests.conftest import moses_library

BAD = {10: "C1CC", 120: "not_a_molecule", 250: "C1CC"}  # rejects before and after the stops


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    return moses_library(tmp_path_factory.mktemp("lib") / "lib.smi", 300, BAD)


@pytest.fixture(scope="module")
def model(library):
    """A calibrated WL-LESINN: its p-values make q-values, which must count every scored row."""
    from core import fit_with_calibration

    detector = make_detector("wl-lesinn", seed=0)
    assert fit_with_calibration(detector, load(library).subset(range(200)), seed=0)
    return detector


def stopped_after(chunks: int):
    """A should_stop that stops a run once ``chunks`` chunks are done."""
    done = []
    return dict(on_progress=lambda read, scored: done.append(read), should_stop=lambda: len(done) >= chunks)


@pytest.mark.parametrize("options", [{}, {"top": 40, "properties": True, "alerts": True}])
def test_a_run_stopped_twice_and_resumed_writes_the_unstopped_runs_report(library, model, tmp_path, options):
    whole = screen(model, library, tmp_path / "whole.csv", chunk_size=40, workers=1, **options)
    report = tmp_path / "resumed.csv"
    first = screen(model, library, report, chunk_size=40, workers=1, **options, **stopped_after(2))
    assert first.stopped and 0 < first.rows < 300
    second = screen(model, library, report, chunk_size=40, workers=1, resume=True, **options, **stopped_after(2))
    assert second.stopped and second.resumed_after == first.last_line and first.rows < second.rows < 300
    third = screen(model, library, report, chunk_size=64, workers=2, resume=True, **options)  # other chunks
    assert not third.stopped and third.resumed_after == second.last_line and third.resumed_rows == second.rows
    assert (third.rows, third.scored, third.rejected) == (whole.rows, whole.scored, whole.rejected) == (300, 297, 3)
    assert third.p_counts == whole.p_counts
    assert report.read_bytes() == (tmp_path / "whole.csv").read_bytes()
    assert third.nodes == whole.nodes  # a resumed run counted the nodes of its own rows only
    if "top" in options:
        summary, expected = (p.with_name(p.name + ".summary.json").read_text() for p in (report, tmp_path / "whole.csv"))
        assert '"scored": 297' in summary and summary.count("p_counts") == expected.count("p_counts") == 1
        assert json.loads(summary)["nodes"] == json.loads(expected)["nodes"] == whole.nodes


def test_a_report_it_cannot_continue_is_refused_and_left_as_it_was(library, model, tmp_path):
    report = tmp_path / "r.csv"
    first = screen(model, library, report, chunk_size=40, workers=1, **stopped_after(2))
    before = report.read_bytes()
    other = make_detector("size").fit(load(library).subset(range(100)))
    with pytest.raises(DataError, match="another model"):
        screen(other, library, report, chunk_size=40, workers=1, resume=True)
    changed = tmp_path / "changed.smi"
    lines = library.read_text().splitlines(keepends=True)
    changed.write_text("".join(lines[:3] + lines[4:]))  # a row before the stop is gone
    with pytest.raises(DataError, match=f"changed.smi: its rows up to line {first.last_line:,} are not"):
        screen(model, changed, report, chunk_size=40, workers=1, resume=True)
    renamed = tmp_path / "renamed.smi"
    renamed.write_text(library.read_text().replace(" mol5\n", " mol5b\n"))  # as many rows, one other id
    with pytest.raises(DataError, match="with other ids"):
        screen(model, renamed, report, chunk_size=40, workers=1, resume=True)
    with pytest.raises(DataError, match="optional columns"):
        screen(model, library, report, chunk_size=40, workers=1, resume=True, properties=True)
    cut = tmp_path / "cut.csv"
    screen(model, library, cut, chunk_size=40, workers=1, top=5, **stopped_after(2))
    kept = cut.read_text().splitlines()[1].split(",")[1]  # the best row's id
    (tmp_path / "renamed_best.smi").write_text(library.read_text().replace(f" {kept}\n", f" {kept}x\n"))
    with pytest.raises(DataError, match="with other ids"):  # a --top report's kept rows are looked for
        screen(model, tmp_path / "renamed_best.smi", cut, chunk_size=40, workers=1, resume=True, top=5)
    for more in (None, 6):  # its rows past the best 5 are gone: a report of more would miss some
        with pytest.raises(DataError, match="glocalkd screen ... --resume --top 5"):
            screen(model, library, cut, chunk_size=40, workers=1, resume=True, top=more)
    resumed = screen(model, library, cut, chunk_size=40, workers=1, resume=True, top=3)  # fewer: the best 3 of all
    best = screen(model, library, tmp_path / "best.csv", chunk_size=40, workers=1, top=3)
    assert (resumed.scored, resumed.p_counts) == (best.scored, best.p_counts)
    assert cut.read_bytes() == (tmp_path / "best.csv").read_bytes()
    with pytest.raises(ParameterError, match="one library file"):
        screen(model, [library, changed], report, chunk_size=40, workers=1, resume=True)
    assert report.read_bytes() == before
    screen(model, library, report, chunk_size=40, workers=1, resume=True)
    with pytest.raises(DataError, match="nothing to resume"):
        screen(model, library, report, chunk_size=40, workers=1, resume=True)
    with pytest.raises(DataError, match="no report to resume"):
        screen(model, library, tmp_path / "none.csv", chunk_size=40, workers=1, resume=True)


def test_the_command_line_resumes_a_stopped_screen_and_says_so(library, model, tmp_path, capsys):
    from core import save_detector
    from core.cli.main import main

    save_detector(model, tmp_path / "m.pt")
    args = [str(tmp_path / "m.pt"), str(library), "--chunk-size", "40", "--workers", "1", "--device", "cpu"]
    assert main(["screen", *args, "-o", str(tmp_path / "whole.csv")]) == 0
    first = screen(model, library, tmp_path / "r.csv", chunk_size=40, workers=1, **stopped_after(2))
    capsys.readouterr()
    assert main(["screen", *args, "-o", str(tmp_path / "r.csv"), "--resume"]) == 0
    err = capsys.readouterr().err
    assert f"300 rows: 297 scored, 3 rejected (resumed after line {first.last_line}: {300 - first.rows} rows read now)" \
        in err
    assert (tmp_path / "r.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()
    assert main(["screen", *args, "-o", str(tmp_path / "r.csv"), "--resume"]) == 2  # a whole run's report
    assert "nothing to resume" in capsys.readouterr().err


def test_glocalkd_score_resumes_a_stopped_scoring_as_screen_does(library, model, tmp_path, capsys):
    """``score`` is the app's entry and the one for a chemist's file: it had no --resume, though the
    pipeline under it resumes; the option is now one definition for both commands."""
    from core import save_detector, score_file
    from core.cli.main import main

    save_detector(model, tmp_path / "m.pt")
    args = [str(tmp_path / "m.pt"), str(library), "--device", "cpu"]
    assert main(["score", *args, "-o", str(tmp_path / "whole.csv")]) == 0
    first = score_file(model, library, tmp_path / "r.csv", chunk_size=40, workers=1, **stopped_after(2)).summary
    assert first.stopped
    capsys.readouterr()
    assert main(["score", *args, "-o", str(tmp_path / "r.csv"), "--resume"]) == 0
    assert f"(resumed after line {first.last_line}: {300 - first.rows} rows read now)" in capsys.readouterr().err
    assert (tmp_path / "r.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()


def test_a_stop_after_the_last_chunk_leaves_a_whole_run(library, model, tmp_path):
    """A Stop that landed once every row was scored marked the run stopped at the file's last line:
    its report said so, and a resume read nothing and wrote it again. The run is whole now."""
    chunks: list[int] = []
    whole = screen(model, library, tmp_path / "whole.csv", chunk_size=40, workers=1,
                   on_progress=lambda read, scored: chunks.append(read))
    late = screen(model, library, tmp_path / "late.csv", chunk_size=40, workers=1, **stopped_after(len(chunks)))
    assert not late.stopped and (late.rows, late.scored, late.last_line) == (300, 297, whole.last_line)
    assert (tmp_path / "late.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()
    early = screen(model, library, tmp_path / "early.csv", chunk_size=40, workers=1,
                   **stopped_after(len(chunks) - 1))
    assert early.stopped and early.rows == chunks[-2] < 300  # the last chunk was left: a real stop


def test_a_resume_that_would_read_the_library_otherwise_is_refused(library, model, tmp_path):
    """A run stopped while reading one SMILES column was resumed from another (or with other atoms
    listed, or another label column) and wrote one report of two runs, whole and intact by its end
    row. The stopped run's end row keeps its reading settings, and a resume must have the same."""
    from core import read_report

    table = tmp_path / "two.csv"
    rows = [line.split()[0] for line in library.read_text().splitlines()[1:]]
    table.write_text("id,smiles,parent,activity\n" + "".join(f"m{k},{s},C{s},{k % 2}\n" for k, s in enumerate(rows)))
    report = tmp_path / "r.csv"
    first = screen(model, table, report, chunk_size=40, workers=1, smiles_column="smiles", **stopped_after(2))
    assert first.stopped
    stopped = report.read_bytes()
    for other in (dict(smiles_column="parent"), dict(smiles_column="smiles", top_k=2),
                  dict(smiles_column="smiles", label_column="activity")):
        with pytest.raises(DataError, match="other settings: resume with the stopped run's --smiles-column"):
            screen(model, table, report, chunk_size=40, workers=1, resume=True, **other)
        assert report.read_bytes() == stopped  # left as it was
    screen(model, table, tmp_path / "whole.csv", chunk_size=40, workers=1, smiles_column="smiles")
    resumed = screen(model, table, report, chunk_size=40, workers=1, resume=True, smiles_column="smiles")
    assert not resumed.stopped and report.read_bytes() == (tmp_path / "whole.csv").read_bytes()
    assert read_report(report).intact
    older = re.sub(rb"; read as [0-9a-f]{12}", b"", stopped)  # a report from before the record: not checked
    assert older != stopped
    report.write_bytes(older)
    screen(model, table, report, chunk_size=40, workers=1, resume=True, smiles_column="smiles")
    assert report.read_bytes() == (tmp_path / "whole.csv").read_bytes()


def test_a_file_without_ids_is_resumed_only_on_the_rows_it_read(library, model, tmp_path):
    """A file without ids has line numbers for ids: a resume onto another file of as many rows
    passed the check of counts and ids and wrote one intact-looking report of two libraries. The
    stopped run's end row keeps a hash of every row as read, and the resume compares it."""
    smiles = [line.split()[0] for line in library.read_text().splitlines()[1:]]
    first, other = tmp_path / "a.smi", tmp_path / "b.smi"
    first.write_text("".join(f"{s}\n" for s in smiles))
    other.write_text("".join(f"{s}\n" for s in smiles[150:] + smiles[:150]))  # as many rows, other molecules
    report = tmp_path / "r.csv"
    assert screen(model, first, report, chunk_size=40, workers=1, **stopped_after(2)).stopped
    stopped = report.read_bytes()
    assert re.search(rb"; rows read [0-9a-f]{16}; stopped after input line ", stopped)
    with pytest.raises(DataError, match="with other contents"):
        screen(model, other, report, chunk_size=40, workers=1, resume=True)
    assert report.read_bytes() == stopped
    screen(model, first, tmp_path / "whole.csv", chunk_size=40, workers=1)
    screen(model, first, report, chunk_size=40, workers=1, resume=True)
    assert report.read_bytes() == (tmp_path / "whole.csv").read_bytes()
    report.write_bytes(re.sub(rb"; rows read [0-9a-f]{16}", b"", stopped))  # from before the record: ids checked
    screen(model, first, report, chunk_size=40, workers=1, resume=True)
    assert report.read_bytes() == (tmp_path / "whole.csv").read_bytes()


def test_score_resuming_a_stopped_top_run_names_the_command_that_can(library, model, tmp_path, capsys):
    """``glocalkd score --resume`` of a stopped ``screen --top 50`` run said "resume with --top 50",
    an option ``score`` does not have: the message names ``glocalkd screen``."""
    from core import save_detector
    from core.cli.main import main

    save_detector(model, tmp_path / "m.pt")
    screen(model, library, tmp_path / "r.csv", chunk_size=40, workers=1, top=5, **stopped_after(2))
    capsys.readouterr()
    assert main(["score", str(tmp_path / "m.pt"), str(library), "-o", str(tmp_path / "r.csv"), "--resume"]) != 0
    assert "resume it with glocalkd screen ... --resume --top 5 (or fewer" in capsys.readouterr().err


def test_a_report_that_names_the_models_earlier_fingerprint_resumes(tmp_path):
    """Leaving a consensus's views' device out of its fingerprint changed every consensus's
    fingerprint: a run stopped before the change could no longer be resumed with its own model file
    ("scored with another model"). A report naming the fingerprint an earlier version gave the model
    resumes, and keeps that name (a merge has no model to ask, and its sibling shards name it so); a
    standardising model, whose scores changed with its rules, has no earlier one."""
    from core import TrainSpec, read_report, train_model

    data = load(moses_library(tmp_path / "train.csv", 60, {}))
    params = {"epochs": 1, "hidden_dim": 16, "out_dim": 8, "component_params": {"wl-lesinn": {"ensemble_size": 8}}}
    model = train_model(data, TrainSpec(detector="consensus", params=params, device="cpu")).model
    now, before = model.fingerprints()
    assert now == model.fingerprint() != before
    library = moses_library(tmp_path / "lib.smi", 120, {})
    whole = tmp_path / "whole.csv"
    screen(model, library, whole, chunk_size=20, workers=1)
    report = tmp_path / "r.csv"
    assert screen(model, library, report, chunk_size=20, workers=1, **stopped_after(2)).stopped
    text = report.read_text(encoding="utf-8")
    assert f"model {now};" in text
    report.write_text(text.replace(f"model {now};", f"model {before};"), encoding="utf-8")  # as written before
    assert read_report(report).model_fingerprint == before
    assert not screen(model, library, report, chunk_size=20, workers=1, resume=True).stopped
    # the report keeps the name it was begun under, so that shards the earlier version finished merge with it
    assert report.read_text(encoding="utf-8") == whole.read_text(encoding="utf-8").replace(f"model {now};",
                                                                                         f"model {before};")
    standardising = train_model(load(tmp_path / "train.csv", standardise=True),
                                TrainSpec(detector="consensus", params=params, device="cpu")).model
    assert standardising.fingerprints() == (standardising.fingerprint(),)
