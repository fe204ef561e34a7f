"""Sessions: the whole window saved to one ``.glocalkd-session`` file and opened again without
training (File ▸ Save session…, Open session…, Recent sessions). The file's format and its
background jobs are :mod:`app.session_file`; this controller captures what the window shows and
puts it back."""
from __future__ import annotations

import functools
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QMenu

from .. import session_file
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
    """Saves the window into a session file and opens one back, each in a background job.

    Args:
        window: the main window (its state, views and report tabs are what a session holds).

    Signals:
        saved: a session file was written (its path).
        opened: a session was put back in the window (its path).
    """

    saved = Signal(str)
    opened = Signal(str)

    def __init__(self, window, parent: QObject | None = None):
        super().__init__(parent)
        self.window = window
        self.menu: QMenu | None = None

    # ---------------------------------------------------------------- saving
    def capture(self) -> tuple[dict, list[dict]]:
        """What the window shows, as JSON values, and its report tabs (path, embed it or not).

        Returns:
            (the session document, the report tabs in tab order).
        """
        from ..widgets.report_view import ReportView

        w, st = self.window, self.window.state
        view = _Values()
        save_choices(view, w._view_choices())
        doc = {
            "data": {"path": st.data_path, "options": dict(getattr(st, "data_options", {}) or {})}
            if st.graphs is not None and st.data_path else None,
            "training": {"normal_label": st.normal_label, "known_label": st.known_label,
                         "trained_on_shown": int(st.trained_on_shown)},
            "form": {k: v for k, v in w.form.params().items() if v is not None},
            "view": dict(view),
            "filters": {"text": w.filters.text(), "smarts": w.filters.smarts_edit.text(),
                        "percentile": w.filters.percentile(), "rate": w.filters.rate(),
                        "grouped": w.filters.is_grouped(), "flagged_only": w.filters.is_flagged_only(),
                        "ranges": {k: list(v) for k, v in w.filters.ranges().items()}},
            "similarity": {"query": w.query_bar.query(), "minimum": w.query_bar.minimum.value()},
            "review": _marks_with_ids(st),
            "selected": None, "current_tab": w.results_tabs.currentIndex(), "bottom_tab": w.tabs.currentIndex(),
        }
        if st.selected is not None and st.graphs is not None:
            doc["selected"] = {"index": int(st.selected), "id": st.graphs.meta[st.selected].id}
        if st.model is not None and not st.model.can_save:
            doc["model_note"] = ("The session's model (an isolation forest or OCGCN) has no model file, so the "
                                 "session does not hold it: press Train to train it again.")
        reports = []
        for k in range(1, w.results_tabs.count()):
            tab = w.results_tabs.widget(k)
            if isinstance(tab, ReportView):
                source = tab.report.source
                reports.append({"path": source, "title": w.results_tabs.tabText(k),
                                "embed": Path(w._scratch) in Path(source).resolve().parents})
        return doc, reports

    def save_dialog(self) -> None:
        """Ask where to save the session (named after the data) and save it there."""
        stem = Path(self.window.state.data_path).stem or "session"
        path, _ = self.window.files.ask_save(self.window, "Save session", stem + session_file.SUFFIX,
                                             session_file.FILTER)
        if path:
            self.save(path)

    def open_dialog(self) -> None:
        """Ask for a session file and open it (asking first about unsaved work it would replace)."""
        path = self.window.files.ask_open(self.window, "Open session", f"{session_file.FILTER};;All files (*)")
        if path:
            self.window.open_session(path)

    def save(self, path: str) -> None:
        """Write the window's session to ``path`` (``.glocalkd-session`` added) in the background."""
        if self.window.runner.busy():
            self.warning.emit("Busy", "Wait for the current work to finish (or press Stop) before saving the session.")
            return
        path = session_file.with_suffix(path)
        doc, reports = self.capture()
        self.busy.emit(f"Saving the session to {Path(path).name}…", True)
        job = functools.partial(session_file.write_session, path, doc, self.window.state.model, reports)
        self.window.runner.start("session", job, self._saved, self._failed)

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
        if self.window.runner.busy():
            self.warning.emit("Busy", "Wait for the current work to finish (or press Stop) before opening a session.")
            return
        if not Path(path).is_file():
            self.warning.emit("No such session", f"{path} is not there any more (moved or deleted).")
            self.forget(path)
            return
        self.busy.emit(f"Opening the session {Path(path).name}…", True)
        job = functools.partial(session_file.read_session, path, self.window._scratch,
                                self.window.form.params()["device"] or "auto")
        self.window.runner.start("session", job, self._opened, self._failed)

    @Slot(object)
    def _opened(self, r: session_file.Reopened) -> None:
        self.idle.emit()
        w, st, doc = self.window, self.window.state, r.doc
        for view in list(w.report_views):  # the session's tabs replace the open ones
            w._unsaved.done(view)
            w.results_tabs.removeTab(w.results_tabs.indexOf(view))
            w.report_views.remove(view)
            view.deleteLater()
        w.form.set_params(doc.get("form") or {})
        train = doc.get("training") or {}
        if r.loaded is not None:
            st.model = None  # put back below, with its scores: opening the data must not score it again
            st.set_data(r.loaded.path, r.loaded.graphs, r.loaded.schema_text)
            st.data_options = (doc.get("data") or {}).get("options") or {}
            w._loaded(r.loaded)
        if r.model is not None:
            if r.scored is not None:
                scores, size_model, size_scores, graphs, properties = r.scored
                st.use_graphs(graphs, properties)
                st.set_trained(r.model, scores, int(train.get("trained_on_shown", 0)), train.get("normal_label"),
                               size_model, size_scores, known_label=train.get("known_label"))
            else:
                st.set_model(r.model)
                st.normal_label = train.get("normal_label")
            w.results.show_detector(r.model)
            w.loss_plot.show_losses(list(r.model.loss_history_))
        if st.graphs is not None:
            w.form.set_labels(st.graphs.label_counts(), train.get("normal_label"))
        restore_choices(_Values(doc.get("view") or {}), w._view_choices())
        filters = doc.get("filters") or {}
        for key, setter in (("percentile", w.filters.set_percentile), ("rate", w.filters.set_rate)):
            if isinstance(filters.get(key), (int, float)):
                setter(float(filters[key]))
        w.filters.flagged_only.setChecked(bool(filters.get("flagged_only")))
        if isinstance(filters.get("ranges"), dict):
            w.filters.range_filter.set_ranges({k: tuple(v) for k, v in filters["ranges"].items()
                                               if isinstance(v, list) and len(v) == 2})
        w.filters.text_edit.setText(filters.get("text", ""))
        w.filters.smarts_edit.setText(filters.get("smarts", ""))
        if st.graphs is not None:
            w.results.show_data()
            w.results.apply_text_filter()
            w.results.apply_smarts()
        w.results.update_summary()
        selected = doc.get("selected")
        if selected and st.graphs is not None:
            ids = [m.id for m in st.graphs.meta]
            i = selected["index"] if selected["index"] < len(ids) and ids[selected["index"]] == selected["id"] \
                else (ids.index(selected["id"]) if selected["id"] in ids else None)
            if i is not None:
                w.results.select_graph(i)
        marks = _marks_on(st, doc.get("review") or [])
        if marks:
            w.reviewing.restore(marks)
        similarity = doc.get("similarity") or {}
        if isinstance(similarity.get("minimum"), (int, float)):
            w.query_bar.minimum.setValue(float(similarity["minimum"]))
        if similarity.get("query") and st.graphs is not None:
            w.query_bar.set_query(str(similarity["query"]))
        for entry, report in r.reports:
            view = w.report_tabs.add(report, "Reopened from the session. " if entry.get("scored") else "")
            if entry.get("title"):
                w.results_tabs.setTabText(w.results_tabs.indexOf(view), entry["title"])
        w.filters.group_scaffolds.setChecked(bool(filters.get("grouped")))
        if r.loaded is not None or r.reports:
            w.stack.setCurrentIndex(1)
        if 0 <= doc.get("current_tab", 0) < w.results_tabs.count():
            w.results_tabs.setCurrentIndex(doc["current_tab"])
        if 0 <= doc.get("bottom_tab", 0) < w.tabs.count():
            w.tabs.setCurrentIndex(doc["bottom_tab"])
        w._unsaved.clear()  # everything shown is in the session file
        self.remember(r.path)
        self.said.emit(f"Session {Path(r.path).name} opened (no training).")
        self.status.emit(f"Session opened from {r.path}", 8000)
        if r.problems:
            self.warning.emit("Session opened with problems", "\n\n".join(r.problems))
        self.opened.emit(r.path)

    # ---------------------------------------------------------------- recent sessions
    def recent(self) -> list[str]:
        """The recent session files, newest first."""
        value = self.window.settings.value(RECENT_KEY, [])
        if isinstance(value, str):  # QSettings gives a one-item list back as a string
            value = [value]
        return [str(v) for v in (value or [])]

    def remember(self, path: str) -> None:
        """Put ``path`` first among the recent sessions."""
        recent = [path] + [p for p in self.recent() if p != path]
        self.window.settings.setValue(RECENT_KEY, recent[:MAX_RECENT])
        self.window.files.remember_dir(str(Path(path).parent))
        self.rebuild_menu()

    def forget(self, path: str) -> None:
        self.window.settings.setValue(RECENT_KEY, [p for p in self.recent() if p != path])
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
            self.menu.addAction(path, lambda p=path: self.window.open_session(p))
        self.menu.setEnabled(bool(self.recent()) and not self.window.runner.busy())


def _marks_with_ids(state) -> list[dict]:
    """The review marks as JSON values, each with its graph's ID so it finds its graph again."""
    if state.graphs is None:
        return []
    return [{"index": int(i), "id": state.graphs.meta[i].id, "anomaly": bool(mark)}
            for i, mark in sorted(state.review_marks.items())]


def _marks_on(state, saved: list) -> dict[int, bool]:
    """Saved marks put back on the open graphs: by index where its ID still matches, else by ID
    (a mark whose graph is gone is dropped)."""
    if state.graphs is None or not isinstance(saved, list):
        return {}
    ids = [m.id for m in state.graphs.meta]
    where = {gid: i for i, gid in reversed(list(enumerate(ids)))}
    marks = {}
    for entry in saved:
        if not isinstance(entry, dict) or "anomaly" not in entry:
            continue
        i = entry.get("index")
        if not (isinstance(i, int) and 0 <= i < len(ids) and ids[i] == entry.get("id")):
            i = where.get(entry.get("id"))
        if i is not None:
            marks[i] = bool(entry["anomaly"])
    return marks
