"""One path for each guarded job: model files are written and read only by core.runtime.model_files
(which adds and checks their digest), and SMILES reach RDKit only through core.data.chem.parse_smiles
(which refuses what would make RDKit's parse run away), and graphs become molecules only in
core.data.graph_molecules (so that what is drawn, exported and scored is one molecule)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _calls(name: str, owner: str) -> list[tuple[str, int, str]]:
    """(file, line, enclosing function) of every call of ``owner.name(...)`` in core/ and app/."""
    found = []
    for path in sorted((ROOT / "core").rglob("*.py")) + sorted((ROOT / "app").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for func in [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            body = func.body if isinstance(func, ast.Module) else [func]
            for node in (n for b in body for n in ast.walk(b)):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name \
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == owner:
                    where = getattr(func, "name", "<module>")
                    found.append((str(path.relative_to(ROOT)), node.lineno, where))
    # a call inside a function is seen from the module and from each enclosing function: keep the innermost
    innermost = {}
    for file, line, where in found:
        if (file, line) not in innermost or where != "<module>":
            innermost[(file, line)] = where
    return sorted((file, line, where) for (file, line), where in innermost.items())


def test_model_files_are_written_and_read_in_one_place():
    """torch.save / torch.load of a model file anywhere else would skip the digest."""
    loads = [c for c in _calls("load", "torch") if c[0] != "core/runtime/model_files.py"]
    assert loads == [], loads
    saves = [c for c in _calls("save", "torch") if c[0] != "core/runtime/model_files.py"
             and not (c[0] == "core/detectors/base.py" and c[2] == "fingerprint")]  # into memory, hashed
    assert saves == [], saves


def test_the_check_fails_on_a_second_writer(tmp_path, monkeypatch):
    """The rule above can fail: a module that saves a model itself is found."""
    import tests.architecture.test_single_readers as rules

    (tmp_path / "core").mkdir()
    (tmp_path / "app").mkdir()
    (tmp_path / "core" / "rogue.py").write_text("import torch\n\ndef save(m, p):\n    torch.save(m, p)\n")
    monkeypatch.setattr(rules, "ROOT", tmp_path)
    assert rules._calls("save", "torch") == [("core/rogue.py", 4, "save")]


# Molecules made by the planted-anomaly benchmark from molecules already parsed (fragments, pieces)
GENERATED_MOLECULES = {"core/evaluation/explanations.py"}


def test_smiles_and_molblocks_reach_rdkit_in_one_place():
    """Chem.MolFromSmiles / MolFromMolBlock anywhere else would skip parse_smiles's limits."""
    for reader in ("MolFromSmiles", "MolFromMolBlock", "MolFromV3KMolBlock", "SmilesMolSupplier",
                   "SDMolSupplier", "ForwardSDMolSupplier"):
        found = [c for c in _calls(reader, "Chem") if c[0] != "core/data/chem.py" and c[0] not in GENERATED_MOLECULES]
        assert found == [], (reader, found)


def test_graphs_become_molecules_in_one_place():
    """An RWMol built anywhere else (from a TU graph's labels) would be a second, differing molecule:
    the drawing once left hydrogens out, so its SD files read back as radicals."""
    found = [c for c in _calls("RWMol", "Chem") if c[0] != "core/data/graph_molecules.py"
             and c[0] not in GENERATED_MOLECULES]
    assert found == [], found


def _loads_of_a_source(root: Path) -> list[tuple[str, int]]:
    """(file, line) of every ``load(<x>.source, ...)`` in app/: data read again from the file that
    an object on screen was read from."""
    found = []
    for path in sorted((root / "app").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Attribute) \
                    and node.args[0].attr == "source" and getattr(node.func, "id", getattr(node.func, "attr", "")) \
                    == "load":
                found.append((str(path.relative_to(root)), node.lineno))
    return found


def test_a_tabs_molecules_are_the_rows_it_read_never_its_file_read_again(tmp_path):
    """The HTML export of a report tab loaded the report file again as a table of molecules, while
    the tab, its CSV and SD exports and its review use the rows read (core.report_graphs): a file
    deleted, edited or replaced since gave an error or another file's molecules."""
    assert _loads_of_a_source(ROOT) == []
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "rogue.py").write_text("from core import load\n\ndef f(report):\n    return load(report.source)\n")
    assert _loads_of_a_source(tmp_path) == [("app/rogue.py", 4)]  # the rule can fail
