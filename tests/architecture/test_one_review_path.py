"""The app reviews every tab through one path: ``core.Review`` is built in one place
(``app/tasks.py`` ``rerank``), for the training tab's graphs and for a scored file's rows alike,
so a second review implementation cannot appear beside it."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _review_builds(tree: ast.AST) -> list[tuple[str, int]]:
    """(enclosing function, line) of each call that builds a Review: ``Review(...)``, ``core.Review(...)``
    or one of its constructors (``Review.from_view_scores(...)``)."""
    found = []

    def walk(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
            if isinstance(child, ast.Call):
                func = child.func
                if (isinstance(func, ast.Name) and func.id == "Review") or (
                        isinstance(func, ast.Attribute) and func.attr == "Review") or (
                        isinstance(func, ast.Attribute) and isinstance(func.value, (ast.Name, ast.Attribute))
                        and getattr(func.value, "id", getattr(func.value, "attr", None)) == "Review"):
                    found.append((name, child.lineno))
            walk(child, name)

    walk(tree, "<module>")
    return found


def test_core_review_is_built_in_exactly_one_place_in_the_app():
    builds = {}
    for path in sorted((ROOT / "app").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):  # no alias could hide a second construction
            if isinstance(node, ast.ImportFrom):
                assert all(not (a.name == "Review" and a.asname) for a in node.names), f"{path}: Review imported as an alias"
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute)):
                value = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
                assert value != "Review", f"{path}:{node.lineno}: Review bound to another name"
        for where, line in _review_builds(tree):
            builds[f"{path.relative_to(ROOT)}:{line}"] = where
    assert builds, "core.Review is built nowhere"
    places = {(place.split(":")[0], function) for place, function in builds.items()}
    assert places == {("app/tasks.py", "rerank")}, f"core.Review built outside tasks.rerank: {sorted(builds)}"


def test_the_check_sees_a_second_review():
    tree = ast.parse("import core\n\ndef other(m, g):\n    return core.Review(m, g)\n\n"
                     "def rerank(m, g):\n    from core import Review\n    return Review(m, g)\n\n"
                     "def third(m, s):\n    return core.Review.from_view_scores(m, s)\n")
    assert _review_builds(tree) == [("other", 4), ("rerank", 8), ("third", 11)]


# where the app ranks scores: the table's label-free Rank column, and the review's ranks over it
RANKS_SCORES = {"app/widgets/table.py", "app/state.py", "app/widgets/report_view.py"}


def test_the_rank_shown_is_computed_where_the_review_can_change_it():
    """The scaffold groups ranked their molecules by ``scores.ranking()`` of their own, so a review
    did not reach them: every other view reads the table's ranks (``ResultsModel.ranks``)."""
    found = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "app").rglob("*.py")
                   if ".ranking()" in p.read_text(encoding="utf-8"))
    assert set(found) <= RANKS_SCORES, f"rank from the table's ranks, not scores.ranking(): {found}"
