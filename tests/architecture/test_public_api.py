"""core/__init__.py names its public API twice: the lazy table that imports a name on first use
(``_PUBLIC``) and the ``TYPE_CHECKING`` imports that editors and type checkers read. They must
say the same thing."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import core

ROOT = Path(__file__).resolve().parents[2]


def type_checking_imports() -> dict[str, tuple[str, str]]:
    """Public name -> (module under core, name in that module), from the ``if TYPE_CHECKING:`` block."""
    tree = ast.parse((ROOT / "core" / "__init__.py").read_text(encoding="utf-8"))
    blocks = [node for node in tree.body if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
              and node.test.id == "TYPE_CHECKING"]
    assert len(blocks) == 1, "core/__init__.py needs one `if TYPE_CHECKING:` block of public imports"
    found = {}
    for node in ast.walk(blocks[0]):
        if isinstance(node, ast.ImportFrom):
            assert node.module.startswith("core."), node.module
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module.removeprefix("core."), alias.name)
    return found


def test_the_type_checking_imports_are_the_lazy_public_api():
    lazy = {name: (module, core._RENAMED.get(name, name)) for name, module in core._PUBLIC.items()}
    assert type_checking_imports() == lazy


def test_every_public_name_resolves_and_core_still_imports_without_torch():
    for name in core.__all__:
        assert getattr(core, name) is not None, name
    run = subprocess.run([sys.executable, "-c", "import sys, core; assert 'torch' not in sys.modules"],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
