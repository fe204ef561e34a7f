"""The code's shape, held as tests: core's layers (.importlinter), no private names imported
across modules, core free of Qt, and the old flat module paths still importing for one release."""
from __future__ import annotations

import ast
import subprocess
import sys
import warnings
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
    # core/__init__ installs the alias finder of its own private module; nothing else may
    assert found == ["core/__init__.py:35 imports _legacy from core"] or found == [
        f for f in found if f.startswith("core/__init__.py")], found


def test_the_flat_module_paths_still_import_with_a_deprecation_warning():
    code = ("import warnings, sys\n"
            "with warnings.catch_warnings(record=True) as seen:\n"
            "    warnings.simplefilter('always')\n"
            "    from core.model import GLocalKD\n"
            "    from core.loaders.tu import load_tu\n"
            "    from core.evaluate import evaluate\n"
            "import core\n"
            "import core.evaluation\nassert GLocalKD is core.GLocalKD and evaluate is core.evaluation.evaluate\n"
            "moved = [str(w.message) for w in seen if issubclass(w.category, DeprecationWarning) and 'moved' in str(w.message)]\n"
            "assert any('core.detectors.glocalkd' in m for m in moved), moved\n"
            "assert any('core.io.tu' in m for m in moved), moved\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]


def test_an_unknown_old_path_is_still_an_import_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ImportError):
            __import__("core.no_such_module")
