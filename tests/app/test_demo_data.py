"""The demo data sets live once, in the app package (app/demo_data), so that a non-editable
`pip install .` carries them; the tests read them from there, and resources/ holds only what
the tests alone use."""
from __future__ import annotations

import fnmatch
import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEMO_DATA = ROOT / "app" / "demo_data"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def package_data_patterns() -> list[str]:
    """The app's package-data globs in pyproject.toml, relative to the app package."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[tool\.setuptools\.package-data\]\s*\napp\s*=\s*\[([^\]]*)\]", text, re.M)
    assert section, "pyproject.toml must list the app's package data ([tool.setuptools.package-data] app = [...])"
    return re.findall(r'"([^"]+)"', section.group(1))


def test_every_demo_the_app_names_exists_and_installs_with_it():
    named = set()
    for source in (ROOT / "app").rglob("*.py"):
        named.update(re.findall(r'DEMO_DATA\s*/\s*"([^"]+)"', source.read_text(encoding="utf-8")))
    assert {"herg.tab", "AIDS.zip"} <= named
    patterns = package_data_patterns()
    for name in named:
        assert (DEMO_DATA / name).is_file(), name
        assert any(fnmatch.fnmatch(f"demo_data/{name}", p) for p in patterns), (name, patterns)


def test_no_file_of_the_repository_duplicates_a_demo():
    demos = {digest(p): p.name for p in DEMO_DATA.iterdir() if p.is_file()}
    copies = [f"{p.relative_to(ROOT)} copies app/demo_data/{demos[digest(p)]}"
              for folder in ("resources", "docs", "tests", "benchmarks", "research") if (ROOT / folder).is_dir()
              for p in (ROOT / folder).rglob("*") if p.is_file() and p.stat().st_size > 1024 and digest(p) in demos]
    assert copies == []
