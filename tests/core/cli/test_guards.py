"""Outputs checked before any work, never written through a link; one-line errors for bad settings."""
import gzip
import json
import os
import zipfile

import pytest
import torch

from core.cli.main import main
from core.runtime.model_files import write_model_file
from tests.conftest import ring, write_tu

TRAIN = ["--epochs", "1", "--hidden", "16", "--out-dim", "8", "--device", "cpu"]



def _error(capsys, code, needle):
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and needle in err.strip().splitlines()[-1], err


def test_train_never_writes_through_a_planted_link(tmp_path, model_file):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "m.pt"
    (tmp_path / "m.pt.tmp").symlink_to(victim)
    data = tmp_path / "d.smi"
    data.write_text("CCO a\nCCN b\n")
    assert main(["train", str(data), "-o", str(out), *TRAIN]) == 0
    assert victim.read_text() == "precious" and out.is_file() and not out.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.smi", "m.pt", "m.pt.tmp", "victim.txt"]


def test_evaluate_json_never_writes_through_a_planted_link(tmp_path, monkeypatch):
    from core.evaluation import results

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "r.json.tmp").symlink_to(victim)

    class Fake:
        def to_dict(self):
            return {"x": 1}

    results.write_json(Fake(), tmp_path / "r.json")
    assert victim.read_text() == "precious" and json.loads((tmp_path / "r.json").read_text()) == {"x": 1}


def test_output_paths_are_checked_before_training(tmp_path, capsys, monkeypatch):
    from core.detectors.glocalkd import GLocalKD

    def no_training(*args, **kwargs):
        raise AssertionError("trained before checking the output")

    monkeypatch.setattr(GLocalKD, "fit", no_training)
    data = tmp_path / "d.smi"
    data.write_text("CCO a\n")
    _error(capsys, main(["train", str(data), "-o", str(tmp_path / "missing" / "m.pt"), *TRAIN]),
           "No such file or directory")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if not os.access(locked, os.W_OK):  # (root writes anywhere)
            _error(capsys, main(["train", str(data), "-o", str(locked / "m.pt"), *TRAIN]), "Permission denied")
    finally:
        locked.chmod(0o700)


def test_an_output_that_is_an_input_is_refused(tmp_path, capsys, model_file):
    data = tmp_path / "d.smi"
    data.write_text("CCO a\n")
    before = model_file.read_bytes()
    _error(capsys, main(["score", str(model_file), str(data), "-o", str(model_file)]), "is an input")
    _error(capsys, main(["screen", str(model_file), str(data), "-o", str(data)]), "is an input")
    assert model_file.read_bytes() == before and data.read_text() == "CCO a\n"


def test_bad_settings_are_one_line_errors(tmp_path, capsys, model_file):
    data = tmp_path / "d.smi"
    data.write_text("CCO a\n")
    for command in ("score", "screen"):
        with pytest.raises(SystemExit) as exit_:
            main([command, str(model_file), str(data), "-o", str(tmp_path / "r.csv"), "--top-nodes", "-2"])
        assert exit_.value.code == 2 and "must be 0 or more" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", str(data), "-o", str(tmp_path / "m.pt"), "--threads", "100000"])
    assert "must be from 0 to" in capsys.readouterr().err
    # seeds: numpy refused a negative one with a traceback, torch one of 2**64 as "Overflow"
    for argv in (["train", str(data), "-o", str(tmp_path / "m.pt"), "--seed", "-1"],
                 ["train", str(data), "-o", str(tmp_path / "m.pt"), "--seed", str(2**64)],
                 ["evaluate", str(data), "--seed", "-1"], ["evaluate", str(data), "--cv-seed", "-1"],
                 ["evaluate-explanations", str(data), "--seed", "-1"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and "must be a whole number from 0 to 4294967295" in err and "Traceback" not in err
    # parsing workers: a process each, so --workers 100000 hung the machine starting them
    assert main(["screen", str(model_file), str(data), "-o", str(tmp_path / "r.csv"), "--workers", "100000"]) == 2
    assert "--workers must be from 1 to" in capsys.readouterr().err


def test_the_api_refuses_bad_seeds_by_name(tmp_path):
    """The same rule for callers of the API: a ParameterError naming the seed, not numpy's ValueError."""
    from core import TrainSpec, load, train_model
    from core.errors import ParameterError
    from core.evaluation.protocol import evaluate
    from tests.conftest import path, ring, write_tu

    toy = [(5 + i % 3, ring(5 + i % 3), 1) for i in range(12)] + [(6, path(5), 0) for _ in range(6)]
    graphs = load(write_tu(tmp_path / "TOY", "TOY", toy, node_labels=True))
    with pytest.raises(ParameterError, match="seed must be a whole number from 0"):
        train_model(graphs, TrainSpec(detector="size", seed=-1))
    with pytest.raises(ParameterError, match="cv_seed must be a whole number from 0"):
        evaluate(graphs, cv_seed=-1, method="size")
    with pytest.raises(ParameterError, match="must each be a whole number from 0"):
        evaluate(graphs, seeds=[2**32], method="size")


def test_evaluate_reports_bad_resume_files_and_tiny_classes(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("smiles,label\n" + "".join(f"{s},0\n" for s in ("CCO", "CCN", "CCC", "CCCl", "CC=O", "CCOC"))
                    + "c1ccccc1,1\nc1ccncc1,1\n")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    _error(capsys, main(["evaluate", str(data), "--resume-from", str(bad), "--epochs", "1", "--device", "cpu"]),
           "not a result file")
    _error(capsys, main(["evaluate", str(data), "--folds", "5", "--epochs", "1", "--device", "cpu"]),
           "use fewer folds")


def test_models_with_nan_weights_or_unreadable_are_named_so(tmp_path, capsys, model_file):
    state = torch.load(model_file, weights_only=True)
    key = next(iter(state["predictor"]))
    state["predictor"][key] = torch.full_like(state["predictor"][key], float("nan"))
    nan_model = tmp_path / "nan.pt"
    write_model_file(nan_model, state)  # a digest that matches: the NaN is refused all the same
    data = tmp_path / "d.smi"
    data.write_text("CCO a\n")
    _error(capsys, main(["score", str(nan_model), str(data), "-o", str(tmp_path / "r.csv")]), "NaN or infinite")
    assert not (tmp_path / "r.csv").exists()
    locked = tmp_path / "locked.pt"
    locked.write_bytes(model_file.read_bytes())
    locked.chmod(0)
    try:
        if not os.access(locked, os.R_OK):
            _error(capsys, main(["score", str(locked), str(data), "-o", str(tmp_path / "r.csv")]), "permission denied")
    finally:
        locked.chmod(0o600)


def test_nul_bytes_never_reach_the_report(tmp_path, capsys, model_file):
    data = tmp_path / "d.smi"
    data.write_bytes(b"CCO a\n" * 2000 + b"C\x00C b\n")  # past the first 8 KB (a NUL there: binary file)
    report = tmp_path / "r.csv"
    main(["score", str(model_file), str(data), "-o", str(report)])
    err = capsys.readouterr().err
    assert "\x00" not in report.read_text() and "\x00" not in err


def test_a_huge_line_or_archive_member_is_a_clear_error(tmp_path, capsys, monkeypatch, model_file):
    from core.io import text, tu

    monkeypatch.setattr(text, "MAX_LINE_CHARS", 1000)
    data = tmp_path / "d.smi.gz"
    data.write_bytes(gzip.compress(b"CCO a\n" + b"C" * 5000 + b" b\nCCN c\n"))
    _error(capsys, main(["screen", str(model_file), str(data), "-o", str(tmp_path / "r.csv")]),
           "d.smi.gz:2: line longer than 1,000 characters")
    monkeypatch.setattr(tu, "MAX_FILE_BYTES", 10_000)
    folder = write_tu(tmp_path / "T", "T", [(3, ring(3), 1)] * 2)
    (folder / "T_A.txt").write_text("1, 2\n" * 5000)
    archive = tmp_path / "T.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in folder.iterdir():
            zf.write(f, f.name)
    _error(capsys, main(["info", str(archive)]), "larger than")


def test_a_tables_column_options_do_not_bind_a_smiles_list_of_known_anomalies(tmp_path, capsys):
    """The column options name the data table's columns; a known-anomaly SMILES list beside it has
    none and is read as it is (while the same options on a SMILES list as the data are refused)."""
    data = tmp_path / "d.csv"
    data.write_text("compound,struct\n" + "".join(f"m{i},{s}\n" for i, s in enumerate(["CCO", "CCN", "CCC", "CCCl"] * 10)))
    known = tmp_path / "k.smi"
    known.write_text("CCCCCCCCCCCC k1\nC1CCCCCCCCC1 k2\nOCCOCCO k3\n")
    out = tmp_path / "m.pt"
    assert main(["train", str(data), "--smiles-column", "struct", "--known-anomalies", str(known), "-o", str(out),
                 "--epochs", "1", "--hidden", "16", "--out-dim", "8", "--device", "cpu"]) == 0
    assert main(["info", str(known), "--smiles-column", "struct"]) == 2
    assert "a SMILES list has no columns: --smiles-column is for tables" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["score", "screen", "merge-reports"])
@pytest.mark.parametrize("name", ["r.csv.gz", "r.sdf", "r.TSV"])
def test_a_report_named_for_another_format_is_refused_before_any_work(tmp_path, capsys, command, name):
    """``-o r.csv.gz`` and ``-o r.sdf`` wrote plain CSV under names no gzip or SDF reader opens."""
    from core.cli.main import main

    data = tmp_path / "d.smi"
    data.write_text("CCO a\n")
    first = ["model.pt", str(data)] if command != "merge-reports" else [str(data)]
    assert main([command, *first, "-o", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / name}: the ranked report is written as CSV" in err and "name it .csv" in err
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("name", ["model.csv", "model.SMI", "model.sdf", "model.pt.gz"])
def test_a_model_file_named_for_a_data_format_is_refused_before_any_work(tmp_path, capsys, name):
    """``train -o model.csv`` wrote a torch model under a table's name, which the app's Open then
    read as a table of molecules and failed on."""
    from core.cli.main import main

    data = tmp_path / "d.smi"
    data.write_text("CCO a\n")
    assert main(["train", str(data), "-o", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / name}: a model file is written" in err and "name it .pt" in err
    assert not (tmp_path / name).exists()


def test_a_tu_collections_file_given_to_score_or_screen_is_read_as_the_collection(tu_folder, tmp_path, capsys,
                                                                                 model_file):
    """``DS_A.txt`` was streamed as a table of SMILES ("no SMILES column found"); `score` now reads
    the collection (so a molecule model says it cannot score graphs), `screen` names it."""
    a_file = tu_folder / "TOY_A.txt"
    assert main(["score", str(model_file), str(a_file), "-o", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err
    assert "cannot be scored with this model" in err and "graph collection" in err and "SMILES" not in err
    assert main(["screen", str(model_file), str(a_file), "-o", str(tmp_path / "r.csv")]) == 2
    assert f"one of the files of the TU graph collection {tu_folder}" in capsys.readouterr().err


def test_a_scratch_folder_that_cannot_be_used_is_refused_before_any_work(tmp_path, capsys, model_file):
    """``--scratch`` missing, or a file: "[Errno 2] …/.screen-kw2t2yi2" once the cluster had started."""
    data = tmp_path / "d.smi"
    data.write_text("CCO a\n")
    a_file = tmp_path / "file"
    a_file.write_text("")
    for scratch, why in ((tmp_path / "missing" / "dir", "no such folder"), (a_file, "not a folder")):
        assert main(["screen", str(model_file), str(data), "-o", str(tmp_path / "r.csv"), "--scheduler", "local:1",
                     "--scratch", str(scratch)]) == 2
        assert f"--scratch {scratch}: {why}" in capsys.readouterr().err


def test_a_folder_given_as_the_model_is_called_a_folder(tmp_path, capsys):
    folder = tmp_path / "models"
    folder.mkdir()
    data = tmp_path / "d.smi"
    data.write_text("CCO a\n")
    assert main(["score", str(folder), str(data), "-o", str(tmp_path / "r.csv")]) == 2
    assert f"{folder}: a folder, not a model file" in capsys.readouterr().err


def test_properties_asked_of_graphs_without_structures_are_said_not_added(tu_folder, tmp_path, capsys):
    """``--properties --alerts`` on a TU collection wrote no such columns without a word."""
    model = tmp_path / "tu.pt"
    assert main(["train", str(tu_folder), "-o", str(model), "--epochs", "1", "--hidden", "8", "--out-dim", "4"]) == 0
    capsys.readouterr()
    assert main(["score", str(model), str(tu_folder), "-o", str(tmp_path / "r.csv"), "--properties", "--alerts"]) == 0
    assert "--properties and --alerts: not added" in capsys.readouterr().err


def test_a_tu_molecule_set_gets_the_properties_and_alerts_its_sd_export_has(aids_zip, tmp_path, capsys):
    """AIDS's labels name elements: ``--properties --alerts`` add the columns, with the values and
    alerts of the same molecules the SD file export writes (one molecule per graph)."""
    import csv

    from rdkit import Chem

    from core import load, load_detector, write_sdf

    model = tmp_path / "aids.pt"
    assert main(["train", str(aids_zip), "-o", str(model), "--detector", "size"]) == 0
    capsys.readouterr()
    assert main(["score", str(model), str(aids_zip), "-o", str(tmp_path / "r.csv"), "--properties", "--alerts"]) == 0
    assert "not added" not in capsys.readouterr().err
    rows = {r["id"]: r for r in csv.DictReader((tmp_path / "r.csv").open()) if r["rank"]}
    assert len(rows) == 2000 and all(r["mw"] and r["clogp"] for r in rows.values())
    assert sum(bool(r["alerts"]) for r in rows.values()) > 200
    graphs = load(aids_zip).subset(range(40))
    write_sdf(tmp_path / "a.sdf", graphs, load_detector(model).score(graphs))
    for mol in Chem.SDMolSupplier(str(tmp_path / "a.sdf"), sanitize=False):
        row = rows[mol.GetProp("id")]
        assert mol.GetProp("mw") == row["mw"] and mol.GetProp("tpsa") == row["tpsa"]
        assert (mol.GetProp("alerts") if mol.HasProp("alerts") else "") == row["alerts"]


@pytest.mark.parametrize("command", ["info", "score"])
def test_a_rejected_rows_reason_stays_on_its_line(tmp_path, capsys, command, model_file):
    """A quoted cell's line break split one reject over two lines of ``info``'s list (``score``
    wrote it escaped): the commands list rejects through one function."""
    from core.cli.main import main

    table = tmp_path / "t.csv"
    table.write_text('id,smiles\na,CCO\nb,"CC\nO"\nc,C1CC\n')
    args = ["info", str(table)] if command == "info" else ["score", str(model_file), str(table), "-o",
                                                           str(tmp_path / "r.csv")]
    assert main(args) == 0
    captured = capsys.readouterr()
    lines = (captured.out + captured.err).splitlines()
    listed = [line for line in lines if line.startswith("  line ")]
    assert listed == ["  line 3: SMILES contains a space or line break (is a name in the SMILES field?): CC\\nO",
                      "  line 5: invalid SMILES syntax: C1CC"]
