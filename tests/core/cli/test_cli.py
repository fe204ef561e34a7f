import csv
import subprocess
import sys

from core.cli.main import main
from tests.conftest import ROOT


def test_train_then_score_writes_a_ranked_report(tu_folder, tmp_path, capsys):
    model = tmp_path / "m.pt"
    assert main(["train", str(tu_folder), "-o", str(model), "--epochs", "3", "--hidden", "16",
                 "--out-dim", "8", "--normal-label", "1", "--device", "cpu"]) == 0
    assert "training on the 8 graphs labelled 1" in capsys.readouterr().err
    report = tmp_path / "r.csv"
    assert main(["score", str(model), str(tu_folder), "-o", str(report)]) == 0
    rows = list(csv.DictReader(open(report)))
    *rows, end = rows  # every report ends with the end row, which names the model
    assert len(rows) == 12 and rows[0]["rank"] == "1"
    scores = [float(r["score"]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    from core import load_detector, read_report

    assert end["status"].startswith("end of report: 12 rows; model ")
    assert read_report(report).intact and read_report(report).model_fingerprint == load_detector(model).fingerprint()


def test_bad_input_is_one_line_and_nonzero(tmp_path, capsys):
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    assert main(["train", str(bad), "-o", str(tmp_path / "m.pt")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("glocalkd: error: ") and "no SMILES column" in err and "\n" not in err
    (tmp_path / "m.pt").write_text("not a model")
    assert main(["score", str(tmp_path / "m.pt"), str(bad), "-o", str(tmp_path / "r.csv")]) == 2
    assert "not a GLocalKD Studio model file" in capsys.readouterr().err


def test_python_dash_m_core_runs_as_a_program(smiles_file):
    done = subprocess.run([sys.executable, "-m", "core", "info", str(smiles_file)], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0
    assert "4 graphs (smiles)" in done.stdout and "2 rows rejected" in done.stdout
    assert "line 6: invalid SMILES syntax" in done.stdout


def test_threads_option_sets_torch_threads_and_rejects_negatives(tu_folder, tmp_path, capsys):
    import pytest
    import torch

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert main(["train", str(tu_folder), "-o", str(tmp_path / "m.pt"), "--epochs", "1", "--hidden", "8",
                     "--out-dim", "4", "--device", "cpu", "--threads", "1"]) == 0
        assert torch.get_num_threads() == 1
        assert main(["score", str(tmp_path / "m.pt"), str(tu_folder), "-o", str(tmp_path / "r.csv")]) == 0
        assert torch.get_num_threads() == 1  # 0 (the default) leaves torch's setting alone
        with pytest.raises(SystemExit):
            main(["score", str(tmp_path / "m.pt"), str(tu_folder), "-o", str(tmp_path / "r.csv"), "--threads", "-1"])
        assert "must be 0 or more" in capsys.readouterr().err
    finally:
        torch.set_num_threads(before)


def test_info_names_the_ids_that_name_more_than_one_row(tmp_path, capsys):
    """A table whose ID column repeats: every row is read, and `info` (with every command's summary
    of what a file held) says which IDs repeat and on which lines."""
    path = tmp_path / "repeats.csv"
    path.write_text("smiles,id\nCCO,A\nCCN,B\nCCC,A\nCCCl,C\nCCBr,B\nCCI,A\n")
    main(["info", str(path)])
    out = capsys.readouterr().out
    assert "6 graphs" in out
    assert "2 IDs name more than one row: A (lines 2, 4, 7), B (lines 3, 6) (every row is kept)" in out


def test_info_points_to_where_the_other_rejected_rows_are_listed(tmp_path, capsys):
    """``info`` said "... and 1 more (all listed in the report)", but writes no report."""
    data = tmp_path / "messy.smi"
    data.write_text("CCO a\n" + "".join(f"C1CC( bad{i}\n" for i in range(6)))
    assert main(["info", str(data)]) == 0
    out = capsys.readouterr().out
    assert "and 1 more (each is listed in the report 'glocalkd score' writes)" in out


def test_every_command_that_runs_a_model_takes_threads():
    """The docs said every command takes --threads; ``weigh``, which scores with torch, did not."""
    from core.cli.main import build_parser

    parser = build_parser()
    for argv in (["train", "d.smi", "-o", "m.pt"], ["score", "m.pt", "d.smi", "-o", "r.csv"],
                 ["screen", "m.pt", "d.smi", "-o", "r.csv"], ["weigh", "m.pt", "k.smi", "-o", "w.pt"],
                 ["evaluate", "d.smi"], ["evaluate-explanations", "d.smi"]):
        assert parser.parse_args([*argv, "--threads", "1"]).threads == 1, argv[0]


def test_no_command_takes_an_abbreviated_option(capsys):
    """``glocalkd score MODEL in.csv -o r.csv --top 5`` exited 0 and wrote every row: argparse took
    ``--top`` as short for ``--top-nodes``. Options are taken by their whole names only, in every
    command; ``--top`` is screen's (and ``score --top`` is refused as unknown)."""
    import argparse

    import pytest

    from core.cli.main import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(commands) == {"train", "score", "info", "evaluate", "screen", "merge-reports",
                             "evaluate-explanations", "weigh"}
    for name, command in commands.items():  # each option's name less its last letter, after what is required
        required = [value for action in command._actions if action.required or not action.option_strings
                    for value in (*action.option_strings[:1], "1")]
        options = {o for action in command._actions for o in action.option_strings}
        for option in sorted(options):
            if option.startswith("--") and len(option) > 3 and option[:-1] not in options:  # --seeds: --seed is one
                with pytest.raises(SystemExit) as exited:
                    command.parse_args([*required, option[:-1]])
                assert exited.value.code == 2, (name, option)
                assert f"unrecognized arguments: {option[:-1]}" in capsys.readouterr().err, (name, option)
    with pytest.raises(SystemExit) as exited:  # not --version
        parser.parse_args(["--vers", "info", "d.smi"])
    assert exited.value.code == 2 and "unrecognized arguments: --vers" in capsys.readouterr().err
    for argv in (["score", "m.pt", "in.csv", "-o", "r.csv", "--top", "5"],
                 ["screen", "m.pt", "in.csv", "-o", "r.csv", "--top-n", "5"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2 and f"unrecognized arguments: {argv[-2]} 5" in capsys.readouterr().err
    assert parser.parse_args(["screen", "m.pt", "in.csv", "-o", "r.csv", "--top", "5"]).top == 5
