"""One rule for whether a model's scores have p-values, in every path: ``core.model_p_values``
(conformal against the held-out normal graphs, or none). The window once decided for itself and
gave a model trained on all its graphs p-values against its training scores, while ``score``,
``screen`` and the training note said it had none. This test reads the code (AST) for any other
place that decides: a condition on ``is_calibrated`` that chooses a ``p_values`` call, or a call
of ``empirical_p_values`` (p-values against training scores)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOME = {"core/detectors/conformal.py", "core/evaluation/metrics.py"}


def _calls(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and name in (getattr(n.func, "attr", None), getattr(n.func, "id", None))
               for n in ast.walk(node))


def other_rules(source: str) -> list[str]:
    """Each place in ``source`` that decides on p-values itself, as ``line: text``."""
    found = []
    for node in sorted(ast.walk(ast.parse(source)), key=lambda n: getattr(n, "lineno", 0)):
        if isinstance(node, (ast.If, ast.IfExp)) and "is_calibrated" in ast.unparse(node.test):
            branches = [node.body, node.orelse] if isinstance(node, ast.IfExp) else [*node.body, *node.orelse]
            if any(_calls(b, "p_values") for b in branches):
                found.append(f"{node.lineno}: {ast.unparse(node.test)}")
        elif isinstance(node, ast.Call) and "empirical_p_values" in (getattr(node.func, "attr", None),
                                                                    getattr(node.func, "id", None)):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_every_path_asks_the_one_rule_for_p_values():
    found = []
    for path in sorted([*ROOT.glob("core/**/*.py"), *ROOT.glob("app/**/*.py")]):
        name = path.relative_to(ROOT).as_posix()
        if name not in HOME:
            found += [f"{name}:{hit}" for hit in other_rules(path.read_text(encoding="utf-8"))]
    assert not found, "take a model's p-values from core.model_p_values:\n" + "\n".join(found)


def test_the_checker_finds_each_way():
    code = ("p = model.p_values(s) if model.is_calibrated else None\n"
            "if getattr(model, 'is_calibrated', False):\n    p = model.p_values(s)\n"
            "p = empirical_p_values(s, train)\n"
            "n = len(model.calibration_scores_) if model.is_calibrated else 0\n"
            "p = model_p_values(model, s)\n")
    assert [hit.split(":")[0] for hit in other_rules(code)] == ["1", "2", "4"]
