"""Core's errors name parameters; the command line and the app each word them, without rewriting
the text by patterns."""
from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from core import DataError, GLocalKDError, ParameterError

ROOT = Path(__file__).resolve().parents[2]


def test_an_error_names_its_parameters_and_each_front_end_words_them():
    from app.state import app_wording
    from core.cli.options import error_text

    error = ParameterError("{hidden_dim} must be at least 1, and {normal_label} names no graphs", "hidden_dim",
                           "normal_label")
    assert error.param == "hidden_dim"
    assert str(error) == "hidden_dim must be at least 1, and normal_label names no graphs"
    assert error_text(error) == "--hidden must be at least 1, and --normal-label names no graphs"
    assert app_wording(error) == ("the Hidden width setting must be at least 1, and the Normal graphs setting "
                                  "names no graphs")
    plain = GLocalKDError("nothing to word: {x}")
    assert str(plain) == error_text(plain) == app_wording(plain) == "nothing to word: {x}"


def test_a_missing_smiles_column_is_named_as_each_front_end_sets_it(tmp_path):
    from app.state import app_wording
    from core import load
    from core.cli.options import error_text

    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n")
    with pytest.raises(DataError) as failure:
        load(str(table))
    assert failure.value.params == ("smiles_column",) and failure.value.line == 1
    assert error_text(failure.value).endswith("name it with --smiles-column")
    assert "column dialog" in app_wording(failure.value) and "{" not in app_wording(failure.value)
    assert str(failure.value).startswith(f"{table}:1: ")


def test_the_app_words_errors_without_regular_expressions():
    tree = ast.parse((ROOT / "app" / "state.py").read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "re" not in imported


def test_every_detector_refuses_a_setting_by_naming_it():
    """A detector's validate_params raises no error that does not name its parameter: each goes
    through Detector.check_settings (or a ParameterError), so the command line says --epochs and
    the app its field, whichever detector the user picked."""
    plain = []
    for path in sorted((ROOT / "core" / "detectors").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "validate_params":
                for raised in ast.walk(node):
                    if isinstance(raised, ast.Raise) and raised.exc is not None and not (
                            isinstance(raised.exc, ast.Call) and getattr(raised.exc.func, "id", "") == "ParameterError"):
                        plain.append(f"{path.name}:{raised.lineno}")
    assert plain == []


@pytest.mark.parametrize("name, setting", [("glocalkd", {"epochs": 0}), ("ocgcn", {"lr": -1.0}),
                                           ("gin-iforest", {"n_encoders": 0}), ("kme-lesinn", {"hops": -1}),
                                           ("ecfp-nn", {"n_bits": 12}), ("wl-lesinn", {"pool_size": 0})])
def test_a_bad_detector_setting_is_worded_as_its_option(name, setting):
    from core import make_detector
    from core.cli.options import error_text

    detector = make_detector(name)
    detector.set_params(**setting)
    with pytest.raises(ParameterError) as failure:
        detector.validate_params()
    key = next(iter(setting))
    assert failure.value.params == (key,)
    assert error_text(failure.value).startswith(f"invalid setting: --{key.replace('_', '-')} must be ")


def test_evaluate_names_its_own_option_for_the_detector(tmp_path, capsys):
    """``evaluate`` chooses the detector with --method; a message of its named --detector, which it
    does not have."""
    from core.cli.main import main
    from core.cli.options import error_text, option_name

    assert option_name("detector") == "--detector" and option_name("detector", "evaluate") == "--method"
    error = ParameterError("choose another detector with {detector}", "detector")
    assert error_text(error, "evaluate") == "choose another detector with --method"
    folder = tmp_path / "TINY"
    folder.mkdir()
    rings = [4, 5, 6, 4, 5, 6]  # six ring graphs: too few for a consensus to hold out a calibration share
    edges, indicator, start = [], [], 1
    for g, n in enumerate(rings, start=1):
        indicator += [g] * n
        edges += [(start + i, start + (i + 1) % n) for i in range(n)] + [(start + (i + 1) % n, start + i) for i in range(n)]
        start += n
    (folder / "TINY_A.txt").write_text("".join(f"{a}, {b}\n" for a, b in edges))
    (folder / "TINY_graph_indicator.txt").write_text("".join(f"{g}\n" for g in indicator))
    (folder / "TINY_graph_labels.txt").write_text("".join(f"{g % 2}\n" for g in range(len(rings))))
    assert main(["evaluate", str(folder), "--method", "consensus", "--folds", "2", "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert "--method" in err and "--detector" not in err, err


def test_every_command_reads_its_device_as_one_option_that_checks_the_name():
    """``--device`` was declared six times; only GLocalKD's and OCGCN's settings checked it, so
    ``train --detector size --device gpu`` and ``evaluate --device banana`` ran."""
    from core.cli.main import build_parser
    from core.cli.options import device_name

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    with_device = {name: next(a for a in parser._actions if "--device" in a.option_strings)
                   for name, parser in sub.choices.items() if any("--device" in a.option_strings for a in parser._actions)}
    assert {"train", "score", "screen", "evaluate", "weigh", "evaluate-explanations"} <= set(with_device)
    assert all(action.type is device_name for action in with_device.values())
    for name in ("auto", "cpu", "cuda", "cuda:1"):
        assert device_name(name) == name
    for name in ("gpu", "banana", "cuda:", "CPU"):
        with pytest.raises(argparse.ArgumentTypeError, match="must be 'auto', 'cpu', 'cuda' or 'cuda:N'"):
            device_name(name)


@pytest.mark.parametrize("name, edit", [("glocalkd", {"normalize": "yes"}), ("glocalkd", {"seed": -1}),
                                        ("wl-lesinn", {"seed": -1}), ("size", {"seed": 1.5})])
def test_a_model_file_is_held_to_the_settings_rules_that_fit_applies(tmp_path, tu_folder, name, edit):
    """Loading checked only each detector's own rules, not the kinds every fit checks first: a
    GLocalKD file saying normalize="yes" loaded and normalised (a score moved from 2.492 to 2.292)."""
    from core import ModelFileError, load, load_detector, make_detector, save_detector
    from core.runtime.model_files import read_model_file, write_model_file

    model = make_detector(name, **({"epochs": 1, "hidden_dim": 8, "out_dim": 4} if name == "glocalkd" else {}))
    model.fit(load(tu_folder))
    path = tmp_path / "m.pt"
    save_detector(model, path)
    load_detector(path)  # as written: it loads
    state = read_model_file(path)
    state["params"] = {**state["params"], **edit}
    write_model_file(path, state)  # edited, with a digest that matches
    with pytest.raises(ModelFileError, match=f"{next(iter(edit))}"):
        load_detector(path)


def test_only_check_params_calls_the_detectors_own_rules():
    """Fit checked the settings' kinds and then the detector's rules (check_params); two loaders
    called the rules alone (validate_params). Every caller goes through check_params."""
    root = Path(__file__).resolve().parents[2]
    calls, allowed = [], 0
    for path in [*(root / "core").rglob("*.py"), *(root / "app").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        inside = [(f.lineno, f.end_lineno) for f in ast.walk(tree)
                  if isinstance(f, ast.FunctionDef) and f.name == "check_params"]
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "validate_params":
                if any(a <= node.lineno <= b for a, b in inside):
                    allowed += 1
                else:
                    calls.append(f"{path.relative_to(root)}:{node.lineno}")
    assert allowed == 1 and calls == [], calls
