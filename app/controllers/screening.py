"""Scoring with the current model: the open graphs again, another file into a ranked report, and
weighing a consensus's views by known anomalies."""
from __future__ import annotations

import functools
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QWidget

from core import make_scratch, counted

from .. import tasks
from ..file_memory import FILE_FILTER, FileMemory
from ..review_book import scored_by
from ..state import AppState, duration, marks_dropped_text, view_weights_text
from ..workers import Runner
from .base import Controller


class ScreeningController(Controller):
    """Runs the scoring jobs and puts their results into the state.

    Args:
        runner: runs the jobs.
        state: the open data and model.
        files: the dialogs' folder.
        scratch: the folder that scored files' reports are written under.
        reports: the report tabs (:class:`app.controllers.report_tabs.ReportTabs`): Resume on a tab
            resumes its scoring, and closing a tab ends the scoring that serves it; None: no tabs.

    Signals:
        progress: rows of a scored file done, and its total (0 when not known yet).
        scored: the open graphs were scored with the state's model (their scores are the state's).
        file_scored: a file was scored (its :class:`core.Report`, the file's path, a note, the sentence to say).
        weighed: the state's consensus has weighed views (the sentence to say).
    """

    progress = Signal(int, int)
    scored = Signal()
    file_scored = Signal(object, str, str, str)
    weighed = Signal(str)

    def __init__(self, runner: Runner, state: AppState, files: FileMemory, scratch: str, reports=None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self.state = state
        self.files = files
        self.scratch = scratch
        if reports is not None:
            reports.resume_asked.connect(self.resume_file)
            reports.closed.connect(self.tab_closed)  # a tab's jobs end with it, as its review's do
        self._started = 0.0
        self._path = ""
        self._scoring = 0  # the graphs being scored with the model

    def score_current(self, message: str) -> None:
        """Score the open graphs (if any) with the state's model in the background."""
        st = self.state
        if st.model is None or st.graphs is None or not len(st.graphs):
            return
        self.busy.emit(message, True)
        self._scoring = len(st.graphs)
        job = functools.partial(tasks.score, st.model, st.graphs, st.normal_label, st.size_model)
        self.runner.start("score", job, self._scored, self._failed, self._graphs_scored)

    @Slot(object)
    def _graphs_scored(self, done: int) -> None:
        self.said.emit(f"Scoring: {done:,} of {counted(self._scoring, 'graph')}…")

    @Slot(object)
    def _scored(self, result) -> None:
        self.idle.emit()
        if result is None:  # stopped: the graphs stay open, unscored
            self.said.emit("Stopped: the open graphs are not scored. Train, or load the model again, to score them.")
            return
        scores, size_model, size_scores, graphs, properties = result
        dropped = self.state.use_graphs(graphs, properties)  # standardised (or no longer) as the model reads molecules
        self.state.set_scores(scores, size_model, size_scores)
        self.said.emit(f"Scored {counted(len(scores), 'graph')}.")
        self.status.emit(f"{counted(len(scores), 'graph')} scored.{marks_dropped_text(dropped)}", 8000)
        self.scored.emit()

    def score_file_dialog(self, window: QWidget, ask_columns: Callable[[str], dict | None]) -> None:
        """Ask for a file to score with the state's model and score it (:meth:`score_file`)."""
        if self.state.model is None:
            self.warning.emit("No model", "Train a model or load one first.")
            return
        path = self.files.ask_open(window, "Score another file", FILE_FILTER)
        if path:
            self.score_file(path, None, ask_columns)

    def score_file(self, path: str, options: dict | None = None,
                   ask_columns: Callable[[str], dict | None] | None = None) -> None:
        """Score ``path`` with the state's model into a ranked report, streamed in chunks (molecule
        files), with a count, rate and ETA. ``options`` are the loader's (a table's columns); when
        None, ``ask_columns`` gives them as it does when a file is opened (None: cancelled)."""
        if self.refused_while_busy("scoring a file"):
            return
        if options is None and ask_columns is not None:
            options = ask_columns(path)
            if options is None:
                return
        report_path = str(make_scratch("scored-", self.scratch) / f"{Path(path).stem}_ranked.csv")
        self._start(path, options or {}, report_path, f"Scoring {Path(path).name} with the current model…")

    def can_resume(self, view) -> bool:
        """Whether the tab ``view`` (None: the training tab) is a file's scoring that was stopped, which
        :meth:`resume_file` continues now (:meth:`resume_unavailable` says why not, when it cannot)."""
        return self._stopped_scoring(view) and not self.resume_unavailable(view)

    @staticmethod
    def _stopped_scoring(view) -> bool:
        """Whether ``view`` is a stopped scoring the window knows the file of (now, or in the session that
        holds its report)."""
        report = getattr(view, "report", None)
        return getattr(report, "scored_input", None) is not None and report.stopped_after is not None

    def resume_unavailable(self, view) -> str:
        """Why the stopped scoring of the tab ``view`` cannot go on now, naming the tab ("" when it can, or
        when ``view`` is no stopped scoring): no model, another model than the one that scored its rows
        (core refuses to mix two models' scores; it was offered, then refused naming a scratch file), or
        its file is gone. Resume is greyed out with this as its tooltip."""
        if not self._stopped_scoring(view):
            return ""
        report, model = view.report, self.state.model
        if model is None:
            return f"{view.title} was scored with a model: train or load that model to resume it."
        if not scored_by(report, model):
            return (f"{view.title} was scored with another model than the open one: resuming would mix two "
                    "models' scores. Load the model that scored it to resume, or score the file again.")
        if not Path(report.scored_input["path"]).is_file():
            return f"{view.title} cannot resume: its file {report.scored_input['path']} is no longer there."
        return ""

    @Slot(object)
    def resume_file(self, view) -> None:
        """Score the rest of a file whose scoring was stopped (``view``, its tab): the rows it holds
        are kept and the file is read on after the line where it stopped; the tab is replaced by
        the whole file's (:meth:`ReportTabs.add_scored`). The job serves that tab: closing it ends
        the job, whose result is then dropped (:meth:`Controller.tab_closed`). Another model than
        the one that began it is refused, saying so (:meth:`resume_unavailable`)."""
        if self.refused_while_busy("resuming"):
            return
        if why := self.resume_unavailable(view):
            self.warning.emit("Cannot resume", why)
            return
        report = view.report
        path = report.scored_input["path"]
        self._start(path, report.scored_input["options"], str(report.source), f"Resuming the scoring of "
                    f"{Path(path).name} after line {report.stopped_after:,}…", len(report) + len(report.rejects),
                    tab=view)

    def _start(self, path: str, options: dict, report_path: str, message: str, resume: int | None = None,
               tab=None) -> None:
        self.busy.emit(message, True)
        self._started = time.perf_counter()
        self._path = path
        self.start_job("score_file", functools.partial(tasks.screen_file, self.state.model, path, report_path,
                                                       options=options, resume=resume),
                       self._file_scored, self._failed, self._progress, tab=tab)

    def job_dropped(self, name: str, tab) -> None:
        """A resumed scoring whose tab was closed has ended: no tab comes back, the bar stops."""
        self.idle.emit()
        text = f"Stopped: the tab of {getattr(tab, 'title', Path(self._path).name)} was closed."
        self.said.emit(text)
        self.status.emit(text, 8000)

    @Slot(object)
    def _progress(self, p: tasks.ScreenProgress) -> None:
        if p.total:
            self.progress.emit(p.rows, p.total)
        self.said.emit(p.text())

    @Slot(object)
    def _file_scored(self, result) -> None:
        report, summary = result
        self.idle.emit()
        if report is None:  # stopped before any row was scored
            text = f"Stopped before any row of {Path(self._path).name} was scored: nothing to show."
            self.said.emit(text)
            self.status.emit(text, 15000)
            return
        seconds = time.perf_counter() - self._started
        stopped = " (stopped: the rows scored so far)" if summary is not None and summary.stopped else ""
        rejected = f", {len(report.rejects):,} rejected" if report.rejects else ""
        name = Path(self._path).name
        resumed = getattr(summary, "resumed_after", None)
        took = f"in {duration(seconds)}" if resumed is None else \
            f"({counted(summary.rows - summary.resumed_rows, 'row')} read after line {resumed:,} in {duration(seconds)})"
        text = f"Scored {counted(len(report), 'molecule')} of {name} {took}{rejected}{stopped}." + \
            "".join(f" Note: {note}" for note in report.notes)  # what the reader changed (one-way TU edges)
        self.file_scored.emit(report, self._path, stopped, text)
        self.said.emit(text)
        self.status.emit(text, 15000)

    def weigh_dialog(self, window: QWidget, ask_columns: Callable[[str], dict | None]) -> None:
        """Ask for a file of known anomalies and weigh the consensus's views by it (:meth:`weigh_views`)."""
        if not self.state.weighable():
            self.warning.emit("No consensus", "Known anomalies weigh the views of a consensus: train the consensus "
                              "(the recommended detector) or load one first.")
            return
        path = self.files.ask_open(window, "Known anomalies: graphs known to be anomalous", FILE_FILTER)
        if path:
            self.weigh_views(path, None, ask_columns)

    def weigh_views(self, path: str, options: dict | None, ask_columns: Callable[[str], dict | None]) -> None:
        """Weigh the consensus's views by the known anomalies in ``path`` (never trained on; no
        training), in the background; the open graphs are then scored with the weighed model.
        ``ask_columns`` gives the loader's options when ``options`` is None (None: cancelled)."""
        if self.refused_while_busy("weighing the views"):
            return
        if options is None:
            options = ask_columns(path)
            if options is None:
                return
        st = self.state
        self.busy.emit(f"Weighing the views by {Path(path).name}…", True)
        self.runner.start("weigh", functools.partial(tasks.weigh, st.model, path, options, st.graphs),
                          self._weighed, self._failed)

    @Slot(object)
    def _weighed(self, result: tasks.Weighed | None) -> None:
        self.idle.emit()
        if result is None:  # stopped while reading the known anomalies: the model is as it was
            self.said.emit("Stopped: the views were not weighed.")
            return
        if result.scores is not None:
            self.state.use_graphs(result.graphs)
        self.state.set_weighed(result.model, result.scores)
        rejected = (f" ({counted(result.n_rejected, 'row')} rejected)"
                    if result.n_rejected else "")
        seen = (f"; {counted(result.n_seen, 'graph')} left out: the model was trained or calibrated on "
                f"{'it' if result.n_seen == 1 else 'them'} as normal" if result.n_seen else "")
        notes = "".join(f" Note: {note}" for note in result.notes)  # what the reader changed (one-way TU edges)
        text = f"{result.n_known:,} known anomalies read from {Path(result.path).name}{rejected}{seen}.{notes} " \
               f"{view_weights_text(result.model)}"
        self.said.emit(text)
        self.status.emit(text.split(". ")[0] + ".", 15000)
        self.weighed.emit(text)
