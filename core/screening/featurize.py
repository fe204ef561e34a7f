"""Screening's worker side: parse a chunk of rows and featurize its molecules into compact arrays.

Runs in the parsing worker processes (:mod:`core.screening.executors`): RDKit parses each row,
the molecules become 0/1 atom features and bond pairs, the views that score molecules from
those arrays alone score them here, and the report's optional cells (properties, alerts) are
made from the molecule just parsed.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.errors import ParameterError
from core.io.molecules import ROWS_HASH_MASK, SourceRow, read_row, rows_hash
from core.io.report import ALERTS_COLUMN, STANDARDISED, property_cells
from core.runtime.allocator import release_freed_memory
from core.runtime.workers import init_parsing_worker

FEATURIZE_BATCH = 1024  # molecules featurized at once: RDKit molecules and index lists stay small
# atoms featurized at once: 1,024 molecules of 10,000 atoms (each within the per-row limits) held
# 10 million atoms' RDKit molecules in one worker, past its memory ceiling; MOSES's 1,024 take 22,000
FEATURIZE_ATOMS = 65_536


def featurize_chunk(rows: list[SourceRow], extras: tuple[str, ...] = (), views: dict | None = None) -> dict:
    """Parse and featurize a chunk into compact arrays (runs in a worker process).

    The molecules are parsed one by one, their features made ``FEATURIZE_BATCH`` at a time
    (:func:`core.data.atom_batch.featurize_molecules`), or sooner once they hold
    ``FEATURIZE_ATOMS`` atoms, so that a worker holds no more than that many RDKit molecules
    and atoms. The model's views that score molecules from these arrays alone
    (``views``, :func:`worker_views`: a consensus's WL and size views) score them here too, so
    that the scoring process only runs the network and combines.

    Args:
        rows: the chunk's rows.
        extras: the report's optional columns (:func:`core.io.report.extra_columns`): the
            chemist's properties and the structural alerts, computed here from the molecule just
            parsed; with ``standardised_smiles`` each molecule is standardised first (the model's
            choice, :mod:`core.data.standardise`), ``smiles`` is then the standardised SMILES and
            ``inputs`` the rows' own.
        views: view name -> fitted detector with ``score_molecules`` (None: none).

    Returns:
        A dict of the parsed rows' ``lines``, ``positions`` (place in the chunk), ``ids``,
        ``names``, ``labels``, ``smiles``, ``atomic_numbers`` (uint8), ``counts`` (atoms per
        molecule), ``edge_counts``, ``x`` (0/1 uint8 features), ``edges`` (bond pairs within each
        molecule), ``rejects``: (line, id, text, reason) per row that could not be read, and
        ``extra``: each parsed row's cells of ``extras`` (empty without them), ``rows_read``: the
        rows' hash as read (:func:`core.io.molecules.rows_hash`), and with ``views``
        ``view_scores``: view name -> its scores of the parsed molecules.
    """
    from core.data.atom_batch import concatenate
    from core.detectors.wl_features import shared_transforms

    extra_cells = _extra_cells(extras)
    standardise = STANDARDISED in extras
    extra: list[list[str]] = []
    inputs: list[str] = []
    lines, ids, names, smiles, labels, rejects, mols, parts = [], [], [], [], [], [], [], []
    positions = []  # each scored row's place in the chunk: ties in the report keep input order
    atoms = 0  # in ``mols``

    def featurize() -> None:
        nonlocal atoms
        arrays, cells = _featurize_batch(mols, smiles[len(smiles) - len(mols):], extra_cells)
        parts.append(arrays)
        extra.extend(cells)
        mols.clear()
        atoms = 0

    for k, row in enumerate(rows):
        mol, text, reason, original = read_row(row, standardise)
        if mol is None:
            rejects.append((row.line, row.id, original, reason))
            continue
        if standardise:
            inputs.append(original)
        mols.append(mol)
        positions.append(k)
        lines.append(row.line)
        ids.append(row.id)
        names.append(row.name)
        labels.append(row.label)
        smiles.append(text)
        atoms += mol.GetNumAtoms()
        if len(mols) == FEATURIZE_BATCH or atoms >= FEATURIZE_ATOMS:
            featurize()
    if mols or not parts:
        featurize()
    arrays = concatenate(parts)  # features are 0/1 bytes: a quarter of float32's to pass on
    chunk = {
        "lines": np.asarray(lines, dtype=np.int64), "positions": np.asarray(positions, dtype=np.int64), "ids": ids, "names": names, "labels": labels,
        "smiles": smiles, "atomic_numbers": arrays.atomic_numbers.astype(np.uint8),  # 0-118
        "counts": arrays.atom_counts, "edge_counts": arrays.bond_counts, "x": arrays.x, "edges": arrays.bonds,
        "rejects": rejects, "extra": extra, **({"inputs": inputs} if standardise else {}),
        "rows_read": rows_hash(rows),  # here, in the worker: the scoring process has the least time to spare
    }
    if views and len(arrays.atom_counts):  # one score per molecule and view: what the scoring process would compute
        with shared_transforms():  # the WL views and the classifier read the same WL features
            chunk["view_scores"] = {name: view.score_molecules(arrays.x, arrays.bonds, arrays.atom_counts,
                                                               arrays.bond_counts) for name, view in views.items()}
    return chunk


def join_parts(parts: list[dict], starts: list[int]) -> dict:
    """The featurized form of a chunk whose consecutive parts were featurized apart.

    A chunk's parts are parsed by several workers at once (:class:`LocalExecutor`), so that a
    large chunk does not leave the other workers idle while one parses it. Each molecule's
    arrays and view scores depend on that molecule only, so the joined chunk is the one that
    :func:`featurize_chunk` makes of the whole chunk.

    Args:
        parts: :func:`featurize_chunk` of each part, in order.
        starts: each part's first row's place in the chunk.

    Returns:
        The chunk as :func:`featurize_chunk` gives it.
    """
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    chunk: dict = {}
    for key, value in first.items():
        if key == "positions":
            chunk[key] = np.concatenate([part[key] + start for part, start in zip(parts, starts)])
        elif key == "rows_read":  # the hash of the rows of each part, summed as rows_hash sums them
            chunk[key] = sum(part[key] for part in parts) & ROWS_HASH_MASK
        elif key != "view_scores":
            chunk[key] = (np.concatenate([part[key] for part in parts]) if isinstance(value, np.ndarray)
                          else [item for part in parts for item in part[key]])
    names = next((list(part["view_scores"]) for part in parts if "view_scores" in part), None)
    if names is not None:  # a part without molecules has no view scores
        chunk["view_scores"] = {name: np.concatenate([part["view_scores"][name] for part in parts
                                                      if "view_scores" in part]) for name in names}
    return chunk


def worker_views(model, every: bool = False) -> dict:
    """The views of a model that screening's parsing workers score (:meth:`Detector.molecule_views`).

    Args:
        model: the fitted detector.
        every: also a consensus's views that it does not combine now (its reserve views before
            known anomalies weigh them), for the report's view columns (``view_scores``).

    Returns:
        View name -> fitted detector with ``score_molecules``; empty for a model without such views.
    """
    views = getattr(model, "molecule_views", None)
    out = dict(views()) if views is not None else {}
    if every:
        for name in getattr(model, "views", ()):
            view = model.view(name)
            if name not in out and hasattr(view, "score_molecules") and view.molecule_views():
                out[name] = view
    return out


def report_views(model) -> tuple[str, ...]:
    """The views whose raw scores a report's ``view:`` columns hold (``--view-scores``).

    Args:
        model: the fitted detector.

    Returns:
        Every view of the consensus (``model.views``: its components, then its reserve views), then
        its classifier view when known anomalies trained one.

    Raises:
        ParameterError: the model is not a consensus with Fisher's rule (the views a review
            re-weighs).
    """
    name = getattr(model, "name", type(model).__name__)
    if name != "consensus" or getattr(model, "rule", None) != "fisher":
        what = f"a consensus with the {model.rule} rule" if name == "consensus" else name
        raise ParameterError("{view_scores} writes the raw score of each view of a consensus with Fisher's rule "
                             f"(the scores a review re-weighs); this model is {what}", "view_scores")
    return tuple(model.reported_views())


def _featurize_batch(mols: list, smiles: list[str], extra_cells: Callable | None) -> tuple:
    """A batch's arrays (:func:`~core.data.atom_batch.featurize_molecules`) and each molecule's
    optional cells; the molecules' binary form is read once for both."""
    from core.data import mol_pickle
    from core.data.atom_batch import featurize_molecules

    decoded = mol_pickle.decode([m.ToBinary() for m in mols]) if extra_cells is not None and mols else None
    arrays = featurize_molecules(mols, smiles, decoded=decoded)
    return arrays, extra_cells(mols, decoded) if extra_cells is not None else []


def _extra_cells(extras: tuple[str, ...]) -> Callable | None:
    """``cells(mols, decoded=None)``: parsed molecules' cells of the report's optional columns
    ``extras``, one list per molecule, or None when there are none."""
    if not extras:
        return None
    from core.data.properties import molecule_properties

    properties = extras[0] not in (ALERTS_COLUMN, STANDARDISED)
    alerts = ALERTS_COLUMN in extras
    standardised = STANDARDISED in extras

    def cells(mols: list, decoded=None) -> list[list[str]]:
        table = molecule_properties(mols, decoded) if properties else None
        out = []
        for k, mol in enumerate(mols):
            row = property_cells(table[k]) if table is not None else []
            if alerts:
                from core.data.alerts import alerts_text, structural_alerts

                row.append(alerts_text(structural_alerts(mol)))
            if standardised:
                from rdkit import Chem

                row.append(Chem.MolToSmiles(mol))  # the standardised molecule, as read back
            out.append(row)
        return out

    return cells


def deferred_cells(smiles: list[str], columns: tuple[str, ...]) -> list[list[str]]:
    """The cells of optional columns for molecules given by the SMILES they were scored from.

    What the parsing workers compute (:func:`featurize_chunk`) when a report keeps every row,
    from the same molecule: :func:`~core.data.chem.parse_smiles` of the scored SMILES gives the
    molecule that was scored (:func:`core.io.molecules.read_row`).

    Args:
        smiles: the SMILES each row was scored from (standardised where the model standardises).
        columns: the optional columns (properties, alerts; not ``standardised_smiles``).

    Returns:
        One list of cells per SMILES (empty cells for one that does not parse).
    """
    from core.data.chem import parse_smiles

    cells = _extra_cells(columns)
    mols = [parse_smiles(text)[0] for text in smiles]
    parsed = [m for m in mols if m is not None]
    done = iter(cells(parsed) if cells is not None and parsed else [])
    return [[""] * len(columns) if mol is None or cells is None else next(done) for mol in mols]


_WORKER_VIEWS: dict = {}  # in a parsing worker: the views it scores (set by start_parsing_worker)


def start_parsing_worker(views: dict) -> None:
    """Set up a parsing worker (:func:`core.runtime.workers.init_parsing_worker`) that also scores
    ``views`` (:func:`worker_views`), with one BLAS thread: the workers share the cores.

    Args:
        views: view name -> fitted detector with ``score_molecules`` (empty: none).
    """
    global _WORKER_VIEWS
    init_parsing_worker()
    _WORKER_VIEWS = views
    if views:
        from threadpoolctl import threadpool_limits  # scikit-learn's dependency

        threadpool_limits(1)


def featurize_in_worker(rows: list[SourceRow], extras: tuple[str, ...] = ()) -> dict:
    """:func:`featurize_chunk` in a parsing worker, scoring the views it was started with, which
    then gives the chunk's freed memory back (see :func:`core.runtime.allocator.release_freed_memory`).

    Args:
        rows: the chunk's rows (or a part's).
        extras: the report's optional columns (as :func:`featurize_chunk` takes them).

    Returns:
        The chunk as :func:`featurize_chunk` gives it.
    """
    chunk = featurize_chunk(rows, extras, _WORKER_VIEWS)
    release_freed_memory()
    return chunk


def lost_chunk(rows: list[SourceRow], reason: str) -> dict:
    """The featurized form of a chunk whose every row is rejected (its worker died on it).

    Args:
        rows: the chunk's rows.
        reason: the reason each row is rejected with.

    Returns:
        A chunk as :func:`featurize_chunk` gives it, with no molecule and every row in ``rejects``.
    """
    chunk = featurize_chunk([])
    chunk["rejects"] = [(row.line, row.id, row.smiles, reason) for row in rows]
    chunk["rows_read"] = rows_hash(rows)
    return chunk
