"""Research and benchmarks stay out of the product: `core` and `app` never import them, and a
`pip install` installs only `core` and `app`."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE_THE_PRODUCT = ("research", "benchmarks")


def imports_from_outside(path: Path) -> list[str]:
    """Every import in ``path`` of a top-level package in OUTSIDE_THE_PRODUCT, as 'file:line name'."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in
              ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            names = [node.args[0].value]
        else:
            continue
        where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        found += [f"{where}:{node.lineno} {name}" for name in names
                  if name.split(".")[0] in OUTSIDE_THE_PRODUCT]
    return found


def test_core_and_app_never_import_research_or_benchmarks():
    sources = sorted((ROOT / "core").rglob("*.py")) + sorted((ROOT / "app").rglob("*.py")) + [ROOT / "main.py"]
    assert len(sources) > 50
    found = [hit for path in sources for hit in imports_from_outside(path)]
    assert found == []


def test_the_check_sees_each_form_of_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import research.consensus.combine\nfrom benchmarks.common import peak_rss_mb\n"
                       "import importlib\nimportlib.import_module('research.paper')\nfrom .research import x\n")
    found = imports_from_outside(planted)
    assert [hit.split(" ")[1] for hit in found] == ["research.consensus.combine", "benchmarks.common",
                                                   "research.paper"]


def installed_packages() -> list[str]:
    """The packages a `pip install .` installs, by pyproject.toml's ``packages.find`` setting."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[tool\.setuptools\.packages\.find\]\s*\ninclude\s*=\s*\[([^\]]*)\]", text, re.M)
    assert section, "pyproject.toml must say which packages install ([tool.setuptools.packages.find] include)"
    include = re.findall(r'"([^"]+)"', section.group(1))
    return find_packages(where=str(ROOT), include=include)


def test_only_core_and_app_install():
    packages = installed_packages()
    assert "core" in packages and "app" in packages
    assert {name.split(".")[0] for name in packages} == {"core", "app"}
    assert (ROOT / "research" / "__init__.py").exists()  # a package, yet not installed
