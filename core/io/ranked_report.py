"""Reading a ranked CSV report back: columns as numpy arrays, so a screening result of
millions of rows opens without building a graph per row.

The report is what :func:`core.io.report.write_report` and ``glocalkd screen`` write (header
:data:`core.io.report.COLUMNS`): scored rows in rank order, then rejected rows with their
reason. Scored rows become arrays; rejected rows are kept as (line, id, text, reason).
"""
from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from core.errors import DataError, raise_if_stopped
from core.data.graphset import GraphMeta, GraphSet
from core.data.properties import PROPERTY_COLUMNS
from core.io.report import (ALERTS_COLUMN, APP_COLUMNS, COLUMNS, END_PREFIX, EXTRA_COLUMNS, NOT_READ_ROW, REJECTED,
                            STANDARDISED, EndRow, VIEW_PREFIX, header_extras, not_read_line, parse_end_row, row_kind,
                            unsafe_cell, view_names)
from core.io.text import allow_large_csv_fields, read_lines, read_lines_and_endings

REVIEW = APP_COLUMNS[1]  # the app's review-mark column


@dataclass
class ReportReject:
    """A row of the report that was never scored, and why (as the report says)."""

    line: int
    id: str
    text: str
    reason: str

    @property
    def status(self) -> str:
        """The row's status as the report wrote it (its reason holds the input line already)."""
        return f"rejected: {self.reason}"


@dataclass
class RankedReport:
    """Scored rows of a ranked report in file (rank) order, plus its rejected rows."""

    source: str
    ids: np.ndarray
    names: np.ndarray
    smiles: np.ndarray
    labels: np.ndarray
    top_nodes: np.ndarray
    score: np.ndarray
    graph_score: np.ndarray
    node_score: np.ndarray
    num_nodes: np.ndarray
    rejects: list[ReportReject] = field(default_factory=list)
    p_value: np.ndarray | None = None  # NaN where the model was not calibrated (and for older reports)
    q_value: np.ndarray | None = None
    # the chemist's properties (name -> float64 column, NaN where a row has none), when the report has them
    properties: dict[str, np.ndarray] = field(default_factory=dict)
    alerts: np.ndarray | None = None  # the ``alerts`` column's text, when the report has it
    # the SMILES each row was scored as, when the model standardised its molecules (``smiles``: as read)
    standardised_smiles: np.ndarray | None = None
    # each view's raw score (``view:<name>`` columns: view name -> float64 of the float32 written,
    # NaN where a row has none), in column order; empty without them
    view_scores: dict[str, np.ndarray] = field(default_factory=dict)
    model_fingerprint: str = ""  # of the model that scored the rows, from the end row ("" without one)
    # the end row's row count and digest match what precedes it: the report is as its model wrote it
    intact: bool = False
    # an exported tab's review marks, row by row: "anomaly", "not anomaly" or "" (None: no such column)
    review: np.ndarray | None = None
    # the last input line of a run that was stopped (its end row says so): the rows after it were
    # never read; None for a run that read its whole input
    stopped_after: int | None = None
    # the end row as read (None: the report has none): what an export of every row writes again, so
    # that a report cut to its best rows (--top) or a stopped run's keeps its checks in the export
    end: EndRow | None = None
    # the file its rows were read from and the loader's options, ``{"path", "options"}``, where the
    # caller that scored it records them (the app, and a session that holds its report): what a
    # stopped scoring resumes from; None for a report read from a file alone
    scored_input: dict | None = None
    # what the reader changed in that file as it scored it (``GraphSet.notes``: a TU collection's
    # one-way edges made both ways), said with its results; empty for a report read from a file
    notes: list[str] = field(default_factory=list)

    def scored_smiles(self, i: int) -> str:
        """The SMILES row i was scored as: its standardised form, or the SMILES as read.

        Args:
            i: the row (in rank order).

        Returns:
            The SMILES the model scored for that row.
        """
        if self.standardised_smiles is not None and self.standardised_smiles[i]:
            return str(self.standardised_smiles[i])
        return str(self.smiles[i])

    def __post_init__(self) -> None:
        for name in ("p_value", "q_value"):
            if getattr(self, name) is None:
                setattr(self, name, np.full(len(self.score), np.nan))

    def __len__(self) -> int:
        return int(self.score.shape[0])

    def review_marks(self) -> dict[int, bool]:
        """The analyst's marks an exported tab kept in its ``review`` column.

        Returns:
            Row -> True (anomaly) or False (not anomaly); empty without marks.
        """
        if self.review is None:
            return {}
        return {i: mark == "anomaly" for i, mark in enumerate(self.review.tolist()) if mark}

    def top_nodes_of(self, i: int) -> list[tuple[str, float]]:
        """Read one row's ``top_nodes`` cell.

        Args:
            i: the row's position among the scored rows (rank - 1).

        Returns:
            (node name, error) pairs, e.g. [("N3", 0.41), ...]; parts that do not read as
            ``name:number`` are skipped.
        """
        out = []
        for part in str(self.top_nodes[i]).split(";"):
            name, _, value = part.rpartition(":")
            try:
                out.append((name, float(value)))
            except ValueError:
                continue
        return out


def check_report(path: str | Path) -> None:
    """Refuse a file that is not a ranked report, by its first line, saying why.

    Args:
        path: the file.

    Raises:
        DataError: the file cannot be read (missing, a folder, binary, ...), naming it and why,
            or its first line is not a ranked report's header (current or from before p-values).
    """
    try:
        first = next(iter(read_lines(Path(path))), (1, ""))[1]
    except OSError as exc:
        raise DataError(f"cannot read it: {exc.strerror or exc}", str(path)) from None
    if header_extras(next(csv.reader([first]), [])) is None:
        raise DataError(f"not a ranked report (the header must be {','.join(COLUMNS)})", str(path), 1)


def is_report(path: str | Path) -> bool:
    """Whether a file is a ranked report, by its first line (:func:`check_report`).

    Args:
        path: the file.

    Returns:
        True when the first line is a ranked report's header (current or from before p-values);
        False also when the file cannot be read.
    """
    try:
        check_report(path)
    except DataError:
        return False
    return True


class _LineDigest:
    """The SHA-256 of a report's text as its lines are read, kept also as it was before the
    latest line: an end row's digest covers the bytes before it (:func:`core.io.report.end_row`)."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.before = hashlib.sha256()

    def lines(self, lines: Iterable[tuple[int, str, str]]) -> Iterator[tuple[int, str, str]]:
        for item in lines:
            self.before = self.digest.copy()
            self.digest.update((item[1] + item[2]).encode("utf-8", "surrogatepass"))
            yield item

    def before_latest(self) -> str:
        return self.before.hexdigest()[:16]


def read_report(path: str | Path, on_progress: Callable[[int], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> RankedReport:
    """Read a ranked report into column arrays.

    Args:
        path: the report (optionally gzipped).
        on_progress: called with the scored rows read so far, every 100,000 rows (None: not).
        should_stop: polled every 10,000 rows; True stops the reading (:class:`core.Stopped`).

    Returns:
        The scored rows in file (rank) order as arrays, the rejected rows as a list; the end
        row is skipped.

    Raises:
        DataError: the file is empty or not a report, or a row is malformed (wrong field count,
            a score that is not a finite number), naming its line.
        Stopped: ``should_stop`` returned True.
    """
    path = Path(path)
    allow_large_csv_fields()
    columns: dict[str, list] = {c: [] for c in (*COLUMNS, *EXTRA_COLUMNS)}
    width = len(COLUMNS)
    extras: tuple[str, ...] = ()
    rejects: list[ReportReject] = []
    interned: dict[str, str] = {}
    fingerprint = ""

    def keep(text: str) -> str:  # labels, names and statuses repeat: store each once
        return interned.setdefault(text, text) if len(text) < 24 else text

    digest = _LineDigest()
    lines = digest.lines(read_lines_and_endings(path))  # a quoted cell comes back as it was written
    header = None
    count = 0
    intact, ended, stopped_after, end_row_read = False, -1, None, None
    for line_no, row in csv_records(lines):
        if header is None:
            found = header_extras(row)
            if found is None:
                raise DataError(f"not a ranked report: the header must be {','.join(COLUMNS)} (then, optionally, "
                                f"{','.join(EXTRA_COLUMNS[:-1])}, {VIEW_PREFIX}<view> columns, {EXTRA_COLUMNS[-1]})",
                                str(path), line_no)
            header, width, extras = row, len(row), found
            for name in extras:
                columns.setdefault(name, [])
            continue
        if len(row) != width:
            raise DataError(f"{len(row)} fields where a report row has {width}", str(path), line_no)
        status = row[10]
        if status.startswith(END_PREFIX) and (end := parse_end_row(row)) is not None:
            fingerprint, stopped_after, end_row_read = end.model, end.stopped_after, end
            intact = end.rows == count + len(rejects) and end.digest == digest.before_latest()
            ended = count + len(rejects)
            continue
        kind = row_kind(row, path, line_no)  # an edited status is refused, as merge-reports refuses it
        if kind == NOT_READ_ROW:  # an export's row for the lines a stopped run never read
            stopped_after = not_read_line(status)
            continue
        if kind == REJECTED:
            rejects.append(ReportReject(line_no, unsafe_cell(row[1]), unsafe_cell(row[3]),
                                        status.removeprefix("rejected: ")))
            continue
        try:
            for j, name in enumerate(("score", "graph_score", "node_score")):
                value = row[4 + j]
                columns[name].append(float(value) if value else np.nan)
            columns["num_nodes"].append(int(row[7]))
            for name in ("p_value", "q_value"):
                value = row[COLUMNS.index(name)] if width >= len(COLUMNS) else ""
                columns[name].append(float(value) if value else np.nan)
            for j, name in enumerate(extras, start=len(COLUMNS)):
                if name not in (ALERTS_COLUMN, STANDARDISED, *APP_COLUMNS):
                    columns[name].append(float(row[j]) if row[j] else np.nan)
        except ValueError:
            raise DataError(f"a score, node count, property or view's score is not a number: {row[4:8]}", str(path),
                            line_no) from None
        if not np.isfinite(columns["score"][-1]):  # no model writes one (core.data.scores.Scores)
            raise DataError(f"the score {row[4]!r} is not a finite number (written by a damaged model?)",
                            str(path), line_no)
        for j, name in ((1, "id"), (2, "name"), (3, "smiles"), (8, "label"), (9, "top_nodes")):
            columns[name].append(keep(unsafe_cell(row[j])) if name in ("name", "label") else unsafe_cell(row[j]))
        if ALERTS_COLUMN in extras:
            columns[ALERTS_COLUMN].append(keep(row[len(COLUMNS) + extras.index(ALERTS_COLUMN)]))
        if STANDARDISED in extras:
            columns[STANDARDISED].append(unsafe_cell(row[len(COLUMNS) + extras.index(STANDARDISED)]))
        if REVIEW in extras:
            mark = row[len(COLUMNS) + extras.index(REVIEW)]
            if mark not in ("", "anomaly", "not anomaly"):
                raise DataError(f"the review mark {mark!r} is none of 'anomaly', 'not anomaly' or empty", str(path),
                                line_no)
            columns[REVIEW].append(mark)
        count += 1
        if count % 10_000 == 0:
            raise_if_stopped(should_stop, path, "read")
            if on_progress is not None and count % 100_000 == 0:
                on_progress(count)
    if header is None:
        raise DataError("empty file: no report header", str(path), 1)

    def text(name: str) -> np.ndarray:
        arr = np.empty(len(columns[name]), dtype=object)
        arr[:] = columns[name]
        return arr

    return RankedReport(
        source=str(path), ids=text("id"), names=text("name"), smiles=text("smiles"), labels=text("label"),
        top_nodes=text("top_nodes"), score=np.asarray(columns["score"], dtype=np.float64),
        graph_score=np.asarray(columns["graph_score"], dtype=np.float32),
        node_score=np.asarray(columns["node_score"], dtype=np.float32),
        num_nodes=np.asarray(columns["num_nodes"], dtype=np.int32), rejects=rejects,
        p_value=np.asarray(columns["p_value"], dtype=np.float64), q_value=np.asarray(columns["q_value"], dtype=np.float64),
        properties={name: np.asarray(columns[name], dtype=np.float64) for name in PROPERTY_COLUMNS if name in extras},
        alerts=text(ALERTS_COLUMN) if ALERTS_COLUMN in extras else None,
        standardised_smiles=text(STANDARDISED) if STANDARDISED in extras else None,
        review=text(REVIEW) if REVIEW in extras else None,
        view_scores={name: _float32(columns[VIEW_PREFIX + name]) for name in view_names(extras)},
        model_fingerprint=fingerprint, intact=intact and ended == count + len(rejects), stopped_after=stopped_after,
        end=end_row_read)


def _float32(values: list[float]) -> np.ndarray:
    """A view's scores as float64 arrays of the float32 values the report's text stands for."""
    return np.asarray(values, dtype=np.float64).astype(np.float32).astype(np.float64)


def csv_records(lines: Iterable[tuple]) -> Iterator[tuple[int, list[str]]]:
    """Parse numbered lines as a report's CSV records; a quoted field may span lines. A record that
    holds nothing (a blank line, or a row whose cells a spreadsheet cleared) is no row of the run,
    and is passed over by every reader of reports alike (read back, merged, resumed).

    Args:
        lines: (number, line, ending) triples (:func:`core.io.text.read_lines_and_endings`),
            which keep a field's own line breaks byte for byte, or (number, line) pairs, whose
            breaks read as ``\\n``.

    Yields:
        (number of the record's last line, fields) per record.
    """
    numbered = iter(lines)
    current = [0]

    def text():
        for item in numbered:
            current[0] = item[0]
            yield item[1] + (item[2] if len(item) > 2 else "\n")

    for row in csv.reader(text()):
        if any(cell.strip() for cell in row):
            yield current[0], row


def row_graphs(report: RankedReport, i: int) -> GraphSet:
    """One row's molecule as a one-graph GraphSet, to draw it or score it again with a model.

    A report keeps only the top nodes' errors; rescoring gives every atom's.

    Args:
        report: the report read by :func:`read_report`.
        i: the row's position among the scored rows.

    Returns:
        A GraphSet of one molecule with the row's id, name, SMILES and label.

    Raises:
        DataError: the row's SMILES cannot be parsed.
    """
    return _rows_graphs(report, [i])


def report_graphs(report: RankedReport) -> GraphSet:
    """Every scored row's molecule (the SMILES it was scored as), graph i being row i, e.g. to
    draw, explain or score the rows one by one (a review scores them in bulk:
    :func:`core.screening.rescore.report_view_scores`).

    Args:
        report: the report read by :func:`read_report`.

    Returns:
        A GraphSet of ``len(report)`` molecules, each with its row's id, name, SMILES and label.

    Raises:
        DataError: a row's SMILES cannot be parsed (the file and the row are named).
    """
    return _rows_graphs(report, range(len(report)))


def _rows_graphs(report: RankedReport, rows: Iterable[int]) -> GraphSet:
    """The molecules of ``rows`` (positions among the scored rows) as a GraphSet, in that order."""
    from core.data.chem import mol_to_graph, parse_smiles

    graphs, metas = [], []
    for i in rows:
        smiles = report.scored_smiles(i)  # the molecule the model scored (its atoms are the report's top nodes)
        mol, problem = parse_smiles(smiles)
        if mol is None:
            raise DataError(f"row {i + 1} ({report.ids[i]}): {problem}", report.source)
        graphs.append(mol_to_graph(mol))
        metas.append(GraphMeta(id=str(report.ids[i]), name=str(report.names[i]), smiles=smiles,
                               label=str(report.labels[i]) or None))
    # the molecules as scored: standardised when the model standardised them (it reads them so again)
    return GraphSet(graphs, metas, source=report.source, format="report", kind="molecule",
                    standardised=report.standardised_smiles is not None)
