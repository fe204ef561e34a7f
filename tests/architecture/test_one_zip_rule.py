"""One account of what reading a damaged zip raises, ``core.ZIP_ERRORS``: a session file whose
entry a zipper compressed by deflate64, or whose deflate stream was damaged, reached the user as a
bare NotImplementedError or zlib.error, because the session reader caught its own short list while
the TU reader caught a longer one. This test reads the code (AST) for any ``except`` that names
``BadZipFile`` itself instead of the one tuple."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOME = "core/errors.py"


def own_zip_lists(source: str) -> list[str]:
    """Each ``except`` clause in ``source`` that names ``BadZipFile``, as ``line: clause``."""
    return [f"{node.lineno}: {ast.unparse(node.type)}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ExceptHandler) and node.type is not None and "BadZipFile" in ast.unparse(node.type)]


def test_every_zip_reader_catches_the_one_list():
    found = []
    for path in sorted([*ROOT.glob("core/**/*.py"), *ROOT.glob("app/**/*.py")]):
        name = path.relative_to(ROOT).as_posix()
        if name != HOME:
            found += [f"{name}:{hit}" for hit in own_zip_lists(path.read_text(encoding="utf-8"))]
    assert not found, "catch core.ZIP_ERRORS, not a list of one's own:\n" + "\n".join(found)


def test_the_check_finds_a_list_of_ones_own():
    assert own_zip_lists("try:\n    pass\nexcept (OSError, zipfile.BadZipFile):\n    pass\n") == [
        "3: (OSError, zipfile.BadZipFile)"]
    assert own_zip_lists("try:\n    pass\nexcept ZIP_ERRORS:\n    pass\n") == []
