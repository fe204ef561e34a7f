"""The ranked report: an external k-way merge of sorted chunk files, and of shard reports.

Memory does not grow with the library: at most ``MERGE_FAN_IN`` files are open at once, the
rejected rows come last, q-values are computed over the whole report, and the report is
written atomically with its end row (row count, model fingerprint, digest).
"""
from __future__ import annotations

import bisect
import csv
import errno
import hashlib
import heapq
import itertools
import json
import math
import os
import re
import shutil
import stat
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from core.data.pvalues import bh_q_table
from core.errors import DataError, one_line
from core.io.report import (COLUMNS, NOT_READ_ROW, P_VALUE, Q_VALUE, REJECTED, STATUS, EndRow, check_report_output,
                            header_extras, other_model, parse_end_row, report_output, row_kind, safe_cell,
                            unsafe_cell)
from core.io.text import allow_large_csv_fields, read_lines
from core.runtime.files import atomic_output, check_outputs
from core.runtime.scratch import make_scratch, remove_scratch
from core.screening.executors import ParsingPool
from core.screening.featurize import deferred_cells

MERGE_FAN_IN = 128


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


DEFERRED_BATCH = 256  # kept rows whose deferred cells one task computes


class _DeferredCells:
    """Fills in a report's deferred optional columns (:attr:`ChunkSettings.deferred`) as its rows
    are merged: the merged rows, in batches, go to ``workers`` parsing processes (a few batches
    in flight), which compute the cells from the scored SMILES at ``at``; each row comes back
    with that cell replaced by the cells, in order. A batch whose worker dies is done again one
    row at a time; a row that kills its worker gets empty cells."""

    def __init__(self, columns: tuple[str, ...], at: int, workers: int) -> None:
        self.columns, self.at, self.workers = columns, at, max(1, workers)
        self.pool: ParsingPool | None = None

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
            self.pool = ParsingPool(self.workers)
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


def write_ranked(sorted_files: list[Path], rejects_file: Path, out: Path, tmp: Path, rejected: int, model: str,
                  p_counts: dict[str, int] | None = None, limit: int | None = None,
                  check: Callable[[list[str]], None] | None = None, extras: tuple[str, ...] = (),
                  deferred: tuple[str, ...] = (), workers: int = 1, stopped_after: int | None = None,
                  scored: int | None = None, read_as: str = "", rows_read: str = "",
                  before_replace: Callable[[], object] | None = None) -> int:
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
        stopped_after: the last input line of a stopped run, which the end row records (None: the
            run read its whole input).
        scored: the rows scored in all, which the end row records when ``limit`` kept fewer (the
            report says it is cut, whether or not its summary stays beside it).
        read_as: a stopped run's reading settings (:func:`core.io.report.reading_key`), recorded
            with ``stopped_after`` so that a resumed run reads its library as the stopped one did.
        rows_read: a stopped run's hash of the rows it read (:func:`core.io.molecules.rows_hash`),
            recorded with ``stopped_after`` so that a resumed run knows the rows it skips for them.
        before_replace: called once the report is complete, before it replaces the file at ``out``:
            the summary beside a report cut to its best rows is written there, so that a summary
            that cannot be written leaves the old report as it was.

    Returns:
        The rows written before the end row (its count).
    """
    q_values = bh_q_table(p_counts) if p_counts else None
    fill = _DeferredCells(deferred, KEY_COLUMNS + len(COLUMNS) - 1, workers) if deferred else None
    with report_output(out, (*COLUMNS, *extras), model, stopped_after, None, read_as, rows_read) as report:
        try:
            kept = _merge(sorted_files, report.stream, tmp, q_values, limit, check, fill)
        finally:
            if fill is not None:
                fill.close()
        with open(rejects_file, newline="", encoding="utf-8") as rej:
            shutil.copyfileobj(rej, report.stream)
        report.rows = kept + rejected  # written as formatted by the chunk files
        report.cut_from = scored if limit is not None and scored is not None and kept < scored else None
        if before_replace is not None:  # its rows complete; the end row follows, then the file replaces ``out``
            before_replace()
    return kept + rejected


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
        if not row[3].strip():  # an empty cell names no molecule: two shards' blank rows at one line
            return              # number (their ids, where the files have none) were refused as one
        key = hashlib.sha256("\x00".join(row[1:]).encode("utf-8", "surrogatepass")).digest()[:12]
        other = self.rejects.setdefault(key, shard)
        if other != shard:
            self._refuse(row[1], row[3], shard, other)


def _traced(row: list[str], report: str | Path) -> list[str]:
    """A shard's rejected row as the merged report lists it: its input line is said to be the
    shard's (``rejected: line 4 of the shard scored into ra.csv: ...``), as a multi-file screen
    names the input file (with two shards or more); a row that names its file or shard already is
    kept as it is."""
    found = _BARE_LINE.match(row[STATUS])
    if found:
        row = [*row[:STATUS], safe_cell(f"rejected: line {found[1]} of the shard scored into {Path(report).name}: "
                                         f"{found[2]}"), *row[STATUS + 1:]]
    return row


_BARE_LINE = re.compile(r"rejected: line (\d+): (.*)\Z", re.DOTALL)  # a reject that names no file or shard


def summary_path(report: str | Path) -> Path:
    """Where a report's summary goes: ``REPORT.summary.json`` beside it.

    Args:
        report: the ranked report.

    Returns:
        The summary's path.
    """
    return Path(str(report) + ".summary.json")


def _summary_file(report: str | Path) -> Path | None:
    """The summary beside ``report`` when there is one, the one lookup of a report's summary: a name
    too long for the file system (``REPORT.summary.json`` of a legal report name of 240-255
    characters) holds none, and was raised as a bare "File name too long" by every merge.

    Args:
        report: the ranked report.

    Returns:
        The summary's path when it is a file, else None.
    """
    path = summary_path(report)
    try:
        return path if path.is_file() else None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            return None
        raise


def check_summary_output(report: str | Path, inputs: Sequence[str | Path], cut: bool) -> None:
    """Check, before any work, the summary a report cut to its best rows gets beside it
    (:func:`summary_path`), as the report itself is checked: the one check of :func:`merge_reports`,
    :func:`core.screening.pipeline.screen` and the command line. Unchecked, a folder of that name
    (or a name too long) failed the run after its report had replaced the old one.

    Args:
        report: the report to write.
        inputs: the files and folders the writer reads.
        cut: whether the report keeps its best rows only (``top``, or merged from such shards);
            a report of every row writes no summary.

    Raises:
        GLocalKDError: the summary is, or lies inside, one of ``inputs``.
        OSError: the summary cannot be written there, naming it and its report.
    """
    if not cut:
        return
    path = summary_path(report)
    try:
        check_outputs([path], [str(p) for p in inputs if p])
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write the summary {path} that a report keeping its best rows only gets "
                      f"beside it: {exc.strerror}", str(path)) from None  # the summary first: the reason is its


def has_cut_shard(reports: Sequence[str | Path]) -> bool:
    """Whether a merge of ``reports`` may keep their best rows only: some shard has a summary
    beside it, as every shard cut to its best rows has (one without is refused).

    Args:
        reports: the shards' reports.

    Returns:
        True when some shard's summary file exists.
    """
    return any(_summary_file(r) is not None for r in reports)


def remove_summary(report: str | Path) -> None:
    """Remove the summary beside a report that keeps every row: one left by an earlier run of
    that name (with ``--top``) described another report, and refused every later merge.

    Only a file is removed: a folder of that name is no summary of ours, and a name too long for
    the file system holds none, so neither fails the run after its report was written.

    Args:
        report: the report just written whole.
    """
    path = summary_path(report)
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise


def write_summary_file(report: str | Path, data: dict) -> Path:
    """Write the summary of a report that keeps its best rows only, atomically.

    Args:
        report: the ranked report; the summary goes beside it (:func:`summary_path`).
        data: its fields: ``rows``, ``scored``, ``rejected``, ``kept`` and, for a calibrated model,
            ``p_counts`` (p-value text -> rows over every scored row, kept or not: what a merge needs
            for the q-values), and any others.

    Returns:
        The summary's path.
    """
    path = summary_path(report)
    with atomic_output(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=2) + "\n")
    return path


def cut_summary(report: str | Path) -> dict | None:
    """Read the summary of a report cut to its best rows (``--top``).

    Args:
        report: the ranked report.

    Returns:
        Its summary's fields, or None for a report that holds every scored row (no summary beside
        it, or one that kept them all).

    Raises:
        DataError: the summary cannot be read, or lacks whole counts ``kept`` and ``scored``.
    """
    path = _summary_file(report)
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"not a readable summary ({exc})", path) from None
    counts = [data.get(k) if isinstance(data, dict) else None for k in ("kept", "scored")]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
        raise DataError("a summary needs whole counts 'kept' and 'scored'", path)
    return data if counts[0] < counts[1] else None


def checked_cut(report: str | Path, cut: dict | None, cut_from: int | None, scored: int) -> dict | None:
    """Hold a report's summary to what its end row says.

    The summary is required when the end row says the report keeps the best rows of more
    (``--top``), and left aside when it says the report keeps every scored row (a summary another
    run left beside the file). A report written before end rows said so is cut when its
    summary's kept rows are the report's.

    Args:
        report: the ranked report.
        cut: its summary (:func:`cut_summary`).
        cut_from: the scored rows its end row says it kept the best of (None: it keeps every one).
        scored: the scored rows it holds.

    Returns:
        The summary of a cut report, or None for a report that holds every scored row.

    Raises:
        DataError: the summary is missing, or is another run's.
    """
    where = summary_path(report)
    if cut_from is None:
        return cut if cut is not None and cut["kept"] == scored else None
    if cut is None:
        raise DataError(f"it keeps its best {scored:,} of {cut_from:,} scored rows (--top), and its summary {where} "
                        "is not beside it: it counts the p-values of the rows not kept, which the merged q-values "
                        "need (merged without it, they came out as if the report held every row). Put the summary "
                        "back beside the report", report)
    if cut["kept"] != scored or cut["scored"] != cut_from:
        raise DataError(f"it says {cut['kept']} of {cut['scored']} scored rows were kept, but {report} keeps "
                        f"{scored} of {cut_from}: a summary of another run", where)
    return cut


@dataclass
class ReportPart:
    """A ranked report read back as a chunk file of the merge (:func:`read_report_part`).

    Attributes:
        file: the chunk file of its scored rows, in rank order, keyed from ``position`` on.
        extras: its optional columns.
        rows: its scored rows in the chunk file.
        rejected: its rejected rows passed on.
        count: its data rows (before the end row), as the end row counts them.
        p_counts: p-value text -> rows, over its scored rows.
        end: its end row.
    """

    file: Path
    extras: tuple[str, ...]
    rows: int
    rejected: int
    count: int
    p_counts: Counter
    end: EndRow


def read_report_part(report: str | Path, target: Path, rejects, position: int,
                     extras: tuple[str, ...] | None = None,
                     rejected_row: Callable[[list[str]], list[str] | None] | None = None,
                     scored_row: Callable[[list[str]], list[str]] | None = None) -> ReportPart:
    """Read a ranked report back into the merge's form: its scored rows as a sorted chunk file, its
    rejected rows to ``rejects``. The one reader of ``merge-reports`` and of a resumed screen. An
    export's row for the lines a stopped run never read (:func:`core.io.report.not_read_line`) is no
    data row: skipped, as :func:`core.io.ranked_report.read_report` skips it, and not counted.

    Args:
        report: the ranked report.
        target: the chunk file to write.
        rejects: a ``csv.writer`` of the merged report's rejected rows.
        position: the merge key's input position of its first row; its rows follow in rank order
            (equal scores keep the report's order, which is its input order).
        extras: the optional columns it must have (None: any).
        rejected_row: the row to pass on for each rejected row, or None to drop it (default: as read).
        scored_row: each scored chunk row (merge key first, guard undone) as the chunk file holds it.

    Returns:
        What was read.

    Raises:
        DataError: not a report, other optional columns than ``extras``, a row of the wrong width, a
            score that is not a finite number, rows out of rank order, rows after the end row, no
            end row, or other rows than the end row counts (cut or edited).
    """
    from core.io.ranked_report import REVIEW, check_report, csv_records

    check_report(report)  # unreadable or not a report: refused, saying which and why
    check_outputs([target], [report])
    end, count, rejected, p_counts = None, 0, 0, Counter()
    with atomic_output(target, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        records = csv_records(read_lines(report))
        found = header_extras(next(records)[1])
        if extras is not None and found != extras:
            raise DataError(f"its optional columns ({','.join(found) or 'none'}) differ from the first "
                            f"report's ({','.join(extras) or 'none'}): screen the shards with the same "
                            "--properties, --alerts and --view-scores", report, 1)
        width = len(COLUMNS) + len(found)
        last, n_scored = math.inf, 0
        for n, row in records:
            if end is not None:
                raise DataError("rows after the end-of-report row", report, n)
            if len(row) != width:
                raise DataError(f"{len(row)} fields where a report row has {width}", report, n)
            end = parse_end_row(row)
            if end is not None:
                continue
            kind = row_kind(row, report, n)  # an edited status is refused, as read_report refuses it
            if kind == NOT_READ_ROW:
                continue  # an export's row for the lines a stopped run never read is no data row, as read_report has it
            count += 1
            if kind == REJECTED:
                passed = row if rejected_row is None else rejected_row(row)
                if passed is not None:
                    rejects.writerow(passed)
                    rejected += 1
                continue
            try:
                score = float(row[4])
            except ValueError:
                raise DataError(f"the score {row[4]!r} is not a number", report, n) from None
            if not math.isfinite(score):
                raise DataError(f"the score {row[4]!r} is not a finite number", report, n)
            if score > last:
                if REVIEW in found:  # the app exports a marked tab's rows in its review's rank order
                    raise DataError("its rows follow the ranks of an analyst's review (its review column), not the "
                                    "scores', so it cannot be merged: export it before marking rows, or merge the "
                                    "reports the review was made on", report, n)
                raise DataError("rows are not in rank order (was the report edited?)", report, n)
            last = score
            if row[P_VALUE]:
                p_counts[row[P_VALUE]] += 1
            # a chunk row holds the text itself: the report's formula guard is put back once, on writing
            chunk = [row[4], position + n_scored] + [unsafe_cell(c) for c in row[1:]]
            writer.writerow(chunk if scored_row is None else scored_row(chunk))
            n_scored += 1
    if end is None:
        raise DataError("no end-of-report row: the report is cut short (or was written by an older "
                        "version; screen it again)", report)
    if count != end.rows:
        raise DataError(f"{count} rows where the end-of-report row says {end.rows}: the report was cut or edited",
                        report)
    return ReportPart(target, found, n_scored, rejected, count, p_counts, end)


def whole_run_counts(report: str | Path, part: ReportPart, remedy: str) -> tuple[dict | None, int, Counter]:
    """The scored rows and p-value counts of the whole run behind a report read back: its own, or
    for a report cut to its best rows (``--top``) its summary's, held to what its end row says.

    Args:
        report: the ranked report.
        part: the report as :func:`read_report_part` read it.
        remedy: what to do when its summary cannot give them, as the message says it.

    Returns:
        ``(summary, scored, p_counts)``: the summary of a cut report (None for one that holds
        every scored row), the rows its run scored, and p-value text -> rows over all of them.

    Raises:
        DataError: the summary is missing or another run's (:func:`checked_cut`), or it does not
            count the p-values of the rows the report did not keep.
    """
    cut = checked_cut(report, cut_summary(report), part.end.cut_from, part.rows)
    if cut is None:
        return None, part.rows, part.p_counts
    cut_p = cut.get("p_counts")
    if part.p_counts and not (isinstance(cut_p, dict) and sum(cut_p.values()) == cut["scored"]):
        raise DataError(f"{report} keeps its best {cut['kept']} of {cut['scored']} rows (--top), and this summary "
                        "does not count the p-values of the others (written by an older version?), so the q-values "
                        f"over the whole library cannot be computed: {remedy}", summary_path(report))
    return cut, cut["scored"], Counter(cut_p or {})


def merge_reports(reports: list[str | Path], out: str | Path) -> int:
    """Merge ranked reports of shards of one library, all scored with one model, into one ranked report.

    Ranks are renumbered, equal scores keep shard order, every shard's rejected rows come at the
    end and q-values are recomputed over the merged report. Memory stays flat: each shard is
    streamed and the shards are merged k-way. A report cut to its best rows (``--top``) merges
    with its summary beside it (:func:`summary_path`), which counts the p-values of the rows it
    did not keep, so the q-values are those of the whole library; the merged report then keeps
    the best rows of the smallest such cut (beyond them a shard's rows are missing) and gets a
    summary of its own. The merged report is the one screening the whole library gives.

    Args:
        reports: the shards' reports, in input order.
        out: the merged report to write (atomically).

    Returns:
        The number of rows written (before the end row).

    Raises:
        DataError: a file is not a report, or lacks its end row (:func:`core.io.report.end_row`)
            or has other rows than it announces (cut short or edited); reports of another model,
            the same report twice, shards that hold the same molecule, a score that is not a
            finite number and rows out of rank order are refused too, and a cut report whose
            summary does not match it or holds no p-value counts.
        GLocalKDError: ``out`` is one of the shards or is named for another format
            (:func:`core.io.report.check_report_output`).
    """
    check_report_output(out, list(reports))  # never over a shard, nor under another format's name
    check_summary_output(out, list(reports), has_cut_shard(reports))
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
    scored_total = 0  # scored rows over the shards, the ones a cut report did not keep included
    tops: list[int] = []  # the rows each cut report kept
    try:
        sorted_files, rejects_file = [], tmp / "rejects.csv"
        with atomic_output(rejects_file, "w", newline="", encoding="utf-8") as rej:
            rej_writer = csv.writer(rej)
            for k, report in enumerate(reports):
                bounds.append(position)

                def rejected_row(row: list[str], k: int = k, report=report) -> list[str]:
                    overlap.reject(row, k)
                    return _traced(row, report) if len(reports) > 1 else row

                part = read_report_part(report, tmp / f"shard{k}.csv", rej_writer, position, extras,
                                        rejected_row)
                extras = part.extras
                position += part.rows
                rejected += part.rejected
                model, digest, stopped_after = part.end.model, part.end.digest, part.end.stopped_after
                if stopped_after is not None:
                    raise DataError(f"the run that wrote it was stopped after input line {stopped_after:,}, so the "
                                    "rows after it were never scored, and a stopped run's report is not merged: "
                                    "screen that shard again", report)
                if not model:  # write_report's model=None, or an app export of a report that named none
                    raise DataError("the report does not name the model that scored it (a report written by "
                                    "write_report without model=, or a part of a report exported from the app), so "
                                    "a merge cannot check that one model scored every shard: screen the shard (from "
                                    "the API, write_report(..., model=detector) names it)", report)
                if models and model not in models:
                    first = next(iter(models.values()))
                    raise DataError(f"{other_model(model, next(iter(models)))}, as {first} is", report)
                if digest in digests:
                    raise DataError(f"the same report as {digests[digest]}: a shard given twice", report)
                models.setdefault(model, str(report))
                digests[digest] = str(report)
                sorted_files.append(part.file)
                cut, scored, counts = whole_run_counts(report, part, "screen that shard again")
                p_counts.update(counts)
                scored_total += scored
                if cut is not None:
                    tops.append(cut["kept"])
        limit = min(tops) if tops else None  # past it, some shard's rows are missing
        summary = None if limit is None else {
            "rows": scored_total + rejected, "scored": scored_total, "rejected": rejected,
            "kept": min(limit, scored_total), "top": limit, **({"p_counts": dict(p_counts)} if p_counts else {}),
            "merged_from": [str(r) for r in reports]}
        written = write_ranked(sorted_files, rejects_file, out, tmp, rejected, next(iter(models), ""), p_counts,
                               limit=limit, check=overlap, extras=extras or (), scored=scored_total,
                               before_replace=None if summary is None else lambda: write_summary_file(out, summary))
        if summary is None:
            remove_summary(out)
        return written
    finally:
        remove_scratch(tmp)
