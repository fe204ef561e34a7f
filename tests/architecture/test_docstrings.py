"""Every public function of ``core`` has a Google-style docstring (as PyTorch Geometric's):
a summary line, then ``Args:`` naming each parameter and ``Returns:`` (or ``Yields:``) when
it returns something. The rule is checked on the source of every module of ``core``."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "core"
SKIP_ARGS = {"self", "cls"}


def _public_functions(path: Path):
    """(qualified name, node) of the public functions and methods of one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def walk(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                yield f"{prefix}{node.name}", node
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                yield from walk(node.body, f"{prefix}{node.name}.")

    yield from walk(tree.body, "")


def _returns_value(node: ast.FunctionDef) -> bool:
    """Whether the function's annotation, or a ``return X`` of its own body, says it returns something."""
    if node.returns is not None:
        text = ast.unparse(node.returns)
        return text not in {"None", "NoReturn", "Never"}
    for sub in ast.walk(node):
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and sub is not node:
            continue
        if isinstance(sub, ast.Return) and sub.value is not None:
            return True
    return False


def problems(path: Path, root: Path = CORE.parent) -> list[str]:
    """What is missing from the docstrings of one module's public functions."""
    found = []
    for name, node in _public_functions(path):
        doc = ast.get_docstring(node)
        where = f"{path.relative_to(root)}:{node.lineno} {name}"
        if not doc:
            found.append(f"{where}: no docstring")
            continue
        decorators = {ast.unparse(d) for d in node.decorator_list}
        if decorators & {"property", "cached_property", "functools.cached_property"} or any(
                d.endswith(".setter") for d in decorators):
            continue  # a property's docstring says what it is
        args = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
        args += [a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None]
        args = [a for a in args if a not in SKIP_ARGS]
        if args:
            if "Args:" not in doc:
                found.append(f"{where}: no Args: section")
            else:
                section = doc.split("Args:", 1)[1]
                missing = [a for a in args if f"{a} (" not in section and f"{a}:" not in section
                           and f"*{a}" not in section]
                if missing:
                    found.append(f"{where}: Args: does not name {', '.join(missing)}")
        is_generator = any(isinstance(s, (ast.Yield, ast.YieldFrom)) for s in ast.walk(node))
        if is_generator and "Yields:" not in doc:
            found.append(f"{where}: no Yields: section")
        elif not is_generator and _returns_value(node) and "Returns:" not in doc:
            found.append(f"{where}: no Returns: section")
    return found


def _modules():
    """Every module of core."""
    yield from sorted(CORE.rglob("*.py"))


@pytest.mark.parametrize("path", list(_modules()), ids=lambda p: str(p.relative_to(CORE)))
def test_public_functions_have_google_docstrings(path):
    assert problems(path) == []


def test_the_check_finds_a_missing_section(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def f(x: int) -> int:\n    \"\"\"Double it.\"\"\"\n    return 2 * x\n\n\n"
                       "def g(y):\n    \"\"\"Print it.\n\n    Args:\n        z: not y.\n    \"\"\"\n    print(y)\n")
    found = problems(planted, tmp_path)
    assert [f.split(": ", 1)[1] for f in found] == ["no Args: section", "no Returns: section",
                                                    "Args: does not name y"]
