"""Every ranked report file is written by core.io.report.report_output, which ends it with its end
row (rows, the scoring model's fingerprint, a digest). The app's CSV exports wrote the report's
header and rows with writers of their own and no end row: a merge refused the exported file as cut
short, and a reopened export had lost the model that scored it and its views' scores. This test
reads the code (AST): outside core/io/report.py, no code writes a row holding the report's columns
(``COLUMNS``, ``REPORT_COLUMNS``) and none makes an end row."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITER = "core/io/report.py"
HEADER_NAMES = {"COLUMNS", "REPORT_COLUMNS"}


def report_writes(source: str) -> list[str]:
    """``line: what`` for each ``writerow``/``writerows`` of the report's columns and each
    ``end_row(...)`` call in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name == "end_row":
            found.append(f"{node.lineno}: end_row")
        elif name in ("writerow", "writerows") and any(
                isinstance(n, ast.Name) and n.id in HEADER_NAMES for arg in node.args for n in ast.walk(arg)):
            found.append(f"{node.lineno}: {name} of the report's columns")
    return found


def test_every_ranked_report_is_written_by_the_one_report_writer():
    found = []
    for path in sorted([*ROOT.glob("core/**/*.py"), *ROOT.glob("app/**/*.py")]):
        name = path.relative_to(ROOT).as_posix()
        if name != WRITER:
            found += [f"{name}:{hit}" for hit in report_writes(path.read_text("utf-8"))]
    assert not found, "write ranked reports with core.report_output (it writes the end row):\n" + "\n".join(found)


def test_the_checker_finds_a_second_report_writer():
    code = ("def a(fh):\n    csv.writer(fh).writerow([*REPORT_COLUMNS, 'flagged'])\n"
            "def b(fh):\n    w.writerow(end_row(3, 'm', 'd'))\n"
            "def c(fh):\n    w.writerow(['smiles', 'row'])\n")
    assert report_writes(code) == ["2: writerow of the report's columns", "4: end_row"]
