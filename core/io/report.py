"""The ranked CSV report: highest score first, rejected rows last with their reason.

Written atomically (a temporary file renamed into place) and spreadsheet-safe (text
that a spreadsheet would run as a formula is prefixed with an apostrophe).
"""
from __future__ import annotations

from typing import NamedTuple

import csv
import json
import re
import hashlib
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from core.data.chem import atom_symbols
from core.data.graphset import GraphSet, element_symbols
from core.data.properties import PROPERTY_COLUMNS, molecular_properties, property_text
from core.data.pvalues import format_p, report_q_values
from core.data.scores import Scores, ranking_of, score_text
from core.errors import DataError, GLocalKDError, ParameterError
from core.runtime.files import atomic_output
from core.runtime.values import is_count

COLUMNS = ("rank", "id", "name", "smiles", "score", "graph_score", "node_score", "num_nodes", "label",
           "top_nodes", "status", "p_value", "q_value")
# Reports written before p- and q-values (the reader still opens them).
LEGACY_COLUMNS = COLUMNS[:11]
# Optional columns after COLUMNS, in this order: a chemist's properties (--properties), then the
# structural alerts (--alerts), then each view's raw score (--view-scores, ``view:<name>``, one
# column per view of a consensus). A report holds any of these groups.
ALERTS_COLUMN = "alerts"
VIEW_PREFIX = "view:"
# A model that standardises its molecules (core.data.standardise) adds the SMILES it scored, last;
# ``smiles`` stays the input's own.
STANDARDISED = "standardised_smiles"
EXTRA_COLUMNS = (*PROPERTY_COLUMNS, ALERTS_COLUMN, STANDARDISED)
STATUS = COLUMNS.index("status")
P_VALUE, Q_VALUE = COLUMNS.index("p_value"), COLUMNS.index("q_value")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


# suffixes of other formats: a ranked report is always plain CSV, and one named r.csv.gz or r.sdf
# was CSV under a name that no reader of that format opens
NOT_REPORT_SUFFIXES = (".gz", ".bz2", ".xz", ".zip", ".sdf", ".sd", ".mol", ".smi", ".tsv", ".tab", ".xlsx", ".xls",
                       ".json", ".parquet", ".html", ".pt")


def report_name_problem(path: str | Path) -> str | None:
    """Say what is wrong with a ranked report's name, if anything.

    Args:
        path: the report to write.

    Returns:
        The reason, worded to follow the file's name, or None for a name that fits.
    """
    suffix = Path(path).suffix.lower()
    if suffix in NOT_REPORT_SUFFIXES:
        return f"the ranked report is written as CSV, not {suffix}; name it .csv (the app exports SDF and HTML)"
    return None


def check_report_output(report: str | Path, inputs: list[str | Path] | tuple = ()) -> None:
    """Check a ranked report's file before any work, for every writer of one (the library's
    :func:`core.screen`, :func:`core.score_file`, :func:`core.merge_reports` and
    :func:`write_report`, and so each command): only the command line checked, and ``screen(m,
    "a.smi", "a.smi")`` replaced the library with its report.

    Args:
        report: the report to write.
        inputs: the files and folders the writer reads (a folder holds every file under it).

    Raises:
        GLocalKDError: the name promises another format (:func:`report_name_problem`), or the
            report is, or lies inside, one of ``inputs``.
        OSError: the report cannot be written there (:func:`core.runtime.files.check_outputs`).
    """
    from core.runtime.files import check_outputs

    check_outputs([report], [str(p) for p in inputs if p])  # first: a report over its input is said as such
    problem = report_name_problem(report)
    if problem is not None:
        raise GLocalKDError(f"{report}: {problem}")


def extra_columns(properties: bool = False, alerts: bool = False, standardised: bool = False,
                  views: tuple[str, ...] | list[str] = ()) -> tuple[str, ...]:
    """The optional columns a report gets after :data:`COLUMNS`.

    Args:
        properties: the chemist's properties (:data:`core.data.properties.PROPERTY_COLUMNS`).
        alerts: the ``alerts`` column (RDKit's structural alerts, :func:`core.data.alerts.alerts_text`).
        standardised: the ``standardised_smiles`` column (a model that standardises its molecules).
        views: the registry names of the views whose raw scores get a ``view:<name>`` column each
            (a consensus's ``views``, in order; empty: none).

    Returns:
        The column names, in report order.
    """
    return (*(PROPERTY_COLUMNS if properties else ()), *((ALERTS_COLUMN,) if alerts else ()),
            *(VIEW_PREFIX + name for name in views), *((STANDARDISED,) if standardised else ()))


def view_names(extras: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The views whose raw scores a report's optional columns hold.

    Args:
        extras: the optional columns (:func:`header_extras`).

    Returns:
        The view names (``view:glocalkd`` gives ``glocalkd``), in column order.
    """
    return tuple(c[len(VIEW_PREFIX):] for c in extras if c.startswith(VIEW_PREFIX))


def view_columns(view_scores: dict[str, np.ndarray] | None) -> tuple[list[str], Callable[[int], list[str]]]:
    """A report's ``view:`` columns, for the app's exports of a report that holds them.

    Args:
        view_scores: view name -> each row's raw score (None: no views).

    Returns:
        The column names, in the dictionary's order, and ``cells(i)`` giving row i's (as
        :func:`format_view_score` writes them).
    """
    views = list((view_scores or {}).values())
    return [VIEW_PREFIX + name for name in view_scores or {}], lambda i: [format_view_score(v[i]) for v in views]


def format_view_score(value: float) -> str:
    """Write a view's raw score as report text that reads back to the same float32.

    Args:
        value: the score (a float32 value).

    Returns:
        The shortest text whose float32 is ``value`` (``float32(float(text)) == value``).
    """
    return str(np.float32(value))


def report_columns(standardised: bool) -> tuple[str, ...]:
    """The report's header without properties or alerts.

    Args:
        standardised: whether the molecules were standardised before scoring.

    Returns:
        The column names (``standardised_smiles`` last when ``standardised``).
    """
    return (*COLUMNS, *extra_columns(standardised=standardised))


def header_extras(header: list[str] | tuple[str, ...]) -> tuple[str, ...] | None:
    """The optional columns of a report's header.

    Args:
        header: the first row's cells.

    Returns:
        The optional columns (:func:`extra_columns`, then the app's :data:`APP_COLUMNS` that its
        exports add; none for the older header without p- and q-values), or None when ``header``
        is not a ranked report's (also when its view columns are not together in their place,
        repeat a view or name none).
    """
    header = list(header)
    if header == list(LEGACY_COLUMNS):
        return ()
    if header[:len(COLUMNS)] != list(COLUMNS):
        return None
    extras = tuple(header[len(COLUMNS):])
    app: tuple[str, ...] = ()
    for name in reversed(APP_COLUMNS):  # in their order, each at most once, after the report's own
        if extras and extras[-1] == name:
            extras, app = extras[:-1], (name, *app)
    views = view_names(extras)
    if any(not name or name.startswith(VIEW_PREFIX) for name in views) or len(set(views)) != len(views):
        return None
    if extras in {extra_columns(p, a, s, views) for p in (False, True) for a in (False, True) for s in (False, True)}:
        return (*extras, *app)
    return None


# the columns the app's exports add after a report's own: its flag (1 above the flag threshold) and
# the analyst's review marks ("anomaly", "not anomaly" or empty); read back, a tab's marks return
APP_COLUMNS = ("flagged", "review")


END_PREFIX = "end of report: "


class EndRow(NamedTuple):
    """What a report's end row says: the rows before it, the scoring model's fingerprint, a digest
    of the bytes before it, and the input line after which a stopped run read no more (None: the
    run read its whole input)."""

    rows: int
    model: str
    digest: str
    stopped_after: int | None = None
    cut_from: int | None = None  # the rows scored, of which the report keeps the best (--top); None: every one
    read_as: str = ""  # a stopped run's reading settings (:func:`reading_key`); "" where not recorded
    rows_read: str = ""  # a stopped run's hash of its rows as read (:func:`core.io.molecules.rows_hash`, 16 hex
    # digits); "" where not recorded


def reading_key(smiles_column: str | None, id_column: str | None, label_column: str | None, top_k: int) -> str:
    """A short key of the settings that decide what a run reads from its library and writes per
    row: the columns named and the atoms listed. A stopped run's end row keeps it, and a resumed
    run must have the same (its rows once came from another SMILES column, without a word).

    Args:
        smiles_column: the SMILES column asked for (None: found by its name).
        id_column: the id column asked for (None: found, or line numbers).
        label_column: the label column asked for (None: found, or none).
        top_k: the atoms listed per row in ``top_nodes``.

    Returns:
        12 hexadecimal digits.
    """
    text = json.dumps([smiles_column, id_column, label_column, int(top_k)])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def end_row(rows: int, model: str, digest: str, width: int = len(COLUMNS), stopped_after: int | None = None,
            cut_from: int | None = None, read_as: str = "", rows_read: str = "") -> list[str]:
    """The report's last row, which says the report is complete, or where its run was stopped.

    A report without it was cut short; merging checks it (same model, no shard twice, no row
    missing, no stopped run).

    Args:
        rows: the data rows before it.
        model: the fingerprint of the model that scored them.
        digest: a digest of the bytes before it.
        width: the header's columns (more than ``COLUMNS`` with optional columns).
        stopped_after: the last input line a stopped run read (None: it read every line).
        cut_from: the rows scored when the report keeps only the best of them (``--top``), which
            the report itself says (a merge of it without its summary took it for whole, and gave
            q-values over the rows kept only); None when it keeps every scored row.
        read_as: a stopped run's :func:`reading_key`, written with ``stopped_after`` ("": none).
        rows_read: a stopped run's hash of the rows it read, written with ``stopped_after`` ("": none).

    Returns:
        The row's cells, all empty but ``status``.
    """
    row = [""] * width
    row[STATUS] = f"{END_PREFIX}{rows} rows; model {model}; digest {digest}"
    if cut_from is not None:
        row[STATUS] += f"; {CUT_PREFIX}{cut_from}"
    if stopped_after is not None:
        row[STATUS] += (f"; {READ_PREFIX}{read_as}" if read_as else "") + \
            (f"; {ROWS_READ_PREFIX}{rows_read}" if rows_read else "") + f"; {STOPPED_PREFIX}{stopped_after}"
    return row


STOPPED_PREFIX = "stopped after input line "
CUT_PREFIX = "the best rows of scored rows: "
READ_PREFIX = "read as "
ROWS_READ_PREFIX = "rows read "


NOT_READ = re.compile(r"not scored: the run was stopped after input line ([\d,]+); ")


def not_read_line(status: str) -> int | None:
    """The input line a stopped run's "not scored" status names (:func:`not_read_status`), or None.

    Args:
        status: a row's status.

    Returns:
        The last input line the run read, or None for another status.
    """
    found = NOT_READ.match(status)
    return int(found[1].replace(",", "")) if found else None


SCORED, REJECTED, NOT_READ_ROW = "scored", "rejected", "not read"  # the kinds of a report's data rows


def row_kind(row: list[str], report: str | Path, line: int) -> str:
    """Say what a report's data row (not its end row) is, by its status: the one rule of every
    reader (:func:`core.io.ranked_report.read_report`, ``merge-reports`` and a resumed run).

    A status edited by hand (``OK``, ``ok ``) was taken for a rejected row: the scored row went
    among the rejects keeping its rank and p-value, and the BH counts dropped.

    Args:
        row: the row's cells.
        report: the report, for the message.
        line: the row's line, for the message.

    Returns:
        :data:`SCORED` (status ``ok``), :data:`REJECTED` (a ``rejected: ...`` status, with no
        rank and no score) or :data:`NOT_READ_ROW` (an export's row for the lines a stopped run
        never read: :func:`not_read_status`).

    Raises:
        DataError: any other status, or a rejected row with a rank or a score, naming the report
            and the line.
    """
    status = row[STATUS]
    if status == "ok":
        return SCORED
    if status.startswith("rejected: ") and not row[0] and not row[4]:
        return REJECTED
    if not_read_line(status) is not None:
        return NOT_READ_ROW
    raise DataError(f"the status {status!r} is neither ok nor a rejection with no rank or score (was the report "
                    "edited?)", str(report), line)


def not_read_status(stopped_after: int) -> str:
    """The status that an export of a stopped run's rows gives the rows it never read (one row or
    record standing for all of them, in the CSV and the SD exports alike).

    Args:
        stopped_after: the last input line the run read.

    Returns:
        The status text.
    """
    return f"not scored: the run was stopped after input line {stopped_after:,}; the rows after it were not read"


def parse_end_row(row: list[str]) -> EndRow | None:
    """Read an end row written by :func:`end_row`.

    Args:
        row: a report row's cells.

    Returns:
        The :class:`EndRow`, or None when ``row`` is not an end row.
    """
    if len(row) < len(LEGACY_COLUMNS) or not row[STATUS].startswith(END_PREFIX) \
            or any(row[:STATUS]) or any(row[STATUS + 1:]):
        return None
    parts = row[STATUS][len(END_PREFIX):].split("; ")
    try:
        stopped = int(parts.pop().removeprefix(STOPPED_PREFIX)) if parts[-1].startswith(STOPPED_PREFIX) else None
        rows_read = parts.pop().removeprefix(ROWS_READ_PREFIX) \
            if stopped is not None and parts[-1].startswith(ROWS_READ_PREFIX) else ""
        if rows_read:
            int(rows_read, 16)  # 16 hex digits, else no end row
        read_as = parts.pop().removeprefix(READ_PREFIX) if stopped is not None and parts[-1].startswith(READ_PREFIX) \
            else ""
        cut_from = int(parts.pop().removeprefix(CUT_PREFIX)) if parts[-1].startswith(CUT_PREFIX) else None
        count, model, digest = parts
        return EndRow(int(count.removesuffix(" rows")), model.removeprefix("model "), digest.removeprefix("digest "),
                      stopped, cut_from, read_as, rows_read)
    except ValueError:
        return None


def safe_cell(text: str) -> str:
    """Neutralise a text cell a spreadsheet would evaluate (``=1+1``, ``@SUM(..)``).

    Args:
        text: the cell.

    Returns:
        The cell with an apostrophe before a formula-like start, apostrophes before it counted
        (numbers such as ``-1.5`` pass; :func:`unsafe_cell` undoes it), and NUL bytes (which
        break most readers of a CSV file) written as ``\\x00``.
    """
    if "\x00" in text:
        text = text.replace("\x00", "\\x00")
    if text.lstrip("'").startswith(_FORMULA_START):  # ("'=x" too: the reader would take its apostrophe for the guard)
        try:
            float(text)
            return text
        except ValueError:
            return "'" + text
    return text


def unsafe_cell(text: str) -> str:
    """Undo :func:`safe_cell`'s guard, so that every cell reads back as it was written.

    Args:
        text: the cell as the report holds it.

    Returns:
        The cell without the one apostrophe the guard put before a formula-like start (``'=x``
        is ``=x``; ``''=x`` is ``'=x``, an id that began with an apostrophe; ``'t Hooft`` is
        left as it is).
    """
    return text[1:] if text.startswith("'") and text.lstrip("'").startswith(_FORMULA_START) else text


def node_names(graphs: GraphSet, i: int) -> list[str]:
    """Display names of one graph's nodes.

    Args:
        graphs: the graph set.
        i: the graph's position.

    Returns:
        ``C3`` (element + node index) for molecules and TU graphs whose labels name elements,
        ``n3`` otherwise (or when the symbols do not match the node count).
    """
    n = int(graphs.graphs[i].num_nodes)
    symbols: list[str] = []
    if graphs.meta[i].smiles:
        symbols = atom_symbols(graphs.meta[i].smiles)
    else:
        elements = element_symbols(graphs.node_label_names)
        labels = graphs.graphs[i].get("node_label")
        if elements and labels is not None:
            symbols = [elements.get(int(v), "?") for v in labels]
    if len(symbols) != n:
        return [f"n{j}" for j in range(n)]
    return [f"{s}{j}" for j, s in enumerate(symbols)]


def format_term(value: float) -> str:
    """Write a score term as report text.

    Args:
        value: the term.

    Returns:
        Six significant digits; empty for detectors that have no such term (NaN).
    """
    return f"{value:.6g}" if np.isfinite(value) else ""


def property_cells(properties: np.ndarray) -> list[str]:
    """One molecule's properties as report cells.

    Args:
        properties: a row of :func:`core.data.properties.molecule_properties`.

    Returns:
        The cells, in :data:`PROPERTY_COLUMNS` order (empty where a value is NaN).
    """
    return [property_text(name, float(v)) for name, v in zip(PROPERTY_COLUMNS, properties)]


def extra_cells(graphs: GraphSet, extras: tuple[str, ...] | list[str],
                view_scores: dict[str, np.ndarray] | None = None) -> Callable[[int], list[str]]:
    """The cells of the optional columns, graph by graph.

    Args:
        graphs: the graphs (their molecules are read: SMILES, or a TU collection's element labels).
        extras: the optional columns (:func:`extra_columns`).
        view_scores: view name -> each graph's raw score under that view, for the ``view:``
            columns of ``extras``.

    Returns:
        ``cells(i)``: graph i's cells; the properties are computed once for every graph, the
        alerts of a graph when it is asked for.
    """
    properties = None
    if any(c in PROPERTY_COLUMNS for c in extras):
        values = molecular_properties(graphs)
        properties = np.column_stack([values[c] for c in PROPERTY_COLUMNS])
    views = [np.asarray(view_scores[name], dtype=np.float32) for name in view_names(extras)]

    def cells(i: int) -> list[str]:
        out = property_cells(properties[i]) if properties is not None else []
        if ALERTS_COLUMN in extras:
            from core.data.alerts import alerts_text, graph_alerts

            out.append(alerts_text(graph_alerts(graphs, i)))
        out.extend(format_view_score(v[i]) for v in views)
        if STANDARDISED in extras:
            out.append(graphs.meta[i].smiles)  # what was scored
        return out

    return cells


def report_rows(graphs: GraphSet, scores: Scores, top_k: int = 5, p_values: np.ndarray | None = None,
                extras: tuple[str, ...] = (), view_scores: dict[str, np.ndarray] | None = None,
                rank: np.ndarray | None = None) -> Iterator[list[str]]:
    """The report's rows: scored rows in rank order, then one row per rejected input.

    Args:
        graphs: the scored graphs, with their rejects.
        scores: their scores.
        top_k: how many of each graph's largest node errors go in ``top_nodes`` (0: none).
        p_values: a calibrated model's p-values, one per graph; they fill ``p_value`` and their
            Benjamini-Hochberg q-values ``q_value`` (None: both empty).
        extras: optional columns after :data:`COLUMNS` (:func:`extra_columns`).
        view_scores: view name -> each graph's raw score, for the ``view:`` columns of ``extras``.
        rank: each graph's rank (1 = top), when it is not the scores' own, e.g. an analyst's
            review's (:func:`ranking_of`); the rows follow it.

    Yields:
        Each row's cells (:data:`COLUMNS`, then ``extras``), not yet made spreadsheet-safe.

    Raises:
        GLocalKDError: scores, p-values or view scores that are not one per graph (another set's
            would be written beside the wrong graphs).
    """
    _check_one_per_graph(graphs, scores, p_values, view_scores)
    p = np.full(len(scores), np.nan) if p_values is None else np.asarray(p_values, dtype=np.float64)
    q = report_q_values(p)
    cells = extra_cells(graphs, extras, view_scores) if extras else (lambda i: [])
    for position, i in enumerate(ranking_of(scores, rank), start=1):
        meta = graphs.meta[i]
        names = node_names(graphs, i) if top_k else []
        top = ";".join(f"{names[j]}:{err:.4g}" for j, err in scores.top_nodes(i, top_k))
        smiles = (meta.input_smiles or meta.smiles) if graphs.standardised else meta.smiles  # as read
        yield [str(position), meta.id, meta.name, smiles, score_text(scores.score[i]),
               format_term(scores.graph_term[i]), format_term(scores.node_term[i]), str(int(graphs.graphs[i].num_nodes)),
               meta.label or "", top, "ok", format_p(p[i]), format_p(q[i]), *cells(int(i))]
    for reject in graphs.rejects:
        yield ["", reject.id, "", reject.text, "", "", "", "", "", "", reject.status, "", "",
               *[""] * len(extras)]


def _check_one_per_graph(graphs: GraphSet, scores: Scores, p_values, view_scores) -> None:
    """Refuse arrays that are not one value per graph, before a row is written."""
    given = [("scores", len(scores.score))]
    if p_values is not None:
        given.append(("p-values", int(np.asarray(p_values).size)))
    given.extend((f"{name} view scores", int(np.asarray(v).size)) for name, v in (view_scores or {}).items())
    wrong = [f"{n:,} {what}" for what, n in given if n != len(graphs)]
    if wrong:
        raise GLocalKDError(f"a report needs one value per graph: {len(graphs):,} graphs, but {', '.join(wrong)}")


class DigestingStream:
    """A text stream that passes what is written on to ``stream`` and keeps its SHA-256 (UTF-8),
    for a report's end row (:func:`end_row`)."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.hash = hashlib.sha256()

    def write(self, text: str) -> int:
        """Write ``text`` to the stream and feed it to the digest.

        Args:
            text: what to write.

        Returns:
            The characters written.
        """
        self.hash.update(text.encode("utf-8"))
        return self.stream.write(text)


class ReportOutput:
    """A ranked report being written (:func:`report_output`): its rows go through :meth:`row` (or,
    already formatted, straight to :attr:`stream`, counted in :attr:`rows`), and its end row is
    written when the ``with`` block ends.

    Attributes:
        stream: the file, as a stream that keeps the digest of what is written.
        rows: the data rows written (scored and rejected), which the end row counts.
        model, stopped_after, cut_from, read_as, rows_read: what the end row says (:func:`end_row`);
            set while writing when only known then (e.g. ``cut_from`` after a merge).
    """

    def __init__(self, fh, header: Sequence[str], model: str, stopped_after: int | None, cut_from: int | None,
                 read_as: str, rows_read: str) -> None:
        self._fh, self.width = fh, len(header)
        self.stream = DigestingStream(fh)
        self._writer = csv.writer(self.stream)
        self._writer.writerow(header)
        self.rows = 0
        self.model, self.stopped_after, self.cut_from = model, stopped_after, cut_from
        self.read_as, self.rows_read = read_as, rows_read

    def row(self, cells: Sequence[object]) -> None:
        """Write one data row, each cell made spreadsheet-safe (:func:`safe_cell`).

        Args:
            cells: the row's cells, one per column.
        """
        self.note(cells)
        self.rows += 1

    def note(self, cells: Sequence[object]) -> None:
        """Write a row that is not a data row (e.g. the lines a stopped run never read): not counted.

        Args:
            cells: the row's cells, one per column.
        """
        self._writer.writerow([safe_cell(str(cell)) for cell in cells])

    def end(self) -> None:
        """Write the end row (past the digest: it is not part of what it digests)."""
        csv.writer(self._fh).writerow(end_row(self.rows, self.model, self.stream.hash.hexdigest()[:16], self.width,
                                              self.stopped_after, self.cut_from, self.read_as, self.rows_read))


PRECISION_MARK = "+"  # joins a fingerprint and the precision its scores were computed in, when not float32


def scored_as(fingerprint: str, precision: str = "float32") -> str:
    """What an end row names as its model: the fingerprint, with the precision the scores were
    computed in when it is not float32 (``4dd46242d0b5335c+bfloat16``). Scores in bfloat16 differ
    from float32's (by up to 0.46, 21 ranks of 123 rows), yet both named one model: a resumed run
    mixed them, and merge-reports merged a shard of each without a word.

    Args:
        fingerprint: the model's fingerprint.
        precision: ``float32`` or ``bfloat16``.

    Returns:
        The name: the fingerprint alone for float32, so that reports written before keep theirs.
    """
    return fingerprint if precision == "float32" else f"{fingerprint}{PRECISION_MARK}{precision}"


def other_model(found: str, wanted: str) -> str:
    """Why a report's model is not the one wanted, for a refusal: another precision of the same
    model (:func:`scored_as`), or another model.

    Args:
        found: the model the report's end row names.
        wanted: the model it should name.

    Returns:
        The reason, starting "scored ...".
    """
    def precision(name: str) -> str:
        return name.partition(PRECISION_MARK)[2] or "float32"

    if found.partition(PRECISION_MARK)[0] == wanted.partition(PRECISION_MARK)[0]:
        return (f"scored in {precision(found)} precision, not {precision(wanted)} (--precision): scores of two "
                "precisions differ, and are not ranked together")
    return f"scored with another model (fingerprint {found}) than {wanted}"


def model_fingerprint(model: object) -> str:
    """The fingerprint an end row names.

    Args:
        model: a detector, its fingerprint, or None (not known: a merge refuses such a report).

    Returns:
        The detector's own fingerprint, ``model`` when it is one already, or "" for None.
    """
    if model is None:
        return ""
    return model if isinstance(model, str) else str(model.fingerprint())


@contextmanager
def report_output(path: str | Path, header: Sequence[str], model: object, stopped_after: int | None = None,
                  cut_from: int | None = None, read_as: str = "", rows_read: str = "") -> Iterator[ReportOutput]:
    """Write a ranked report to ``path``: the one way every report file is written (a screened or
    merged library, ``write_report``, the app's exports), so that each ends with its end row.

    The file is written atomically: nothing replaces ``path`` unless the ``with`` block ends
    without an exception. Reports written beside this (the app's exports) had no end row, so a
    merge refused them as cut short, and a reopened export lost its model's fingerprint.

    Args:
        path: the CSV file to write.
        header: its columns (:data:`COLUMNS`, then the optional ones).
        model: the detector that scored the rows, or its fingerprint (None or "": not known).
        stopped_after: the last input line a stopped run read (:func:`end_row`; None: every line).
        cut_from: the rows scored, of which the report keeps the best (None: it keeps every one).
        read_as: a stopped run's reading settings ("": none).
        rows_read: a stopped run's hash of the rows it read ("": none).

    Yields:
        The :class:`ReportOutput` to write rows to.
    """
    with atomic_output(path, "w", newline="", encoding="utf-8") as fh:
        out = ReportOutput(fh, header, model_fingerprint(model), stopped_after, cut_from, read_as, rows_read)
        yield out
        out.end()


def check_top_k(top_k: object) -> None:
    """Refuse a ``top_k`` (atoms listed per row in ``top_nodes``) that is not a whole number of at
    least 0: -1 listed every atom but the last, 2.5 failed on a slice with a bare TypeError.

    Args:
        top_k: the number asked for.

    Raises:
        ParameterError: naming ``top_k``.
    """
    if not is_count(top_k, 0):
        raise ParameterError(f"{{top_k}} must be a whole number of at least 0 (the atoms listed per row), not "
                             f"{top_k!r}", "top_k")


def write_report(path: str | Path, graphs: GraphSet, scores: Scores, top_k: int = 5,
                 p_values: np.ndarray | None = None, properties: bool = False, alerts: bool = False,
                 view_scores: dict[str, np.ndarray] | None = None, model: object = None) -> int:
    """Write the ranked report to ``path`` atomically, spreadsheet-safe.

    Args:
        path: the CSV file to write.
        graphs: the scored graphs, with their rejects.
        scores: their scores, one per graph.
        top_k: how many of each graph's largest node errors go in ``top_nodes``.
        p_values: a calibrated model's p-values of the graphs (``detector.p_values(scores.score)``;
            None: not calibrated).
        properties: add the chemist's properties (``mw``, ``clogp``, ... after the usual columns).
        alerts: add the ``alerts`` column (about 10-20 ms a molecule).
        view_scores: view name -> each graph's raw score under that view (a consensus's
            :meth:`~core.detectors.consensus.Consensus.view_scores`), written as ``view:<name>``
            columns in this order (None: none).
        model: the detector that scored them, or its fingerprint, which the end row names
            (:func:`end_row`); a merge of reports checks that one model scored them all, and refuses a
            report that does not name it (None: not named).

    Returns:
        The number of data rows written (scored and rejected, not the header nor the end row).

    Raises:
        ValueError: ``scores`` and ``graphs`` differ in length.
        ParameterError: ``top_k`` is not a whole number of at least 0 (:func:`check_top_k`).
        GLocalKDError: as :func:`check_report_output` (the graphs' file is the input).
    """
    if len(scores) != len(graphs):
        raise ValueError(f"{len(scores)} scores for {len(graphs)} graphs")
    check_top_k(top_k)
    check_report_output(path, [graphs.source] if graphs.source else [])
    extras = extra_columns(properties, alerts, graphs.standardised, tuple(view_scores or ()))
    with report_output(path, (*COLUMNS, *extras), model) as out:
        for row in report_rows(graphs, scores, top_k, p_values, extras, view_scores):
            out.row(row)
    return out.rows


