"""Which columns of a delimited table hold the SMILES, ids and labels (for a column chooser)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import DataError
from core.io.molecules import (ID_COLUMNS, LABEL_COLUMNS, SMILES_COLUMNS, column_namesakes, find_column, headerless,
                               read_row, table_header, table_rows)
from core.io.text import strip_compression


@dataclass
class TableColumns:
    """A table's header and the columns found by name (None where no common name matched)."""

    header: list[str]
    smiles: str | None
    id: str | None
    label: str | None
    headerless: bool = False  # the first line is a molecule: every line is read as a row, no column to choose
    repeated: list[str] = field(default_factory=list)  # names found by a common name that name two columns


def table_columns(path: str | Path) -> TableColumns:
    """Read only the header row of a CSV/TSV file and guess its SMILES, id and label columns.

    Args:
        path: the table (optionally gzipped); its header is split as loading splits it
            (:func:`core.io.molecules.table_header`).

    Returns:
        The header and the columns whose names are common for SMILES, ids and labels
        (:func:`core.io.molecules.find_column`, as loading finds them), None where no name
        matched or it matched two columns (loading refuses to pick either: the user chooses one by
        its exact name, and ``repeated`` lists the name); ``headerless`` when the file has no header
        row (:func:`core.io.molecules.headerless`: loading reads every line as a row).

    Raises:
        DataError: the file has no header row, or it cannot be read.
    """
    header, _ = table_header(path)  # split as loading splits it

    repeated: list[str] = []

    def find(candidates: tuple[str, ...]) -> str | None:
        k = find_column(header, candidates)
        if k is not None and len(column_namesakes(header, k)) > 1:  # loading would refuse to pick one
            repeated.append(header[k].strip())
            return None
        return None if k is None else header[k]

    smiles = find(SMILES_COLUMNS)
    return TableColumns(header=header, smiles=smiles, id=find(ID_COLUMNS), label=find(LABEL_COLUMNS),
                        headerless=smiles is None and headerless(path), repeated=repeated)


def smiles_column_reads(path: str | Path, column: str, rows: int = 20) -> bool:
    """Whether a table's column holds molecules: a cell of its first ``rows`` data rows parses as one.

    A column named like a SMILES column may hold something else (InChI keys, ids); the column
    chooser then asks instead of letting every row be rejected. The rows are read and parsed as
    loading reads them (:func:`core.io.molecules.table_rows`, :func:`core.io.molecules.read_row`).

    Args:
        path: the table (optionally gzipped).
        column: the column's name, as in the header.
        rows: how many data rows to try.

    Returns:
        True when one of them parses (or the table has no data rows to tell by), False otherwise
        (also when the header lacks ``column``).
    """
    try:
        read, _ = table_rows(path, smiles_column=column)
    except DataError:  # the header lacks the column
        return False
    tried = list(itertools.islice(read, rows))
    return not tried or any(read_row(row)[0] is not None for row in tried)


def is_table(path: str | Path) -> bool:
    """Whether a path is an existing molecule table, by its suffix (for the column chooser).

    Args:
        path: the file.

    Returns:
        True for an existing .csv, .tsv, .tab or .txt file (optionally compressed).
    """
    from core.io.load import MOLECULE_TABLE_SUFFIXES

    p = Path(path)
    return p.is_file() and Path(strip_compression(p.name)).suffix.lower() in MOLECULE_TABLE_SUFFIXES
