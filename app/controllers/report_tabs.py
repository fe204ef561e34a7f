"""The results' tabs: the training data's results first, then a tab per ranked report or scored file."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QStackedWidget, QTabWidget

from ..review_book import marks_on, marks_with_ids
from ..state import AppState
from ..structures import StructureImages
from ..unsaved import UnsavedWork
from ..widgets.heatmap import HeatmapPanel
from ..widgets.report_view import ReportView


class ReportTabs(QObject):
    """Adds and closes the report tabs of ``tabs`` (its first tab, the training data's results, stays).

    Args:
        tabs: the results' tab widget.
        stack: the central stack (the welcome page, then ``tabs``).
        state: its model rescores a report's selected molecule.
        heatmap: the training tab's heatmap, whose colour scale the reports' heatmaps share.
        unsaved: a scored file's results are unsaved work until exported.
        confirm: ``(keys, doing) -> bool``: asks before unsaved work of ``keys`` is lost.
        images: draws the reports' structure pictures.

    Signals:
        changed: a tab was added, closed or chosen (Export writes the active tab's rows).
        closed: a report's tab was closed (its view), e.g. so that a job for it stops.
        training_graph_chosen: a report's similar training molecule was double-clicked: the
            training data's tab is shown, and that graph is to be selected (its index).
        resume_asked: Resume was chosen on a stopped scoring's tab (its view).
        marks_carried: a resumed scoring's tab replaced the stopped one: its view, and the stopped
            tab's review marks put on its rows (row index -> mark), to re-rank by.
    """

    changed = Signal()
    closed = Signal(object)
    training_graph_chosen = Signal(int)
    resume_asked = Signal(object)  # the active tab's stopped scoring is to be resumed (its view)
    marks_carried = Signal(object, object)  # a tab that replaced another, and the other's review marks on its rows

    def __init__(self, tabs: QTabWidget, stack: QStackedWidget, state: AppState, heatmap: HeatmapPanel,
                 unsaved: UnsavedWork, confirm: Callable[[list, str], bool], images: StructureImages,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.tabs, self.stack, self.state, self.heatmap = tabs, stack, state, heatmap
        self.unsaved, self.confirm, self.images = unsaved, confirm, images
        self.views: list[ReportView] = []  # ranked reports open as tabs beside the results
        tabs.tabCloseRequested.connect(self.close)
        state.model_changed.connect(self._model_changed)
        tabs.currentChanged.connect(lambda _index: self.changed.emit())

    def active(self) -> ReportView | None:
        """The report tab shown, or None when the training data's results are."""
        view = self.tabs.currentWidget()
        return view if isinstance(view, ReportView) else None

    def active_table(self, training: tuple) -> tuple:
        """The active tab's (table, model): a report's, or ``training`` (the training tab's)."""
        view = self.active()
        return (view.table, view.model_table) if view is not None else training

    def show_results(self, path: str) -> None:
        """Show the training data's tab, named after its file."""
        self.stack.setCurrentIndex(1)
        self.tabs.setCurrentIndex(0)
        self.tabs.setTabText(0, Path(path).name or "Results")

    def add(self, report, note: str = "", title: str = "") -> ReportView:
        """A tab over ``report`` (a ranked report), shown; ``note`` heads its status line, ``title``
        names the tab (the report's file name when empty)."""
        view = ReportView(report, lambda: self.state.model, note, images=self.images, state=self.state)
        view.heatmap.fixed_vmax_getter = lambda: self.heatmap.fixed_vmax  # colours as on the training tab
        view.heatmap.neighbour_clicked.connect(self._show_training_graph)
        view.title = title or view.title  # the tab's name, wherever the window names it (the unsaved work's question)
        self.views.append(view)
        self.tabs.addTab(view, view.title)
        self.tabs.setCurrentWidget(view)
        self.tabs.setTabToolTip(self.tabs.indexOf(view), report.source)
        self.stack.setCurrentIndex(1)
        return view

    def session_entries(self, scratch: str) -> list[dict]:
        """The report tabs in tab order, as a session keeps them: path, title, whether the report
        is embedded in the session file (a scored file's report lives in ``scratch``), the file it
        was scored from (what Resume reads on from), the review marks on its rows, each with the
        row's ID and SMILES, and how it shows them (filters, query, sort: :meth:`ReportView.view_values`)."""
        return [{"path": view.report.source, "title": self.tabs.tabText(self.tabs.indexOf(view)),
                 "embed": Path(scratch) in Path(view.report.source).resolve().parents,
                 "input": view.report.scored_input,
                 "review": marks_with_ids(view.report.ids, view.book.marks, view.report.smiles),
                 "view": view.view_values()}
                for view in sorted(self.views, key=self.tabs.indexOf)]

    def close_all(self) -> None:
        """Close every report's tab without asking (a session replaces them)."""
        for view in list(self.views):
            self._remove(view)

    def _remove(self, view: ReportView) -> None:
        """Take a report's tab away, its unsaved work with it; its jobs end before it goes."""
        self.unsaved.done(view)
        self.tabs.removeTab(self.tabs.indexOf(view))
        self.views.remove(view)
        view.stop_jobs()
        self.closed.emit(view)
        view.deleteLater()
        self.changed.emit()  # the tab bar's own signal came while the tab was still one of the views

    def stop_jobs(self) -> None:
        """Wait for every report tab's background jobs to end (the window is closing)."""
        for view in self.views:
            view.stop_jobs()

    def current(self) -> int:
        """The index of the tab shown (0: the training data's results)."""
        return self.tabs.currentIndex()

    def set_current(self, index: int) -> None:
        if 0 <= index < self.tabs.count():
            self.tabs.setCurrentIndex(index)

    def show(self) -> None:
        """Show the tabs (not the welcome page)."""
        self.stack.setCurrentIndex(1)

    def _model_changed(self, _model) -> None:
        """Another model is open: each tab says again whether it scored its rows."""
        for view in list(self.views):
            view.model_changed()

    @Slot(int)
    def _show_training_graph(self, graph_index: int) -> None:
        """Show the training data's tab with ``graph_index`` selected (a similar training molecule)."""
        self.tabs.setCurrentIndex(0)
        self.training_graph_chosen.emit(graph_index)

    def resume_active(self) -> None:
        """Ask for the active tab's stopped scoring to be resumed (``resume_asked``)."""
        view = self.active()
        if view is not None:
            self.resume_asked.emit(view)

    @Slot(object, str, str, str)
    def add_scored(self, report, path: str, stopped: str, _text: str = "") -> ReportView:
        """A tab over a file scored with the current model: unsaved work until exported, never
        exported over the file it scored. A resumed scoring's report replaces its stopped tab
        (the same report file, now holding those rows and the rest), in its place."""
        name = Path(path).name
        replaced = [v for v in self.views if v.report.source == report.source]
        place = min((self.tabs.indexOf(v) for v in replaced), default=-1)
        carried = [m for v in replaced for m in marks_with_ids(v.report.ids, v.book.marks, v.report.smiles)]
        for old in replaced:  # its rows are the new tab's first rows, its marks go on them: nothing is lost
            self._remove(old)
        view = self.add(report, f"{name} scored{stopped}. ")
        if place > 0:
            self.tabs.tabBar().moveTab(self.tabs.indexOf(view), place)
        taken = {self.tabs.tabText(self.tabs.indexOf(v)) for v in self.views if v is not view}
        title = next(t for k in range(1, len(taken) + 2)  # a file scored again (another model): its own title
                     if (t := f"{name} (scored{'' if k == 1 else f' {k}'})") not in taken)
        view.title = title
        self.unsaved.add(view, f"the results of {title}, not exported")
        self.tabs.setTabText(self.tabs.indexOf(view), title)
        if carried:
            self.marks_carried.emit(view, marks_on(report.ids, carried, report.smiles))
        return view

    @Slot(int)
    def close(self, index: int) -> None:
        """Close a report's tab (asking first about its unsaved results); its rows are freed."""
        view = self.tabs.widget(index)
        if isinstance(view, ReportView):
            if not self.confirm([view], "closing its tab"):
                return
            self._remove(view)
