"""Every bad input ends the command with exit status 2 and one line naming the problem; no traceback."""
import gzip

import torch

import pytest

from core.cli.main import main
from core.runtime.model_files import write_model_file
from tests.conftest import ring, write_tu

TRAIN = ["--epochs", "1", "--hidden", "8", "--out-dim", "4", "--device", "cpu"]



def _one_line_error(capsys, code, *needles):
    err = capsys.readouterr().err
    assert code == 2, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("glocalkd: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in last, (needle, last)
    return last


def _bad_files(tmp_path):
    tu = write_tu(tmp_path / "T", "T", [(3, ring(3), 1)] * 2)
    (tu / "T_A.txt").write_text("1, 2\n2, x\n")
    files = {
        "empty.smi": b"", "empty.csv": b"", "header.csv": b"id,smiles\n", "comments.smi": b"# x\n\n",
        "binary.csv": bytes(range(256)) * 4, "nocol.csv": b"id,name\n1,x\n",
        "allbad.smi": b"C1CC a\nXyz b\n", "broken.sdf": b"x\nnot a molblock\nM  END\n$$$$\n",
        "damaged.smi.gz": gzip.compress(b"".join(b"C" * (i % 9 + 1) + b" m%d\n" % i for i in range(3000)))[:900],
        "utf16junk.csv": b"\xff\xfe" + bytes(40), "wrongcolumn.csv": b"smiles,name\nxx(,CCO\nyy),CCN\n",
    }
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / name
        paths[name].write_bytes(data)
    paths["tu"] = tu
    paths["missing.smi"] = tmp_path / "missing.smi"
    paths["unknown.xyz"] = tmp_path / "unknown.xyz"
    paths["unknown.xyz"].write_text("CCO\n")
    return paths


def test_bad_data_for_every_command(tmp_path, capsys, model_file):
    """info, train, score and screen read a file through one reader: each bad file gets the same
    one-line error from each, naming the file; a table whose SMILES column holds none names the
    option that picks another (--smiles-column)."""
    for name, path in _bad_files(tmp_path).items():
        shown = "T_A.txt:2" if name == "tu" else name
        option = ("--smiles-column",) if name == "wrongcolumn.csv" else ()
        _one_line_error(capsys, main(["info", str(path)]), shown, *option)
        _one_line_error(capsys, main(["train", str(path), "-o", str(tmp_path / "m.pt"), *TRAIN]), shown, *option)
        _one_line_error(capsys, main(["score", str(model_file), str(path), "-o", str(tmp_path / "r.csv")]),
                        shown, *option)
        if name != "tu":  # screening streams molecule files, not graph collections
            _one_line_error(capsys, main(["screen", str(model_file), str(path), "-o", str(tmp_path / "s.csv"),
                                          "--workers", "1"]), shown, *option)
    assert not [p for p in tmp_path.iterdir() if p.name in ("m.pt", "r.csv", "s.csv")]


def test_bad_model_files(tmp_path, capsys, model_file):
    data = tmp_path / "x.smi"
    data.write_text("CCO a\n")
    trunc = tmp_path / "trunc.pt"
    trunc.write_bytes(model_file.read_bytes()[:500])
    newer = tmp_path / "newer.pt"
    write_model_file(newer, {**torch.load(model_file, weights_only=True), "version": 99})  # its own digest
    tu_model = tmp_path / "tu.pt"
    folder = write_tu(tmp_path / "T", "T", [(3, ring(3), 1)] * 3)
    assert main(["train", str(folder), "-o", str(tu_model), *TRAIN]) == 0
    capsys.readouterr()
    for model, needle in ((trunc, "trunc.pt: not a GLocalKD Studio model file"),
                          (newer, "written by a newer GLocalKD Studio"), (data, "x.smi: not a GLocalKD"),
                          (tmp_path / "none.pt", "no such model file")):
        _one_line_error(capsys, main(["score", str(model), str(data), "-o", str(tmp_path / "r.csv")]), needle)
    _one_line_error(capsys, main(["score", str(tu_model), str(data), "-o", str(tmp_path / "r.csv")]),
                    "x.smi cannot be scored with this model: the model was fitted on graphs labelled by T's TU node "
                    "labels (numbers its files do not name), but these are labelled by molecules' elements")
    _one_line_error(capsys, main(["score", str(model_file), str(folder), "-o", str(tmp_path / "r.csv")]),
                    "trained on molecules")


def test_a_session_file_given_as_a_model_is_said_to_be_a_session(tmp_path, capsys, model_file):
    """``glocalkd score SESSION data`` said "not a GLocalKD Studio model file, or damaged
    (RuntimeError)", under any name; a model named like a session scores (what a file is comes from
    its contents: :func:`core.file_kind`)."""
    import shutil
    import zipfile

    from core import file_kind

    data = tmp_path / "x.smi"
    data.write_text("CCO a\nCCN b\n")
    session = tmp_path / "work.glocalkd-session"
    with zipfile.ZipFile(session, "w") as zf:  # what a session file holds: its document and its model
        zf.writestr("session.json", '{"format": "glocalkd-session", "version": 1}')
        zf.write(model_file, "model.pt")
    shutil.copy(session, tmp_path / "work.pt")
    for path in (session, tmp_path / "work.pt"):
        assert file_kind(path) == "session"
        _one_line_error(capsys, main(["score", str(path), str(data), "-o", str(tmp_path / "r.csv")]),
                        f"{path.name}: a GLocalKD Studio session file, not a model file", "open it in GLocalKD Studio")
    renamed = tmp_path / "model.glocalkd-session"
    shutil.copy(model_file, renamed)
    assert file_kind(renamed) == "model"
    assert main(["score", str(renamed), str(data), "-o", str(tmp_path / "r.csv")]) == 0


def test_bad_settings_and_outputs(tmp_path, capsys, model_file):
    data = tmp_path / "x.csv"
    data.write_text("id,smiles,label\nA,CCO,1\nB,CCN,1\n")
    _one_line_error(capsys, main(["train", str(data), "-o", str(tmp_path / "m.pt"), "--normal-label", "0",
                                  *TRAIN]), "no graphs have label '0'")
    _one_line_error(capsys, main(["train", str(data), "-o", str(tmp_path / "m.pt"), *TRAIN, "--epochs", "0"]),
                    "invalid setting: --epochs must be a whole number of at least 1, not 0")
    for detector in ("glocalkd", "size"):  # read as the command line is, for every detector
        with pytest.raises(SystemExit) as stop:
            main(["train", str(data), "-o", str(tmp_path / "m.pt"), *TRAIN, "--device", "tpu", "--detector", detector])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and "Traceback" not in err
        assert err.strip().splitlines()[-1] == ("glocalkd train: error: argument --device: must be 'auto', 'cpu', "
                                                "'cuda' or 'cuda:N', not 'tpu'")
    _one_line_error(capsys, main(["train", str(data), "-o", str(tmp_path / "m.pt"), *TRAIN,
                                  "--features", "labels"]), "features 'labels' asked for")
    _one_line_error(capsys, main(["score", str(model_file), str(data), "-o", str(tmp_path / "no" / "r.csv")]),
                    "No such file or directory")


def test_rejected_rows_are_listed_and_the_rest_scored(tmp_path, capsys, model_file):
    data = tmp_path / "x.smi"
    data.write_text("CCO a\nC1CC b\n\nCCN c\n")
    report = tmp_path / "r.csv"
    assert main(["score", str(model_file), str(data), "-o", str(report)]) == 0
    err = capsys.readouterr().err
    assert "1 row rejected" in err and "line 2: invalid SMILES syntax" in err
    assert "3 rows: 2 scored, 1 rejected" in err
    assert report.read_text().splitlines()[-2].endswith("rejected: line 2: invalid SMILES syntax: C1CC,,")  # then the end row


def test_evaluate_refuses_an_option_by_its_name_before_reading_the_data(tmp_path, capsys):
    """The harness's option checks name the option (core.errors.ParameterError), before any file is read."""
    data = tmp_path / "never_read.smi"  # not even there: every refusal comes first
    for args, words in ((["--folds", "1"], "--folds must be at least 2 for cross-validation, not 1"),
                        (["--ensemble", "0"], "--ensemble must be at least 1, not 0"),
                        (["--known-anomalies", "-1"], "--known-anomalies must be a count of 0 or more, not -1"),
                        (["--known-anomalies", "3", "--method", "size"], "size has a single view"),
                        (["--contamination", "2"], "--contamination must be in [0, 1), not 2.0"),
                        (["--test", str(data)], "only used by the split protocol (--protocol split)")):
        _one_line_error(capsys, main(["evaluate", str(data), *args]), words)


def test_screening_with_a_model_of_graphs_says_the_model_is_the_problem(tmp_path, capsys):
    """``screen t1.pt T2`` said "T2: screening needs a model trained on molecules": the data file was
    blamed for the model's kind. The message names what the model was trained on."""
    folder = write_tu(tmp_path / "T", "T", [(3, ring(3), 1)] * 3)
    model = tmp_path / "tu.pt"
    assert main(["train", str(folder), "-o", str(model), *TRAIN]) == 0
    (tmp_path / "lib.smi").write_text("CCO a\nCCN b\n")
    capsys.readouterr()
    assert main(["screen", str(model), str(tmp_path / "lib.smi"), "-o", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err
    assert "screening needs a model trained on molecules" in err and "this one was trained on" in err
    assert "lib.smi" not in err
