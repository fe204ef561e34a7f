"""Molecule files: SMILES lists (.smi), delimited tables (.csv/.tsv/.tab/.txt) and SDF, gzipped or not.

Every data row ends up either as a graph or as a :class:`~core.data.graphset.Reject` with its
line (or record) number and the reason. Blank lines and ``#`` comment lines are not data. In a
table's body (past its header, or past the comments before a headerless table's first row), a line
that starts with ``#`` (unquoted) and holds the table's delimiter is a commented-out row: it is not
scored, and not dropped either, but listed among the rejected rows with its line and how to read it
as data (quote its first cell: ``"#1",CCO,0``); a ``#`` line without the delimiter is a comment.
"""
from __future__ import annotations

import csv
import dataclasses
import hashlib
import itertools
import re
from collections import deque
from pathlib import Path
from typing import NamedTuple
from collections.abc import Callable, Iterable, Iterator

from rdkit import Chem

from core.wording import counted
from core.data.chem import mol_to_graph, parse_molblock, parse_smiles
from core.errors import DataError, raise_if_stopped
from core.data.graphset import GraphMeta, GraphSet, Reject, normalize_label
from core.io.text import (DELIMITERS, allow_large_csv_fields, data_lines, read_lines, read_lines_and_endings,
                          sniff_delimiter, strip_compression)

# the names the common exports give these columns: ChEMBL's "Smiles" and "Molecule ChEMBL ID",
# PubChem's downloads "isosmiles"/"canonicalsmiles" and "cid", ZINC's "zinc_id"
SMILES_COLUMNS = ("smiles", "canonical_smiles", "isomeric_smiles", "isosmiles", "canonicalsmiles", "drug", "smi",
                  "mol", "molecule", "structure")
ID_COLUMNS = ("id", "drug_id", "compound_id", "mol_id", "molecule_id", "cid", "chembl_id", "molecule_chembl_id",
              "zinc_id", "identifier", "name", "title", "compound", "compound_name")
LABEL_COLUMNS = ("label", "y", "class", "activity", "active", "outcome", "is_active")
# An ``id_column`` or ``label_column`` that names no column: the file has none, so none is found by its
# common names (None finds one). A column chooser's "(none)" passes it: None there read ids from a
# ``name`` column and labels from an ``activity`` column the user had said were neither.
NO_COLUMN = ""


# rows read between two reports to a reader's ``on_progress`` (about a tenth of a second of parsing)
POLL_ROWS = 1000


class _Collector:
    """Turns (line, id, name, smiles-or-molblock, label) rows into graphs or rejects; with
    ``standardise``, each molecule standardised first (:mod:`core.data.standardise`). Before each
    row it asks ``should_stop``, which stops the reading (:class:`core.errors.Stopped`, naming
    ``path``; a poll costs a fraction of a microsecond, a row tens of them), and every POLL_ROWS
    rows it reports the rows read so far to ``on_progress``."""

    def __init__(self, path: Path, standardise: bool = False, should_stop: Callable[[], bool] | None = None,
                 on_progress: Callable[[int], None] | None = None) -> None:
        self.graphs, self.meta, self.rejects = [], [], []
        self.path, self.standardise = path, standardise
        self.should_stop, self.on_progress = should_stop, on_progress

    def add_row(self, row: SourceRow) -> None:
        raise_if_stopped(self.should_stop, self.path, "read")
        rows = len(self.graphs) + len(self.rejects)
        if rows and rows % POLL_ROWS == 0 and self.on_progress is not None:
            self.on_progress(rows)
        mol, smiles, reason, original = read_row(row, self.standardise)
        if mol is None:
            self.rejects.append(Reject(line=row.line, id=row.id, reason=reason, text=original))
            return
        self._add(mol, reason, row.line, row.id, row.name, smiles, row.label, "",
                  original if self.standardise else "")

    def _add(self, mol, reason, line, ident, name, smiles, label, text, original="") -> None:
        if mol is None:
            self.rejects.append(Reject(line=line, id=ident, reason=reason, text=text))
            return
        self.graphs.append(mol_to_graph(mol))
        self.meta.append(GraphMeta(id=ident, name=name, smiles=smiles, label=normalize_label(label),
                                   line=line, input_smiles=original))

    def result(self, path: Path, fmt: str, hint: str = "", unit: str = "row") -> GraphSet:
        """The GraphSet; a file with no data rows, or with not one readable molecule, is an error."""
        if not self.graphs and not self.rejects:
            raise DataError(f"file is empty (no data {unit}s)", path)
        if not self.graphs:
            first = self.rejects[0]
            raise nothing_read(path, len(self.rejects), first.reason, first.line, hint, unit)
        return GraphSet(self.graphs, self.meta, self.rejects, source=str(path), format=fmt,
                        kind="molecule", standardised=self.standardise)


def nothing_read(path, rejected: int, first_reason: str, first_line: int | None, hint: str = "",
                 unit: str = "row") -> DataError:
    """The error for a file whose every row was rejected: loading and screening raise this one.

    Args:
        path: the file.
        rejected: how many rows (records) were rejected.
        first_reason: the first rejected row's reason.
        first_line: its line (None: unknown).
        hint: :func:`table_rows`'s hint, naming the parameter as ``{smiles_column}`` ("" for none),
            which each front end words as its own (``--smiles-column`` on the command line).
        unit: what a row is called ("row", "record").

    Returns:
        The :class:`DataError`, naming ``smiles_column`` when there is a hint.
    """
    which = f"its only {unit} was" if rejected == 1 else f"all {rejected} {unit}s were"
    return DataError(f"no molecule could be read: {which} rejected (first: {first_reason}){hint}",
                     path, first_line, params=("smiles_column",) if hint else ())


class SourceRow(NamedTuple):
    """One data row of a molecule file, before parsing: where it is, its id, name, SMILES text and
    label, and the problem that already rejects it (a row that does not split into fields) or None.
    For a problem row ``smiles`` holds the row's text, as the report shows it."""

    line: int
    id: str
    name: str
    smiles: str
    label: str | None
    problem: str | None = None
    molblock: str | None = None  # an SDF record's molblock (then ``smiles`` is empty)
    record: int = 0  # an SDF record's number


ROWS_HASH_MASK = (1 << 64) - 1


def rows_hash(rows: Iterable[SourceRow]) -> int:
    """A hash of rows as read: every field of each, its line included, summed mod 2**64 so that
    the rows' hashes add up whatever chunks they were read in. A stopped screen's end row keeps it,
    and its resumed run compares the rows it skips with it (ids alone matched any file of as many
    rows without ids, whose ids are line numbers).

    Args:
        rows: rows as a reader streamed them.

    Returns:
        The hash, from 0 to 2**64 - 1.
    """
    total = 0
    for row in rows:
        text = "\x1f".join((str(row.line), row.id, row.name, row.smiles, row.label or "", row.problem or "",
                            row.molblock or ""))
        total += int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
    return total & ROWS_HASH_MASK


def parse_row(row: SourceRow) -> tuple[Chem.Mol | None, str, str]:
    """Parse one source row into its molecule, or the reason it is rejected.

    An SDF record's molecule is re-read from its SMILES, so that its node order is the one a
    re-parse of the report's SMILES gives.

    Args:
        row: the row as a reader streamed it.

    Returns:
        (the molecule or None; the SMILES the report shows for it (for a rejected SMILES row:
        the row's text, for a rejected SDF record: ""); the reason it is rejected, "" if read).
    """
    if row.problem is not None:
        return None, row.smiles, row.problem
    if row.molblock is None:
        mol, reason = parse_smiles(row.smiles)
        return mol, (row.smiles.strip() if mol is not None else row.smiles), reason
    mol, reason = parse_molblock(row.molblock)
    if mol is None:
        return None, "", f"record {row.record}: {reason}"
    smiles = Chem.MolToSmiles(mol)
    mol, reason = parse_smiles(smiles)
    return mol, (smiles if mol is not None else ""), reason


def read_row(row: SourceRow, standardise: bool = False) -> tuple[Chem.Mol | None, str, str, str]:
    """:func:`parse_row`, and with ``standardise`` the molecule standardised
    (:func:`core.data.standardise.standardise_mol`) and read again from its canonical SMILES, so
    that its node order is the one a re-parse of that SMILES gives.

    Args:
        row: the row.
        standardise: standardise the molecule.

    Returns:
        (molecule or None, the SMILES of the molecule the graph is made of, the reason a row is
        rejected, the row's own SMILES as read: the report's ``smiles``).
    """
    mol, smiles, reason = parse_row(row)
    if mol is None or not standardise:
        return mol, smiles, reason, smiles
    from core.data.standardise import standardise_mol

    out, reason = standardise_mol(mol)
    if out is None:
        return None, smiles, reason, smiles
    standard = Chem.MolToSmiles(out)
    out, reason = parse_smiles(standard)
    if out is None:
        return None, smiles, f"standardised to {standard}, which cannot be read back: {reason}", smiles
    return out, standard, reason, smiles


def prepare_molecules(graphs: GraphSet, standardise: bool) -> GraphSet:
    """``graphs`` as a model that standardises (or not) reads them: the same set when it already
    is; else each molecule standardised from its SMILES (those it fails on join the rejected rows
    with their reason), or the set as it was read before standardising.

    Args:
        graphs: molecules as loaded (:func:`core.io.load.load`).
        standardise: whether the model standardises its molecules.

    Returns:
        The graphs to score or train on.
    """
    if graphs.standardised == standardise:
        return graphs
    if not standardise:
        if graphs.as_read is not None:
            return graphs.as_read
        rows = [SourceRow(m.line or 0, m.id, m.name, m.input_smiles or m.smiles, m.label) for m in graphs.meta]
    else:
        if graphs.kind != "molecule":
            raise DataError("standardising is for molecules (SMILES or SDF), not a collection of graphs", graphs.source)
        rows = [SourceRow(m.line or 0, m.id, m.name, m.smiles, m.label) for m in graphs.meta]
    out = _Collector(Path(graphs.source or ""), standardise)
    for row in rows:
        out.add_row(row)
    rejects = sorted([*graphs.rejects, *out.rejects], key=lambda r: (r.line is None, r.line or 0))
    return dataclasses.replace(graphs, graphs=out.graphs, meta=out.meta, rejects=rejects, kind="molecule",
                               standardised=standardise, as_read=graphs if standardise else None,
                               notes=list(graphs.notes))


def smiles_rows(path: str | Path) -> Iterator[SourceRow]:
    """Stream the rows of a SMILES list: one ``SMILES [name ...]`` per line.

    A first line ``smiles ...`` is a header; blank and ``#`` comment lines are skipped. A line of
    one word after a space that is no molecule (`` mol20``) is a name without its SMILES, rejected
    as such. A CXSMILES
    extension after the SMILES (``C[C@H](N)C(=O)O |&1:1| name``) stays with the SMILES, as it
    does in a table's SMILES column.

    Args:
        path: the file (optionally gzipped).

    Yields:
        One row per data line; the name (the rest of the line) is the id, else the line number.
    """
    path = Path(path)
    first = True
    for number, line in data_lines(path):
        parts = line.strip().split(None, 1)
        if first and re.split(r"[,;|]", parts[0])[0].lower() in {"smiles", "smi"}:
            first = False
            continue
        first = False
        if len(parts) == 1 and line[:1].isspace() and parse_smiles(parts[0])[0] is None:
            # " mol20": the SMILES field is empty and the name stands alone; read as a SMILES, the
            # reject would name the name "invalid SMILES syntax"
            yield SourceRow(number, parts[0], parts[0], line.strip(), None,
                            f"no SMILES before the name {parts[0]!r} (the line begins with a space)")
            continue
        smiles, rest = parts[0], parts[1].strip() if len(parts) > 1 else ""
        if rest.startswith("|") and "|" in rest[1:]:  # a CXSMILES extension belongs to the SMILES
            end = rest.index("|", 1) + 1
            smiles, rest = f"{smiles} {rest[:end]}", rest[end:].strip()
        yield SourceRow(number, rest or str(number), rest, smiles, None)


def load_smiles(path: str | Path, standardise: bool = False, should_stop: Callable[[], bool] | None = None,
                on_progress: Callable[[int], None] | None = None) -> GraphSet:
    """Read a SMILES list (one ``SMILES [name ...]`` per line) into a GraphSet.

    Args:
        path: the file (optionally gzipped); a first line ``smiles ...`` is a header.
        standardise: standardise each molecule first (:mod:`core.data.standardise`); a molecule it
            fails on is rejected with the reason.
        should_stop: polled before each row; True stops the reading.
        on_progress: called with the rows read so far, every POLL_ROWS rows.

    Returns:
        The molecules and the rejected lines with their reasons.

    Raises:
        DataError: the file has no data lines, or not one readable molecule.
        Stopped: ``should_stop`` returned True.
    """
    path = Path(path)
    out = _Collector(path, standardise, should_stop, on_progress)
    for row in smiles_rows(path):
        out.add_row(row)
    return out.result(path, "smiles")


def _pick(header: list[str], wanted: str | None, candidates: Iterable[str], path: Path, what: str,
          line: int = 1) -> int | None:
    """The column ``wanted`` names (its exact name, else in any case), or with None the one found by
    a common name (:func:`find_column`); None when none is found by name.

    A column so picked that two columns match is refused, naming them: the first of them was read
    whichever was meant (``smiles,id,smiles``: an empty column). An exact, case-sensitive name that
    singles one out picks it (``SMILES,id,smiles`` named ``smiles``); columns never picked may share
    a name (``note,note``).

    Raises:
        DataError: ``wanted`` names no column, or the column picked is not the only one so named.
    """
    if wanted is not None:
        exact = [k for k, h in enumerate(header) if h.strip() == wanted.strip()]
        same = exact or [k for k, h in enumerate(header) if h.strip().lower() == wanted.strip().lower()]
        if not same:
            raise DataError(f"no {what} column named {wanted!r} (columns: {_show(header)})", path, line)
        if len(same) > 1:
            raise DataError((f"the header names the {what} column {wanted!r} twice ({_positions(same)}): rename one, "
                             "so that the column read is the one meant") if exact else
                            (f"the {what} column named {wanted!r} is {_positions(same)} in any case "
                             f"({_show([header[k].strip() for k in same])}): name it by its exact name, or rename "
                             "one"), path, line)
        return same[0]
    k = find_column(header, candidates)
    same = [] if k is None else column_namesakes(header, k)
    if len(same) > 1:
        names = [header[j].strip() for j in same]
        if len(set(names)) == 1:
            raise DataError(f"the header names the {what} column {names[0]!r} twice ({_positions(same)}): rename one, "
                            "so that the column read is the one meant", path, line)
        param = f"{what.lower()}_column"
        raise DataError(f"the header has {len(same)} {what} columns by their names, {_show(names)} "
                        f"({_positions(same)}): name the one to read, by its exact name, with {{{param}}}, "
                        "or rename one", path, line, params=(param,))
    return k


def _positions(columns: list[int]) -> str:
    """``columns 1 and 3`` (positions from 1) for a message."""
    shown = [str(k + 1) for k in columns]
    return "columns " + (", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else shown[0])


def find_column(header: list[str], candidates: Iterable[str]) -> int | None:
    """The first column whose name is one of ``candidates``, compared in lower case with spaces and
    hyphens as underscores ("Compound Name" is ``compound_name``): the one rule of loading and of
    the app's column chooser.

    Args:
        header: the column names.
        candidates: common names, in order of preference.

    Returns:
        The column's position, or None when no name matches.
    """
    names = [_column_key(h) for h in header]
    return next((names.index(c) for c in candidates if c in names), None)


def column_namesakes(header: list[str], k: int) -> list[int]:
    """The columns whose names :func:`find_column` cannot tell from column ``k``'s (itself among them).

    Args:
        header: the column names.
        k: a column's position.

    Returns:
        Their positions, in order: more than one when a column found by a common name is not the
        only one so named (loading refuses to pick it, the column chooser offers no guess).
    """
    key = _column_key(header[k])
    return [j for j, h in enumerate(header) if _column_key(h) == key]


def _column_key(name: str) -> str:
    """A column's name as columns are found by name: lower case, spaces and hyphens as underscores."""
    return re.sub(r"[\s-]+", "_", name.strip().lower())


# A quoted field may span lines, but not more than this many: past it the opening quote is
# taken as a stray one, that line is rejected and reading goes on with the next line.
MAX_FIELD_LINES = 100


def _split_header(header_line: str, delimiter: str, path: Path, line: int) -> list[str]:
    try:
        return next(csv.reader([header_line], delimiter=delimiter))
    except csv.Error as exc:
        raise DataError(f"cannot read the header row: {exc}", path, line) from None


def _show(names: list[str], limit: int = 200) -> str:
    text = ", ".join(names)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def table_rows(path: str | Path, smiles_column: str | None = None, id_column: str | None = None,
               label_column: str | None = None) -> tuple[Iterator[SourceRow], str]:
    """Stream the rows of a delimited table with a header row.

    The header is read at once (a missing column is an error before any row); the rows are
    streamed. The SMILES, id and label columns are found by common names (``smiles``, ``Drug``,
    ``id``, ``Drug_ID``, ``label``, ``Y``, ...) or named by the caller.

    The delimiter is the one the header uses most (``,`` tab ``;`` ``|``); when the SMILES
    column is not found that way, the header is tried with each other delimiter. A file whose
    first two lines begin with a molecule has no header (a SMILES list saved as ``.txt`` or
    ``.csv``): every line is a row, SMILES first and the id second (:func:`headerless`), as in a
    ``.smi`` file, so that its first molecule is neither taken for a column nor lost; so is one whose
    first line is RDKit's SmilesWriter header ``SMILES Name`` (space separated). A quoted field
    may span lines. A row that does not split into enough fields (another delimiter, a stray
    quote) comes with its problem, to be rejected with its line number. ``#`` comment lines are
    skipped before the header; past it, one that holds the delimiter is a commented-out row, which
    comes with its problem too (:func:`_csv_rows`): not scored, and not lost unseen.

    Args:
        path: the table (optionally gzipped).
        smiles_column: the SMILES column's name (None: found by common names).
        id_column: the id column's name (None: found, else the line number is the id;
            ``NO_COLUMN``, "": none, the line number is the id).
        label_column: the label column's name (None: found, else unlabelled; ``NO_COLUMN``, "":
            none, unlabelled).

    Returns:
        (the rows; the hint to add when no row holds a molecule, naming the parameter as
        ``{smiles_column}``, see :class:`core.errors.DataError`).

    Raises:
        DataError: the file is empty, the header cannot be read, a named column is missing, a
            column picked (named, or found by its common name) is not the only one so named, no
            SMILES column is found, or the SMILES column's name is a molecule (the first line is a
            row: the file has no header row).
    """
    path = Path(path)
    lines = read_lines_and_endings(path)
    header_no, delimiter, header, s_col, lines = _read_header(path, lines, smiles_column)
    if s_col is None and smiles_column is None and id_column in (None, NO_COLUMN) and label_column in (None, NO_COLUMN):
        first = _first_cell_molecules(path, delimiter)
        if first == "list":  # a SMILES list under a table's name: "SMILES [name]" per line
            if id_column == NO_COLUMN:  # no id: the names are not ids, the line numbers are
                return (row._replace(id=str(row.line), name="") for row in smiles_rows(path)), ""
            return smiles_rows(path), ""
        if first == "table":  # the first line is a row: SMILES, then the id, in every line
            columns = ["SMILES", "id"] + [f"column {k}" for k in range(3, len(header) + 1)]
            body = itertools.dropwhile(lambda item: not _is_data(item[1]), read_lines_and_endings(path))
            return _table_rows(body, delimiter, columns[:max(len(header), 1)], 0,
                               1 if len(header) > 1 and id_column is None else None, None), ""
    if s_col is None:
        _pick(header, smiles_column, SMILES_COLUMNS, path, "SMILES", header_no)  # raises when it was named
        raise DataError(f"no SMILES column found (columns: {_show(header)}); name it with {{smiles_column}}",
                        path, header_no, params=("smiles_column",))
    if parse_smiles(header[s_col].strip())[0] is not None:  # a first row taken for the header: lost unseen
        raise DataError(f"the SMILES column named, {header[s_col].strip()!r}, is a molecule in line {header_no}: the "
                        "file seems to have no header row, and that first row would be lost as one; add a header "
                        "row naming the columns", path, header_no)
    i_col = None if id_column == NO_COLUMN else _pick(header, id_column, ID_COLUMNS, path, "id", header_no)
    l_col = None if label_column == NO_COLUMN else _pick(header, label_column, LABEL_COLUMNS, path, "label", header_no)
    hint = f"; is {header[s_col]!r} the SMILES column? (name it with {{smiles_column}})"
    return _table_rows(lines, delimiter, header, s_col, i_col, l_col), hint


def headerless(path: str | Path) -> bool:
    """Whether a table is a list of molecules without a header row: its header names no SMILES
    column and the first cell of its first two lines (one, if it has one) is a molecule; or a
    SMILES list under RDKit's SmilesWriter header ``SMILES Name``. No column is there to choose.

    Args:
        path: the table (optionally gzipped).

    Returns:
        True when :func:`table_rows` reads every line as a row.

    Raises:
        DataError: the file is empty, or its first line cannot be read.
    """
    path = Path(path)
    _, delimiter, _, s_col, _ = _read_header(path, read_lines_and_endings(path), None)
    return s_col is None and _first_cell_molecules(path, delimiter) is not None


def _first_cell_molecules(path: Path, delimiter: str) -> str | None:
    """"list" when the first two data lines (one, if there is one) each begin with a molecule
    followed by a space or nothing ("SMILES [name]", as a .smi file; a name may hold the
    ``delimiter``: ``CCO ethanol, absolute``), "table" when they split by it with a molecule first,
    else None (a header row, or not molecules). A first line ``SMILES Name`` (RDKit's SmilesWriter
    header: ``smiles`` and one word, without the delimiter) is the header of a list, read as
    :func:`smiles_rows` reads it: "list" when the two lines after it are list lines."""
    lines = [line for _, line in itertools.islice(data_lines(path), 3)]
    if lines and _list_header(lines[0], delimiter):
        lines = lines[1:]
        return "list" if lines and _first_cell_molecules_of(lines, delimiter) == "list" else None
    return _first_cell_molecules_of(lines[:2], delimiter)


def _list_header(line: str, delimiter: str) -> bool:
    """Whether a line is a SMILES list's header as RDKit's SmilesWriter writes it: ``SMILES Name``."""
    words = line.split()
    return len(words) == 2 and words[0].lower() in {"smiles", "smi"} and delimiter not in line


def _first_cell_molecules_of(lines: list[str], delimiter: str) -> str | None:
    """:func:`_first_cell_molecules` of these lines."""
    if not lines:
        return None
    kinds = set()
    for line in lines:
        word = (line.split(None, 1) or [""])[0]
        if delimiter in line:
            try:
                cell = next(csv.reader([line], delimiter=delimiter))[0].strip()
            except (csv.Error, StopIteration):
                return None
            if cell and parse_smiles(cell)[0] is not None:
                kinds.add("table")
                continue
            if not (word and word != cell and cell.startswith(word) and delimiter not in word):
                return None  # the first cell is no molecule, nor a molecule and a name
        kinds.add("list")
        if not word or parse_smiles(word)[0] is None:
            return None
    return kinds.pop() if len(kinds) == 1 else None


def table_header(path: str | Path) -> tuple[list[str], str]:
    """A table's header row, split as loading splits it (:func:`table_rows`), for a column chooser:
    the two once split it differently, so the chooser offered columns the loader never saw.

    Args:
        path: the table (optionally gzipped).

    Returns:
        (the column names, the delimiter).

    Raises:
        DataError: the file is empty, or its header cannot be read.
    """
    path = Path(path)
    _, delimiter, header, _, _ = _read_header(path, read_lines_and_endings(path), None)
    return header, delimiter


def _read_header(path: Path, lines: Iterator[tuple[int, str, str]], smiles_column: str | None,
                 ) -> tuple[int, str, list[str], int | None, Iterator[tuple[int, str, str]]]:
    """Read the header row from ``lines``: (its line number, the delimiter, the columns, the SMILES
    column's position or None, the lines after it). The delimiter is the one the header uses most
    (``,`` tab ``;`` ``|``), unless another one splits out the SMILES column (named, or found by
    its common names) where that one does not.

    Where the first data line names no SMILES column, a ``#`` comment line before it that does, and
    heads it (:func:`_heads`), is the header (``#smiles,id,label``, as several tools write it):
    skipped as a comment, the file was read as one without a header, and its ids and labels as
    ``column 3``, lost without a word."""
    allow_large_csv_fields()
    suffix = Path(strip_compression(path.name)).suffix.lower()
    commented = None
    for number, line, ending in lines:
        if _is_data(line):
            delimiter, header, s_col = _split_header_named(line, suffix, smiles_column, path, number)
            if s_col is None and commented is not None and _heads(commented, line):
                return (*commented, itertools.chain([(number, line, ending)], lines))
            return number, delimiter, header, s_col, lines
        text = line.strip()[1:] if line.strip().startswith("#") else ""
        if commented is None and text.strip():
            named = _split_header_named(text, suffix, smiles_column, path, number)
            commented = (number, *named) if named[2] is not None else None
    if commented is not None:
        return (*commented, lines)
    raise DataError("file is empty (no header row and no data)", path)


def _heads(commented: tuple[int, str, list[str], int], line: str) -> bool:
    """Whether a commented header (its line, delimiter, columns, SMILES column) heads the first data
    line: as many fields, a molecule in its SMILES column. A ``# smiles`` note above a list, or above
    a table whose header names its SMILES column otherwise, is a comment: read as the header, it
    rejected every row, and the column dialog offered its one column."""
    _, delimiter, header, s_col = commented
    try:
        cells = next(csv.reader([line], delimiter=delimiter))
    except (csv.Error, StopIteration):
        return False
    return len(cells) == len(header) and parse_smiles(cells[s_col].strip())[0] is not None


def _split_header_named(header_line: str, suffix: str, smiles_column: str | None, path: Path, number: int,
                        ) -> tuple[str, list[str], int | None]:
    """(The delimiter, the columns, the SMILES column's position or None) of a header line: split by
    the delimiter it uses most, unless another one splits out the SMILES column where that one does
    not."""
    sniffed = sniff_delimiter(header_line, suffix)
    delimiter, header, s_col = sniffed, [], None
    for candidate in (sniffed,) + tuple(d for d in DELIMITERS if d != sniffed):
        columns = _split_header(header_line, candidate, path, number)
        try:
            found = _pick(columns, smiles_column, SMILES_COLUMNS, path, "SMILES", number)
        except DataError:
            found = None
        if found is not None or candidate == sniffed:
            delimiter, header, s_col = candidate, columns, found
        if found is not None:
            break
    return delimiter, header, s_col


def _report_status(header: list[str]) -> int | None:
    """The ``status`` column of a ranked report's header (None for any other table): a report read
    as data (scored again with another model) has rows that are not molecules."""
    from core.io.report import LEGACY_COLUMNS

    return LEGACY_COLUMNS.index("status") if tuple(header[:len(LEGACY_COLUMNS)]) == LEGACY_COLUMNS else None


def _table_rows(lines: Iterator[tuple[int, str, str]], delimiter: str, header: list[str], s_col: int,
                i_col: int | None, l_col: int | None) -> Iterator[SourceRow]:
    from core.io.report import END_PREFIX

    status = _report_status(header)
    for number, row, problem, written in _csv_rows(lines, delimiter):
        if status is not None and status < len(row):  # a ranked report read as data
            if row[status].startswith(END_PREFIX):  # its end row is not a row of molecules
                continue
            if row[status].startswith("rejected: "):  # never scored: rejected again, for the report's reason
                problem = f"rejected in the report: {row[status].removeprefix('rejected: ')}"
        if problem is None and len(row) <= s_col:
            problem = f"row has {counted(len(row), 'field')}, the SMILES column " \
                      f"({header[s_col]!r}) is field {s_col + 1}"
            others = [d for d in DELIMITERS if d != delimiter and d in delimiter.join(row)]
            if others:
                problem += f" (the file uses {delimiter!r} between fields, this row has {others[0]!r})"
        if problem is None and len(row) > len(header) and any(cell.strip() for cell in row[len(header):]):
            problem = (f"row has {len(row)} fields, the header {len(header)} (a {delimiter!r} inside a name "
                       "that is not quoted?): its id and label would be read from the wrong fields")
        missing = [header[c] for c in (i_col, l_col) if c is not None and c >= len(row)]
        if problem is None and missing:  # an empty cell is an unknown id or label; a missing one, a broken row
            problem = (f"row has {counted(len(row), 'field')}, the header {len(header)}: no "
                       f"{' and no '.join(repr(m) for m in missing)} field")
        shifted = problem is not None and problem.startswith("row has") and len(row) > len(header)
        ident = row[i_col].strip() if i_col is not None and i_col < len(row) and not shifted else ""
        if problem is not None:
            yield SourceRow(number, ident or str(number), "", written if written is not None else delimiter.join(row),
                            None, problem)
            continue
        label = row[l_col] if l_col is not None and l_col < len(row) else None
        yield SourceRow(number, ident or str(number), ident, row[s_col], label)


def load_table(path: str | Path, smiles_column: str | None = None, id_column: str | None = None,
               label_column: str | None = None, standardise: bool = False,
               should_stop: Callable[[], bool] | None = None,
               on_progress: Callable[[int], None] | None = None) -> GraphSet:
    """Read a delimited table with a header row into a GraphSet (the rows of :func:`table_rows`).

    Args:
        path: the table (optionally gzipped).
        smiles_column: the SMILES column's name (None: found by common names).
        id_column: the id column's name (None: found, else line numbers; ``NO_COLUMN``, "":
            none, line numbers).
        label_column: the label column's name (None: found, else unlabelled; ``NO_COLUMN``, "":
            none, unlabelled).
        standardise: standardise each molecule first (:mod:`core.data.standardise`); a molecule it
            fails on is rejected with the reason.
        should_stop: polled before each row; True stops the reading.
        on_progress: called with the rows read so far, every POLL_ROWS rows.

    Returns:
        The molecules and the rejected rows with their reasons.

    Raises:
        DataError: as :func:`table_rows`, or the table has no data rows or not one readable
            molecule (with a hint that the SMILES column may be the wrong one).
        Stopped: ``should_stop`` returned True.
    """
    path = Path(path)
    rows, hint = table_rows(path, smiles_column, id_column, label_column)
    out = _Collector(path, standardise, should_stop, on_progress)
    for row in rows:
        out.add_row(row)
    return out.result(path, "table", hint)


def _parse_row(text: str, delimiter: str, strict: bool = False) -> tuple[list[str], str | None]:
    try:
        return next(csv.reader([text], delimiter=delimiter, strict=strict)), None
    except csv.Error as exc:
        return [text], f"cannot split the row into fields: {exc}"


def _is_data(line: str) -> bool:
    """A line that holds data: not blank, not a ``#`` comment (unless inside a quoted cell)."""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _commented_out(line: str, delimiter: str) -> tuple[list[str], str] | None:
    """A table body's line that starts with ``#`` and holds the delimiter: a row the user commented
    out, to be listed (not scored) with its fields and why; None for any other line.

    Read as a row, ``#m2,CCN,1`` trained on a molecule the user had excluded, label and all;
    skipped as a comment, ``#1,CCO,0`` (an id that starts with ``#``) was lost without a word.
    Listed among the rejected rows, neither happens, and the reason says how to read it as data.
    """
    if _is_data(line) or delimiter not in line:
        return None
    fields, _ = _parse_row(line, delimiter)
    first = fields[0].strip() if fields else ""
    return fields, (f"starts with '#': read as a commented-out row, not scored (quote its first cell, "
                    f"\"{first}\", to read it as data)")


def _csv_rows(lines: Iterator[tuple[int, str, str]], delimiter: str
              ) -> Iterator[tuple[int, list[str], str | None, str | None]]:
    """csv-parse (line number, line, ending) triples, joining a quoted field that spans lines with
    the lines' own endings, so the cell is kept byte for byte: a line inside it that is blank or
    starts with ``#`` is part of the cell, not a comment. Between rows, a blank line and a ``#``
    comment are skipped; a ``#`` line that holds the delimiter is a commented-out row, yielded with
    its problem (:func:`_commented_out`) and the line as written. Yields (first line number, fields,
    problem or None, the line as written for a stray quote's problem row, else None: its fields
    joined again read ``f,"CC"O`` as ``f,CCO"``).

    A quote still open after ``MAX_FIELD_LINES`` lines or at the end of the file is a stray
    quote, and so is one "closed" by a quote that text follows (``"benzene, pure"x``, or on one
    line ``"CC"O``, which the csv module would read as ``CCO``: its strict rule): that one line
    becomes a problem row and the lines after it are read again on their own, so one bad line
    never swallows the rest of the file.
    """
    source = iter(lines)
    replay: deque[tuple[int, str, str]] = deque()
    pending: list[tuple[int, str, str]] = []
    open_quote = False
    while True:
        if replay:
            item = replay.popleft()
        else:
            item = next(source, None)
        stray = False
        if item is None:
            if not pending:
                return
            stray = True  # the file ends inside a quoted field
        elif not pending and not _is_data(item[1]):  # a blank or comment line between rows
            commented = _commented_out(item[1], delimiter)
            if commented is not None:  # a row commented out: listed, not scored
                yield item[0], commented[0], commented[1], item[1]
            continue
        else:
            pending.append(item)
            open_quote = _quote_open_after(item[1], delimiter, open_quote)
            if open_quote:  # a quoted field goes on in the next line, up to MAX_FIELD_LINES
                if len(pending) <= MAX_FIELD_LINES:
                    continue
                stray = True
            else:  # the quote that "closed" a field must be followed by a delimiter or the line's end
                text = "".join(line + ending for _, line, ending in pending[:-1]) + pending[-1][1]
                row, problem = _parse_row(text, delimiter, strict=True)
                stray = problem is not None
        if stray:  # the first line is the problem row; the lines after it are read again on their own
            (number, line, _), rest = pending[0], pending[1:]
            reason = "unmatched quote (\") in this row" if open_quote or item is None or rest else \
                "a quote (\") closes a field that text follows"
            pending, open_quote = [], False
            row, _ = _parse_row(line + '"', delimiter)  # for its id; its text is the line as written
            yield number, row, reason, line
            replay.extendleft(reversed(rest))
            continue
        yield pending[0][0], row, problem, None
        pending = []


def _quote_open_after(line: str, delimiter: str, in_quotes: bool) -> bool:
    """Whether a quoted field is still open at the end of ``line`` (the csv module's rules: a quote
    opens a field only at its start, ``""`` inside one is a literal quote), given the state at its start."""
    if '"' not in line:
        return in_quotes
    at_start = not in_quotes
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if in_quotes:
            if c == '"':
                if i + 1 < n and line[i + 1] == '"':
                    i += 2
                    continue
                in_quotes = False
        elif c == delimiter:
            at_start = True
            i += 1
            continue
        elif c == '"' and at_start:
            in_quotes = True
        at_start = False
        i += 1
    return in_quotes


def sdf_rows(path: str | Path, id_field: str | None = None, label_field: str | None = None) -> Iterator[SourceRow]:
    """Stream the records of an SDF file (they end with ``$$$$``) as rows holding their molblock.

    Args:
        path: the file (optionally gzipped).
        id_field: the data field holding the id (None: a field with a common id name, else the
            title line, else "record N"; ``NO_COLUMN``, "": no field, the title line, else "record N").
        label_field: the data field holding the label (None: a field with a common label name;
            ``NO_COLUMN``, "": none, unlabelled).

    Yields:
        One row per non-empty record; a record without ``M  END`` comes with its problem.
    """
    path = Path(path)
    index = 0
    for start, record in _records(path):
        for offset, part in _molecules_of(record):  # an empty record is not data
            index += 1
            if index == 1:
                _check_fields(part, id_field, label_field, path, start + offset)
            yield _sdf_row(part, start + offset, index, id_field, label_field)


def _records(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Each record's first line number and lines (``$$$$`` ends one; the last may lack it)."""
    record: list[str] = []
    start = 1
    for number, line in read_lines(path):
        if not record:
            start = number
        if line.strip() == "$$$$":
            yield start, record
            record = []
            continue
        record.append(line)
    yield start, record


_COUNTS_LINE = re.compile(r"^\s*\d+\s+\d+\b.*\bV[23]000\s*$")  # a molblock's counts line (atoms, bonds, ..., V2000)


def _molecules_of(record: list[str]) -> list[tuple[int, list[str]]]:
    """Split a record (the lines between two ``$$$$``) at each molblock that starts after the
    previous one's ``M  END`` and data fields: ``cat *.mol > all.sdf`` and a forgotten ``$$$$``
    put several molecules in one record, and each is read as its own. A molblock is found by its
    counts line (``V2000`` or ``V3000``), three lines after its start (a blank title is common);
    anything else after ``M  END`` belongs to the data fields. A counts line inside a molblock
    starts the next one too: the molblock before it lacks its ``M  END`` and is rejected alone,
    rather than swallowing the molecule after it. Returns (line offset, lines) per
    molecule; none for a blank record."""
    if not any(line.strip() for line in record):
        return []
    starts = [0]
    end_at = None  # the last M  END not yet followed by a new molblock
    in_value = False
    for i, line in enumerate(record):
        text = line.strip()
        if text == "M  END":
            end_at, in_value = i, False
        elif end_at is None:  # a molblock's body: another counts line past its own starts the next one
            if i - 3 > starts[-1] + 3 and _COUNTS_LINE.match(line):  # (this one lacks its M  END)
                starts.append(i - 3)
        elif end_at is not None:
            if line.startswith(">"):
                in_value = True
            elif not text:
                in_value = False
            elif not in_value and i - 3 > end_at and ("V2000" in line or "V3000" in line):
                starts.append(i - 3)
                end_at = None
    return [(a, record[a:b]) for a, b in zip(starts, starts[1:] + [len(record)])]


def _field(fields: dict[str, str], name: str) -> str | None:
    """A data field's value by name, whatever its case (as table columns are named)."""
    if name in fields:
        return fields[name]
    return next((v for k, v in fields.items() if k.lower() == name.lower()), None)


def _check_fields(lines: list[str], id_field: str | None, label_field: str | None, path: Path, line: int) -> None:
    """Refuse a named id or label field that the first record does not have, naming the fields it
    has (as a table's missing column is refused at its header)."""
    end = next((i for i, text in enumerate(lines) if text.strip() == "M  END"), None)
    fields = _sdf_fields(lines[end + 1:]) if end is not None else {}
    for kind, name, param in (("id", id_field, "id_column"), ("label", label_field, "label_column")):
        if name and _field(fields, name) is None:
            raise DataError(f"no {kind} field named {name!r} in the first record (its fields: "
                            f"{_show(list(fields)) or 'none'}); name one with {{{param}}}", path, line,
                            params=(param,))


def load_sdf(path: str | Path, id_field: str | None = None, label_field: str | None = None,
             standardise: bool = False, should_stop: Callable[[], bool] | None = None,
             on_progress: Callable[[int], None] | None = None) -> GraphSet:
    """Read an SDF file into a GraphSet; a broken molblock rejects only its own record.

    Args:
        path: the file (optionally gzipped); records end with ``$$$$``.
        id_field: the data field holding the id (None: found, else the title line; ``NO_COLUMN``,
            "": no field, the title line).
        label_field: the data field holding the label (None: found, else unlabelled; ``NO_COLUMN``,
            "": none, unlabelled).
        standardise: standardise each molecule first (:mod:`core.data.standardise`); a molecule it
            fails on is rejected with the reason.
        should_stop: polled before each record; True stops the reading.
        on_progress: called with the records read so far, every POLL_ROWS records.

    Returns:
        The molecules and the rejected records with their reasons.

    Raises:
        DataError: the file has no records, or not one readable molecule.
        Stopped: ``should_stop`` returned True.
    """
    path = Path(path)
    out = _Collector(path, standardise, should_stop, on_progress)
    for row in sdf_rows(path, id_field, label_field):
        out.add_row(row)
    return out.result(path, "sdf", unit="record")


def _sdf_row(lines: list[str], start: int, index: int, id_field: str | None, label_field: str | None) -> SourceRow:
    end = next((i for i, line in enumerate(lines) if line.strip() == "M  END"), None)
    title = lines[0].strip() if lines else ""
    if end is None:  # a broken record's data fields still name it (its <id>, not its title): from the first "> <"
        end_of_block = next((i - 1 for i, line in enumerate(lines) if i > 3 and line.startswith(">") and "<" in line),
                            len(lines))
        fields = _sdf_fields(lines[end_of_block + 1:])
    else:
        fields = _sdf_fields(lines[end + 1:])
    lowered = {k.lower(): v for k, v in fields.items()}
    if id_field == NO_COLUMN:
        ident = ""
    else:
        ident = (_field(fields, id_field) or "") if id_field else next((lowered[c] for c in ID_COLUMNS if c in lowered), "")
    ident = ident or title or f"record {index}"
    if label_field == NO_COLUMN:
        label = None
    else:
        label = _field(fields, label_field) if label_field else next(
            (lowered[c] for c in LABEL_COLUMNS if c in lowered), None)
    if end is None:
        return SourceRow(start, ident, title, "", label, f"record {index} has no 'M  END' line", record=index)
    return SourceRow(start, ident, title, "", label, molblock="\n".join(lines[: end + 1]), record=index)


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
