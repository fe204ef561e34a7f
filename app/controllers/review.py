"""The review loop: the analyst marks rows as anomalies or not, and the consensus re-ranks the
rows not yet reviewed without training again (:class:`core.Review`, in a background job). One
path serves every tab: the training tab's graphs (their book is the state's) and each scored
file's tab (from the views' scores its report holds when the open model scored it, else its rows
are scored again with each view of the open model the first time)."""
from __future__ import annotations

import functools
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from core import counted

from .. import tasks
from ..review_book import ReviewBook, reads_view_scores, report_unavailable
from ..state import AppState
from ..workers import Runner
from .base import Controller


class ReviewController(Controller):
    """Keeps each tab's marks and their re-ranking in step.

    Args:
        runner: runs the re-ranking jobs (one at a time per tab).
        state: the open graphs, the model, its scores and the training tab's marks.
        selected: the graphs the Review menu's actions mark on the training tab (its selected rows).
        reports: the report tabs (:class:`app.controllers.report_tabs.ReportTabs`: ``active()`` and
            ``views``); None: only the training tab is reviewed.

    Signals:
        reranked: the training tab's re-ranking (or its absence, without marks) is up to date.
        marked: the user changed marks (the report tab, None: the training tab): unsaved work.
    """

    reranked = Signal()
    marked = Signal(object)

    def __init__(self, runner: Runner, state: AppState, selected: Callable[[], list[int]], reports=None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self.state = state
        self.selected = selected
        self.reports = reports
        self._again: set = set()  # tabs whose marks changed while their job ran (None: the training tab)
        self._for: dict = {}  # tab -> the (model, graphs) its running job reviews
        self._preparing: set = set()  # report tabs whose rows are being scored again for their review
        self._stopped: set = set()  # of those, the ones the user stopped (or whose tab was closed)
        runner.changed.connect(self._run_again)
        if reports is not None and hasattr(reports, "closed"):
            reports.closed.connect(self._closed)
            reports.marks_carried.connect(lambda view, marks: self.restore(marks, view))
        state.model_changed.connect(self._model_changed)

    # ---------------------------------------------------------------- the tabs
    def _active(self):
        """The active report tab, or None (the training tab)."""
        return self.reports.active() if self.reports is not None else None

    def _book(self, view) -> ReviewBook:
        return self.state.review_book if view is None else view.book

    def _unavailable(self, view) -> str:
        return self.state.review_unavailable() if view is None else report_unavailable(self.state.model, view.report)

    @staticmethod
    def _job_name(view) -> str:
        return "review" if view is None else f"review {id(view)}"

    def _show(self, view) -> None:
        if view is None:
            self.reranked.emit()
        else:
            view.show_review()

    # ---------------------------------------------------------------- marking
    @Slot()
    def _run_again(self) -> None:
        """A re-ranking asked for while one ran (its job still held the name) runs once that job has ended."""
        for view in list(self._again):
            if not self.runner.busy(self._job_name(view)):
                self._again.discard(view)
                self._refresh(view)

    def mark_anomaly(self) -> None:
        self.mark_active(True)

    def mark_normal(self) -> None:
        self.mark_active(False)

    def clear_mark(self) -> None:
        self.mark_active(None)

    def mark_active(self, anomalous: bool | None) -> None:
        """Mark the active tab's selected rows (True: anomalies, False: not, None: clear) and re-rank."""
        view = self._active()
        self.mark(self.selected() if view is None else view.selected_rows(), anomalous, view)

    def mark(self, indices: list[int], anomalous: bool | None, view=None) -> None:
        """Mark graphs as anomalies (True) or not (False), or clear their marks (None), and re-rank.

        Args:
            indices: graph indices (not table rows): the training tab's graphs, or a report's rows.
            anomalous: the mark.
            view: the report tab whose rows they are (None: the training tab).
        """
        why = self._unavailable(view)
        if why:
            self.warning.emit("Cannot review", why)
            return
        if not indices:
            self.status.emit("Select the rows to mark first.", 5000)
            return
        self._book(view).mark(indices, anomalous)
        self.marked.emit(view)
        self._refresh(view)

    def restore(self, marks: dict, view=None) -> None:
        """Put saved marks (a session file's) on the training tab's graphs or a report tab's rows
        and re-rank by them.

        Args:
            marks: graph index (or its text) -> True / "anomaly" or False / "not anomaly".
            view: the report tab (None: the training tab).
        """
        try:
            if view is None:
                self.state.restore_review(marks)
            else:
                view.book.restore(marks, len(view.report))
        except (TypeError, ValueError) as exc:
            self.warning.emit("Cannot restore the review", str(exc))
            return
        self._refresh(view)

    @Slot()
    def refresh(self) -> None:
        """Re-rank the training tab under its marks (in the background); without marks, the scores' own ranking."""
        self._refresh(None)

    def _model_changed(self, _model) -> None:
        """A new model: every report tab's review is built again with it (the marks stay)."""
        for view in list(self.reports.views if self.reports is not None else []):
            view.book.forget()
            self._refresh(view)

    # ---------------------------------------------------------------- scoring a tab's rows again
    def scoring_jobs(self) -> list[str]:
        """The jobs scoring a report tab's rows again for its review: long, so the window counts them
        as busy and Stop stops them (a re-ranking alone takes a moment and blocks nothing)."""
        return [self._job_name(view) for view in self._preparing if self.runner.busy(self._job_name(view))]

    def stop_scoring(self) -> bool:
        """Stop scoring report tabs' rows again (the marks stay); True when one was running."""
        running = [view for view in self._preparing if self.runner.busy(self._job_name(view))]
        for view in running:
            self._stopped.add(view)
            self.runner.stop(self._job_name(view))
        return bool(running)

    @Slot(object)
    def _closed(self, view) -> None:
        """A report tab was closed: a job scoring its rows again has no one to serve any more (it ends,
        as every tab's job does: :meth:`Controller.tab_closed`)."""
        self._again.discard(view)
        self.tab_closed(view)

    def job_dropped(self, name: str, tab) -> None:
        """The job of a closed tab ended: its "Preparing the review" status ends with it."""
        self._prepared(tab)
        self._for.pop(tab, None)

    def _prepared(self, view) -> bool:
        """The job of ``view`` ended: end its "Preparing the review" status (saying it stopped, unless
        its tab is gone); True when it was stopped."""
        stopped = view in self._stopped
        self._stopped.discard(view)
        if view in self._preparing:
            self._preparing.discard(view)
            said = stopped and not self._gone(view)
            self.status.emit("Review stopped: the marks are kept; mark a row to prepare it again." if said else "",
                             8000)
        return stopped

    def _refresh(self, view) -> None:
        if self._gone(view):  # its tab was closed
            self._again.discard(view)
            self._for.pop(view, None)
            return
        book = self._book(view)
        if not book.marks or self._unavailable(view):
            book.reranked = None
            self._show(view)
            return
        name = self._job_name(view)
        if self.runner.busy(name):
            self._again.add(view)
            return
        st = self.state
        graphs = st.graphs if view is None else None  # a report's rows: scored from the report
        self._for[view] = (st.model, st.graphs if view is None else view)
        report = None if view is None else view.report
        if view is not None and book.review is None and not reads_view_scores(st.model, view.report):
            self._preparing.add(view)
            self.status.emit(f"Preparing the review: scoring {counted(len(view.report), 'row')} with each view "
                             "of the open model…", 0)
        job = functools.partial(tasks.rerank, book.review, st.model, graphs, dict(book.marks), report=report)
        self.start_job(name, job, functools.partial(self._done, view), functools.partial(self._not_done, view),
                       self._progress, tab=view, stoppable=view in self._preparing,  # rows scored again: long
                       background=view not in self._preparing)  # a re-ranking alone: a moment, it holds nothing up

    def _progress(self, p: tasks.ScreenProgress) -> None:
        """Scoring a report's rows again for its review: how far it got."""
        self.status.emit(f"Preparing the review: {p.scored:,} of {counted(p.total, 'row')} scored with each view "
                         "of the open model…", 0)

    def _gone(self, view) -> bool:
        return view is not None and (self.reports is None or view not in self.reports.views)

    def _done(self, view, result) -> None:
        review, reranked, marks, _graphs = result
        self._prepared(view)
        if self._gone(view):  # its tab was closed meanwhile
            self._for.pop(view, None)
            return
        st, book = self.state, self._book(view)
        if self._for.pop(view, None) != (st.model, st.graphs if view is None else view):  # a new model or data
            self._again.discard(view)
            self._refresh(view)
            return
        book.review = review
        if view in self._again or marks != book.marks:
            self._again.discard(view)
            self._refresh(view)
            return
        book.reranked = reranked
        anomalies = sum(marks.values())
        # the marks weigh the views only when some view ranks them above the calibration graphs:
        # known_auc is there from 3 anomalies on, weighed or not
        weighed = reranked.known_auc is not None and reranked.weights != review.weights_before
        learnt = ("the views weighed by the marked anomalies" if weighed else
                  "the marked anomalies rank no higher than the normal graphs under any view: the views weigh as "
                  "before" if reranked.known_auc is not None else
                  "graphs marked normal in the calibration" if len(marks) > anomalies else
                  "the views weigh as before until 3 anomalies are marked")
        self.status.emit(f"{len(marks):,} reviewed ({counted(anomalies, 'anomaly', 'anomalies')}): the other rows "
                         f"re-ranked without training again ({learnt}).", 8000)
        self._show(view)

    def _not_done(self, view, message: str) -> None:
        stopped = self._prepared(view)
        if self._gone(view):
            self._for.pop(view, None)
        elif stopped:
            self._for.pop(view, None)
            self._show(view)
        else:
            self.failed.emit(message)
