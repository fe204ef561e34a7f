"""The ranked CSV report: highest score first, rejected rows last with their reason.

Written atomically (a temporary file renamed into place) and spreadsheet-safe (text
that a spreadsheet would run as a formula is prefixed with an apostrophe).
"""
from __future__ import annotations

import csv
from pathlib import Path
from collections.abc import Iterator

import numpy as np

from core.data.chem import atom_symbols
from core.data.graphset import GraphSet, element_symbols
from core.data.pvalues import benjamini_hochberg
from core.data.scores import Scores
from core.runtime.files import atomic_output

COLUMNS = ("rank", "id", "name", "smiles", "score", "graph_score", "node_score", "num_nodes", "label",
           "top_nodes", "status", "p_value", "q_value")
# Reports written before p- and q-values (the reader still opens them).
LEGACY_COLUMNS = COLUMNS[:11]
# A model that standardises its molecules (core.data.standardise) adds the SMILES it scored;
# ``smiles`` stays the input's own.
STANDARDISED = "standardised_smiles"
STANDARDISED_COLUMNS = COLUMNS + (STANDARDISED,)
HEADERS = (COLUMNS, LEGACY_COLUMNS, STANDARDISED_COLUMNS)  # every header a ranked report may have
STATUS = COLUMNS.index("status")
P_VALUE, Q_VALUE = COLUMNS.index("p_value"), COLUMNS.index("q_value")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


END_PREFIX = "end of report: "


def report_columns(standardised: bool) -> tuple[str, ...]:
    """The report's header: with ``standardised_smiles`` when the model standardises its molecules.

    Args:
        standardised: whether the molecules were standardised before scoring.

    Returns:
        The column names.
    """
    return STANDARDISED_COLUMNS if standardised else COLUMNS


def end_row(rows: int, model: str, digest: str, width: int = len(COLUMNS)) -> list[str]:
    """The report's last row, which says the report is complete.

    A report without it was cut short; merging checks it (same model, no shard twice, no row
    missing).

    Args:
        rows: the data rows before it.
        model: the fingerprint of the model that scored them.
        digest: a digest of the bytes before it.
        width: the report's columns (one more when the model standardises its molecules).

    Returns:
        The row's cells, all empty but ``status``.
    """
    row = [""] * width
    row[STATUS] = f"{END_PREFIX}{rows} rows; model {model}; digest {digest}"
    return row


def parse_end_row(row: list[str]) -> tuple[int, str, str] | None:
    """Read an end row written by :func:`end_row`.

    Args:
        row: a report row's cells.

    Returns:
        (rows, model, digest), or None when ``row`` is not an end row.
    """
    if len(row) not in {len(h) for h in HEADERS} or not row[STATUS].startswith(END_PREFIX) \
            or any(row[:STATUS]) or any(row[STATUS + 1:]):
        return None
    try:
        count, model, digest = row[STATUS][len(END_PREFIX):].split("; ")
        return int(count.removesuffix(" rows")), model.removeprefix("model "), digest.removeprefix("digest ")
    except ValueError:
        return None


def safe_cell(text: str) -> str:
    """Neutralise a text cell a spreadsheet would evaluate (``=1+1``, ``@SUM(..)``).

    Args:
        text: the cell.

    Returns:
        The cell with an apostrophe before a formula-like start (numbers such as ``-1.5`` pass)
        and NUL bytes (which break most readers of a CSV file) written as ``\\x00``.
    """
    if "\x00" in text:
        text = text.replace("\x00", "\\x00")
    if text.startswith(_FORMULA_START):
        try:
            float(text)
            return text
        except ValueError:
            return "'" + text
    return text


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


def format_p(value: float) -> str:
    """Write a p- or q-value as report text.

    Args:
        value: the p- or q-value.

    Returns:
        Six significant digits; empty when the model is not calibrated (NaN).
    """
    return f"{value:.6g}" if np.isfinite(value) else ""


def report_rows(graphs: GraphSet, scores: Scores, top_k: int = 5,
                p_values: np.ndarray | None = None) -> Iterator[list[str]]:
    """The report's rows: scored rows in rank order, then one row per rejected input.

    Args:
        graphs: the scored graphs, with their rejects.
        scores: their scores.
        top_k: how many of each graph's largest node errors go in ``top_nodes`` (0: none).
        p_values: a calibrated model's p-values, one per graph; they fill ``p_value`` and their
            Benjamini-Hochberg q-values ``q_value`` (None: both empty).

    Yields:
        Each row's cells (:data:`COLUMNS`), not yet made spreadsheet-safe.
    """
    p = np.full(len(scores), np.nan) if p_values is None else np.asarray(p_values, dtype=np.float64)
    q = benjamini_hochberg(p)
    standardised = graphs.standardised  # the input's SMILES in ``smiles``, the scored one last
    for rank, i in enumerate(scores.ranking(), start=1):
        meta = graphs.meta[i]
        names = node_names(graphs, i) if top_k else []
        top = ";".join(f"{names[j]}:{err:.4g}" for j, err in scores.top_nodes(i, top_k))
        row = [str(rank), meta.id, meta.name, (meta.input_smiles or meta.smiles) if standardised else meta.smiles,
               f"{scores.score[i]:.6g}", format_term(scores.graph_term[i]), format_term(scores.node_term[i]),
               str(int(graphs.graphs[i].num_nodes)), meta.label or "", top, "ok", format_p(p[i]), format_p(q[i])]
        yield row + [meta.smiles] if standardised else row
    for reject in graphs.rejects:
        line = f"line {reject.line}: " if reject.line is not None else ""
        row = ["", reject.id, "", reject.text, "", "", "", "", "", "", f"rejected: {line}{reject.reason}", "", ""]
        yield row + [""] if standardised else row


def write_report(path: str | Path, graphs: GraphSet, scores: Scores, top_k: int = 5,
                 p_values: np.ndarray | None = None) -> int:
    """Write the ranked report to ``path`` atomically, spreadsheet-safe.

    Args:
        path: the CSV file to write.
        graphs: the scored graphs, with their rejects.
        scores: their scores, one per graph.
        top_k: how many of each graph's largest node errors go in ``top_nodes``.
        p_values: a calibrated model's p-values of the graphs (``detector.p_values(scores.score)``;
            None: not calibrated).

    Returns:
        The number of data rows written (scored and rejected, not the header).

    Raises:
        ValueError: ``scores`` and ``graphs`` differ in length.
    """
    if len(scores) != len(graphs):
        raise ValueError(f"{len(scores)} scores for {len(graphs)} graphs")
    rows = 0
    with atomic_output(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(report_columns(graphs.standardised))
        for row in report_rows(graphs, scores, top_k, p_values):
            writer.writerow([safe_cell(cell) for cell in row])
            rows += 1
    return rows


