"""One way to make and remove a scratch folder: core.runtime.scratch. Removing a folder in place
races with a writer that a stopped run left behind (a cancelled Dask task still writing its chunk
file keeps the folder alive), so every scratch folder in core/ and app/ is made by
``make_scratch``/``scratch_folder`` and removed by ``remove_scratch``; this test finds any other
``mkdtemp``, ``TemporaryDirectory`` or ``rmtree`` by reading the code (AST)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOME = "core/runtime/scratch.py"
FORBIDDEN = {"mkdtemp", "TemporaryDirectory", "rmtree"}


def other_scratch_calls(source: str) -> list[str]:
    """Each call of a folder maker or remover in ``source``, as ``line: text``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in FORBIDDEN:
                found.append(f"{node.lineno}: {ast.unparse(func)}")
    return found


def test_every_scratch_folder_is_made_and_removed_by_the_one_module():
    found = []
    for path in sorted([*ROOT.glob("core/**/*.py"), *ROOT.glob("app/**/*.py")]):
        name = path.relative_to(ROOT).as_posix()
        if name != HOME:
            found += [f"{name}:{hit}" for hit in other_scratch_calls(path.read_text(encoding="utf-8"))]
    assert not found, ("make scratch folders with core.runtime.scratch (make_scratch, scratch_folder) and remove "
                       "them with remove_scratch:\n" + "\n".join(found))


def test_the_checker_finds_each_way():
    code = ("import shutil, tempfile\nfrom tempfile import mkdtemp\nshutil.rmtree(x)\ntempfile.mkdtemp()\n"
            "mkdtemp()\nwith tempfile.TemporaryDirectory() as t: pass\n")
    assert len(other_scratch_calls(code)) == 4
    assert other_scratch_calls("from core import make_scratch, remove_scratch\nremove_scratch(make_scratch('x'))") == []
