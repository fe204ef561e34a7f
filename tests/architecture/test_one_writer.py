"""One writer: every file core/ and app/ write goes through core.runtime.files (atomic_output, or
replace_output for a file finished in a private scratch folder). A plain ``open(path, "w")``,
``write_text``, ``to_csv``, ``savefig`` ... to a path anywhere else could write through a link
planted at that name, leave a half-written file, or give it other permissions; this test finds
them by reading the code (AST), so a new one fails here before it ships."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITER = "core/runtime/files.py"  # the one module that opens files for writing

# Writes that are not to a path a user named, each with its reason: (file, function) -> why.
# Every one of them writes inside a folder made by tempfile.mkdtemp (mode 0700, a random name),
# so nobody else can plant a link there, and the finished report leaves it by replace_output.
ALLOWED: dict[tuple[str, str], str] = {
    # (file, function) -> why a write there needs no atomic_output
    ("core/runtime/scratch.py", "remove_scratch"): "renames the run's own private scratch folder aside to "
                                                   "remove it; it writes no file",
}

OPENERS = {("", "open"), ("io", "open"), ("os", "fdopen"), ("gzip", "open"), ("bz2", "open"), ("lzma", "open"),
           ("codecs", "open")}
SINKS = {"write_text", "write_bytes", "to_csv", "to_parquet", "to_excel", "savefig", "savetxt", "savez",
         "savez_compressed", "tofile"}
SAVERS = {("np", "save"), ("numpy", "save"), ("torch", "save")}  # (module, function): the target is an argument
MOVERS = {("os", "replace"), ("os", "rename"), ("os", "open"), ("shutil", "move"), ("shutil", "copy"),
          ("shutil", "copy2"), ("shutil", "copyfile")}
RDKIT_WRITERS = {"SDWriter", "SmilesWriter", "TDTWriter", "PDBWriter"}
IN_MEMORY = {"BytesIO", "StringIO"}


def _dotted(func: ast.expr) -> tuple[str, str]:
    """(receiver, name) of a call: ``open`` -> ("", "open"), ``os.replace`` -> ("os", "replace"),
    ``path.open`` -> ("path", "open"), ``a.b.c`` -> ("a.b", "c")."""
    if isinstance(func, ast.Name):
        return "", func.id
    if isinstance(func, ast.Attribute):
        return ast.unparse(func.value), func.attr
    return "?", "?"


def _writes_mode(mode: ast.expr | None) -> bool | None:
    """True for a write mode, False for a read mode (or none), None when it is not a literal."""
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(c in mode.value for c in "wax+")
    return None


def _is_mode(node: ast.expr) -> bool:
    """A literal that reads as a mode of open ("w", "rb", "a+" ...), not a file name."""
    return (isinstance(node, ast.Constant) and isinstance(node.value, str) and 0 < len(node.value) <= 3
            and set(node.value) <= set("rwxabt+"))


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


class _Finder(ast.NodeVisitor):
    """Collects the writes of one module as (line, function, what)."""

    def __init__(self) -> None:
        self.found: list[tuple[int, str, str]] = []
        self.handles: set[str] = set()  # names bound to an atomic_output file or an in-memory buffer
        self.scope: list[str] = []

    def visit_FunctionDef(self, node) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            call = item.context_expr
            if (isinstance(call, ast.Call) and _dotted(call.func)[1] == "atomic_output"
                    and isinstance(item.optional_vars, ast.Name)):
                self.handles.add(item.optional_vars.id)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if isinstance(node.value, ast.Call) and _dotted(node.value.func)[1] in IN_MEMORY:
            self.handles.update(t.id for t in node.targets if isinstance(t, ast.Name))
        self.generic_visit(node)

    def _is_handle(self, target: ast.expr | None) -> bool:
        if isinstance(target, ast.Name):
            return target.id in self.handles
        return isinstance(target, ast.Call) and _dotted(target.func)[1] in IN_MEMORY

    def _hit(self, node: ast.Call, what: str) -> None:
        self.found.append((node.lineno, ".".join(self.scope) or "<module>", what))

    def visit_Call(self, node: ast.Call) -> None:
        receiver, name = _dotted(node.func)
        text = ast.unparse(node.func)
        if (receiver, name) in OPENERS:
            writes = _writes_mode(_argument(node, 1, "mode"))
            if writes is not False:
                self._hit(node, f"{text}(...) with a write mode" if writes else f"{text}(...) with a computed mode")
        elif name == "open" and receiver:  # Path.open(mode), ZipFile.open(name, mode)
            modes = [*node.args[:2], *(k.value for k in node.keywords if k.arg == "mode")]
            if any(_is_mode(m) and _writes_mode(m) for m in modes):
                self._hit(node, f"{text}(...) with a write mode")
        elif name in SINKS and not self._is_handle(_argument(node, 0, "fname")):
            self._hit(node, f"{text}(...) to a path")
        elif (receiver, name) in SAVERS:
            target = _argument(node, 1, "f") if receiver == "torch" else _argument(node, 0, "file")
            if not self._is_handle(target):
                self._hit(node, f"{text}(...) to a path")
        elif (receiver, name) in MOVERS:
            self._hit(node, f"{text}(...)")
        elif name in ("replace", "rename") and receiver and len(node.args) == 1 and not node.keywords \
                and not isinstance(node.func.value, ast.Constant):  # Path.replace(target), not str.replace(a, b)
            self._hit(node, f"{text}(...) (a move into place)")
        elif name in RDKIT_WRITERS and not self._is_handle(_argument(node, 0, "fileName")):
            self._hit(node, f"{text}(...) to a path")
        self.generic_visit(node)


def file_writes(source: str, filename: str = "<source>") -> list[tuple[int, str, str]]:
    """The writes to a path in ``source``: (line, enclosing function, what), for every call that
    opens, saves or moves a file other than through an ``atomic_output`` handle or a memory buffer."""
    finder = _Finder()
    finder.visit(ast.parse(source, filename=filename))
    return finder.found


def stray_writes(root: Path = ROOT) -> list[str]:
    """Every write in core/ and app/ outside core/runtime/files.py and :data:`ALLOWED`."""
    found = []
    for path in sorted((root / "core").rglob("*.py")) + sorted((root / "app").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name == WRITER:
            continue
        for line, function, what in file_writes(path.read_text(encoding="utf-8"), name):
            if (name, function) not in ALLOWED:
                found.append(f"{name}:{line} in {function}: {what}")
    return found


def test_every_write_goes_through_the_one_writer():
    found = stray_writes()
    assert not found, ("write through core.runtime.files.atomic_output (or replace_output from a mkdtemp "
                       "folder), or add a justified entry to ALLOWED:\n" + "\n".join(found))


def test_the_allowlist_names_only_functions_that_write():
    """An entry whose function no longer writes (or was renamed) is removed, not left to cover a new one."""
    writing = set()
    for name, _ in ALLOWED:
        for _, function, _ in file_writes((ROOT / name).read_text(encoding="utf-8"), name):
            writing.add((name, function))
    assert set(ALLOWED) <= writing, sorted(set(ALLOWED) - writing)


def test_the_checker_finds_a_plain_open_for_writing():
    source = (
        "from pathlib import Path\n"
        "def export(path, rows):\n"
        "    with open(path, 'w') as fh:\n"
        "        fh.write(rows)\n"
    )
    assert file_writes(source) == [(3, "export", "open(...) with a write mode")]


def test_the_checker_finds_each_kind_of_write():
    source = (
        "import os, shutil, numpy as np, torch\n"
        "from pathlib import Path\n"
        "from rdkit import Chem\n"
        "def f(path, mode, frame, fig, arr, state):\n"
        "    open(path, mode=mode)\n"
        "    Path(path).open('a')\n"
        "    Path(path).write_text('x')\n"
        "    path.write_bytes(b'x')\n"
        "    frame.to_csv(path)\n"
        "    fig.savefig(path)\n"
        "    np.save(path, arr)\n"
        "    torch.save(state, path)\n"
        "    os.replace('a', path)\n"
        "    Path('a').replace(path)\n"
        "    Chem.SDWriter(path)\n"
        "    os.fdopen(3, 'wb')\n"
    )
    assert [line for line, _, _ in file_writes(source)] == list(range(5, 17))


def test_the_checker_lets_reads_memory_buffers_and_the_one_writer_pass():
    source = (
        "import io, torch\n"
        "from core.runtime.files import atomic_output\n"
        "def f(path, fig, state, text):\n"
        "    open(path).read()\n"
        "    open(path, 'rb').read()\n"
        "    path.open().read()\n"
        "    buf = io.BytesIO()\n"
        "    fig.savefig(buf, format='svg')\n"
        "    torch.save(state, buf)\n"
        "    with atomic_output(path, 'w') as fh:\n"
        "        fh.write(text.replace('a', 'b'))\n"
        "        fig.savefig(fh, format='png')\n"
    )
    assert file_writes(source) == []


def test_a_plain_open_for_writing_added_to_core_fails_the_check(tmp_path):
    """The whole check over a copy of the tree, with one plain write added to a core module."""
    import shutil

    for package in ("core", "app"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "*.zip",
                                                                                          "*.tab"))
    assert stray_writes(tmp_path) == []
    target = tmp_path / "core" / "io" / "report.py"
    target.write_text(target.read_text(encoding="utf-8") + "\n\ndef dump(path, text):\n"
                      "    with open(path, 'w') as fh:\n        fh.write(text)\n", encoding="utf-8")
    found = stray_writes(tmp_path)
    assert len(found) == 1 and found[0].startswith("core/io/report.py:") and "in dump: open(...)" in found[0]
