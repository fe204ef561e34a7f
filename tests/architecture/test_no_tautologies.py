"""Tests assert real behaviour: no assertion compares an expression with itself or asserts a constant.

``assert sorted(x) == sorted(x)`` passed whatever the code did; this walks every test module's
syntax tree and fails on any comparison whose two sides are the same expression, and on an
assertion of a true constant (``assert True``, ``assert "reason"``).
"""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _self_comparisons(tree: ast.AST) -> list[int]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Constant) and node.test.value:
            found.append(node.lineno)
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
            sides = [node.test.left, *node.test.comparators]
            if any(ast.dump(a) == ast.dump(b) for a, b in zip(sides, sides[1:])):
                found.append(node.lineno)
    return found


def test_no_assertion_compares_an_expression_with_itself():
    offenders = [f"{path.relative_to(TESTS.parent)}:{line}" for path in sorted(TESTS.rglob("test_*.py"))
                 for line in _self_comparisons(ast.parse(path.read_text(encoding="utf-8")))]
    assert not offenders, offenders


def test_the_check_sees_a_self_comparison():
    code = "assert sorted(x) == sorted(x)\nassert a == b\nassert 0 < y < y\nassert True\nassert not 0\n"
    assert _self_comparisons(ast.parse(code)) == [1, 3, 4]
