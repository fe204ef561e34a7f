"""The main window only lays out and wires: it stays short, computes nothing (no ``core`` import)
and starts no job itself (the controllers do)."""
import ast
from pathlib import Path

WINDOW = Path(__file__).resolve().parents[2] / "app" / "main_window.py"
MAX_LINES = 400


def test_the_main_window_stays_under_400_lines():
    lines = len(WINDOW.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, (f"app/main_window.py has {lines} lines (at most {MAX_LINES}): move logic into a "
                                "controller (app/controllers/) or a module of its own; see docs/architecture.md")


def test_the_main_window_neither_computes_nor_runs_jobs():
    tree = ast.parse(WINDOW.read_text(encoding="utf-8"))
    core_imports = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and (node.module or "").split(".")[0] == "core" and node.level == 0]
    assert not core_imports, f"app/main_window.py imports core (lines {core_imports}): computing belongs in a job"
    starts = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
              and isinstance(node.func, ast.Attribute) and node.func.attr == "start"
              and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "runner"]
    assert not starts, f"app/main_window.py starts jobs (lines {starts}): a controller starts them"
