"""Screening large SMILES libraries with a trained model, in bounded memory.

The library is streamed in chunks; worker processes parse and featurize molecules
(RDKit) while the main process scores the previous chunk (torch). Each scored chunk is
written, sorted by score, to its own temporary file at once, so an interrupted run keeps
every row already scored. The ranked report is an external k-way merge of those files
(rejected rows last), so memory does not grow with the library. Scoring a chunk is a pure
function of the model file and the chunk: the same code shards across machines.
"""
from __future__ import annotations

import bisect
import csv
import hashlib
import heapq
import itertools
import math
import multiprocessing as mp
import shutil
import sys
import time
import warnings
from collections import Counter, deque
from dataclasses import dataclass, field
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Protocol
from collections.abc import Callable, Iterator

import numpy as np

from core.errors import DataError, GLocalKDError, ParameterError, SlowPrecisionWarning, one_line
from core.data.chem import element_symbols
from core.data.graphset import GraphMeta, GraphSet, normalize_label
from core.io.load import molecule_rows
from core.io.molecules import SourceRow, nothing_read, read_row
from core.data.pvalues import bh_q_table
from core.io.report import (ALERTS_COLUMN, COLUMNS, DigestingStream, P_VALUE, Q_VALUE, STANDARDISED, STATUS,
                             VIEW_PREFIX, end_row, extra_columns, format_p, format_term, format_view_score,
                             header_extras, parse_end_row, property_cells, safe_cell)
from core.io.text import allow_large_csv_fields, read_lines
from core.runtime.allocator import release_freed_memory
from core.runtime.files import atomic_output
from core.runtime.scratch import make_scratch, remove_scratch
from core.runtime.signals import deferred_stops, stop_received, stop_signals_interrupt
from core.runtime.threads import usable_cpus
from core.runtime.workers import init_parsing_worker

MERGE_FAN_IN = 128


@dataclass
class ScreenSummary:
    """What a screening run did: rows read, scored and rejected, time, and whether it was stopped."""

    rows: int
    scored: int
    rejected: int
    seconds: float
    report: str
    stopped: bool = False
    last_line: int = 0
    nodes: int = 0
    interrupted: bool = False  # stopped by Ctrl+C, SIGTERM or SIGHUP (not by ``should_stop``)
    written: bool = True  # False when stopped before any row: an existing report is left as it was
    first_rejects: list[tuple[int, str]] = field(default_factory=list)  # (line, reason) of the first few
    p_counts: dict[str, int] = field(default_factory=dict)  # a calibrated model's p-values (text -> rows)
    calibration: int = 0  # the model's calibration graphs (the smallest p it can give is 1 / (calibration + 1))

    @property
    def molecules_per_second(self) -> float:
        """Rows read per second of the run (0 when no time was measured)."""
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def flagged_at(self, fdr: float) -> int | None:
        """Count the scored rows flagged at a false-discovery rate.

        Args:
            fdr: the false-discovery rate, e.g. 0.05.

        Returns:
            How many scored rows have q <= ``fdr`` (they are the report's first rows: q-values
            grow with rank), or None when the model gives no p-values.
        """
        if not self.p_counts:
            return None
        table = bh_q_table(self.p_counts)
        return sum(n for p, n in self.p_counts.items() if float(table[p]) <= fdr)


# ---------------------------------------------------------------------------- reading rows
def iter_smiles_rows(path: str | Path, smiles_column: str | None = None,
                     id_column: str | None = None) -> Iterator[SourceRow]:
    """Stream the rows of a molecule file, read exactly as :func:`core.io.load.load` reads them.

    One reader for loading, scoring and screening (:func:`core.io.load.molecule_rows`).

    Args:
        path: a SMILES list, CSV/TSV table or SDF file (optionally gzipped).
        smiles_column: a table's SMILES column (None: found by its common names).
        id_column: a table's id column (None: found, else line numbers).

    Returns:
        The rows, as they are read.

    Raises:
        DataError: the file does not exist, is not a molecule list, or its header lacks a column.
    """
    rows, _ = molecule_rows(path, smiles_column, id_column)
    return rows


FIRST_CHUNK = 256  # rows: parsed in about 0.1 s, so the first rows are scored soon after start


def chunks(rows: Iterator[SourceRow], size: int) -> Iterator[list[SourceRow]]:
    """Cut a stream of rows into consecutive chunks, the first ones smaller.

    The first chunk has FIRST_CHUNK rows (at most size/8), then each has twice as many up to
    ``size``. The scorer waits for the first chunk to be parsed, so a small first chunk gets it
    going at once instead of after seconds. Where the chunks are cut does not change the ranking
    of equal scores (ties keep input order), nor any score, except in the last bit when it
    leaves a batch of one or two molecules (other matrix kernels).

    Args:
        rows: the rows.
        size: the largest chunk, in rows.

    Yields:
        Lists of consecutive rows; the last may be shorter.
    """
    chunk: list[SourceRow] = []
    want = max(1, min(size >> 3, FIRST_CHUNK))
    for row in rows:
        chunk.append(row)
        if len(chunk) >= want:
            yield chunk
            chunk = []
            want = min(size, want * 2)
    if chunk:
        yield chunk


# ---------------------------------------------------------------------------- worker side
FEATURIZE_BATCH = 1024  # molecules featurized at once: RDKit molecules and index lists stay small
MIN_PART = 1024  # rows: a chunk is parsed in parts of at least this many (see part_count)


def part_count(rows: int, workers: int, min_part: int = MIN_PART) -> int:
    """How many parts a chunk is parsed in: one per parsing worker but one, of ``min_part`` rows or more.

    The scorer takes the chunks in order, so a chunk parsed by one worker keeps it waiting for
    that worker: on many cores, with a short run's few large chunks, most workers idle meanwhile
    (100,000 rows make 11 chunks). Parts parsed side by side end that wait. With two workers the
    chunk stays whole: the read-ahead is counted in chunks (one in flight per worker), so parts
    that end sooner leave the workers idle while the scorer works, and a part per worker cost
    5-15 % on two cores; one worker is left to the scoring process, which needs its core.
    ``python -m benchmarks.schedule_model`` plays this rule against whole chunks.

    Args:
        rows: the chunk's rows.
        workers: the parsing workers.
        min_part: the fewest rows a part has.

    Returns:
        The number of parts, at least 1.
    """
    return max(1, min(workers - 1, rows // max(1, min_part)))


def featurize_chunk(rows: list[SourceRow], extras: tuple[str, ...] = (), views: dict | None = None) -> dict:
    """Parse and featurize a chunk into compact arrays (runs in a worker process).

    The molecules are parsed one by one, their features made ``FEATURIZE_BATCH`` at a time
    (:func:`core.data.atom_batch.featurize_molecules`), so that a worker holds no more than
    that many RDKit molecules. The model's views that score molecules from these arrays alone
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
        ``extra``: each parsed row's cells of ``extras`` (empty without them), and with ``views``
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

    def featurize() -> None:
        arrays, cells = _featurize_batch(mols, smiles[len(smiles) - len(mols):], extra_cells)
        parts.append(arrays)
        extra.extend(cells)
        mols.clear()

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
        if len(mols) == FEATURIZE_BATCH:
            featurize()
    if mols or not parts:
        featurize()
    arrays = concatenate(parts)  # features are 0/1 bytes: a quarter of float32's to pass on
    chunk = {
        "lines": np.asarray(lines, dtype=np.int64), "positions": np.asarray(positions, dtype=np.int64), "ids": ids, "names": names, "labels": labels,
        "smiles": smiles, "atomic_numbers": arrays.atomic_numbers.astype(np.uint8),  # 0-118
        "counts": arrays.atom_counts, "edge_counts": arrays.bond_counts, "x": arrays.x, "edges": arrays.bonds,
        "rejects": rejects, "extra": extra, **({"inputs": inputs} if standardise else {}),
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


DEFERRED_BATCH = 256  # kept rows whose deferred cells one task computes


class _DeferredCells:
    """Fills in a report's deferred optional columns (:attr:`ChunkSettings.deferred`) as its rows
    are merged: the merged rows, in batches, go to ``workers`` parsing processes (a few batches
    in flight), which compute the cells from the scored SMILES at ``at``; each row comes back
    with that cell replaced by the cells, in order. A batch whose worker dies is done again one
    row at a time; a row that kills its worker gets empty cells."""

    def __init__(self, columns: tuple[str, ...], at: int, workers: int) -> None:
        self.columns, self.at, self.workers = columns, at, max(1, workers)
        self.pool: _Pool | None = None

    def __call__(self, rows: Iterator[list[str]]) -> Iterator[list[str]]:
        pending: deque = deque()
        for batch in iter(lambda: list(itertools.islice(rows, DEFERRED_BATCH)), []):
            pending.append((batch, self._submit([row[self.at] for row in batch])))
            while len(pending) > 2 * self.workers:
                yield from self._spliced(*pending.popleft())
        while pending:
            yield from self._spliced(*pending.popleft())

    def _submit(self, smiles: list[str]) -> Future:
        if self.pool is None:
            self.pool = _Pool(self.workers)
        return self.pool.call(deferred_cells, smiles, self.columns)

    def _spliced(self, batch: list[list[str]], future: Future) -> Iterator[list[str]]:
        try:
            cells = future.result()
        except BrokenProcessPool:
            cells = [self._alone(row[self.at]) for row in batch]
        for row, more in zip(batch, cells):
            row[self.at:self.at + 1] = more
            yield row

    def _alone(self, smiles: str) -> list[str]:
        """One row's cells, computed with nothing else in flight (after a worker died)."""
        try:
            return self._submit([smiles]).result()[0]
        except BrokenProcessPool:  # this row kills its worker
            self.pool.restart()
            return [""] * len(self.columns)

    def close(self) -> None:
        """Shut the workers down."""
        if self.pool is not None:
            self.pool.close(kill=True)
            self.pool = None


_WORKER_VIEWS: dict = {}  # in a parsing worker: the views it scores (set by _init_parsing_worker)


def _init_parsing_worker(views: dict) -> None:
    """Set up a parsing worker (:func:`core.runtime.workers.init_parsing_worker`) that also scores
    ``views`` (:func:`worker_views`), with one BLAS thread: the workers share the cores."""
    global _WORKER_VIEWS
    init_parsing_worker()
    _WORKER_VIEWS = views
    if views:
        from threadpoolctl import threadpool_limits  # scikit-learn's dependency

        threadpool_limits(1)


def _featurize_in_worker(rows: list[SourceRow], extras: tuple[str, ...] = ()) -> dict:
    """:func:`featurize_chunk` in a parsing worker, scoring the views it was started with, which
    then gives the chunk's freed memory back (see :func:`core.runtime.allocator.release_freed_memory`)."""
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
    return chunk


# ---------------------------------------------------------------------------- main side
def molecule_schema(model):
    """The feature schema of a model's GCN, to check that it reads molecules.

    Args:
        model: a fitted detector.

    Returns:
        GLocalKD's own schema, or a consensus's GLocalKD component's; None for detectors that
        read molecules without one.
    """
    if hasattr(model, "schema_"):
        return model.schema_
    glocalkd = getattr(model, "components_", {}).get("glocalkd")
    return None if glocalkd is None else glocalkd.schema_



def _scoring_threads(threads: int, busy_workers: int) -> int:
    """Threads for scoring the next batch: torch's ``threads`` less one per worker still parsing.

    Scoring with as many threads as cores while workers parse on the same cores is slow:
    torch's OpenMP threads spin at every barrier waiting for a thread the kernel has handed
    to a worker. Screening 200,000 MOSES rows on 2 cores with 2 workers ran at 1,591/s with
    2 scoring threads (778 µs of scoring-process CPU per molecule) and at 2,008/s with 1
    (452 µs). When the workers are idle (read-ahead full, or the input done) every thread
    scores. Scores are bitwise the same whatever the thread count (checked in the tests), so
    this timing-dependent choice never changes a result.
    """
    return max(1, threads - busy_workers)


def score_chunk(model, chunk: dict, batch_graphs: int, precision: str = "float32",
                 threads: Callable[[], int] | None = None, views: tuple[str, ...] = ()) -> tuple:
    """Score a featurized chunk.

    The views the parsing workers scored (the chunk's ``view_scores``) are taken as they are; a
    detector scores the chunk's arrays where it can (:func:`_packed_scores`), a consensus each of
    its other components so; any other detector (or component) scores the chunk's graphs.

    Args:
        model: the fitted detector.
        chunk: the chunk as :func:`featurize_chunk` gives it.
        batch_graphs: molecules per forward pass.
        precision: ``float32`` or ``bfloat16`` (the dense products of a GLocalKD model).
        threads: asked before each batch, says how many threads torch may use for it (None:
            leave torch's setting).
        views: a consensus's views whose raw scores to give too (:func:`report_views`; empty: none).

    Returns:
        (score, graph term, node term, node errors, node ptr) as arrays, one score per molecule;
        with ``views`` a sixth item, view name -> its float32 scores, each as
        ``model.components_[name].score`` gives them.
    """
    from core.data.scores import Scores

    node_ptr = np.concatenate([[0], np.cumsum(chunk["counts"])])
    done = {name: Scores.graph_only(values, node_ptr) for name, values in chunk.get("view_scores", {}).items()}
    s = done.get(getattr(model, "name", None)) if not hasattr(model, "scored_views") else None
    if s is None:
        s = _packed_scores(model, chunk, batch_graphs, precision, threads)
    if s is None and hasattr(model, "scored_views"):  # a consensus: the views it combines now
        combined = model.scored_views()
        known = {name: scores for name in combined
                 if (scores := done[name] if name in done else
                     _packed_scores(model.view(name), chunk, batch_graphs, precision, threads)) is not None}
        if len(known) == len(combined):
            s = model.combine_scores(known, node_ptr)
        else:
            s = model.score(chunk_graphs(chunk), known=known)
    elif s is None:
        s = model.score(chunk_graphs(chunk))
    if not views:
        return s.score, s.graph_term, s.node_term, s.node_errors, s.node_ptr
    raw = s.component_scores()  # the views it combined
    for name in views:  # the views the consensus does not combine now (its reserve views)
        if name not in raw:
            known = done[name] if name in done else _packed_scores(model.view(name), chunk, batch_graphs,
                                                                   precision, threads)
            raw[name] = (known if known is not None else model.view(name).score(chunk_graphs(chunk))).score
    return (s.score, s.graph_term, s.node_term, s.node_errors, s.node_ptr,
            {name: np.asarray(raw[name], dtype=np.float32) for name in views})


def _packed_scores(detector, chunk: dict, batch_graphs: int, precision: str,
                   threads: Callable[[], int] | None):
    """A single detector's :class:`~core.data.scores.Scores` of a chunk straight from its arrays
    (no graph objects: GLocalKD's forward passes, a graph kernel's labelled edges, the size
    baseline's counts), or None for a detector without such a path."""
    from core.data.scores import Scores

    if hasattr(detector, "score_arrays"):
        return _array_scores(detector, chunk, batch_graphs, precision, threads)
    node_ptr = np.concatenate([[0], np.cumsum(chunk["counts"])])
    if hasattr(detector, "score_labelled"):
        from core.detectors.graph_kernels import labelled_molecules

        labelled = labelled_molecules(chunk["x"], chunk["edges"], chunk["counts"], chunk["edge_counts"])
        return Scores.graph_only(detector.score_labelled(labelled), node_ptr)
    if hasattr(detector, "score_sizes"):
        return Scores.graph_only(detector.score_sizes(chunk["counts"], chunk["edge_counts"]), node_ptr)
    return None


def _array_scores(model, chunk: dict, batch_graphs: int, precision: str,
                  threads: Callable[[], int] | None):
    """A GLocalKD model's :class:`~core.data.scores.Scores` of a chunk, batch by batch, from its
    arrays (no graph objects)."""
    import torch

    from core.data.scores import Scores

    counts = chunk["counts"]
    node_ptr = np.concatenate([[0], np.cumsum(counts)])
    edge_ptr = np.concatenate([[0], np.cumsum(chunk["edge_counts"])])
    # bonds both ways, renumbered to the chunk's global node ids
    offsets = np.repeat(node_ptr[:-1], chunk["edge_counts"])
    e = chunk["edges"].astype(np.int64) + offsets[:, None]
    x_all = torch.from_numpy(chunk["x"][:, :model.schema_.dim])  # an older model reads fewer columns
    parts = []
    for lo in range(0, len(counts), batch_graphs):
        hi = min(lo + batch_graphs, len(counts))
        n_lo, n_hi = node_ptr[lo], node_ptr[hi]
        ee = e[edge_ptr[lo]:edge_ptr[hi]] - n_lo
        edge_index = torch.from_numpy(np.concatenate([ee, ee[:, ::-1]]).T.copy())
        x = x_all[n_lo:n_hi].float()
        wanted = threads() if threads is not None else 0
        if wanted and wanted != torch.get_num_threads():
            torch.set_num_threads(wanted)
        parts.append(model.score_arrays(x, edge_index, torch.from_numpy(counts[lo:hi]), precision=precision))
    return Scores.concat(parts)


def chunk_graphs(chunk: dict) -> GraphSet:
    """A featurized chunk as a :class:`GraphSet`, for detectors that score graphs rather than arrays.

    Args:
        chunk: the chunk as :func:`featurize_chunk` gives it.

    Returns:
        One graph per molecule (float32 atom features, bonds both ways), with its id and SMILES.
    """
    import torch
    from torch_geometric.data import Data

    node_ptr = np.concatenate([[0], np.cumsum(chunk["counts"])])
    edge_ptr = np.concatenate([[0], np.cumsum(chunk["edge_counts"])])
    graphs = []
    for i in range(len(chunk["counts"])):
        pairs = chunk["edges"][edge_ptr[i]:edge_ptr[i + 1]].astype(np.int64)
        edge_index = torch.from_numpy(np.concatenate([pairs, pairs[:, ::-1]]).T.copy())
        x = torch.from_numpy(chunk["x"][node_ptr[i]:node_ptr[i + 1]].astype(np.float32))
        graphs.append(Data(x=x, edge_index=edge_index, num_nodes=int(chunk["counts"][i])))
    meta = [GraphMeta(id=str(chunk["ids"][i]), smiles=chunk["smiles"][i]) for i in range(len(graphs))]
    return GraphSet(graphs=graphs, meta=meta, source="chunk", format="smiles",
                    standardised="inputs" in chunk)


# ---------------------------------------------------------------------------- chunk files
@dataclass
class ChunkJob:
    """A chunk of rows to parse and score: its number in the run, its rows, the input position of
    its first row over the whole run (ties in the report keep input order), and the shard's file
    name that its rejected rows name (empty when the run reads one file)."""

    index: int
    rows: list[SourceRow]
    first: int
    source: str = ""


@dataclass
class ChunkSettings:
    """How every executor turns a chunk into its sorted chunk file."""

    scratch: Path  # the run's folder for chunk files (shared by every worker of a cluster)
    top_k: int = 5  # atoms listed per row
    batch_graphs: int = 256
    precision: str = "float32"
    keep: int | None = None  # the best rows a chunk file keeps (--top); None: every row
    extras: tuple[str, ...] = ()  # the optional columns the parsing workers make (properties, alerts, standardised)
    # optional columns left to the final merge, made for the kept rows only (a report cut to its
    # best rows): the chunk files hold the SMILES each row was scored from in their place
    deferred: tuple[str, ...] = ()
    views: tuple[str, ...] = ()  # a consensus's views whose raw scores the rows carry (``view:`` columns)


@dataclass
class ChunkResult:
    """What one chunk gave: counts, its sorted chunk file (None when no row was scored), its
    rejected rows (line, id, text, reason) and its p-value counts (text -> rows)."""

    rows: int
    scored: int
    nodes: int
    last_line: int
    file: str | None
    rejects: list[tuple[int, str, str, str]]
    p_counts: dict[str, int]
    source: str = ""


def finish_chunk(model, job: ChunkJob, chunk: dict, settings: ChunkSettings,
                 threads: Callable[[], int] | None = None) -> ChunkResult:
    """Score a featurized chunk and write its sorted chunk file.

    The step every executor runs (the local one in this process, a cluster's on its workers).

    Args:
        model: the fitted detector.
        job: the chunk's job (its rows, number, input position and shard).
        chunk: the chunk as :func:`featurize_chunk` gives it.
        settings: the run's scratch folder, atoms per row, batch size, precision and rows kept.
        threads: torch's threads per batch, as :func:`score_chunk` takes it.

    Returns:
        The chunk's counts, its chunk file (None when no row was scored), its rejected rows and
        its p-value counts.
    """
    result = ChunkResult(rows=len(job.rows), scored=len(chunk["counts"]), nodes=int(chunk["counts"].sum()),
                         last_line=job.rows[-1].line if job.rows else 0, file=None,
                         rejects=list(chunk["rejects"]), p_counts={}, source=job.source)
    if result.scored:
        scored = score_chunk(model, chunk, settings.batch_graphs, settings.precision, threads, settings.views)
        p = model.p_values(scored[0]) if getattr(model, "is_calibrated", False) else None
        if p is not None:  # every scored row counts for the q-values, kept or not
            result.p_counts = dict(Counter(format_p(v) for v in p))
        target = settings.scratch / f"chunk{job.first:012d}.csv"  # one name per chunk: a task run twice leaves one
        write_sorted_chunk(target, chunk, scored, settings.top_k, p, first=job.first, keep=settings.keep,
                           scored_smiles=bool(settings.deferred), views=settings.views)
        result.file = str(target)
    return result


def write_sorted_chunk(path: Path, chunk: dict, scored: tuple, top_k: int,
                        p_values: np.ndarray | None = None, first: int = 0, keep: int | None = None,
                        scored_smiles: bool = False, views: tuple[str, ...] = ()) -> None:
    """Write a scored chunk's report rows in report order, with the merge key in front, atomically.

    The key is the score as written (highest first), then the row's input position, so that
    equal scores keep input order however the library was cut.

    Args:
        path: the chunk file.
        chunk: the chunk as :func:`featurize_chunk` gives it.
        scored: the chunk's scores as :func:`score_chunk` gives them.
        top_k: atoms listed per row.
        p_values: a calibrated model's p-values, which fill ``p_value`` (None: empty);
            ``q_value`` waits for the merge.
        first: the input position of the chunk's first row over the whole run.
        keep: write the best rows only (None: every row).
        scored_smiles: put the SMILES each row was scored from (standardised or not) before its
            optional cells, for the merge to compute the deferred columns from
            (:attr:`ChunkSettings.deferred`).
        views: write these views' raw scores (``scored``'s sixth item) among the optional cells,
            before ``standardised_smiles``.
    """
    score, graph_term, node_term, node_errors, node_ptr = scored[:5]
    view_cells = [[format_view_score(v) for v in scored[5][name]] for name in views]
    standardised = "inputs" in chunk  # the workers' last optional cell is then the standardised SMILES
    text = [f"{v:.6g}" for v in score]
    positions = first + chunk["positions"]
    order = np.lexsort((positions, -np.array([float(t) for t in text], dtype=np.float64)))[:keep]
    p_text = [""] * len(score) if p_values is None else [format_p(v) for v in p_values]
    inputs = chunk.get("inputs", chunk["smiles"])  # standardised: the rows' own SMILES in ``smiles``
    with atomic_output(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        for i in order:
            errors = node_errors[node_ptr[i]:node_ptr[i + 1]]
            top = np.argsort(-errors, kind="stable")[:top_k] if np.isfinite(errors).any() else np.zeros(0, dtype=np.int64)
            names = element_symbols(chunk["atomic_numbers"][node_ptr[i] + top])
            writer.writerow([text[i], int(positions[i]), chunk["ids"][i], chunk["names"][i], inputs[i],
                             text[i], format_term(graph_term[i]), format_term(node_term[i]),
                             int(node_ptr[i + 1] - node_ptr[i]), normalize_label(chunk["labels"][i]) or "",
                             ";".join(f"{s}{j}:{errors[j]:.4g}" for s, j in zip(names, top)), "ok", p_text[i], "",
                             *((chunk["smiles"][i],) if scored_smiles else ()),
                             *_optional_cells(chunk["extra"][i] if chunk.get("extra") else [],
                                              [cells[i] for cells in view_cells], standardised)])


def _optional_cells(worker_cells: list[str], view_cells: list[str], standardised: bool) -> list[str]:
    """A row's optional cells in report order: the workers' (properties, alerts), the views' raw
    scores, then the workers' ``standardised_smiles`` (last when ``standardised``)."""
    if not view_cells:
        return worker_cells
    cut = len(worker_cells) - 1 if standardised else len(worker_cells)
    return [*worker_cells[:cut], *view_cells, *worker_cells[cut:]]


# ---------------------------------------------------------------------------- the ranked report
# A chunk file's row: the merge key (score as written, input position), then the report's
# columns after ``rank``; the report's column c is the chunk row's c + 1.
KEY_COLUMNS = 2


def _merge_key(row: list[str]) -> tuple[float, int]:
    return -float(row[0]), int(row[1])


def _merge(files: list[Path], out, tmp: Path, q_values: dict[str, str] | None = None, limit: int | None = None,
           check: Callable[[list[str]], None] | None = None,
           fill: Callable[[Iterator[list[str]]], Iterator[list[str]]] | None = None) -> int:
    """K-way merge of sorted chunk files into the report stream ``out``, fanning in at most
    MERGE_FAN_IN files at once (each round cut to ``limit`` rows; the report's rows passed through
    ``fill`` last); returns the rows written."""
    level = 0
    while len(files) > MERGE_FAN_IN:
        merged = []
        for k in range(0, len(files), MERGE_FAN_IN):
            target = tmp / f"merge{level}_{k}.csv"
            _merge_group(files[k:k + MERGE_FAN_IN], target, False, limit=limit)
            for f in files[k:k + MERGE_FAN_IN]:
                f.unlink()
            merged.append(target)
        files, level = merged, level + 1
    return _merge_group(files, out, True, q_values=q_values, limit=limit, check=check, fill=fill)


def _merge_group(files: list[Path], out, with_rank: bool, q_values: dict[str, str] | None = None,
                 limit: int | None = None, check: Callable[[list[str]], None] | None = None,
                 fill: Callable[[Iterator[list[str]]], Iterator[list[str]]] | None = None) -> int:
    """Merge sorted chunk files (at most ``limit`` rows). Without ``with_rank`` into the chunk file
    ``out`` (a path); with it, as report rows into the stream ``out``: ranks numbered, each row's
    q-value from ``q_values`` (p-value text -> q-value text over the whole report), its deferred
    cells made by ``fill`` (:class:`_DeferredCells`), each row shown to ``check`` first. Returns
    the rows written."""
    allow_large_csv_fields()  # a cell may be longer than csv's default limit (131,072 characters)
    handles = [open(f, newline="", encoding="utf-8") for f in files]
    try:
        merged = heapq.merge(*(csv.reader(h) for h in handles), key=_merge_key)
        if limit is not None:
            merged = itertools.islice(merged, limit)
        if not with_rank:
            with atomic_output(out, "w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                n = 0
                for n, row in enumerate(merged, start=1):  # noqa: B007 (n: the rows written, after the loop)
                    writer.writerow(row)
            return n
        if fill is not None:
            merged = fill(merged)
        writer = csv.writer(out)
        q_values = q_values or {}
        rank = 0
        for rank, row in enumerate(merged, start=1):
            if check is not None:
                check(row)
            row[KEY_COLUMNS + Q_VALUE - 1] = q_values.get(row[KEY_COLUMNS + P_VALUE - 1], "")
            writer.writerow([str(rank)] + [safe_cell(c) for c in row[KEY_COLUMNS:]])
        return rank
    finally:
        for h in handles:
            h.close()


def write_ranked(sorted_files: list[Path], rejects_file: Path, out: Path, tmp: Path, rejected: int, model: str,
                  p_counts: dict[str, int] | None = None, limit: int | None = None,
                  check: Callable[[list[str]], None] | None = None, extras: tuple[str, ...] = (),
                  deferred: tuple[str, ...] = (), workers: int = 1) -> int:
    """Write the ranked report from sorted chunk files and the rejected rows.

    The report is the header, the k-way merge of the sorted chunk files with ranks, the rejected
    rows, and the end row last (the rows before it, the model's fingerprint, a digest of the
    bytes before it). Written through :func:`~core.runtime.files.atomic_output`: ``out`` is
    never half-written.

    Args:
        sorted_files: the chunk files, each sorted by its merge key (they may be deleted).
        rejects_file: the rejected rows, as report rows.
        out: the report to write.
        tmp: a folder for the merge's intermediate files.
        rejected: the number of rows in ``rejects_file``.
        model: the fingerprint of the model that scored the rows.
        p_counts: p-value text to rows over every scored row, for the q-values (None: no q-values).
        limit: keep the best rows only (None: every row).
        check: shown each merged row first (it raises to refuse one).
        extras: the optional columns after ``COLUMNS`` (:func:`core.io.report.extra_columns`).
        deferred: the first of ``extras`` that the chunk files leave to this merge
            (:attr:`ChunkSettings.deferred`): they are computed for the rows written only.
        workers: processes that compute the ``deferred`` cells.

    Returns:
        The rows written before the end row (its count).
    """
    q_values = bh_q_table(p_counts) if p_counts else None
    fill = _DeferredCells(deferred, KEY_COLUMNS + len(COLUMNS) - 1, workers) if deferred else None
    with atomic_output(out, "w", newline="", encoding="utf-8") as fh:
        stream = DigestingStream(fh)
        csv.writer(stream).writerow((*COLUMNS, *extras))
        try:
            kept = _merge(sorted_files, stream, tmp, q_values, limit, check, fill)
        finally:
            if fill is not None:
                fill.close()
        with open(rejects_file, newline="", encoding="utf-8") as rej:
            shutil.copyfileobj(rej, stream)
        csv.writer(fh).writerow(end_row(kept + rejected, model, stream.hash.hexdigest()[:16],
                                        len(COLUMNS) + len(extras)))
    return kept + rejected


def write_summary(summary: ScreenSummary, report: str | Path, **extra) -> Path:
    """Write ``REPORT.summary.json``, atomically: the counts of a run whose report keeps the best rows only.

    Args:
        summary: the run's summary.
        report: the report's path; the summary goes beside it.
        **extra: more fields for the file (``top``: the rows kept; libraries, settings ...).

    Returns:
        The summary file's path.
    """
    import json

    path = Path(str(report) + ".summary.json")
    data = {"rows": summary.rows, "scored": summary.scored, "rejected": summary.rejected,
            "kept": min(summary.scored, extra.get("top") or summary.scored), "nodes": summary.nodes,
            "seconds": round(summary.seconds, 3), "stopped": summary.stopped, **extra}
    with atomic_output(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=2) + "\n")
    return path


class _Overlap:
    """Finds one molecule in two shard reports: the same model gives it the same score, so its
    copies meet in the merge among the rows of that score, and its rejected rows name the same
    line with the same text. Rows are told apart by id (the line number where the file has no
    ids), name and SMILES; ``bounds[k]`` is the input position of shard k's first row."""

    def __init__(self, reports: list, bounds: list[int]) -> None:
        self.reports, self.bounds = reports, bounds
        self.score: str | None = None
        self.seen: dict[tuple, int] = {}
        self.rejects: dict[bytes, int] = {}

    def _refuse(self, ident: str, smiles: str, shard: int, other: int):
        raise DataError(f"the molecule {one_line(ident)!r} ({one_line(smiles)[:80]}) is also in "
                        f"{self.reports[other]}: shards that overlap (the same library screened twice, or with "
                        "two --chunk-size values?) are not merged", self.reports[shard])

    def __call__(self, row: list[str]) -> None:
        if row[0] != self.score:
            self.score, self.seen = row[0], {}
        shard = bisect.bisect_right(self.bounds, int(row[1])) - 1
        key = (row[KEY_COLUMNS], row[KEY_COLUMNS + 1], row[KEY_COLUMNS + 2])
        other = self.seen.setdefault(key, shard)
        if other != shard:
            self._refuse(key[0], key[2], shard, other)

    def reject(self, row: list[str], shard: int) -> None:
        key = hashlib.sha256("\x00".join(row[1:]).encode("utf-8", "surrogatepass")).digest()[:12]
        other = self.rejects.setdefault(key, shard)
        if other != shard:
            self._refuse(row[1], row[3], shard, other)


def merge_reports(reports: list[str | Path], out: str | Path) -> int:
    """Merge ranked reports of shards of one library, all scored with one model, into one ranked report.

    Ranks are renumbered, equal scores keep shard order, every shard's rejected rows come at the
    end and q-values are recomputed over the merged report. Memory stays flat: each shard is
    streamed and the shards are merged k-way. Reports cut to their best rows (``--top``) merge
    as any other.

    Args:
        reports: the shards' reports, in input order.
        out: the merged report to write (atomically).

    Returns:
        The number of rows written (before the end row).

    Raises:
        DataError: a file is not a report, or lacks its end row (:func:`core.io.report.end_row`)
            or has other rows than it announces (cut short or edited); reports of another model,
            the same report twice, shards that hold the same molecule, a score that is not a
            finite number and rows out of rank order are refused too.
    """
    from core.io.ranked_report import csv_records, is_report

    allow_large_csv_fields()
    out = Path(out)
    tmp = make_scratch(".glocalkd-merge-", out.parent)
    models: dict[str, str] = {}
    digests: dict[str, str] = {}
    p_counts: Counter = Counter()  # q-values are recomputed over the merged report
    position = rejected = 0
    extras: tuple[str, ...] | None = None  # every shard's optional columns: the first shard's
    bounds: list[int] = []
    overlap = _Overlap([str(r) for r in reports], bounds)
    try:
        sorted_files, rejects_file = [], tmp / "rejects.csv"
        with atomic_output(rejects_file, "w", newline="", encoding="utf-8") as rej:
            rej_writer = csv.writer(rej)
            for k, report in enumerate(reports):
                if not is_report(report):
                    raise DataError(f"not a ranked report (the header must be {','.join(COLUMNS)})", report, 1)
                target = tmp / f"shard{k}.csv"
                bounds.append(position)
                end = None
                with atomic_output(target, "w", newline="", encoding="utf-8") as fh:
                    writer = csv.writer(fh)
                    records = csv_records(read_lines(report))
                    found = header_extras(next(records)[1])
                    if extras is None:
                        extras = found
                    elif found != extras:
                        raise DataError(f"its optional columns ({','.join(found) or 'none'}) differ from the first "
                                        f"report's ({','.join(extras) or 'none'}): screen the shards with the same "
                                        "--properties, --alerts and --view-scores", report, 1)
                    width = len(COLUMNS) + len(extras)
                    last, count = math.inf, 0
                    for n, row in records:
                        if end is not None:
                            raise DataError("rows after the end-of-report row", report, n)
                        if len(row) != width:
                            raise DataError(f"{len(row)} fields where a report row has {width}", report, n)
                        end = parse_end_row(row)
                        if end is not None:
                            continue
                        count += 1
                        if row[STATUS] != "ok":
                            overlap.reject(row, k)
                            rej_writer.writerow(row)
                            rejected += 1
                            continue
                        try:
                            score = float(row[4])
                        except ValueError:
                            raise DataError(f"the score {row[4]!r} is not a number", report, n) from None
                        if not math.isfinite(score):
                            raise DataError(f"the score {row[4]!r} is not a finite number", report, n)
                        if score > last:
                            raise DataError("rows are not in rank order (was the report edited?)", report, n)
                        last = score
                        if row[P_VALUE]:
                            p_counts[row[P_VALUE]] += 1
                        writer.writerow([row[4], position] + row[1:])
                        position += 1
                if end is None:
                    raise DataError("no end-of-report row: the report is cut short (or was written by an older "
                                    "version; screen that shard again)", report)
                expected, model, digest = end
                if count != expected:
                    raise DataError(f"{count} rows where the end-of-report row says {expected}: the report was cut "
                                    "or edited", report)
                if models and model not in models:
                    first = next(iter(models.values()))
                    raise DataError(f"scored with another model (fingerprint {model}) than {first} "
                                    f"({next(iter(models))})", report)
                if digest in digests:
                    raise DataError(f"the same report as {digests[digest]}: a shard given twice", report)
                models.setdefault(model, str(report))
                digests[digest] = str(report)
                sorted_files.append(target)
        return write_ranked(sorted_files, rejects_file, out, tmp, rejected, next(iter(models), ""), p_counts,
                             check=overlap, extras=extras or ())
    finally:
        remove_scratch(tmp)


# ---------------------------------------------------------------------------- executors
class ChunkExecutor(Protocol):
    """Where chunks are parsed and scored: local worker processes (:class:`LocalExecutor`) or a
    Dask cluster (:class:`core.screening.cluster.DaskExecutor`). :func:`screen` submits chunks
    while there is room and takes their results in the order submitted."""

    def start(self, settings: ChunkSettings) -> None:
        """Get ready for a run (workers, threads) before the first chunk.

        Args:
            settings: how every chunk is turned into its sorted chunk file.
        """

    def room(self) -> bool:
        """Whether another chunk may be submitted now (the read-ahead is bounded).

        Returns:
            True when :meth:`submit` may be called.
        """

    def submit(self, job: ChunkJob) -> None:
        """Start parsing and scoring a chunk.

        Args:
            job: the chunk.
        """

    def busy(self) -> bool:
        """Whether chunks are submitted and their results not taken yet.

        Returns:
            True while :meth:`next_result` has a result to give.
        """

    def next_result(self) -> ChunkResult:
        """Wait for the result of the oldest chunk not taken, in the order submitted.

        Returns:
            That chunk's result.
        """

    def close(self, stopped: bool) -> None:
        """End the run: give the workers back, cancel what is left.

        Args:
            stopped: the run was stopped (chunks in flight are dropped).
        """


class _Pool:
    """The parsing workers: a process pool that notices a worker that died (killed, out of memory,
    a crash in RDKit) instead of waiting forever for its chunk, and can be started again."""

    def __init__(self, workers: int, views: dict | None = None) -> None:
        # fork where there is one (Linux, like torch's DataLoader workers): no re-import of the caller's
        # main module, which breaks under `python -` and in frozen apps; the workers touch no torch state
        self.context = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self.workers = workers
        self.views = views or {}  # the views the workers score (forked: not copied; spawned: pickled once each)
        self.executor = self._start()

    def _start(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.workers, mp_context=self.context, initializer=_init_parsing_worker,
                                   initargs=(self.views,))

    def submit(self, rows: list[SourceRow], extras: tuple[str, ...] = ()) -> Future:
        return self.call(_featurize_in_worker, rows, extras)

    def call(self, function: Callable, *args) -> Future:
        try:
            future = self.executor.submit(function, *args)
        except BrokenProcessPool:  # a worker died while idle; chunks in flight fail and are redone
            self.restart()
            future = self.executor.submit(function, *args)
        self._close_our_result_writer()
        return future

    def _close_our_result_writer(self) -> None:
        """Close this process's copy of the pipe the workers send results on (once they are
        forked, all at the first submit). Otherwise a worker killed while it writes a result leaves
        the pool's reader thread waiting forever for the rest of the message: this process still
        holds a writer, so the pipe never ends. Without it, the read fails and the pool breaks, as
        it should. Only with fork: other start methods start workers later, from that pipe."""
        if self.context.get_start_method() != "fork":
            return
        queue = getattr(self.executor, "_result_queue", None)  # no public handle on the pipe
        writer = getattr(queue, "_writer", None)
        if writer is not None and not writer.closed and getattr(self.executor, "_processes", None):
            writer.close()

    def restart(self) -> None:
        self.close(kill=True)
        self.executor = self._start()

    def close(self, kill: bool = False) -> None:
        """Shut the pool down; ``kill``: end the workers now rather than after their current chunk."""
        if kill:
            processes = list((getattr(self.executor, "_processes", None) or {}).values())  # no public handle
            for process in processes:
                if process.is_alive():
                    process.kill()
        self.executor.shutdown(wait=True, cancel_futures=True)


@dataclass
class _Pending:
    job: ChunkJob
    futures: list[Future]  # the chunk's parts (see join_parts)
    starts: list[int]  # each part's first row's place in the chunk
    alone: bool  # submitted with no other chunk in flight: a worker dying now died on this chunk


WORKER_DIED = "its parsing worker died on it (killed, out of memory, or a crash in RDKit)"


class LocalExecutor:
    """Chunks parsed and featurized by ``workers`` local processes (default: one per CPU core)
    and scored in this process, one chunk in flight per worker, each chunk cut into
    :func:`part_count` parts of at least ``min_part`` rows (None: ``MIN_PART``). A worker that
    dies loses no row: the chunks it held are parsed again one at a time, halved until the row
    that kills a worker is found and rejected."""

    def __init__(self, model, workers: int | None = None, min_part: int | None = None) -> None:
        self.model = model
        self.workers = max(1, workers if workers is not None else usable_cpus())
        self.min_part = min_part  # None: MIN_PART (see submit)
        self.pool: _Pool | None = None

    def start(self, settings: ChunkSettings) -> None:
        """Start the worker processes and note torch's thread count (restored by :meth:`close`).

        Args:
            settings: how every chunk is turned into its sorted chunk file.
        """
        import torch

        self.settings = settings
        self.torch_threads = torch.get_num_threads()
        self.pending: deque[_Pending] = deque()
        self.again: deque[ChunkJob] = deque()  # chunks a dead worker held, to parse one at a time
        self.waited = 0.0  # seconds this process waited for parsed chunks (the benchmarks report it)
        self.pool = _Pool(self.workers, worker_views(self.model, every=bool(settings.views)))

    def room(self) -> bool:
        """Whether a worker is free for another chunk.

        One chunk is in flight per worker, none more while a dead worker's chunks are parsed
        again one at a time.

        Returns:
            True when :meth:`submit` may be called.
        """
        # bounded read-ahead: one chunk in flight per worker. Each parsed chunk waits in this
        # process until scored; a chunk more per worker kept about 60 MB more here on full MOSES
        # (peak PSS 1,245 against 1,182 MB) at the same rate (6,855 and 6,871/s)
        return not self.again and len(self.pending) < self.workers and not (self.pending and self.pending[-1].alone)

    def submit(self, job: ChunkJob, alone: bool = False) -> None:
        """Send a chunk to the parsing workers, in :func:`part_count` parts (joined by :func:`join_parts`).

        Args:
            job: the chunk.
            alone: no other chunk is in flight (a dead worker's chunks, parsed again one at a time).
        """
        count = part_count(len(job.rows), self.workers, self.min_part or MIN_PART)
        starts = [len(job.rows) * k // count for k in range(count)]
        futures = [self.pool.submit(job.rows[start:end], self.settings.extras)
                   for start, end in zip(starts, starts[1:] + [len(job.rows)])]
        self.pending.append(_Pending(job, futures, starts, alone))

    def busy(self) -> bool:
        """Whether chunks are in flight or waiting to be parsed again.

        Returns:
            True while :meth:`next_result` has a result to give.
        """
        return bool(self.pending or self.again)

    def _scoring_threads(self) -> int:  # the cores the parsing workers leave free (see _scoring_threads)
        busy = sum(not f.done() for p in self.pending for f in p.futures)
        return _scoring_threads(self.torch_threads, min(self.workers, busy))

    def next_result(self) -> ChunkResult:
        """Take the oldest chunk's features and score it in this process.

        A chunk whose worker died is parsed again alone, then halved until the row that kills a
        worker is found; that row is rejected (``WORKER_DIED``).

        Returns:
            The chunk's result (:func:`finish_chunk`).
        """
        while True:
            if self.again and not self.pending:  # a suspect chunk is parsed with nothing else in flight
                self.submit(self.again.popleft(), alone=True)
            item = self.pending.popleft()
            try:
                waiting = time.perf_counter()
                parts = [future.result() for future in item.futures]
                self.waited += time.perf_counter() - waiting
                chunk = join_parts(parts, item.starts)
            except BrokenProcessPool:  # a worker died: every chunk in flight is lost with the pool
                lost = [item.job] + [p.job for p in self.pending]
                self.pending.clear()
                self.pool.restart()
                if not item.alone:  # parse them again, one at a time, to find the one that kills
                    self.again.extendleft(reversed(lost))
                    continue
                job = item.job
                if len(job.rows) > 1:  # this chunk killed its worker: halve it
                    half = len(job.rows) // 2
                    self.again.extendleft([ChunkJob(job.index, job.rows[half:], job.first + half, job.source),
                                           ChunkJob(job.index, job.rows[:half], job.first, job.source)])
                    continue
                chunk = lost_chunk(job.rows, WORKER_DIED)  # this row killed its worker
            return finish_chunk(self.model, item.job, chunk, self.settings, self._scoring_threads)

    def close(self, stopped: bool) -> None:
        """Shut the workers down and restore torch's thread count.

        Args:
            stopped: the run was stopped: the workers are killed rather than left to finish.
        """
        import torch

        if self.pool is not None:
            self.pool.close(kill=stopped or bool(self.pending))
        torch.set_num_threads(self.torch_threads)


# ---------------------------------------------------------------------------- the run
def _jobs(sources: list[tuple[str, Iterator[SourceRow]]], chunk_size: int) -> Iterator[ChunkJob]:
    """The chunks of every source's rows, numbered, each source cut as :func:`chunks` cuts it."""
    index = position = 0
    for label, rows in sources:
        for chunk in chunks(rows, chunk_size):
            yield ChunkJob(index, chunk, position, label)
            index += 1
            position += len(chunk)


def _source_rows(paths: list[Path], smiles_column, id_column, label_column) -> tuple[list, str]:
    """(shard label, rows) of each file, opened one after the other (the first at once, so that a
    bad header fails before any work), and the first file's hint for a file of rejected rows."""
    rows, hint = molecule_rows(paths[0], smiles_column, id_column, label_column)

    def later(path: Path) -> Iterator[SourceRow]:
        yield from molecule_rows(path, smiles_column, id_column, label_column)[0]

    def label(path: Path) -> str:
        return path.name if len(paths) > 1 else ""

    return [(label(paths[0]), rows)] + [(label(p), later(p)) for p in paths[1:]], hint


def deferred_columns(extras: tuple[str, ...], keep: int | None) -> tuple[str, ...]:
    """The optional columns a run leaves to its final merge: with ``--top`` the properties and
    alerts are computed for the rows kept only (the same cells as the parsing workers would
    write, for a fraction of the work); ``standardised_smiles`` stays with the workers, which
    standardise to score, and the views' raw scores with the scoring.

    Args:
        extras: the report's optional columns (:func:`core.io.report.extra_columns`).
        keep: the best rows the report keeps (None: every row).

    Returns:
        The first of ``extras`` that the merge computes (none when every row is kept).
    """
    return tuple(c for c in extras if c != STANDARDISED and not c.startswith(VIEW_PREFIX)) if keep is not None else ()


def screen(model, path: str | Path | list, report: str | Path, chunk_size: int = 20000, workers: int | None = None,
           smiles_column: str | None = None, id_column: str | None = None, top_k: int = 5,
           batch_graphs: int = 256, on_progress: Callable[[int, int], None] | None = None,
           should_stop: Callable[[], bool] | None = None, precision: str = "float32",
           label_column: str | None = None, top: int | None = None, scratch: str | Path | None = None,
           executor: ChunkExecutor | None = None, summary_extra: dict | None = None, properties: bool = False,
           alerts: bool = False, view_scores: bool = False) -> ScreenSummary:
    """Score every molecule of a library with a model and write the ranked report, in bounded memory.

    The one streaming path of ``glocalkd score``, ``glocalkd screen`` (on this machine or on a
    cluster), the app and scripts. The report depends neither on the executor nor on
    ``chunk_size`` (equal scores keep input order). A stopped run still writes the ranked report
    of every row scored so far. Ctrl+C, SIGTERM and SIGHUP stop the run at once the same way
    (the report holds the chunks finished, in input order), and are held off while the report
    is written.

    Args:
        model: the fitted detector; one with a feature schema must have been trained on molecules.
        path: a SMILES list, table or SDF file, or a list of files (shards of one library, read
            in turn; rejected rows then name their file).
        report: the ranked CSV report to write.
        chunk_size: the largest chunk, in rows (the first chunks are smaller, see :func:`chunks`).
        workers: local parsing processes (None: one per usable CPU core).
        smiles_column: a table's SMILES column (None: found by its common names).
        id_column: a table's id column, or an SDF data field.
        top_k: atoms listed per row (their node errors).
        batch_graphs: molecules per forward pass.
        on_progress: called after each chunk with (rows read, rows scored).
        should_stop: polled between chunks; True stops the run (``stopped`` is True and
            ``last_line`` says where it got to).
        precision: ``float32``, or ``bfloat16`` to run a GLocalKD model's dense products in
            bfloat16 (see :meth:`GLocalKD.score_arrays`; a warning when the device is slow at it).
        label_column: a table's label column, or an SDF data field.
        top: keep the ``top`` best rows (every rejected row is still listed) and write
            ``REPORT.summary.json`` with the counts (None: every row).
        scratch: the folder for the chunk files (None: the report's folder).
        executor: parses and scores the chunks (None: :class:`LocalExecutor` with ``workers``
            processes; a Dask cluster: :func:`core.screening.cluster.screen_on_cluster`).
        summary_extra: more fields for ``REPORT.summary.json``.
        properties: add the chemist's properties (``mw``, ``clogp``, ...) after the usual columns
            (:func:`core.io.report.extra_columns`), computed by the parsing workers; with ``top``,
            by the final merge for the rows kept only (the same cells, far less work).
        alerts: add the ``alerts`` column (the structural alerts), computed as ``properties`` are.
        view_scores: add each view's raw score (``view:<name>`` columns, every view of a
            consensus with Fisher's rule, :func:`report_views`), which a review re-weighs without
            scoring the rows again; the reserve views are then scored too (the parsing workers
            score them). The other columns are the same with or without.

    Returns:
        What the run did: rows read, scored and rejected, seconds, whether it was stopped or
        ``interrupted``, and ``written`` False when it stopped before any row (an existing report
        is then left as it was).

    Raises:
        DataError: the model was not trained on molecules, a file cannot be read, or (unless the
            run was stopped) no data row or no molecule was read; nothing is written.
        GLocalKDError: a setting is out of range (below 1, an unknown precision, ``bfloat16``
            for a model that is not GLocalKD) or no file is given.
        ParameterError: ``view_scores`` for a model that is not a consensus with Fisher's rule.
    """
    views = report_views(model) if view_scores else ()
    schema = molecule_schema(model)
    if schema is not None and schema.mode != "atom":
        raise DataError("screening needs a model trained on molecules (SMILES or SDF)", path)
    from core.runtime.device import bfloat16_is_fast, matmul_dtype

    matmul_dtype(precision)  # a bad precision fails here, before any worker starts
    if precision != "float32" and not hasattr(model, "score_arrays"):
        raise GLocalKDError(f"--precision {precision} is for GLocalKD models; this is a {type(model).__name__}")
    if precision == "bfloat16" and not bfloat16_is_fast(model.device_):
        warnings.warn(f"this {model.device_.type.upper()} has no bfloat16 instructions (AVX-512 or AMX on a "
                      "CPU), so bfloat16 products run far slower than float32 here (about 50x for a "
                      "512-wide product on an AVX2 CPU); float32 is the faster choice", SlowPrecisionWarning,
                      stacklevel=2)
    for name, value in (("chunk_size", chunk_size), ("batch_graphs", batch_graphs), ("workers", workers),
                        ("top", top)):
        if value is not None and value < 1:
            raise ParameterError(f"{{{name}}} must be at least 1, not {value}", name)
    paths = [Path(p) for p in path] if isinstance(path, (list, tuple)) else [Path(path)]
    if not paths:
        raise GLocalKDError("no library file given")
    where = str(paths[0]) if len(paths) == 1 else f"{paths[0]} (and {len(paths) - 1} more)"
    sources, hint = _source_rows(paths, smiles_column, id_column, label_column)  # a bad header fails here
    model_id = model.fingerprint()
    calibration = len(model.calibration_scores_) if getattr(model, "is_calibrated", False) else 0
    keep = None if top is None else min(top, sys.maxsize)  # more than any count: every row
    executor = executor if executor is not None else LocalExecutor(model, workers)
    start = time.perf_counter()
    report = Path(report)
    tmp = make_scratch(".screen-", scratch or report.parent or ".")
    extras = extra_columns(properties, alerts, bool(getattr(model, "standardises", False)), views)  # the model's choice
    deferred = deferred_columns(extras, keep)
    made = tuple(c for c in extras[len(deferred):] if not c.startswith(VIEW_PREFIX))  # by the parsing workers
    settings = ChunkSettings(tmp, top_k, batch_graphs, precision, keep, made, deferred, views)
    rejects_file = tmp / "rejects.csv"
    chunk_files: list[Path] = []
    p_counts: Counter = Counter()  # p-value text -> rows: the q-values need the whole report
    rows = scored_rows = rejected = last_line = nodes = 0
    first_rejects: list[tuple[int, str]] = []
    stopped = interrupted = written = False
    try:
        with stop_signals_interrupt(), atomic_output(rejects_file, "w", newline="", encoding="utf-8") as rej_fh:
            rej_writer = csv.writer(rej_fh)
            jobs = _jobs(sources, chunk_size)
            exhausted = started = False
            try:
                executor.start(settings)
                started = True
                while True:
                    if stop_received():  # a SIGTERM whose KeyboardInterrupt was lost (see stop_received)
                        raise KeyboardInterrupt
                    while not stopped and not exhausted and executor.room():
                        if should_stop is not None and should_stop():
                            stopped = True
                            break
                        job = next(jobs, None)
                        if job is None:
                            exhausted = True
                            break
                        executor.submit(job)
                    if not executor.busy():
                        break
                    result = executor.next_result()
                    if result.file is not None:
                        chunk_files.append(Path(result.file))
                    p_counts.update(result.p_counts)
                    at = f"{result.source} line" if result.source else "line"
                    for line, ident, smi, reason in result.rejects:
                        rej_writer.writerow(["", safe_cell(ident), "", safe_cell(smi), "", "", "", "", "", "",
                                             safe_cell(f"rejected: {at} {line}: {reason}"), "", "",
                                             *[""] * len(extras)])
                        if len(first_rejects) < 5:
                            first_rejects.append((line, reason))
                    rows += result.rows
                    scored_rows += result.scored
                    nodes += result.nodes
                    rejected += len(result.rejects)
                    last_line = max(last_line, result.last_line)
                    result = None
                    release_freed_memory()  # the chunk's arrays would otherwise stay in this process's heap
                    if on_progress is not None:
                        on_progress(rows, scored_rows)
                    if should_stop is not None and should_stop():
                        stopped = True
            except KeyboardInterrupt:  # Ctrl+C, SIGTERM, SIGHUP: keep every chunk already taken
                stopped = interrupted = True
            finally:
                if started:
                    executor.close(stopped)
        if not stopped:
            if rows == 0:
                raise DataError("file is empty (no data rows)", where)
            if scored_rows == 0:
                raise nothing_read(where, rows, first_rejects[0][1], first_rejects[0][0], hint)
        if rows:  # a run stopped before its first row leaves an existing report as it was
            with deferred_stops() as held:  # a Ctrl+C now would lose every row scored
                batches = -(-min(keep or 0, scored_rows) // DEFERRED_BATCH)  # of deferred cells: a worker each at most
                write_ranked(chunk_files, rejects_file, report, tmp, rejected, model_id, p_counts, limit=keep,
                             extras=extras, deferred=deferred,
                             workers=min(getattr(executor, "workers", usable_cpus()), max(1, batches)))
                summary = ScreenSummary(rows=rows, scored=scored_rows, rejected=rejected,
                                        seconds=time.perf_counter() - start, report=str(report), stopped=stopped,
                                        last_line=last_line, nodes=nodes, interrupted=interrupted, written=True,
                                        first_rejects=first_rejects, p_counts=dict(p_counts),
                                        calibration=calibration)
                if top is not None:
                    write_summary(summary, report, top=top, libraries=[str(p) for p in paths],
                                  **(summary_extra or {}))
            summary.seconds = time.perf_counter() - start
            if held:
                summary.stopped = summary.interrupted = True
            return summary
    finally:
        remove_scratch(tmp)
    return ScreenSummary(rows=rows, scored=scored_rows, rejected=rejected, seconds=time.perf_counter() - start,
                         report=str(report), stopped=stopped, last_line=last_line, nodes=nodes,
                         interrupted=interrupted, written=written, first_rejects=first_rejects,
                         p_counts=dict(p_counts), calibration=calibration)

