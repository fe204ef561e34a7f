"""The review loop: the analyst marks rows as anomalies or not, and the consensus re-ranks the
rows not yet reviewed without training again (:class:`core.Review`, in a background job)."""
from __future__ import annotations

import functools

from PySide6.QtCore import QObject, Signal, Slot

from .. import tasks
from ..state import AppState
from ..workers import Runner
from .base import Controller


class ReviewController(Controller):
    """Keeps the state's marks and their re-ranking in step.

    Args:
        runner: runs the re-ranking jobs.
        state: the open graphs, the model, its scores and the marks.

    Signals:
        reranked: the state's re-ranking (or its absence, without marks) is up to date.
    """

    reranked = Signal()

    def __init__(self, runner: Runner, state: AppState, parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self.state = state
        self._again = False  # marks changed while a job ran
        self._for = None  # the (model, graphs) the running job reviews

    def mark(self, indices: list[int], anomalous: bool | None) -> None:
        """Mark graphs as anomalies (True) or not (False), or clear their marks (None), and re-rank.

        Args:
            indices: graph indices (not table rows).
            anomalous: the mark.
        """
        why = self.state.review_unavailable()
        if why:
            self.warning.emit("Cannot review", why)
            return
        if not indices:
            self.status.emit("Select the rows to mark first.", 5000)
            return
        self.state.mark(indices, anomalous)
        self.refresh()

    def restore(self, marks: dict) -> None:
        """Put saved marks (a session file's, :meth:`app.state.AppState.restore_review`) on the open
        graphs and re-rank by them.

        Args:
            marks: graph index (or its text) -> True / "anomaly" or False / "not anomaly".
        """
        try:
            self.state.restore_review(marks)
        except (TypeError, ValueError) as exc:
            self.warning.emit("Cannot restore the review", str(exc))
            return
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        """Re-rank under the state's marks (in the background); without marks, the scores' own ranking."""
        st = self.state
        if not st.review_marks or st.review_unavailable():
            st.reranked = None
            self.reranked.emit()
            return
        if self.runner.busy("review"):
            self._again = True
            return
        self._for = (st.model, st.graphs)
        job = functools.partial(tasks.rerank, st.review, st.model, st.graphs, dict(st.review_marks))
        self.runner.start("review", job, self._done, self._failed)

    @Slot(object)
    def _done(self, result) -> None:
        review, reranked, marks = result
        st = self.state
        if self._for != (st.model, st.graphs):  # the model or the data changed meanwhile
            self.refresh()
            return
        st.review = review
        if self._again or marks != st.review_marks:
            self._again = False
            self.refresh()
            return
        st.reranked = reranked
        anomalies = sum(marks.values())
        learnt = ("the views weighed by the marked anomalies" if reranked.known_auc is not None else
                  "graphs marked normal in the calibration" if len(marks) > anomalies else
                  "the views weigh as before until 3 anomalies are marked")
        self.status.emit(f"{len(marks):,} reviewed ({anomalies:,} anomalies): the other rows re-ranked without "
                         f"training again ({learnt}).", 8000)
        self.reranked.emit()
