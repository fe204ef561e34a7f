"""The code's shape, held as tests: core's layers (.importlinter), no private names imported
across modules, core free of Qt, and the old flat module paths still importing for one release."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_hold():
    """lint-imports checks the layers, core's independence from Qt and the app's use of the public API."""
    pytest.importorskip("importlinter")
    run = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                          "lint_imports_command()", "--config", str(ROOT / ".importlinter")],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def _private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("core", "app"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {alias.name} from {node.module}")
    return found


def test_no_module_imports_a_private_name_of_another():
    sources = sorted((ROOT / "core").rglob("*.py")) + sorted((ROOT / "app").rglob("*.py"))
    found = [hit for path in sources for hit in _private_imports(path)]
    assert found == [], found


def test_the_flat_layout_module_paths_are_gone():
    """0.2.0 removed the aliases of the flat layout (``core.model``, ``core.loaders``): no module
    may answer at those paths, or two names for one module would creep back."""
    for old in ("core.model", "core.loaders", "core.no_such_module"):
        with pytest.raises(ImportError):
            __import__(old)
