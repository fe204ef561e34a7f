"""What a results tab can export: the rows it shows, written as CSV or SDF by the tab's own data.

Each tab that shows rows (the training data's results, a scored file's report) describes itself
as an :class:`ExportTable`; Export writes the active tab's table, so the file holds what the tab
shows (its rows, in rank order, with the columns of its report). No Qt here."""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import numpy as np

from . import tasks
from .unsaved import MODEL

StopCheck = Callable[[], bool] | None  # a writer's "stop now?" (Stop pressed, or the window closing)


@dataclass
class ExportTable:
    """One tab's rows to export.

    Attributes:
        stem: the file name's stem offered in the Save dialog (e.g. ``herg`` -> ``herg_ranked.csv``).
        total: how many scored rows the tab holds.
        visible: the row indices its filters show (written in rank order, the table's ranks, whatever
            column the table is sorted by: a file is a ranked report, which opens again as one).
        has_molecules: whether SDF can be written (the rows have SMILES or molecules).
        write_csv: ``(path, rows or None, should_stop) -> rows written``; None writes all rows and the
            rejected ones; ``should_stop`` (or None) is polled between rows: True raises
            :class:`core.Stopped` and nothing is written.
        write_sdf: ``(path, rows or None, should_stop) -> molecules written``.
        write_html: ``(path, job=None) -> molecules drawn``: the one-file HTML report, a background job.
        work: the unsaved work that writing these rows settles (:mod:`app.unsaved`: ``MODEL`` for the
            training data's results, the tab itself for a scored file's).
        inputs: the files the rows were read or scored from, which no export may replace (an
            export named like the data file replaced it without a word).
    """

    stem: str
    total: int
    visible: np.ndarray
    has_molecules: bool
    write_csv: Callable[[str, np.ndarray | None, StopCheck], int]
    write_sdf: Callable[[str, np.ndarray | None, StopCheck], int]
    write_html: Callable[..., int]
    work: object = MODEL
    inputs: tuple[str, ...] = ()

    def check_output(self, path: str) -> None:
        """Refuse a file this tab's rows came from, before anything is written.

        Args:
            path: the file to write.

        Raises:
            GLocalKDError: ``path`` is one of :attr:`inputs` (:func:`core.check_outputs`).
            OSError: ``path`` cannot be written.
        """
        from core import check_outputs

        check_outputs([path], [p for p in self.inputs if p])


def graphs_table(stem: str, graphs, scores, visible: np.ndarray, flagged: np.ndarray,
                 p_values: np.ndarray | None, has_molecules: bool, html: dict,
                 review: dict[int, str] | None = None, properties: dict | None = None,
                 rank: np.ndarray | None = None) -> ExportTable:
    """The training data's results tab: every graph, its score, p- and q-value and flag, and its
    review mark when any graph is marked (``review``: graph index -> "anomaly" or "not anomaly"),
    and for molecules their ``properties`` (:func:`core.molecular_properties`) and alerts;
    ``html``: the HTML report's other inputs (model, anomaly_label, threshold, vmax); ``rank``:
    each graph's rank as the tab shows it (the review's when rows are marked; None: the scores'),
    which every file written follows."""

    def write_csv(path: str, rows: np.ndarray | None, should_stop: StopCheck = None) -> int:
        return tasks.export_csv(path, graphs, scores, rows, flagged, p_values, review=review, properties=properties,
                                rank=rank, should_stop=should_stop, model=html["model"])

    def write_sdf(path: str, rows: np.ndarray | None, should_stop: StopCheck = None) -> int:
        return tasks.export_sdf(path, graphs, scores, rows, flagged, p_values, review=review, rank=rank,
                                should_stop=should_stop)

    def write_html(path: str, job=None) -> int:
        return tasks.export_html(path, graphs, scores, html["model"], html["anomaly_label"], html["threshold"],
                                 p_values, vmax=html["vmax"], review=review, rank=rank)

    return ExportTable(stem, len(graphs), visible, has_molecules, write_csv, write_sdf, write_html,
                       inputs=(graphs.source,))


def report_table(stem: str, report, visible: np.ndarray, model, work: object = None,
                 review: dict[int, str] | None = None, rank: np.ndarray | None = None,
                 vmax: float | None = None, inputs: tuple[str, ...] = ()) -> ExportTable:
    """A ranked report's tab (a scored file): its rows, p- and q-values, and its rejected rows;
    ``model``: the open model, which draws the HTML report's heatmaps (None: plain drawings);
    ``work``: the tab, whose results the export saves; ``review``: the analyst's marks (row ->
    "anomaly" or "not anomaly"), a ``review`` column of the CSV, SD property and the HTML report's
    table of reviewed rows when any row is marked; ``rank``: each row's rank as the tab shows it
    (None: the report's order), which every file written follows; ``vmax``: the heatmaps' shared
    colour scale (the training tab's, as the tab draws them); ``inputs``: the files the report was
    scored from, beside the report itself, which no export may replace."""
    return ExportTable(stem, len(report), visible, bool(len(report) and any(report.smiles)),
                       lambda path, rows, stop=None: tasks.export_report_csv(path, report, rows, review=review,
                                                                             rank=rank, should_stop=stop),
                       lambda path, rows, stop=None: tasks.export_report_sdf(path, report, rows, review=review,
                                                                             rank=rank, should_stop=stop),
                       lambda path, job=None: tasks.export_report_html(path, report, model, review=review, rank=rank,
                                                                       vmax=vmax, source=next(iter(inputs), "")),
                       work, inputs=(report.source, *inputs))


def training_table(state, visible: np.ndarray, anomaly_label: str | None, vmax: float | None,
                   rank: np.ndarray | None = None) -> ExportTable | None:
    """The training data's results tab as an :class:`ExportTable` (with the review marks, if any), or
    None without scores.

    Args:
        state: the :class:`app.state.AppState`.
        visible: the graphs the table's filters show, in table order.
        anomaly_label: the class the Evaluation tab ranks as anomalous (the HTML report's ROC).
        vmax: the heatmaps' shared colour scale.
        rank: each graph's rank as the table shows it (the review's when rows are marked).

    Returns:
        The table, or None.
    """
    from pathlib import Path

    if state.graphs is None or state.scores is None:
        return None
    html = {"model": state.model, "anomaly_label": anomaly_label, "threshold": state.threshold(), "vmax": vmax}
    return graphs_table(Path(state.graphs.source).stem or "graphs", state.graphs, state.scores, visible,
                        state.flagged(), state.p_values(), state.has_smiles(), html,
                        properties=state.properties, review=state.review_words(), rank=rank)
