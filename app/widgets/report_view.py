"""A tab over a ranked CSV report (e.g. a million-compound screening result from
``glocalkd screen``): the rows as a sortable, filterable table, and the selected molecule
drawn beside it. The report is read in a worker thread; nothing per row is built but the
table's numpy columns. The selected molecule is drawn at once; with a GLocalKD model open in the
main window it is then scored again in the background so every atom's error is drawn, otherwise
the report's top nodes are listed. With molecules and a model open in the window, its most similar
training molecules are listed beside it and the nearest is drawn beside it in the *Nearest training
molecule* tab (:class:`app.controllers.nearest.ReportNearestController`)."""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, Slot
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QSplitter, QTabWidget, QVBoxLayout, QWidget

from core import counted

from .. import tasks
from ..review_book import MAX_REPORT_ROWS, ReviewBook, reads_view_scores, report_unavailable, scored_by
from ..workers import LatestJob
from .heatmap import HeatmapPanel
from .filter_bar import RangeFilter
from .nearest import NearestPanel
from .table import (COLUMNS, ResultsModel, legend_label, results_view, selected_rows, show_data_columns,
                    sort_values)


class ReportView(QWidget):
    """One ranked report: table on the left, the selected molecule on the right (its heatmap, and
    beside it its nearest training molecule); a tab of the main window.

    Args:
        report: the ranked report (:func:`core.read_report`).
        model_getter: the main window's current detector, if any.
        note: heads the status line.
        parent: the owning widget.
        images: the window's drawing process (structure pictures, the nearest pair).
        state: the window's state, whose training molecules the selected row is compared with
            (None: nothing to compare with).
    """

    def __init__(self, report, model_getter=lambda: None, note: str = "", parent=None, images=None, state=None):
        super().__init__(parent)
        self.report = report
        self._model_getter = model_getter  # the main window's current detector, if any
        self.title = Path(report.source).name
        self.setObjectName("report_view")
        self._rescoring = LatestJob("rescore row", self)  # the selected row's atoms, off the GUI thread
        self._shown = -1  # the row drawn
        self.book = ReviewBook()  # the analyst's marks on these rows and their re-ranking (Review menu)
        self._review_note = ""  # said in the status line once a review re-ranks: whose views' scores it reads
        self.model_table = ResultsModel(self)
        self.model_table.set_report(report)
        self.model_table.set_p_values(report.p_value, report.q_value)
        self.model_table.set_properties(report.properties)
        self.table = results_view(self.model_table)
        self.table.horizontalHeader().setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        hidden = ["Flag"] + ([] if self.model_table.scores.has_node_scores else ["Graph term", "Node term"])
        hidden += [name for name, values in (("p-value", report.p_value), ("q-value", report.q_value))
                   if not np.isfinite(values).any()]  # a model without calibration gives none
        for column in hidden:  # no flag threshold without training scores
            self.table.setColumnHidden(COLUMNS.index(column), True)
        show_data_columns(self.table, self.model_table)  # empty columns say nothing (the training tab's rule)
        self.table.selectionModel().currentRowChanged.connect(self._row_selected)
        if images is not None:  # the window's structure pictures, at the size chosen on the training tab
            from ..structures import show_structures

            show_structures(self.table, images)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by id, name, SMILES or label…")
        self.filter.setClearButtonEnabled(True)
        self._filter_timer = QTimer(self, singleShot=True, interval=300)  # applies as you type, after a pause
        self._filter_timer.timeout.connect(self._filter)
        self.filter.textChanged.connect(self._filter_timer.start)
        self.filter.returnPressed.connect(self._filter)
        self.range_filter = RangeFilter()
        self.range_filter.ranges_changed.connect(self._filter)
        self.count = QLabel()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.heatmap = HeatmapPanel()
        self.nearest_panel = NearestPanel()
        self.side_tabs = QTabWidget()  # the selected row's heatmap | beside its nearest training molecule
        self.side_tabs.addTab(self.heatmap, "Node heatmap")
        self.side_tabs.addTab(self.nearest_panel, "Nearest training molecule")
        from ..controllers.nearest import ReportNearestController

        self.nearest = ReportNearestController(state, self.heatmap, self.nearest_panel, images, self)
        bar = QHBoxLayout()
        bar.addWidget(self.filter, 1)
        bar.addWidget(self.range_filter)
        bar.addWidget(self.count)
        from ..controllers.similarity import SimilarityController
        from .query_bar import QueryBar

        self.query_bar = QueryBar({})  # similarity to a query; the structures' size is the training tab's
        self.query_bar.structures.hide()
        self.similarity = SimilarityController(self.model_table, self.table, self.query_bar, self)
        self.similarity.applied.connect(self._update_count)
        self.query_bar.set_available(self.model_table.has_smiles())
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(bar)
        column.addWidget(self.query_bar)
        column.addWidget(self.table, 1)
        column.addWidget(legend_label())
        split = QSplitter()
        split.addWidget(left)
        split.addWidget(self.side_tabs)
        split.setSizes([700, 600])  # rank, id, score, p and q in sight; the drawing beside its lists
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        rejects = len(report.rejects)
        rejected = (f" · {counted(rejects, 'rejected row')} (File ▸ Export… with all rows writes "
                    f"{'them' if rejects != 1 else 'it'} at the end)" if rejects else "")
        where = "" if note else f" · {report.source}"  # a scored file's report is a scratch file: no path
        stopped = f" · stopped after line {report.stopped_after:,}" if report.stopped_after is not None else ""
        self._status_text = f"{note}{counted(len(report), 'scored row')}{stopped}{rejected}{where}"
        self._say()
        self._update_count()
        if len(report):
            self.table.selectRow(0)

    def view_values(self) -> dict:
        """How the tab shows its rows, as JSON values a session keeps: the text filter, the ranges,
        the similarity query and the sort."""
        return {"text": self.filter.text(), "ranges": {k: list(v) for k, v in self.range_filter.ranges().items()},
                "similarity": self.similarity.query_values(), "sort": sort_values(self.table)}

    def set_view_values(self, values: dict) -> None:
        """Put back :meth:`view_values` (a session's): the rows are filtered and sorted at once, or
        once the similarity query is computed."""
        self.filter.blockSignals(True)  # applied below, not after the typing pause
        self.filter.setText(str(values.get("text") or ""))
        self.filter.blockSignals(False)
        ranges = values.get("ranges") or {}
        self.range_filter.set_ranges({k: tuple(v) for k, v in ranges.items() if isinstance(v, list) and len(v) == 2})
        self._filter()
        self.similarity.restore(values.get("similarity") or {}, values.get("sort"))

    def export_table(self):
        """The rows this tab shows, for File ▸ Export (:class:`app.export_tables.ExportTable`)."""
        from ..export_tables import report_table

        stem = Path(self.report.source).stem.removesuffix("_ranked") or "report"
        getter = self.heatmap.fixed_vmax_getter
        return report_table(stem, self.report, self.model_table.visible_graphs(), self._model_getter(), self,
                            review=self.book.words(), rank=self.model_table.ranks(),
                            vmax=getter() if getter is not None else self.heatmap.fixed_vmax,
                            inputs=(self.report.scored_input["path"],) if self.report.scored_input else ())

    def selected_rows(self) -> list[int]:
        """The rows (report positions, not table rows) selected; the current row when none is."""
        return sorted({self.model_table.graph_index(row) for row in selected_rows(self.table)})

    def show_review(self) -> None:
        """Show the marks and the rows ranked by them (the reviewed rows on top; the Review column
        once a row is marked); the status line says whose views' scores re-rank the rows."""
        self.model_table.set_review(self.book.marks, self.book.rank(self.model_table.scores.ranking()))
        self.table.setColumnHidden(COLUMNS.index("Review"), not self.book.marks)
        if self.book.reranked is not None and self._review_note != (note := self.review_note()):
            self._review_note = note  # another model may read the report's scores no longer: said again
            self._say()

    def model_changed(self) -> None:
        """Another model is open (trained, loaded or weighed): the status line says again whose
        scores these are and how the marks re-rank the rows (nothing, once the open model cannot
        review them: it said the old model's way on), and the row shown is drawn again (its atoms
        rescored by the new model)."""
        reviewable = bool(self.book.marks) and not report_unavailable(self._model_getter(), self.report)
        self._review_note = self.review_note() if reviewable else ""
        self._say()
        if 0 <= self._shown < len(self.report):
            self.show_row(self._shown)

    def _say(self) -> None:
        """The status line: the report's rows, which model scored them and the review's note."""
        self.status.setText(self._status_text + self.scored_by() + self._review_note)

    def scored_by(self) -> str:
        """Whether the open model scored these rows, by the fingerprint the report keeps ("" when it
        keeps none or no model is open): a scored file's tab is never said to be the open model's
        once another model was trained or loaded."""
        fingerprint = getattr(self.report, "model_fingerprint", "")
        model = self._model_getter()
        if not fingerprint or model is None:
            return ""
        if scored_by(self.report, model):
            return " · scored by the open model"
        return " · scored by another model than the one open now (a row's atoms are rescored by the open one)"

    def review_note(self) -> str:
        """What the status line says about the review.

        Returns:
            Whose views' scores re-rank the rows (the report's own, or the open model's scores of
            them), and whether the row limit of a review that scores the rows again applies.
        """
        if reads_view_scores(self._model_getter(), self.report):
            return " · Reviewed rows re-rank the others from the views' scores in this report (the open model's; no row limit)"
        return (" · Reviewed rows re-rank the others with the views of the model open in the window (its scores "
                f"of these rows, not the report's; at most {counted(MAX_REPORT_ROWS, 'row')})")

    @Slot()
    def _filter(self) -> None:
        self.model_table.set_text_filter(self.filter.text())
        self.model_table.set_mask("ranges", self.model_table.ranges_mask(self.range_filter.ranges()))
        self._update_count()

    def _update_count(self) -> None:
        self.count.setText(f"{self.model_table.visible_count():,} of {len(self.report):,} shown")

    @Slot()
    def _row_selected(self, current, _previous=None) -> None:
        if not current.isValid():
            return
        self.show_row(self.model_table.graph_index(current.row()))

    def show_row(self, i: int) -> None:
        """Draw row i at once, plain with the report's top atoms; with a GLocalKD model open, it is
        then rescored atom by atom in the background (the newest row selected wins)."""
        from core import GLocalKDError

        report = self.report
        self._shown = i
        self.nearest.show(i, str(report.ids[i]), report.scored_smiles(i), float(report.score[i]))
        if not any(report.smiles):  # a graph collection's row: its file is read off the GUI thread (once)
            self.heatmap.clear(f"Reading row {i + 1}'s graph from the file it was scored from…")
            self._rescoring.request(functools.partial(tasks.tab_row, report, i), functools.partial(self._drawn, i),
                                    lambda message: self._not_drawn(i, message))
            return
        try:
            graphs = tasks.tab_row(report, i)
        except GLocalKDError as exc:
            self._not_drawn(i, str(exc))
            return
        self._drawn(i, graphs)

    def _not_drawn(self, i: int, message: str) -> None:
        if i == self._shown:
            self._rescoring.cancel()
            self.heatmap.clear(f"Row {i + 1} cannot be drawn: {message}")

    def _drawn(self, i: int, graphs) -> None:
        """Draw row i (its graph arrived), then rescore its atoms with the open GLocalKD model."""
        from core import Scores, molecule_schema

        if i != self._shown:
            return
        report = self.report
        model = self._model_getter()
        rescore = (model is not None and model.has_node_scores
                   and getattr(molecule_schema(model), "mode", "") == "atom")
        try:
            counts = np.array([0, int(graphs.graphs[0].num_nodes)], dtype=np.int64)
            self.heatmap.show_graph(graphs, 0, Scores.graph_only(np.array([report.score[i]]), counts))
        except Exception as exc:  # a drawing failure must not take the window down
            self._rescoring.cancel()
            self.heatmap.clear(f"Could not draw row {i + 1}: {exc}")
            return
        if rescore:
            self.heatmap.title.setText(self.heatmap.title.text() + "<br><i>Scoring every atom with the open "
                                       "model…</i>")
            self._rescoring.request(functools.partial(tasks.rescore_row, model, graphs),
                                    functools.partial(self._rescored, i),
                                    lambda message: self._not_rescored(i, message))
            return
        self._rescoring.cancel()
        top = report.top_nodes_of(i)
        if top:
            self.heatmap.title.setText(f"<b>{report.ids[i]}</b> — score {report.score[i]:.4g}<br>"
                                       f"<tt>{report.smiles[i]}</tt><br><i>Open the model that wrote this "
                                       "report to see every atom's error; the report lists its top atoms.</i>")
            self.heatmap.set_top_nodes(top)

    def _rescored(self, i: int, result) -> None:
        if i != self._shown:
            return
        graphs, scores = result
        try:
            self.heatmap.show_graph(graphs, 0, scores)
        except Exception as exc:  # a drawing failure must not take the window down
            self.heatmap.clear(f"Could not draw row {i + 1}: {exc}")
            return
        self.heatmap.title.setText(self.heatmap.title.text() + f"<br><i>Rescored with the open model; the "
                                   f"report says {self.report.score[i]:.4g}.</i>")

    def _not_rescored(self, i: int, message: str) -> None:
        if i == self._shown:
            self.heatmap.title.setText(self.heatmap.title.text() + f"<br><i>Could not score its atoms: {message}</i>")

    def stop_jobs(self) -> None:
        """Forget the row being rescored, its similar training molecules and the query, and wait
        for their jobs (the tab or the window is closing)."""
        self._rescoring.stop_all()
        self.nearest.stop()
        self.similarity.stop()
