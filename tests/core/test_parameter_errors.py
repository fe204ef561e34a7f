"""Core's errors name parameters; the command line and the app each word them, without rewriting
the text by patterns."""
from __future__ import annotations

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
