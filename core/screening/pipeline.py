"""Screening large SMILES libraries with a trained model, in bounded memory.

The library is streamed in chunks; worker processes parse and featurize molecules
(RDKit) while the main process scores the previous chunk (torch). Each scored chunk is
written, sorted by score, to its own temporary file at once, so an interrupted run keeps
every row already scored. The ranked report is an external k-way merge of those files
(rejected rows last), so memory does not grow with the library. Scoring a chunk is a pure
function of the model file and the chunk: the same code shards across machines.
"""
from __future__ import annotations

import csv
import heapq
import math
import multiprocessing as mp
import os
import shutil
import tempfile
import time
import warnings
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from core.errors import DataError, GLocalKDError, SlowPrecisionWarning
from core.io.text import read_lines, strip_compression
from core.io.report import COLUMNS, safe_cell

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

    @property
    def molecules_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


# ---------------------------------------------------------------------------- reading rows
def iter_smiles_rows(path: str | Path, smiles_column: str | None = None,
                     id_column: str | None = None) -> Iterator[tuple[int, str, str]]:
    """Stream (line number, id, SMILES) from a .smi list or a CSV/TSV table (optionally gzipped)."""
    from core.io.load import MOLECULE_TABLE_SUFFIXES, SMILES_SUFFIXES
    from core.io.columns import table_columns

    path = Path(path)
    suffix = Path(strip_compression(path.name)).suffix.lower()
    if suffix in SMILES_SUFFIXES:
        first = True
        for number, line in read_lines(path):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = text.split(None, 1)
            if first and parts[0].lower() in ("smiles", "smi"):
                first = False
                continue
            first = False
            yield number, (parts[1].strip() if len(parts) > 1 else str(number)), parts[0]
        return
    if suffix not in MOLECULE_TABLE_SUFFIXES:
        raise DataError("screening reads SMILES lists (.smi) and tables (.csv, .tsv, .tab)", path)
    cols = table_columns(path)
    smiles = smiles_column or cols.smiles
    ident = id_column or cols.id
    if smiles not in cols.header:
        raise DataError(f"no SMILES column found (columns: {', '.join(cols.header)})", path, 1)
    if ident is not None and ident not in cols.header:
        raise DataError(f"no id column named {ident!r}", path, 1)
    s_col = cols.header.index(smiles)
    i_col = cols.header.index(ident) if ident is not None else None
    delimiter = _delimiter(path)
    header_seen = False
    for number, line in read_lines(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not header_seen:
            header_seen = True
            continue
        row = next(csv.reader([line], delimiter=delimiter)) if '"' in line else line.split(delimiter)
        smi = row[s_col] if s_col < len(row) else ""
        yield number, (row[i_col].strip() if i_col is not None and i_col < len(row) else str(number)), smi


def _delimiter(path: Path) -> str:
    from core.io.text import sniff_delimiter

    for _, line in read_lines(path):
        if line.strip() and not line.lstrip().startswith("#"):
            return sniff_delimiter(line, Path(strip_compression(path.name)).suffix.lower())
    return ","


def _chunks(rows: Iterator[tuple[int, str, str]], size: int) -> Iterator[list[tuple[int, str, str]]]:
    """Consecutive rows in chunks of ``size``, the first ones smaller (size/8, size/4, size/2):
    the scorer waits for the first chunk to be parsed, so a small first chunk gets it going in a
    second or so instead of about ten. Where the chunks are cut does not change the ranking of
    equal scores (ties keep input order), nor any score, except in the last bit when it leaves
    a batch of one or two molecules (other matrix kernels)."""
    chunk: list[tuple[int, str, str]] = []
    shift = 3
    for row in rows:
        chunk.append(row)
        if len(chunk) >= max(1, size >> shift):
            yield chunk
            chunk = []
            shift = max(0, shift - 1)
    if chunk:
        yield chunk


# ---------------------------------------------------------------------------- worker side
def featurize_chunk(rows: list[tuple[int, str, str]]) -> dict:
    """Parse and featurize a chunk into compact arrays (runs in a worker process)."""
    from core.data.chem import ATOM_FEATURE_DIM, element_symbols, mol_arrays, parse_smiles

    lines, ids, smiles, counts, edge_counts, symbols = [], [], [], [], [], []
    xs, edges, rejects = [], [], []
    for line, ident, smi in rows:
        mol, reason = parse_smiles(smi)
        if mol is None:
            rejects.append((line, ident, smi, reason))
            continue
        x, pairs, z = mol_arrays(mol, dtype=np.uint8)  # features are 0/1: a quarter of the bytes to pass on
        symbols.append(" ".join(element_symbols(z)))
        n_bonds = len(pairs)
        xs.append(x)
        edges.append(pairs)
        lines.append(line)
        ids.append(ident)
        smiles.append(smi.strip())
        counts.append(x.shape[0])
        edge_counts.append(n_bonds)
    return {
        "lines": np.asarray(lines, dtype=np.int64), "ids": ids, "smiles": smiles, "symbols": symbols,
        "counts": np.asarray(counts, dtype=np.int64), "edge_counts": np.asarray(edge_counts, dtype=np.int64),
        "x": np.concatenate(xs) if xs else np.zeros((0, ATOM_FEATURE_DIM), dtype=np.uint8),
        "edges": np.concatenate(edges) if edges else np.zeros((0, 2), dtype=np.int32),
        "rejects": rejects,
    }


# ---------------------------------------------------------------------------- main side
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


def _score_chunk(model, chunk: dict, batch_graphs: int, precision: str = "float32",
                 threads: Callable[[], int] | None = None) -> tuple[np.ndarray, ...]:
    """Scores of a featurized chunk: (score, graph term, node term, node errors, node ptr).
    ``threads()``, asked before each batch, says how many threads torch may use for it."""
    import torch

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
    from core.data.scores import Scores

    s = Scores.concat(parts)
    return s.score, s.graph_term, s.node_term, s.node_errors, s.node_ptr


def _write_sorted_chunk(path: Path, chunk: dict, scored: tuple[np.ndarray, ...], top_k: int) -> None:
    score, graph_term, node_term, node_errors, node_ptr = scored
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        for i in np.argsort(-score, kind="stable"):
            errors = node_errors[node_ptr[i]:node_ptr[i + 1]]
            names = chunk["symbols"][i].split(" ")
            top = np.argsort(-errors, kind="stable")[:top_k]
            writer.writerow([f"{score[i]:.6g}", chunk["ids"][i], "", chunk["smiles"][i], f"{score[i]:.6g}",
                             f"{graph_term[i]:.6g}", f"{node_term[i]:.6g}", int(node_ptr[i + 1] - node_ptr[i]), "",
                             ";".join(f"{names[j]}{j}:{errors[j]:.4g}" for j in top), "ok"])


def _merge(files: list[Path], out: Path, tmp: Path) -> None:
    """K-way merge of files sorted by descending first column, fanning in at most MERGE_FAN_IN at once."""
    level = 0
    while len(files) > MERGE_FAN_IN:
        merged = []
        for k in range(0, len(files), MERGE_FAN_IN):
            target = tmp / f"merge{level}_{k}.csv"
            _merge_group(files[k:k + MERGE_FAN_IN], target, with_rank=False)
            for f in files[k:k + MERGE_FAN_IN]:
                f.unlink()
            merged.append(target)
        files, level = merged, level + 1
    _merge_group(files, out, with_rank=True)


def _merge_group(files: list[Path], out: Path, with_rank: bool) -> None:
    handles = [open(f, newline="", encoding="utf-8") for f in files]
    try:
        streams = [csv.reader(h) for h in handles]
        merged = heapq.merge(*streams, key=lambda row: -float(row[0]))
        with open(out, "a" if with_rank else "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            for rank, row in enumerate(merged, start=1):
                if with_rank:
                    writer.writerow([str(rank)] + [safe_cell(c) for c in row[1:]])
                else:
                    writer.writerow(row)
    finally:
        for h in handles:
            h.close()


def _write_ranked(sorted_files: list[Path], rejects_file: Path, out: Path, tmp: Path) -> None:
    """The ranked report: header, the k-way merge of the sorted files with ranks, the rejected rows
    last; written in ``tmp`` and renamed into place, so ``out`` is never half-written."""
    partial = tmp / "report.csv"
    with open(partial, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerow(COLUMNS)
    _merge(sorted_files, partial, tmp)
    with open(partial, "a", newline="", encoding="utf-8") as dst, open(rejects_file, encoding="utf-8") as rej:
        shutil.copyfileobj(rej, dst)
    os.replace(partial, out)


def merge_reports(reports: list[str | Path], out: str | Path) -> int:
    """Merge ranked reports of shards of one library, all scored with one model file, into one
    ranked report (ranks renumbered; every shard's rejected rows at the end). Memory stays flat:
    each shard is streamed and the shards are merged k-way. Returns the number of rows written.
    """
    from core.io.ranked_report import is_report

    out = Path(out)
    tmp = Path(tempfile.mkdtemp(prefix=".glocalkd-merge-", dir=out.parent))
    rows = 0
    try:
        sorted_files, rejects_file = [], tmp / "rejects.csv"
        with open(rejects_file, "w", newline="", encoding="utf-8") as rej:
            rej_writer = csv.writer(rej)
            for k, report in enumerate(reports):
                if not is_report(report):
                    raise DataError(f"not a ranked report (the header must be {','.join(COLUMNS)})", report, 1)
                target = tmp / f"shard{k}.csv"
                with open(target, "w", newline="", encoding="utf-8") as fh:
                    writer = csv.writer(fh)
                    lines = (line for _, line in read_lines(report))
                    next(lines)
                    last = math.inf
                    for n, row in enumerate(csv.reader(lines), start=2):
                        if len(row) != len(COLUMNS):
                            raise DataError(f"{len(row)} fields where a report row has {len(COLUMNS)}", report, n)
                        rows += 1
                        if row[10] != "ok":
                            rej_writer.writerow(row)
                            continue
                        try:
                            score = float(row[4])
                        except ValueError:
                            raise DataError(f"the score {row[4]!r} is not a number", report, n) from None
                        if score > last:
                            raise DataError("rows are not in rank order (was the report edited?)", report, n)
                        last = score
                        writer.writerow([row[4]] + row[1:])
                sorted_files.append(target)
        _write_ranked(sorted_files, rejects_file, out, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def screen(model, path: str | Path, report: str | Path, chunk_size: int = 20000, workers: int | None = None,
           smiles_column: str | None = None, id_column: str | None = None, top_k: int = 5,
           batch_graphs: int = 256, on_progress: Callable[[int, int], None] | None = None,
           should_stop: Callable[[], bool] | None = None, precision: str = "float32") -> ScreenSummary:
    """Score every SMILES of ``path`` with ``model`` and write the ranked report to ``report``.

    ``workers`` processes parse and featurize (default: one per CPU core, at least one);
    ``on_progress(rows read, rows scored)`` is called after each chunk; ``should_stop`` is
    polled between chunks: a stopped run still writes the ranked report of every row
    scored so far (``stopped`` is True and ``last_line`` says where it got to). ``precision``
    ``bfloat16`` runs the dense products in bfloat16 (see :meth:`GLocalKD.score_arrays`).
    """
    if model.schema_.mode != "atom":
        raise DataError("screening needs a model trained on molecules (SMILES or SDF)", path)
    from core.runtime.device import bfloat16_is_fast, matmul_dtype

    matmul_dtype(precision)  # a bad precision fails here, before any worker starts
    if precision == "bfloat16" and not bfloat16_is_fast(model.device_):
        warnings.warn(f"this {model.device_.type.upper()} has no bfloat16 instructions (AVX-512 or AMX on a "
                      "CPU), so bfloat16 products run far slower than float32 here (about 50x for a "
                      "512-wide product on an AVX2 CPU); float32 is the faster choice", SlowPrecisionWarning,
                      stacklevel=2)
    if chunk_size < 1 or batch_graphs < 1 or (workers is not None and workers < 1):
        raise GLocalKDError(f"chunk size, batch size and workers must be at least 1 (got {chunk_size}, "
                            f"{batch_graphs}, {workers})")
    import torch

    start = time.perf_counter()
    report = Path(report)
    workers = max(1, workers if workers is not None else (os.cpu_count() or 2))
    torch_threads = torch.get_num_threads()
    tmp = Path(tempfile.mkdtemp(prefix=".screen-", dir=report.parent or "."))
    rejects_file = tmp / "rejects.csv"
    chunk_files: list[Path] = []
    rows = scored_rows = rejected = last_line = nodes = 0
    stopped = False
    try:
        # fork where there is one (Linux, like torch's DataLoader workers): no re-import of the caller's
        # main module, which breaks under `python -` and in frozen apps; the workers touch no torch state
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        with ctx.Pool(workers) as pool, open(rejects_file, "w", newline="", encoding="utf-8") as rej_fh:
            rej_writer = csv.writer(rej_fh)
            pending: deque = deque()

            def scoring_threads() -> int:  # the cores the parsing workers leave free (see _scoring_threads)
                return _scoring_threads(torch_threads, sum(not result.ready() for _, _, result in pending))

            chunks = _chunks(iter_smiles_rows(path, smiles_column, id_column), chunk_size)
            exhausted = False
            try:
                while True:
                    while not exhausted and not stopped and len(pending) < workers + 1:  # bounded read-ahead
                        if should_stop is not None and should_stop():
                            stopped = True
                            break
                        nxt = next(chunks, None)
                        if nxt is None:
                            exhausted = True
                            break
                        pending.append((nxt[-1][0], len(nxt), pool.apply_async(featurize_chunk, (nxt,))))
                    if not pending:
                        break
                    chunk_last, n_rows, result = pending.popleft()
                    chunk = result.get()
                    if len(chunk["counts"]):
                        target = tmp / f"chunk{len(chunk_files):06d}.csv"
                        _write_sorted_chunk(target, chunk, _score_chunk(model, chunk, batch_graphs, precision,
                                                                             scoring_threads), top_k)
                        chunk_files.append(target)
                    for line, ident, smi, reason in chunk["rejects"]:
                        rej_writer.writerow(["", safe_cell(ident), "", safe_cell(smi), "", "", "", "", "", "",
                                             f"rejected: line {line}: {reason}"])
                    rows += n_rows
                    scored_rows += len(chunk["counts"])
                    nodes += int(chunk["counts"].sum())
                    rejected += len(chunk["rejects"])
                    last_line = chunk_last
                    if on_progress is not None:
                        on_progress(rows, scored_rows)
                    if should_stop is not None and should_stop():
                        stopped = True
            except KeyboardInterrupt:  # Ctrl+C: keep every chunk already scored, report them below
                stopped = True
                pool.terminate()
        _write_ranked(chunk_files, rejects_file, report, tmp)
    finally:
        torch.set_num_threads(torch_threads)
        shutil.rmtree(tmp, ignore_errors=True)
    return ScreenSummary(rows=rows, scored=scored_rows, rejected=rejected, seconds=time.perf_counter() - start,
                         report=str(report), stopped=stopped, last_line=last_line, nodes=nodes)


# the chunk-level steps, public for the Dask screening (core/screening/cluster.py)
chunks, score_chunk, write_sorted_chunk, write_ranked = _chunks, _score_chunk, _write_sorted_chunk, _write_ranked
