"""Outputs checked before any work, by one check for every command: an output may not be, or lie
inside, an input; it must be writable; ``evaluate --resume`` checks every value it reads."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli.main import main
from tests.conftest import path, ring, write_tu

TINY = ["--method", "glocalkd", "--epochs", "1", "--hidden", "16", "--out-dim", "8", "--device", "cpu"]  # a toy set: too small for the consensus to calibrate


def _error(capsys, code, needle):
    err = capsys.readouterr().err
    assert code == 2, err
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err and last.startswith("glocalkd: error: ") and needle in last, err


@pytest.fixture
def tu(tmp_path):
    graphs = [(5 + i % 3, ring(5 + i % 3), 1) for i in range(8)] + [(6, path(5), 0) for _ in range(4)]
    return write_tu(tmp_path / "TOY", "TOY", graphs, node_labels=True, attributes=True)


@pytest.fixture
def no_work(monkeypatch):
    """Make any evaluation fail the test: the checks must come first."""
    import core.evaluation.protocol

    def refuse(*args, **kwargs):
        raise AssertionError("the evaluation ran before its outputs were checked")

    monkeypatch.setattr(core.evaluation.protocol, "evaluate", refuse)


def test_evaluate_refuses_a_json_that_is_a_file_of_its_data_folder(tu, capsys, no_work):
    target = tu / "TOY_A.txt"
    before = target.read_bytes()
    _error(capsys, main(["evaluate", str(tu), "--json", str(target), *TINY]), "is an input of this command")
    _error(capsys, main(["evaluate", str(tu), "--markdown", str(tu / "new.md"), *TINY]), "is an input")
    assert target.read_bytes() == before and not (tu / "new.md").exists()


def test_evaluate_refuses_an_unwritable_json_before_any_fold(tu, tmp_path, capsys, no_work):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    _error(capsys, main(["evaluate", str(tu), "--json", str(blocker / "r.json"), *TINY]), "Not a folder")
    _error(capsys, main(["evaluate", str(tu), "--json", str(tmp_path), *TINY]), "Is a folder")
    if Path("/proc/self").is_dir():  # a folder where nobody, root included, can make a file
        _error(capsys, main(["evaluate", str(tu), "--json", "/proc/r.json", *TINY]), "cannot write in /proc")


COMMANDS = [  # every command that writes a file the user names, with its inputs
    ["score", "{model}", "{data}", "-o", "{out}"],
    ["screen", "{model}", "{data}", "-o", "{out}"],
    ["train", "{data}", "-o", "{out}"],
    ["train", "{data}", "--known-anomalies", "{known}", "-o", "{out}"],
    ["weigh", "{model}", "{data}", "-o", "{out}"],
    ["merge-reports", "{report}", "-o", "{out}"],
    ["evaluate", "{data}", "--json", "{out}"],
    ["evaluate", "{data}", "--protocol", "split", "--test", "{known}", "--markdown", "{out}"],
    ["evaluate-explanations", "{data}", "--json", "{out}"],
]


def _files(tmp_path, model_file) -> dict:
    files = {"model": model_file, "data": tmp_path / "d.smi", "known": tmp_path / "k.smi",
             "report": tmp_path / "r.csv"}
    files["data"].write_text("CCO a\nCCN b\n")
    files["known"].write_text("CCCl x\n")
    files["report"].write_text("rank,id\n")
    return files


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_refuses_an_output_over_any_input(tmp_path, capsys, model_file, command):
    files = _files(tmp_path, model_file)
    inputs = [name for name in files if "{" + name + "}" in " ".join(command)]
    for name in inputs:
        before = files[name].read_bytes()
        argv = [part.format(out=files[name], **files) for part in command]
        _error(capsys, main(argv), "is an input of this command")
        assert files[name].read_bytes() == before


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_refuses_an_empty_output_name_and_a_device_or_pipe(tmp_path, capsys, model_file, command):
    """``-o ''`` named the current folder, found only after the work (training ran every epoch);
    a device or a pipe at the output's name was replaced by a regular file (as root, ``-o
    /dev/null`` deleted the system's /dev/null)."""
    import os
    import stat

    files = _files(tmp_path, model_file)
    option = command[command.index("{out}") - 1]
    flag = "--output" if option == "-o" else option
    _error(capsys, main([part.format(out="", **files) for part in command]), f"{flag} is an empty file name")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    _error(capsys, main([part.format(out=pipe, **files) for part in command]), f"{flag} {pipe}: Is a pipe, not a file")
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    link = tmp_path / "to_null"  # a link to a device: the device is what the name leads to
    link.symlink_to(os.devnull)
    _error(capsys, main([part.format(out=link, **files) for part in command]), "Is a device, not a file")
    assert link.is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_the_writer_itself_refuses_a_device_or_a_pipe(tmp_path):
    """The one writer refuses too (the app and the API call it without the command line's check)."""
    import os

    from core.runtime.files import atomic_output

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(OSError, match="Is a pipe"):
        with atomic_output(pipe, "w") as fh:
            fh.write("rows")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]  # no temporary file left


def _partial_result(tu, tmp_path):
    """A real partial result of a 2-fold evaluation (fold 1 only)."""
    out = tmp_path / "r.json"
    assert main(["evaluate", str(tu), "--folds", "2", "--only", "1", "--json", str(out), *TINY]) == 0
    return out


@pytest.mark.parametrize("edit, needle", [
    (lambda f: f.update(auc=7.0), "auc must be a number from 0 to 1"),
    (lambda f: f.update(auc=-0.5), "auc must be a number from 0 to 1"),
    (lambda f: f.update(auc="0.8"), "auc must be a number from 0 to 1"),
    (lambda f: f.update(auc=[0.8]), "auc must be a number from 0 to 1"),
    (lambda f: f.update(auc_graph=True), "auc_graph must be a number from 0 to 1"),
    (lambda f: f.pop("auc"), "auc is missing"),
    (lambda f: f.update(n_test="40"), "n_test must be a whole number"),
    (lambda f: f.update(train_seconds=None), "train_seconds must be a number of seconds"),
    (lambda f: f.update(auc_readouts={"both": 3}), "auc_readouts.both must be a number from 0 to 1"),
    (lambda f: f.update(fold=0), "fold must be a number from 1 to 2"),
    (lambda f: f.update(fold=99), "fold must be a number from 1 to 2"),
    (lambda f: f.update(n_test_anomalies=10**6), "n_test_anomalies (1000000) is more than n_test"),
])
def test_resume_refuses_a_result_file_with_a_bad_value(tu, tmp_path, capsys, edit, needle):
    out = _partial_result(tu, tmp_path)
    data = json.loads(out.read_text())
    edit(data["folds"][0])
    out.write_text(json.dumps(data))
    capsys.readouterr()
    _error(capsys, main(["evaluate", str(tu), "--folds", "2", "--json", str(out), "--resume", *TINY]), needle)
    err_file = str(out)
    assert json.loads(out.read_text()) == data  # nothing written over it
    _error(capsys, main(["evaluate", str(tu), "--folds", "2", "--resume-from", err_file, *TINY]), err_file)


def test_resume_refuses_garbage_in_place_of_a_result(tu, tmp_path, capsys):
    out = tmp_path / "r.json"
    not_objects = ['"just a string"', "null", "[1, 2]", '{"dataset": 3}']
    for text in (*not_objects, '{"dataset": "TOY", "data_path": "x", "protocol": "cv", "folds": ["fold"]}'):
        out.write_text(text)
        _error(capsys, main(["evaluate", str(tu), "--folds", "2", "--json", str(out), "--resume", *TINY]), str(out))


def test_resume_still_completes_a_valid_partial_result(tu, tmp_path, capsys):
    out = _partial_result(tu, tmp_path)
    assert main(["evaluate", str(tu), "--folds", "2", "--json", str(out), "--resume", *TINY]) == 0
    folds = json.loads(out.read_text())["folds"]
    assert [f["fold"] for f in folds] == [1, 2] and all(0 <= f["auc"] <= 1 for f in folds)


def test_every_option_that_names_a_file_is_an_input_or_an_output_of_the_check():
    """A new option naming a file or folder must say what it is, or the output check misses it."""
    import argparse
    import re

    from core.cli.main import build_parser
    from core.cli.options import INPUT_OPTIONS, NOT_CHECKED, OUTPUT_OPTIONS

    known = set(INPUT_OPTIONS) | set(OUTPUT_OPTIONS) | set(NOT_CHECKED)
    columns = {"smiles_column", "id_column", "label_column", "scheduler"}  # column names, a cluster's address
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    unknown = []
    for command, subparser in sub.choices.items():
        for action in subparser._actions:
            names_a_path = action.type is None and action.nargs != 0 and (
                action.metavar in ("FILE", "JSON", "DIR")
                or re.search(r"\b(file|folder|write|report|collection)s?\b", action.help or "", re.IGNORECASE))
            if names_a_path and action.dest not in known | columns:
                unknown.append(f"{command} {action.dest}")
    assert not unknown, unknown


def test_screen_refuses_an_output_that_is_one_of_its_shards(tmp_path, capsys, model_file):
    for k in range(2):
        (tmp_path / f"shard{k}.smi").write_text("CCO a\n")
    _error(capsys, main(["screen", str(model_file), str(tmp_path / "shard*.smi"), "-o", str(tmp_path / "shard1.smi"),
                         "--scheduler", "local:1"]), "is an input of this command")
    assert (tmp_path / "shard1.smi").read_text() == "CCO a\n"


def test_resume_without_json_and_output_to_dash_are_refused_before_any_work(tu, tmp_path, capsys, monkeypatch):
    """--resume without --json ran every fold again; -o - wrote a file named '-' in the working folder."""
    monkeypatch.chdir(tmp_path)
    _error(capsys, main(["evaluate", str(tu), "--folds", "2", "--resume", *TINY]), "--resume keeps the folds")
    model = tmp_path / "m.pt"
    assert main(["train", str(tu), "-o", str(model), "--detector", "size", "--calibration", "0"]) == 0
    _error(capsys, main(["score", str(model), str(tu), "-o", "-"]), "not to standard output")
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("option, name", [("--json", "model.pt"), ("--json", "results.csv"), ("--json", "results"),
                                          ("--markdown", "table.json")])
def test_evaluate_results_are_named_for_their_format(tu, tmp_path, capsys, no_work, option, name):
    """``evaluate --json model.pt`` replaced a model file with JSON: the results' names follow the
    rule of their writers, as ``-o`` follows the report's and the model file's."""
    target = tmp_path / name
    target.write_bytes(b"a model")
    _error(capsys, main(["evaluate", str(tu), option, str(target), *TINY]), "the results are written as")
    assert target.read_bytes() == b"a model"


def test_the_results_writers_keep_their_own_name_rule(tmp_path):
    from core import GLocalKDError
    from core.evaluation.results import write_markdown

    with pytest.raises(GLocalKDError, match="name it .md"):
        write_markdown([], tmp_path / "table.csv")
    assert not (tmp_path / "table.csv").exists()


def test_options_that_would_do_nothing_are_refused_or_used(tu, tmp_path, capsys, no_work):
    """``evaluate --protocol cv --seeds 3`` ran one seed and recorded seeds [0] without a word."""
    _error(capsys, main(["evaluate", str(tu), "--seeds", "3", *TINY]), "--seeds is the split protocol's")


def test_screen_top_and_its_merge_refuse_an_unwritable_summary_before_any_work(tmp_path, capsys, model_file):
    """``screen --top`` writes REPORT.summary.json beside its report, and so does merge-reports of
    such shards: a folder of that name failed the command (exit 2) after the report was replaced."""
    library = tmp_path / "lib.smi"
    library.write_text("CCO a\nCCN b\nc1ccccc1 c\n")
    shard = tmp_path / "shard.csv"
    assert main(["screen", str(model_file), str(library), "-o", str(shard), "--top", "2", "--workers", "1"]) == 0
    report = tmp_path / "r.csv"
    report.write_text("old\n")
    (tmp_path / "r.csv.summary.json").mkdir()
    capsys.readouterr()
    # the summary named first, then why: "--output r.csv: Is a folder, not a file: ..." read as if r.csv were the folder
    said = f"--output {report}: cannot write the summary {report}.summary.json that a report keeping its best rows " \
           "only gets beside it: Is a folder, not a file"
    _error(capsys, main(["screen", str(model_file), str(library), "-o", str(report), "--top", "2", "--workers", "1"]),
           said)
    _error(capsys, main(["merge-reports", str(shard), "-o", str(report)]), said)
    assert report.read_text() == "old\n"


@pytest.mark.parametrize("command", ["score", "screen"])
def test_a_legal_output_name_of_250_characters_is_written(tmp_path, capsys, model_file, command):
    """Names of 240 to 255 characters are legal, and were refused as "File name too long" by the
    temporary files written beside them."""
    library = tmp_path / "lib.smi"
    library.write_text("CCO a\nCCN b\nc1ccccc1 c\n")
    out = tmp_path / ("b" * 246 + ".csv")
    assert main([command, str(model_file), str(library), "-o", str(out)]) == 0, capsys.readouterr().err
    assert out.read_text().startswith("rank,")
