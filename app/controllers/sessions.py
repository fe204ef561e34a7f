"""Sessions: the whole window saved to one ``.glocalkd-session`` file and opened again without
training (File ▸ Save session…, Open session…, Recent sessions). The file's format and its
background jobs are :mod:`app.session_file`; this controller captures what the window shows and
puts it back, through the state and the other controllers' public methods."""
from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QMenu

from core import counted

from .. import session_file
from ..review_book import GRAPH_KEY, marks_on, marks_with_ids
from ..state import with_suffix
from ..view_choices import restore_choices, save_choices
from .base import Controller

RECENT_KEY = "sessions/recent"
MAX_RECENT = 8


class _Values(dict):
    """A dict with QSettings' two methods, so the views' choices save into and restore from it."""

    def setValue(self, key: str, value) -> None:  # noqa: N802 (QSettings' name)
        self[key] = value

    def value(self, key: str, default=None):
        return self.get(key, default)


class SessionsController(Controller):
    """Saves the window into a session file and opens one back, each in a background job. It reads
    and sets the window through the state and the other controllers' public methods only.

    Args:
        runner: the window's runner (a session waits for the running job; its own job runs there).
        state: the app's state.
        files: the recent files and the dialogs' folder.
        settings: where the recent sessions are kept.
        scratch: the window's scratch folder (scored files' reports; a session's embedded ones).
        form: the training settings.
        choices: the views' choice widgets, by settings key (:mod:`app.view_choices`).
        results: the training tab's results (filters, selection, bottom tab).
        similarity: the training tab's similarity query.
        report_tabs: the report tabs.
        reviewing: the review marks.
        unsaved: the work that exists only in the window.
        confirm: asked before a session replaces the window's unsaved work; False cancels.

    Signals:
        saved: a session file was written (its path).
        opened: a session was put back in the window (its path).
        data_opened: a session's data file was opened (its path; the window keeps it among the recent files).
    """

    saved = Signal(str)
    opened = Signal(str)
    data_opened = Signal(str)

    def __init__(self, runner, state, files, settings, scratch: str, form, choices: dict, results, similarity,
                 report_tabs, reviewing, unsaved, confirm: Callable[[], bool], parent: QObject | None = None):
        super().__init__(parent)
        self.runner, self.state, self.files, self.settings, self.scratch = runner, state, files, settings, scratch
        self.form, self.choices, self.results, self.similarity = form, choices, results, similarity
        self.report_tabs, self.reviewing, self.unsaved, self._confirm = report_tabs, reviewing, unsaved, confirm
        self.menu: QMenu | None = None
        # the review marks on files a session names that were not there (its data file, its reports):
        # each waits for its file to be opened (session_file.kept_marks; scored, waiting_marks)
        self._waiting: list[dict] = []

    # ---------------------------------------------------------------- saving
    def capture(self) -> tuple[dict, list[dict]]:
        """What the window shows, as JSON values, and its report tabs (path, embed it or not).

        Returns:
            (the session document, the report tabs in tab order).
        """
        st = self.state
        view = _Values()
        save_choices(view, self.choices)
        doc = {
            "data": {"path": st.data_path, "options": dict(st.data_options),
                     "graphs": st.data_digest or _data_digest(st.graphs)}
            if st.graphs is not None and st.data_path else None,
            "training": {"normal_label": st.normal_label, "known_label": st.known_label,
                         "trained_on_shown": int(st.trained_on_shown)},
            "form": {k: v for k, v in self.form.params().items() if v is not None},
            "view": dict(view),
            "filters": self.results.filter_values(),
            "similarity": self.similarity.query_values(),
            "review": _marks_with_ids(st),
            "selected": None, "current_tab": self.report_tabs.current(), "bottom_tab": self.results.bottom_tab(),
        }
        if st.selected is not None and st.graphs is not None:
            doc["selected"] = {"index": int(st.selected), "id": st.graphs.meta[st.selected].id}
        if st.model is not None and not st.model.can_save:
            doc["model_note"] = ("The session's model (an isolation forest or OCGCN) has no model file, so the "
                                 "session does not hold it: press Train to train it again.")
        return doc, self.report_tabs.session_entries(self.scratch)

    def save_dialog(self, parent=None) -> None:
        """Ask where to save the session (named after the data) and save it there."""
        stem = Path(self.state.data_path).stem or "session"
        path, _ = self.files.ask_save(parent or self.parent(), "Save session", stem + session_file.SUFFIX, session_file.FILTER)
        if path:
            self.save(path)

    def open_dialog(self, parent=None) -> None:
        """Ask for a session file and open it (asking first about unsaved work it would replace)."""
        path = self.files.ask_open(parent or self.parent(), "Open session", f"{session_file.FILTER};;All files (*)")
        if path:
            self.open_asking(path)

    def open_asking(self, path: str) -> None:
        """Open the session ``path``, asking first about unsaved work it would replace."""
        if self._confirm():
            self.open(path)

    def save(self, path: str) -> None:
        """Write the window's session to ``path`` (``.glocalkd-session`` added) in the background."""
        if self.refused_while_busy("saving the session"):
            return
        path = with_suffix(path, session_file.SUFFIX)  # the models' rule: any case of the suffix is kept
        doc, reports = self.capture()
        self.busy.emit(f"Saving the session to {Path(path).name}…", True)
        job = functools.partial(session_file.write_session, path, doc, self.state.model, reports)
        self.runner.start("session", job, self._saved, self._failed)

    @Slot(object)
    def _saved(self, path: str) -> None:
        self.idle.emit()
        self.remember(path)
        self.status.emit(f"Session saved to {path}", 8000)
        self.said.emit(f"Session saved to {Path(path).name}.")
        self.saved.emit(path)

    # ---------------------------------------------------------------- opening
    def open(self, path: str) -> None:
        """Read the session ``path`` in the background (its model, data, scores and reports), then
        put it back in the window."""
        if self.refused_while_busy("opening a session"):
            return
        if not Path(path).is_file():
            self.warning.emit("No such session", f"{path} is not there any more (moved or deleted).")
            self.forget(path)
            return
        self.busy.emit(f"Opening the session {Path(path).name}…", True)
        job = functools.partial(session_file.read_session, path, self.scratch, self.form.params()["device"] or "auto")
        self.runner.start("session", job, self._opened, self._failed)

    @Slot(object)
    def _opened(self, r: session_file.Reopened | None) -> None:
        self.idle.emit()
        if r is None:  # the window closed while the session's data was read: nothing to put back
            return
        st, doc = self.state, r.doc
        self.report_tabs.close_all()  # the session's tabs replace the open ones
        self.form.set_params(doc.get("form") or {})
        train = doc.get("training") or {}
        if r.loaded is not None:
            st.forget_model()  # put back below, with its scores: opening the data must not score it again
            st.open_loaded(r.loaded)
            self.data_opened.emit(r.loaded.path)
            self.report_tabs.show_results(r.loaded.path)
        if r.model is not None:
            if r.scored is not None:
                scores, size_model, size_scores, graphs, properties = r.scored
                st.use_graphs(graphs, properties)
                st.set_trained(r.model, scores, int(train.get("trained_on_shown", 0)), train.get("normal_label"),
                               size_model, size_scores, known_label=train.get("known_label"))
            else:
                st.set_model(r.model, train.get("normal_label"))
        if st.graphs is not None:
            self.form.set_labels(st.graphs.label_counts(), train.get("normal_label"), train.get("known_label"))
        restore_choices(_Values(doc.get("view") or {}), self.choices)
        filters = doc.get("filters") or {}
        self.results.set_filter_values(filters)
        self.results.show_restored()
        selected = doc.get("selected")
        if isinstance(selected, dict) and isinstance(selected.get("index"), int):
            self.results.select_saved(selected["index"], selected.get("id"))
        problems = list(r.problems)
        saved = doc.get("review")
        marks = _marks_on(st, saved or []) if r.loaded is not None else {}  # only on the session's own data
        if marks:
            self.reviewing.restore(marks)
        if r.loaded is not None and isinstance(saved, list):
            problems += _marks_lost(len(saved) - len(marks), len(saved), Path(r.loaded.path).name)
        self._waiting = list(r.waiting)  # files not opened (moved): their marks come back when they are
        if st.graphs is not None:
            self.similarity.restore(doc.get("similarity") or {}, filters.get("sort"))
        for entry, report in r.reports:
            view = self.report_tabs.add(report, "Reopened from the session. " if entry.get("scored") else "",
                                        entry.get("title") or "")
            report_saved = entry.get("review") or []
            report_marks = marks_on(report.ids, report_saved, report.smiles)
            if report_marks:  # re-ranked by the session's model
                self.reviewing.restore(report_marks, view)
            view.set_view_values(entry.get("view") or {})
            problems += _marks_lost(len(report_saved) - len(report_marks), len(report_saved),
                                    Path(str(report.source)).name)
        self.results.set_grouped(bool(filters.get("grouped")))
        if r.loaded is not None or r.reports:
            self.report_tabs.show()
        self.report_tabs.set_current(doc.get("current_tab", 0))
        self.results.set_bottom_tab(doc.get("bottom_tab", 0))
        self.unsaved.clear()  # everything shown is in the session file
        self.remember(r.path)
        self.said.emit(f"Session {Path(r.path).name} opened (no training).")
        self.status.emit(f"Session opened from {r.path}", 8000)
        if problems:
            self.warning.emit("Session opened with problems", "\n\n".join(problems))
        self.opened.emit(r.path)

    @Slot()
    def scored(self) -> None:
        """The open graphs were scored: a session's marks that waited for its moved data file go back
        on them when the file is that data (the same digest), by each graph's ID; another file's
        graphs leave them waiting (until that file is scored, or another session opens)."""
        st = self.state
        waiting = next((w for w in self._waiting if w["kind"] == "data"), None)
        if waiting is None or st.graphs is None or st.scores is None:
            return
        source = Path(str(st.graphs.source))
        if waiting.get("graphs"):  # the same graphs as read, whatever their file's name or kind
            same = _data_digest(st.graphs) == waiting["graphs"]
        else:  # a session of an older version: its file's bytes (none for a TU folder: its graphs' IDs decide)
            digest = waiting["digest"]
            same = digest is None or (source.is_file() and session_file.file_digest(str(source)) == digest)
        if not same:  # dropping them here lost them for good, though the session had said they would come back
            self.said.emit(f"The session's review marks belong to {waiting['name']}: not put on {source.name}; "
                           f"they come back when you open {waiting['name']}.")
            return
        self._waiting.remove(waiting)
        marks = _marks_on(st, waiting["marks"])
        if marks:
            self.reviewing.restore(marks)
        self._said_back(len(marks), waiting, source.name)

    def report_marks(self, report) -> dict[int, bool]:
        """The review marks a ranked report read from disk opens with: a session's, when it names that
        report's file and could not open it (moved, or replaced then), found by the file's name or its
        bytes' digest and put on its rows by ID and SMILES as a session's report tab's are; else
        those its file holds (an exported tab's ``review`` column).

        Args:
            report: the ranked report read (:class:`core.RankedReport`).

        Returns:
            Row -> True (anomaly) or False (not anomaly).
        """
        source = Path(str(report.source))
        reports = [w for w in self._waiting if w["kind"] == "report"]
        waiting = next((w for w in reports if w["name"] == source.name), None)
        if waiting is None and any(w.get("digest") for w in reports) and source.is_file():
            digest = session_file.file_digest(source)  # renamed as well as moved
            waiting = next((w for w in reports if w.get("digest") == digest), None)
        if waiting is None:
            return report.review_marks()
        self._waiting.remove(waiting)
        marks = marks_on(report.ids, waiting["marks"], report.smiles)
        self._said_back(len(marks), waiting, source.name)
        return marks

    def _said_back(self, back: int, waiting: dict, name: str) -> None:
        self.said.emit(f"{back:,} of the session's {counted(len(waiting['marks']), 'review mark')} put back on "
                       f"{name}.")

    # ---------------------------------------------------------------- recent sessions
    def recent(self) -> list[str]:
        """The recent session files, newest first."""
        value = self.settings.value(RECENT_KEY, [])
        if isinstance(value, str):  # QSettings gives a one-item list back as a string
            value = [value]
        return [str(v) for v in (value or [])]

    def remember(self, path: str) -> None:
        """Put ``path`` first among the recent sessions."""
        recent = [path] + [p for p in self.recent() if p != path]
        self.settings.setValue(RECENT_KEY, recent[:MAX_RECENT])
        self.files.remember_dir(str(Path(path).parent))
        self.rebuild_menu()

    def forget(self, path: str) -> None:
        self.settings.setValue(RECENT_KEY, [p for p in self.recent() if p != path])
        self.rebuild_menu()

    def attach_menu(self, menu: QMenu) -> None:
        """The Recent sessions submenu this controller fills."""
        self.menu = menu
        self.rebuild_menu()

    def rebuild_menu(self) -> None:
        if self.menu is None:
            return
        self.menu.clear()
        for path in self.recent():
            self.menu.addAction(path, lambda p=path: self.open_asking(p))
        self.menu.setEnabled(bool(self.recent()) and not self.runner.blocking())


def _data_digest(graphs) -> str:
    """The digest of the graphs as read from the data file (:func:`core.graphs_digest`), the same
    for a file and a TU folder, and of what the window holds: a digest of the file's bytes at
    saving missed a TU folder altogether and an edit made after the data was read. Taken when the
    data is read (:attr:`app.state.AppState.data_digest`, off the window's thread); this is for the
    graphs of the window when it was not."""
    from core import graphs_digest

    return graphs_digest(graphs.as_read if graphs.as_read is not None else graphs)


def _identities(graphs, marked=None) -> list[str]:
    """What tells each graph from another beside its ID: its SMILES, or for a graph without one
    (a TU collection's, whose IDs are positions) its structure's key (:func:`core.graph_key`), so
    a mark never lands on another graph at its position ("" for the graphs not in ``marked``)."""
    from core import graph_key

    n = len(graphs.meta)
    wanted = range(n) if marked is None else marked
    keys = {i: graphs.meta[i].smiles or f"{GRAPH_KEY}{graph_key(graphs.graphs[i])}" for i in wanted}
    return [keys.get(i, "") for i in range(n)]


def _marks_with_ids(state) -> list[dict]:
    """The training tab's review marks as JSON values, each with its graph's ID and SMILES (or
    structure's key) so it finds its graph again."""
    if state.graphs is None:
        return []
    meta = state.graphs.meta
    return marks_with_ids([m.id for m in meta], state.review_marks, _identities(state.graphs, state.review_marks))


def _marks_on(state, saved: list) -> dict[int, bool]:
    """Saved marks put back on the open graphs that are theirs (:func:`app.review_book.marks_on`)."""
    if state.graphs is None:
        return {}
    meta = state.graphs.meta
    keyed = isinstance(saved, list) and any(isinstance(e, dict) and str(e.get("smiles", "")).startswith(GRAPH_KEY)
                                            for e in saved)
    return marks_on([m.id for m in meta], saved, _identities(state.graphs) if keyed else [m.smiles for m in meta])


def _marks_lost(lost: int, saved: int, name: str) -> list[str]:
    """The problem to say when ``lost`` of a session's ``saved`` marks on ``name`` found no row of theirs."""
    if lost <= 0:
        return []
    return [f"{lost:,} of the session's {saved:,} review marks on {name} were not put back: their rows are no "
            "longer in the file, or have changed."]
