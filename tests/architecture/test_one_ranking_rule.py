"""One rule for a report's ranks and q-values, in every path: rows by the score as written
(``core.data.scores.written_scores``, through ``Scores.ranking``) and q-values of the p-values
as written (``core.data.pvalues.report_q_values``). A streamed report knows its scores and
p-values as text only, so a path that ranked by the exact float32 or took Benjamini-Hochberg of
the exact p-values wrote other ranks and q-values than ``score`` and ``screen`` for the same
model and file. This test reads the code (AST) for any other call of ``benjamini_hochberg`` and
any other sort by a score."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOME = {"core/data/pvalues.py", "core/data/scores.py",
        "app/widgets/table.py"}  # a ranked report's scores, read from its text, are the written ones already


def other_rules(source: str) -> list[str]:
    """Each call of ``benjamini_hochberg``, and each ``argsort``/``lexsort`` by a decreasing score
    (``-...score``: a ranking) not through ``written_scores``, in ``source``, as ``line: text``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        text = ast.unparse(node)
        if name == "benjamini_hochberg" or (name in ("argsort", "lexsort") and re.search(r"-\s*[\w.]*score", text)
                                            and "written_scores" not in text):
            found.append(f"{node.lineno}: {text}")
    return found


def test_every_rank_and_q_value_comes_from_the_one_rule():
    found = []
    for path in sorted([*ROOT.glob("core/**/*.py"), *ROOT.glob("app/**/*.py")]):
        name = path.relative_to(ROOT).as_posix()
        if name not in HOME:
            found += [f"{name}:{hit}" for hit in other_rules(path.read_text(encoding="utf-8"))]
    assert not found, ("rank rows with Scores.ranking (or written_scores) and take q-values from "
                       "report_q_values:\n" + "\n".join(found))


def test_the_checker_finds_each_way():
    code = ("q = benjamini_hochberg(p)\nimport core\ncore.benjamini_hochberg(p)\no = np.argsort(-scores.score)\n"
            "o = np.lexsort((pos, -score))\nok = np.lexsort((pos, -written_scores(score)))\n"
            "colour = np.argsort(scores)\n")
    assert [hit.split(":")[0] for hit in other_rules(code)] == ["1", "3", "4", "5"]
