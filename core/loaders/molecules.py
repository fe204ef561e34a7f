"""Molecule files: SMILES lists (.smi), delimited tables (.csv/.tsv/.tab/.txt) and SDF, gzipped or not.

Every data row ends up either as a graph or as a :class:`~core.graphset.Reject` with its
line (or record) number and the reason. Blank lines and ``#`` comment lines are not data.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterable, Iterator

from ..chem import mol_to_graph, parse_molblock, parse_smiles
from ..errors import DataError
from ..graphset import GraphMeta, GraphSet, Reject, normalize_label
from .text import read_lines, strip_compression

SMILES_COLUMNS = ("smiles", "canonical_smiles", "isomeric_smiles", "drug", "smi", "mol", "molecule",
                  "structure")
ID_COLUMNS = ("id", "drug_id", "compound_id", "mol_id", "molecule_id", "cid", "chembl_id", "zinc_id",
              "identifier", "name", "title")
LABEL_COLUMNS = ("label", "y", "class", "activity", "active", "outcome", "is_active")


class _Collector:
    """Turns (line, id, name, smiles-or-molblock, label) rows into graphs or rejects."""

    def __init__(self) -> None:
        self.graphs, self.meta, self.rejects = [], [], []

    def add_smiles(self, line: int, ident: str, name: str, smiles: str, label: object) -> None:
        mol, reason = parse_smiles(smiles)
        self._add(mol, reason, line, ident, name, smiles.strip(), label, smiles)

    def add_mol(self, mol, reason: str, line: int, ident: str, name: str, label: object) -> None:
        smiles = ""
        if mol is not None:
            from rdkit import Chem

            smiles = Chem.MolToSmiles(mol)
            mol, reason = parse_smiles(smiles)  # node order must match a re-parse of the SMILES
        self._add(mol, reason, line, ident, name, smiles, label, "")

    def _add(self, mol, reason, line, ident, name, smiles, label, text) -> None:
        if mol is None:
            self.rejects.append(Reject(line=line, id=ident, reason=reason, text=text))
            return
        self.graphs.append(mol_to_graph(mol))
        self.meta.append(GraphMeta(id=ident, name=name, smiles=smiles, label=normalize_label(label),
                                   line=line))

    def result(self, path: Path, fmt: str) -> GraphSet:
        return GraphSet(self.graphs, self.meta, self.rejects, source=str(path), format=fmt,
                        kind="molecule")


def _data_lines(path: Path) -> Iterator[tuple[int, str]]:
    for number, line in read_lines(path):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield number, line


def load_smiles(path: str | Path) -> GraphSet:
    """A SMILES list: one ``SMILES [name ...]`` per line; a first line ``smiles ...`` is a header."""
    path = Path(path)
    out = _Collector()
    first = True
    for number, line in _data_lines(path):
        parts = line.strip().split(None, 1)
        if first and parts[0].lower() in {"smiles", "smi"}:
            first = False
            continue
        first = False
        name = parts[1].strip() if len(parts) > 1 else ""
        out.add_smiles(number, name or str(number), name, parts[0], None)
    return out.result(path, "smiles")


def _pick(header: list[str], wanted: str | None, candidates: Iterable[str], path: Path, what: str) -> int | None:
    lowered = [h.strip().lower() for h in header]
    if wanted is not None:
        if wanted in header:
            return header.index(wanted)
        if wanted.lower() in lowered:
            return lowered.index(wanted.lower())
        raise DataError(f"no {what} column named {wanted!r} (columns: {', '.join(header)})", path, 1)
    for name in candidates:
        if name in lowered:
            return lowered.index(name)
    return None


def _sniff_delimiter(header_line: str, suffix: str) -> str:
    default = {".csv": ",", ".tsv": "\t", ".tab": "\t"}.get(suffix, ",")
    counts = {d: header_line.count(d) for d in ("\t", ",", ";")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > counts.get(default, 0) else default


def load_table(path: str | Path, smiles_column: str | None = None, id_column: str | None = None,
               label_column: str | None = None) -> GraphSet:
    """A delimited table with a header row; the SMILES, id and label columns are found by common
    names (``smiles``, ``Drug``, ``id``, ``Drug_ID``, ``label``, ``Y``, ...) or named by the caller."""
    path = Path(path)
    suffix = Path(strip_compression(path.name)).suffix.lower()
    lines = _data_lines(path)
    try:
        header_no, header_line = next(lines)
    except StopIteration:
        raise DataError("file has no header row and no data", path) from None
    delimiter = _sniff_delimiter(header_line, suffix)
    header = next(csv.reader([header_line], delimiter=delimiter))
    s_col = _pick(header, smiles_column, SMILES_COLUMNS, path, "SMILES")
    if s_col is None:
        raise DataError(f"no SMILES column found (columns: {', '.join(header)}); name it with the "
                        "SMILES-column option", path, header_no)
    i_col = _pick(header, id_column, ID_COLUMNS, path, "id")
    l_col = _pick(header, label_column, LABEL_COLUMNS, path, "label")
    out = _Collector()
    rows = _csv_rows(lines, delimiter)
    for number, row in rows:
        if len(row) <= s_col:
            ident = row[i_col].strip() if i_col is not None and i_col < len(row) else str(number)
            out.rejects.append(Reject(line=number, id=ident, reason=f"row has {len(row)} fields, "
                                      f"the SMILES column is field {s_col + 1}", text=delimiter.join(row)))
            continue
        ident = row[i_col].strip() if i_col is not None and i_col < len(row) else ""
        label = row[l_col] if l_col is not None and l_col < len(row) else None
        name = ident
        out.add_smiles(number, ident or str(number), name, row[s_col], label)
    return out.result(path, "table")


def _csv_rows(lines: Iterator[tuple[int, str]], delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """csv-parse lines, joining a quoted field that spans lines; yields the row's first line number."""
    pending: list[str] = []
    start = 0
    for number, line in lines:
        if not pending:
            start = number
        pending.append(line)
        text = "\n".join(pending)
        if text.count('"') % 2 == 1:  # a quoted field is still open
            continue
        pending = []
        yield start, next(csv.reader([text], delimiter=delimiter))
    if pending:
        yield start, next(csv.reader(["\n".join(pending) + '"'], delimiter=delimiter))


def load_sdf(path: str | Path, id_field: str | None = None, label_field: str | None = None) -> GraphSet:
    """An SDF file: records end with ``$$$$``; a broken molblock rejects only its own record."""
    path = Path(path)
    out = _Collector()
    record: list[str] = []
    start = 1
    index = 0
    for number, line in read_lines(path):
        if not record:
            start = number
        if line.strip() == "$$$$":
            index += 1
            _sdf_record(out, record, start, index, id_field, label_field)
            record = []
            continue
        record.append(line)
    if any(line.strip() for line in record):
        index += 1
        _sdf_record(out, record, start, index, id_field, label_field)
    return out.result(path, "sdf")


def _sdf_record(out: _Collector, lines: list[str], start: int, index: int, id_field: str | None,
                label_field: str | None) -> None:
    end = next((i for i, line in enumerate(lines) if line.strip() == "M  END"), None)
    title = lines[0].strip() if lines else ""
    fields = _sdf_fields(lines[end + 1:] if end is not None else [])
    lowered = {k.lower(): v for k, v in fields.items()}
    ident = fields.get(id_field, "") if id_field else next((lowered[c] for c in ID_COLUMNS if c in lowered), "")
    ident = ident or title or f"record {index}"
    label = fields.get(label_field) if label_field else next(
        (lowered[c] for c in LABEL_COLUMNS if c in lowered), None)
    if end is None:
        out.add_mol(None, f"record {index} has no 'M  END' line", start, ident, title, label)
        return
    mol, reason = parse_molblock("\n".join(lines[: end + 1]))
    if reason:
        reason = f"record {index}: {reason}"
    out.add_mol(mol, reason, start, ident, title, label)


def _sdf_fields(lines: list[str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    key = None
    values: list[str] = []
    for line in lines + [""]:
        if line.startswith(">") and "<" in line and ">" in line[line.index("<"):]:
            key = line[line.index("<") + 1: line.index(">", line.index("<"))]
            values = []
        elif key is not None and line.strip() == "":
            fields[key] = "\n".join(values).strip()
            key = None
        elif key is not None:
            values.append(line)
    return fields
