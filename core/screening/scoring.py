"""Screening's scoring side: score a featurized chunk and write it, sorted, to its chunk file.

The step every executor runs after parsing (the local one in the main process, a cluster's on
its workers): the network and the views not scored by the parsing workers score the chunk's
arrays, and the rows are written in report order with their merge key in front.
"""
from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.data.chem import element_symbols
from core.detectors.conformal import model_p_values
from core.data.graphset import GraphMeta, GraphSet, normalize_label
from core.data.scores import score_text, written_scores
from core.io.molecules import SourceRow
from core.io.report import format_p, format_term, format_view_score
from core.runtime.files import atomic_output


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


def scoring_threads(threads: int, busy_workers: int) -> int:
    """Threads for scoring the next batch: torch's ``threads`` less one per worker still parsing.

    Scoring with as many threads as cores while workers parse on the same cores is slow:
    torch's OpenMP threads spin at every barrier waiting for a thread the kernel has handed
    to a worker. Screening 200,000 MOSES rows on 2 cores with 2 workers ran at 1,591/s with
    2 scoring threads (778 µs of scoring-process CPU per molecule) and at 2,008/s with 1
    (452 µs). When the workers are idle (read-ahead full, or the input done) every thread
    scores. Scores are bitwise the same whatever the thread count (checked in the tests), so
    this timing-dependent choice never changes a result.

    Args:
        threads: torch's thread count for this process.
        busy_workers: parsing workers still at work.

    Returns:
        The threads for the next batch, at least 1.
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
    rows_read: int = 0  # its rows' hash as read (core.io.molecules.rows_hash): a stopped run's end row sums them


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
                         rejects=list(chunk["rejects"]), p_counts={}, source=job.source, rows_read=chunk["rows_read"])
    if result.scored:
        scored = score_chunk(model, chunk, settings.batch_graphs, settings.precision, threads, settings.views)
        p = model_p_values(model, scored[0])
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
    text = [score_text(v) for v in score.tolist()]
    positions = first + chunk["positions"]
    order = np.lexsort((positions, -written_scores(score)))[:keep]  # the rule of Scores.ranking
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
