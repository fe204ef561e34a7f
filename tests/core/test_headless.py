"""core must never import Qt: the app depends on core, never the reverse."""
import re
import subprocess
import sys

from tests.conftest import ROOT


def test_no_qt_import_statement_in_core():
    pattern = re.compile(r"^\s*(from|import)\s+(PySide6|PyQt\d?|shiboken\d?)\b", re.M)
    offenders = [p for p in (ROOT / "core").rglob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


def test_importing_all_of_core_loads_no_qt():
    code = ("import pkgutil, importlib, sys, core\n"
            "for m in pkgutil.walk_packages(core.__path__, 'core.'):\n"
            "    if m.name != 'core.__main__': importlib.import_module(m.name)\n"
            "print([m for m in sys.modules if m.startswith(('PySide', 'PyQt', 'shiboken'))])")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
