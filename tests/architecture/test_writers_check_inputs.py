"""Every writer that writes the rows of a data set or a report checks first that its file is not
that data set's or report's own (``check_outputs`` or ``check_report_output``): ``write_report``
did, while ``write_sdf``, ``html_report`` and ``write_report_sdf`` replaced ``in.smi`` with its
own SD file or HTML page. This test reads the code (AST): a function of core/ that writes a file
(``atomic_output``) and takes ``graphs`` or ``report`` must call one of the checks."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKS = {"check_outputs", "check_report_output"}
SOURCES = {"graphs", "report"}  # a GraphSet (its ``source``) or a RankedReport (its ``source``)
# (file, function) -> why it needs no check
ALLOWED = {
    ("core/screening/merge.py", "write_summary_file"): "``report`` is the report's path; it writes the summary beside "
                                                       "it, under a name of its own",
    ("core/screening/rescore.py", "report_view_scores"): "writes only inside its own scratch folder",
}


def unchecked_writers(source: str) -> list[str]:
    """Functions in ``source`` that write with ``atomic_output``, take ``graphs`` or ``report``
    and call no check, as ``line: name``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = {a.arg for a in [*node.args.args, *node.args.kwonlyargs]}
        calls = {c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")
                 for c in ast.walk(node) if isinstance(c, ast.Call)}
        if "atomic_output" in calls and params & SOURCES and not calls & CHECKS:
            found.append(f"{node.lineno}: {node.name}")
    return found


def test_every_writer_of_a_data_sets_rows_refuses_its_own_file():
    found = []
    for path in sorted(ROOT.glob("core/**/*.py")):
        name = path.relative_to(ROOT).as_posix()
        found += [f"{name}:{hit}" for hit in unchecked_writers(path.read_text("utf-8"))
                  if (name, hit.split(": ")[1]) not in ALLOWED]
    assert not found, ("check the output against the graphs' or report's source before writing "
                       "(core.runtime.files.check_outputs):\n" + "\n".join(found))


def test_the_checker_finds_an_unchecked_writer():
    code = ("def a(path, graphs):\n    with atomic_output(path) as fh: pass\n"
            "def b(path, report):\n    check_outputs([path], [report.source])\n    with atomic_output(path): pass\n"
            "def c(path, rows):\n    with atomic_output(path): pass\n")
    assert unchecked_writers(code) == ["1: a"]
