"""Screening large SMILES libraries with a trained model, in bounded memory: the run.

The library is streamed in chunks; worker processes parse and featurize molecules
(RDKit, :mod:`core.screening.featurize`) while the main process scores the previous chunk
(torch, :mod:`core.screening.scoring`). Each scored chunk is written, sorted by score, to its
own temporary file at once, so an interrupted run keeps every row already scored. The ranked
report is an external k-way merge of those files (rejected rows last,
:mod:`core.screening.merge`), so memory does not grow with the library. Scoring a chunk is a
pure function of the model file and the chunk: the same code shards across machines
(:mod:`core.screening.executors`, :mod:`core.screening.cluster`).
"""
from __future__ import annotations

import csv
import itertools
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from core.data.pvalues import bh_q_table
from core.errors import DataError, GLocalKDError, ParameterError, SchemaMismatchError, SlowPrecisionWarning
from core.runtime.values import is_count
from core.io.load import molecule_rows
from core.io.molecules import ROWS_HASH_MASK, SourceRow, nothing_read
from core.io.report import (STANDARDISED, VIEW_PREFIX, check_report_output, check_top_k, extra_columns,
                            reading_key, safe_cell, scored_as)
from core.runtime.allocator import release_freed_memory
from core.runtime.files import atomic_output
from core.runtime.scratch import make_scratch, remove_scratch
from core.runtime.signals import deferred_stops, stop_received, stop_signals_interrupt
from core.runtime.threads import PER_CORE_LIMIT, most_per_machine, usable_cpus
from core.screening.executors import ChunkExecutor, LocalExecutor
from core.screening.featurize import report_views
from core.screening.merge import (DEFERRED_BATCH, check_summary_output, remove_summary, write_ranked,
                                  write_summary_file)
from core.screening.resume import read_stopped_run, rows_after
from core.screening.scoring import ChunkJob, ChunkSettings, molecule_schema


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
    resumed_after: int | None = None  # a resumed run: the line the stopped run read last (the counts include its)
    resumed_rows: int = 0  # a resumed run: the rows the stopped run read

    @property
    def molecules_per_second(self) -> float:
        """Rows read per second of this run (0 when no time was measured): a resumed run's own rows."""
        return (self.rows - self.resumed_rows) / self.seconds if self.seconds > 0 else 0.0

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


def write_summary(summary: ScreenSummary, report: str | Path, **extra) -> Path:
    """Write ``REPORT.summary.json``, atomically: the counts of a run whose report keeps the best rows
    only, and the p-values of every scored row (:func:`core.screening.merge.write_summary_file`).

    Args:
        summary: the run's summary.
        report: the report's path; the summary goes beside it.
        **extra: more fields for the file (``top``: the rows kept; libraries, settings ...).

    Returns:
        The summary file's path.
    """
    data = {"rows": summary.rows, "scored": summary.scored, "rejected": summary.rejected,
            "kept": min(summary.scored, extra.get("top") or summary.scored), "nodes": summary.nodes,
            "seconds": round(summary.seconds, 3), "stopped": summary.stopped,
            **({"p_counts": dict(summary.p_counts)} if summary.p_counts else {}), **extra}
    return write_summary_file(report, data)


def _rows_read_text(rows_read: int, stopped_run) -> str:
    """What a stopped run's end row records of the rows it read (:func:`core.io.molecules.rows_hash`):
    a resumed run's rows and those it skipped, the stopped run's; "" when the rows it skipped are
    not known (stopped again before it read past them, from a report that does not record them)."""
    skipped = 0 if stopped_run is None else stopped_run.skipped if stopped_run.skipped is not None \
        else stopped_run.rows_read
    return "" if skipped is None else f"{(rows_read + skipped) & ROWS_HASH_MASK:016x}"


def _jobs(sources: list[tuple[str, Iterator[SourceRow]]], chunk_size: int, first: int = 0) -> Iterator[ChunkJob]:
    """The chunks of every source's rows, numbered, each source cut as :func:`chunks` cuts it; the
    rows' input positions from ``first`` on (a resumed run's come after the stopped run's)."""
    index, position = 0, first
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


def _refuse_repeated_files(paths: list[Path]) -> None:
    """A library's shards are distinct files: one named twice (``a.csv a.csv``, a pattern that also
    matches a named file, a link to another) would score its molecules twice, as ``merge-reports``
    refuses the same report twice."""
    seen: dict[tuple[int, int], Path] = {}
    for path in paths:
        try:
            info = path.stat()
        except OSError:  # missing: the reader says so, naming it
            continue
        first = seen.setdefault((info.st_dev, info.st_ino), path)
        if first is not path:
            raise DataError(f"the same file as {first}: a library file given twice would score its molecules twice",
                            path)


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
           alerts: bool = False, view_scores: bool = False, resume: bool = False) -> ScreenSummary:
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
        resume: ``report`` is a stopped run's (one library file, the same model and optional
            columns, ``top`` no larger than its): its rows are kept, the library is read on after
            the line where it stopped (its rows up to there checked to be the ones the run read),
            and the report is written as an unstopped run writes it (:mod:`core.screening.resume`).

    Returns:
        What the run did: rows read, scored and rejected, seconds, whether it was stopped or
        ``interrupted``, and ``written`` False when it stopped before any row (an existing report
        is then left as it was).

    Raises:
        SchemaMismatchError: the model was not trained on molecules (said of the model, not the file).
        DataError: a file cannot be read, or (unless the run was stopped) no data row or no
            molecule was read; nothing is written.
        GLocalKDError: a setting is out of range (below 1, an unknown precision, ``bfloat16``
            for a model that is not GLocalKD), no file is given, the model's scores depend on
            the batch (PK-LESINN: its report would depend on the chunks), or the report is one of
            the files read or is named for another format (:func:`core.io.report.check_report_output`).
        ParameterError: ``view_scores`` for a model that is not a consensus with Fisher's rule.
    """
    from core.detectors.registry import scores_alone

    if not scores_alone(model):  # its report would depend on the chunks (and on the shards)
        raise GLocalKDError(f"{model.name}'s score of a graph depends on the other graphs scored with it (a "
                            "propagation kernel hashes the labels a batch brings in), so a report streamed in chunks "
                            "would depend on them: score the file whole (glocalkd score)")
    views = report_views(model) if view_scores else ()
    schema = molecule_schema(model)
    if schema is not None and schema.mode != "atom":
        raise SchemaMismatchError(f"screening needs a model trained on molecules (SMILES or SDF); this one was "
                                  f"trained on {schema.describe()}: score a graph collection with glocalkd score")
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
        if value is not None and not is_count(value, 1):  # 2.5 passed "< 1" and failed deep inside
            raise ParameterError(f"{{{name}}} must be a whole number of at least 1, not {value!r}", name)
    check_top_k(top_k)
    read_as = reading_key(smiles_column, id_column, label_column, top_k)  # a stopped run's, for its resumed run
    if workers is not None and workers > most_per_machine():  # each a process: thousands would hang the machine
        raise ParameterError(f"{{workers}} must be from 1 to {most_per_machine()} ({PER_CORE_LIMIT} per CPU core), "
                             f"not {workers}", "workers")
    paths = [Path(p) for p in path] if isinstance(path, (list, tuple)) else [Path(path)]
    if not paths:
        raise GLocalKDError("no library file given")
    check_report_output(report, paths)  # never over a library file, nor under another format's name
    check_summary_output(report, paths, top is not None)  # --top writes REPORT.summary.json beside it
    _refuse_repeated_files(paths)
    if resume and len(paths) > 1:  # a stopped run's end row names a line, not which shard it was in
        raise ParameterError("{resume} continues a run of one library file; a run of several shards is merged from "
                             "one report per shard (merge-reports): resume each shard's own run", "resume")
    where = str(paths[0]) if len(paths) == 1 else f"{paths[0]} (and {len(paths) - 1} more)"
    sources, hint = _source_rows(paths, smiles_column, id_column, label_column)  # a bad header fails here
    model_id, *also = (scored_as(name, precision) for name in model.fingerprints())  # bfloat16's are not float32's
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
    rows = scored_rows = rejected = last_line = nodes = rows_read = 0
    stopped_run = None
    first_rejects: list[tuple[int, str]] = []
    stopped = interrupted = written = False
    resumed = (None, 0)  # the line a resumed run read on after, and the rows read before it
    try:
        with stop_signals_interrupt(), atomic_output(rejects_file, "w", newline="", encoding="utf-8") as rej_fh:
            rej_writer = csv.writer(rej_fh)
            first = 0
            if resume:  # the stopped run's rows: one more sorted chunk, its rejects first
                stopped_run = read_stopped_run(report, model_id, extras, deferred, keep, tmp / "resumed.csv",
                                               rej_writer, read_as, tuple(also))
                if stopped_run.part.end.model in also:  # begun under the name an earlier version gave the
                    model_id = stopped_run.part.end.model  # model: kept, so its sibling shards still merge
                chunk_files.append(stopped_run.part.file)
                p_counts.update(stopped_run.p_counts)
                rows, scored_rows, rejected = stopped_run.rows, stopped_run.scored, stopped_run.part.rejected
                nodes = stopped_run.nodes  # the summary counts every run's nodes, as an unstopped run's does
                resumed, last_line, first = (stopped_run.after, rows), stopped_run.after, stopped_run.part.rows
                sources = [(label, rows_after(source, stopped_run, where)) for label, source in sources]
            jobs = _jobs(sources, chunk_size, first)
            exhausted = started = False

            def stop_now() -> bool:
                """Whether a Stop asked for ends the run short: not when the library had no row left
                and no chunk is in flight (a Stop after the last chunk leaves a whole run)."""
                nonlocal exhausted, jobs
                if should_stop is None or not should_stop():
                    return False
                if not exhausted:  # reads the next chunk's lines, if any, and keeps them: a chunk
                    # thrown away here was lost from a report that then looked whole
                    job = next(jobs, None)
                    if job is None:
                        exhausted = True
                    else:
                        jobs = itertools.chain([job], jobs)
                return not exhausted or executor.busy()

            try:
                executor.start(settings)
                started = True
                while True:
                    if stop_received():  # a SIGTERM whose KeyboardInterrupt was lost (see stop_received)
                        raise KeyboardInterrupt
                    while not stopped and not exhausted and executor.room():
                        if stop_now():
                            stopped = True
                            break
                        if exhausted:
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
                    rows_read += result.rows_read
                    rejected += len(result.rejects)
                    last_line = max(last_line, result.last_line)
                    result = None
                    release_freed_memory()  # the chunk's arrays would otherwise stay in this process's heap
                    if on_progress is not None:
                        on_progress(rows, scored_rows)
                    if stop_now():
                        stopped = True
                # a Stop once the last chunk was sent takes every row in flight: a whole run, not a stopped one
                stopped = stopped and not exhausted
            except KeyboardInterrupt:  # Ctrl+C, SIGTERM, SIGHUP: keep every chunk already taken
                stopped = interrupted = True
            finally:
                if started:
                    executor.close(stopped)
        if not stopped:
            if rows == 0:
                raise DataError("file is empty (no data rows)", where)
            if scored_rows == 0 and first_rejects:
                raise nothing_read(where, rows, first_rejects[0][1], first_rejects[0][0], hint)
        if rows:  # a run stopped before its first row leaves an existing report as it was
            with deferred_stops() as held:  # a Ctrl+C now would lose every row scored
                batches = -(-min(keep or 0, scored_rows) // DEFERRED_BATCH)  # of deferred cells: a worker each at most
                summary = ScreenSummary(rows=rows, scored=scored_rows, rejected=rejected,
                                        seconds=time.perf_counter() - start, report=str(report), stopped=stopped,
                                        last_line=last_line, nodes=nodes, interrupted=interrupted, written=True,
                                        first_rejects=first_rejects, p_counts=dict(p_counts),
                                        calibration=calibration, resumed_after=resumed[0], resumed_rows=resumed[1])

                def write_cut_summary() -> None:
                    """The summary of a report cut to its best rows, before that report replaces the old one."""
                    summary.seconds = time.perf_counter() - start
                    write_summary(summary, report, top=top, libraries=[str(p) for p in paths],
                                  **(summary_extra or {}))

                write_ranked(chunk_files, rejects_file, report, tmp, rejected, model_id, p_counts, limit=keep,
                             extras=extras, deferred=deferred,
                             workers=min(getattr(executor, "workers", usable_cpus()), max(1, batches)),
                             stopped_after=last_line if stopped else None, scored=scored_rows, read_as=read_as,
                             rows_read=_rows_read_text(rows_read, stopped_run),
                             before_replace=write_cut_summary if top is not None else None)
                if top is None:
                    remove_summary(report)
            summary.seconds = time.perf_counter() - start
            if held:
                summary.stopped = summary.interrupted = True
            return summary
    except OSError as exc:  # a chunk file of the working folder that could not be written: the report's trouble
        if exc.filename is None or Path(tmp) not in Path(str(exc.filename)).parents:
            raise
        raise OSError(exc.errno, f"{exc.strerror} (writing the report's chunks in {Path(tmp).parent})",
                      str(report)) from None
    finally:
        remove_scratch(tmp)
    return ScreenSummary(rows=rows, scored=scored_rows, rejected=rejected, seconds=time.perf_counter() - start,
                         report=str(report), stopped=stopped, last_line=last_line, nodes=nodes,
                         interrupted=interrupted, written=written, first_rejects=first_rejects,
                         p_counts=dict(p_counts), calibration=calibration, resumed_after=resumed[0],
                         resumed_rows=resumed[1])
