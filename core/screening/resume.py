"""Resuming a stopped screen: the rows its report holds, and a check that the library read on is the
one it read.

A screen stopped by Stop, Ctrl+C or SIGTERM writes the ranked report of every row it read, and its
end row names the last input line (:func:`core.io.report.end_row`). Resumed, the run reads that
report back as one sorted chunk of the merge (:func:`core.screening.merge.read_report_part`),
skips the library's rows up to that line and scores the rest; the report it writes is the one an
unstopped run writes: the same ranks, q-values over every scored row, rejects in input order.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.errors import DataError
from core.io.molecules import ROWS_HASH_MASK, SourceRow, rows_hash
from core.io.report import COLUMNS, STANDARDISED, other_model, unsafe_cell
from core.screening.merge import KEY_COLUMNS, ReportPart, cut_summary, read_report_part, whole_run_counts

_ID = 1  # a report row's id cell


def _row_hash(ident: str) -> int:
    """A row's id as a 64-bit number; their sum mod 2**64 stands for the multiset of ids."""
    return int.from_bytes(hashlib.blake2b(ident.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


@dataclass
class StoppedRun:
    """What a stopped run's report holds, read back for its resumed run.

    Attributes:
        part: its scored rows as a chunk of the merge, its rejects passed on.
        after: the last input line it read.
        rows: the rows it read (scored and rejected).
        scored: the rows it scored (those its ``--top`` report did not keep included).
        p_counts: p-value text -> rows over every row it scored.
        ids: the multiset hash of the ids of its report's rows (every row it read, unless cut).
        cut_ids: for a report that keeps its best rows only (``--top``), its rows' id hashes, each
            to be found among the rows it read; None otherwise.
        nodes: the nodes of the rows it scored (its summary's for a ``--top`` report).
        rows_read: the hash of the rows it read, as its end row records it (None: not recorded,
            written by an older version).
        skipped: the hash of the rows the resumed run skipped (:func:`rows_after`), once they are
            all read (None before): the resumed run's end row, if it is stopped again, records it
            plus its own rows'.
    """

    part: ReportPart
    after: int
    rows: int
    scored: int
    p_counts: Counter
    ids: int
    cut_ids: Counter | None = None
    nodes: int = 0
    rows_read: int | None = None
    skipped: int | None = None


def report_extras(report: str | Path) -> tuple[str, ...]:
    """The optional columns of a ranked report's header.

    Args:
        report: the report.

    Returns:
        Its optional columns.

    Raises:
        DataError: the file is not a ranked report.
    """
    from core.io.ranked_report import check_report, csv_records
    from core.io.report import header_extras
    from core.io.text import read_lines

    check_report(report)
    return header_extras(next(csv_records(read_lines(report)))[1])


def read_stopped_run(report: str | Path, model: str, extras: tuple[str, ...], deferred: tuple[str, ...],
                     keep: int | None, target: Path, rejects, read_as: str = "",
                     also: tuple[str, ...] = ()) -> StoppedRun:
    """Read a stopped run's report back for its resumed run, refusing one it cannot continue.

    Args:
        report: the stopped run's ranked report.
        model: the fingerprint of the model resuming it.
        extras: the optional columns the resumed run writes.
        deferred: the first of ``extras`` that the final merge computes for the rows kept (its
            rows get their scored SMILES in their place, as the chunk files do).
        keep: the best rows the resumed run keeps (``top``; None: every row).
        target: the chunk file of its scored rows.
        rejects: a ``csv.writer`` of the resumed report's rejected rows (its rejects come first).
        read_as: the resumed run's reading settings (:func:`core.io.report.reading_key`); the
            stopped run's must be the same where its end row records them.
        also: the other names of that model a report it wrote may give (:meth:`core.Detector.fingerprints`).

    Returns:
        The stopped run.

    Raises:
        DataError: there is no report, it is not a report, it is a whole run's (nothing to
            resume), another model scored it, its optional columns or its reading settings (the
            columns named, the atoms listed) are not this run's, it was cut or edited, or it keeps its best rows and the summary that counts the others is missing,
            or the resumed run would keep more of them than it kept.
    """
    if not Path(report).is_file():
        raise DataError("no report to resume: give -o the report of the stopped run", report)
    found = report_extras(report)
    if found != extras:
        raise DataError(f"its optional columns ({','.join(found) or 'none'}) are not this run's "
                        f"({','.join(extras) or 'none'}): resume with the --properties, --alerts and --view-scores "
                        "of the stopped run", report, 1)
    ids = 0  # the multiset hash of its rows' ids
    kept: Counter | None = Counter() if cut_summary(report) is not None else None  # a --top report's, one by one

    def seen(ident: str) -> None:
        nonlocal ids
        hashed = _row_hash(ident)
        ids += hashed
        if kept is not None:
            kept[hashed] += 1

    def rejected_row(row: list[str]) -> list[str]:
        seen(unsafe_cell(row[_ID]))
        return row

    fixed = len(COLUMNS) - 1 + KEY_COLUMNS  # the chunk row's cells before the optional ones
    smiles_at = KEY_COLUMNS + COLUMNS.index("smiles") - 1
    nodes_at = KEY_COLUMNS + COLUMNS.index("num_nodes") - 1
    standardised_at = fixed + extras.index(STANDARDISED) if STANDARDISED in extras else None

    nodes = 0

    def scored_row(row: list[str]) -> list[str]:
        nonlocal nodes
        seen(row[KEY_COLUMNS + _ID - 1])
        nodes += int(row[nodes_at])
        if not deferred:
            return row
        scored_smiles = row[standardised_at] if standardised_at is not None else row[smiles_at]
        return row[:fixed] + [scored_smiles] + row[fixed + len(deferred):]

    part = read_report_part(report, target, rejects, 0, None, rejected_row, scored_row)
    model_of, after = part.end.model, part.end.stopped_after
    if after is None:
        raise DataError("its run read the whole library (its end row names no line where it stopped): there is "
                        "nothing to resume", report)
    if model_of not in (model, *also):
        raise DataError(f"{other_model(model_of, model)}, this run's: resume with the model and the --precision "
                        "that began it", report)
    if part.end.read_as and read_as and part.end.read_as != read_as:  # its rows came from another column, once
        raise DataError("its run read the library with other settings: resume with the stopped run's "
                        "--smiles-column, --id-column, --label-column and --top-nodes", report)
    cut, scored, p_counts = whole_run_counts(report, part, "screen the library again")
    if cut is not None and (keep is None or keep > cut["kept"]):  # its rows past them are gone
        raise DataError(f"it keeps its best {cut['kept']:,} of {cut['scored']:,} scored rows (--top), so the "
                        f"resumed report can keep at most as many: resume it with glocalkd screen ... --resume --top "
                        f"{cut['kept']} (or fewer; core.screen(..., resume=True, top={cut['kept']}))", report)
    if cut is not None:  # the rows it did not keep counted their nodes in its summary
        nodes = cut["nodes"] if isinstance(cut.get("nodes"), int) else nodes
    rows_read = int(part.end.rows_read, 16) if part.end.rows_read else None
    return StoppedRun(part, after, scored + part.rejected, scored, p_counts, ids & ROWS_HASH_MASK,
                      None if cut is None else kept, nodes, rows_read)


def rows_after(rows: Iterator[SourceRow], run: StoppedRun, where: str | Path) -> Iterator[SourceRow]:
    """The library's rows after the line where the stopped run stopped, once its rows up to that
    line are found to be the ones the stopped run read (their count, their ids, and where its end
    row records it, the hash of every field as read: :func:`core.io.molecules.rows_hash`).

    Args:
        rows: the library's rows, in input order.
        run: the stopped run.
        where: the library, for the message.

    Yields:
        The rows after ``run.after``.

    Raises:
        DataError: the library's rows up to that line are not the stopped run's (another file, or
            the file was changed since).
    """
    count, ids, read = 0, 0, 0
    checked = False
    unseen = None if run.cut_ids is None else Counter(run.cut_ids)
    for row in rows:
        if row.line <= run.after:
            count += 1
            hashed = _row_hash(row.id)
            ids += hashed
            read += rows_hash((row,))
            if unseen is not None and unseen.get(hashed):
                unseen[hashed] -= 1
            continue
        if not checked:
            _check_read(count, ids, read & ROWS_HASH_MASK, unseen, run, where)
            checked = True
        yield row
    if not checked:
        _check_read(count, ids, read & ROWS_HASH_MASK, unseen, run, where)


def _check_read(count: int, ids: int, read: int, unseen: Counter | None, run: StoppedRun, where: str | Path) -> None:
    """Refuse a library whose rows up to the stopped run's line are not the ones it read: their
    count, their ids (all of them, or for a ``--top`` report the ones it kept), and the hash of
    the rows as read where the end row records it (a file without ids has line numbers for ids:
    any file of as many rows passed); then keep that hash as :attr:`StoppedRun.skipped`."""
    other_ids = any(unseen.values()) if unseen is not None else ids & ROWS_HASH_MASK != run.ids
    other_rows = run.rows_read is not None and read != run.rows_read
    if count != run.rows or other_ids or other_rows:
        why = f"{count:,} rows where its report holds {run.rows:,}" if count != run.rows else \
            f"as many rows, {count:,}, with other ids" if other_ids else \
            f"as many rows, {count:,}, with other contents (SMILES, names or labels)"
        raise DataError(f"its rows up to line {run.after:,} are not the ones the stopped run read ({why}): another "
                        "file, or one changed since; resume with the library the run began on", where)
    run.skipped = read
