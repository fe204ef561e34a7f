"""Loaders: one ``load(path, **options)`` that picks the reader from the path."""
from __future__ import annotations

from pathlib import Path
from collections.abc import Callable, Iterator

from core.errors import DataError
from core.data.graphset import GraphSet
from core.io.molecules import SourceRow, load_sdf, load_smiles, load_table, sdf_rows, smiles_rows, table_rows
from core.io.text import strip_compression
from core.io.tu import load_tu
from core.io.tu_folder import tu_folder_of

MOLECULE_TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".txt")
SMILES_SUFFIXES = (".smi", ".smiles", ".ism")
SDF_SUFFIXES = (".sdf", ".sd", ".mol")


def load(path: str | Path, smiles_column: str | None = None, id_column: str | None = None,
         label_column: str | None = None, standardise: bool = False,
         should_stop: Callable[[], bool] | None = None, on_progress: Callable[[int], None] | None = None) -> GraphSet:
    """Read any supported file into a GraphSet, the reader picked from the path.

    A folder or ``.zip`` is a TU collection, and so is one of its files (``DS_A.txt``: the
    collection beside it, :func:`core.io.tu_folder.tu_folder_of`); ``.smi``/``.smiles``/``.ism`` a SMILES list;
    ``.csv``/``.tsv``/``.tab``/``.txt`` a table with a SMILES column; ``.sdf``/``.sd``/``.mol``
    an SDF file (each optionally ``.gz``).

    Args:
        path: the file or folder.
        smiles_column: a table's SMILES column (None: found by its common names).
        id_column: a table's id column, or an SDF data field (None: found, else row numbers;
            ``NO_COLUMN``, "": none, row numbers).
        label_column: a table's label column, or an SDF data field (None: found, else unlabelled;
            ``NO_COLUMN``, "": none, unlabelled).
        standardise: standardise each molecule as it is read (:mod:`core.data.standardise`:
            largest fragment, neutralised, canonical tautomer); a molecule it fails on is rejected.
        should_stop: polled before each row of a molecule file; True stops the reading (a TU
            collection is read in one go, in seconds).
        on_progress: called with the rows of a molecule file read so far, every thousand rows.

    Returns:
        The graphs, their metadata and the rows that could not be read, with their reasons.

    Raises:
        DataError: the path does not exist, its type is unknown, or the file cannot be read
            (naming the file and, where known, the line), ``standardise`` is asked of a TU
            collection, or a column is named for a file without columns (a SMILES list, a TU
            collection; a SMILES column for an SDF file).
        Stopped: ``should_stop`` returned True (nothing is returned).
    """
    path = Path(path)
    if not path.exists():
        raise DataError("no such file or folder", path)
    path = tu_folder_of(path) or path  # one of a TU collection's files means the collection
    if path.is_dir() or path.suffix.lower() == ".zip":
        if standardise:
            raise DataError("standardising is for molecules (SMILES or SDF), not a TU collection of graphs", path)
        _refuse_columns(path, "tu", smiles_column, id_column, label_column)
        return load_tu(path)
    suffix = Path(strip_compression(path.name)).suffix.lower()
    if suffix in SMILES_SUFFIXES:
        _refuse_columns(path, "smiles", smiles_column, id_column, label_column)
        return load_smiles(path, standardise, should_stop, on_progress)
    if suffix in MOLECULE_TABLE_SUFFIXES:
        return load_table(path, smiles_column, id_column, label_column, standardise, should_stop, on_progress)
    if suffix in SDF_SUFFIXES:
        _refuse_columns(path, "sdf", smiles_column, id_column, label_column)
        return load_sdf(path, id_column, label_column, standardise, should_stop, on_progress)
    raise DataError("unknown file type: expected a TU folder or .zip, .smi, .csv, .tsv, .tab or .sdf "
                    "(optionally .gz)", path)


def _refuse_columns(path: Path, kind: str, smiles_column: str | None, id_column: str | None,
                    label_column: str | None) -> None:
    """Refuse column options a file has no columns for, rather than ignore them (the user meant
    something by them): a SMILES list or a TU collection has none, an SDF file no SMILES column
    (its ``id_column`` and ``label_column`` name data fields)."""
    given = [name for name, value in (("smiles_column", smiles_column), ("id_column", id_column),
                                      ("label_column", label_column)) if value is not None]
    if kind == "sdf":
        given = [name for name in given if name == "smiles_column"]
    if given:
        what = {"smiles": "a SMILES list has no columns", "tu": "a TU collection has no columns",
                "sdf": "an SDF file holds its molecules, not a SMILES column"}[kind]
        raise DataError(f"{what}: {', '.join('{' + g + '}' for g in given)} is for tables (.csv, .tsv, .tab, .txt)",
                        path, params=tuple(given))


def is_molecule_list(path: str | Path) -> bool:
    """Whether a path is a file :func:`molecule_rows` streams, by its suffix.

    Args:
        path: the file (it need not exist).

    Returns:
        True for a SMILES list, table or SDF file (optionally gzipped); False for one of a TU
        collection's text files (:func:`core.io.tu_folder.tu_folder_of`).
    """
    if tu_folder_of(path) is not None:  # DS_A.txt and its siblings: a graph collection's, not a table
        return False
    suffix = Path(strip_compression(Path(path).name)).suffix.lower()
    return suffix in SMILES_SUFFIXES or suffix in MOLECULE_TABLE_SUFFIXES or suffix in SDF_SUFFIXES


def molecule_rows(path: str | Path, smiles_column: str | None = None, id_column: str | None = None,
                  label_column: str | None = None) -> tuple[Iterator[SourceRow], str]:
    """Stream the rows of a SMILES list, table or SDF file, read exactly as :func:`load` reads them.

    The one reader of molecule rows for loading, scoring and screening: a table's header is
    checked at once, the rows come as they are read.

    Args:
        path: the file (optionally gzipped).
        smiles_column: a table's SMILES column (None: found by its common names).
        id_column: a table's id column, or an SDF data field (None: found; ``NO_COLUMN``, "": none).
        label_column: a table's label column, or an SDF data field (None: found; ``NO_COLUMN``, "": none).

    Returns:
        (the rows, as they are read; the hint to add when no row holds a molecule, "" if none,
        naming the parameter as ``{smiles_column}``: see :func:`core.io.molecules.nothing_read`).

    Raises:
        DataError: the path does not exist, is not a molecule list (a TU collection's file is
            not), a table's header lacks the columns asked for, or a column is named for a SMILES
            list (or a SMILES column for an SDF file).
    """
    path = Path(path)
    if not path.exists():
        raise DataError("no such file or folder", path)
    collection = tu_folder_of(path)
    if collection is not None:
        raise DataError(f"one of the files of the TU graph collection {collection}: streamed scoring reads "
                        "molecule files (SMILES, tables, SDF); score the collection with `glocalkd score`", path)
    suffix = Path(strip_compression(path.name)).suffix.lower()
    if suffix in SMILES_SUFFIXES:
        _refuse_columns(path, "smiles", smiles_column, id_column, label_column)
        return smiles_rows(path), ""
    if suffix in MOLECULE_TABLE_SUFFIXES:
        return table_rows(path, smiles_column, id_column, label_column)
    if suffix in SDF_SUFFIXES:
        _refuse_columns(path, "sdf", smiles_column, id_column, label_column)
        return sdf_rows(path, id_column, label_column), ""
    raise DataError("streamed scoring reads SMILES lists (.smi), tables (.csv, .tsv, .tab, .txt) and SDF "
                    "files, optionally gzipped", path)


__all__ = ["load", "molecule_rows", "is_molecule_list", "load_tu", "load_smiles", "load_table", "load_sdf"]
