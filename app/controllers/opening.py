"""Start-up and opening files: torch and RDKit loaded in the background once the window shows,
graph data loaded into the state, ranked reports read for a tab of their own, session and model
files handed to their controllers. Every way of opening a path (File > Open, a drop on the window,
the command line, the recent files) comes here, so each knows every kind of file."""
from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from core import counted, file_kind

from .. import tasks
from ..state import AppState
from ..workers import Runner
from .base import Controller


class OpeningController(Controller):
    """Loads torch and RDKit first (:meth:`warm_up`), then graph data (into the state) and ranked
    reports. A file asked for while torch loads is opened once it has.

    Args:
        runner: runs the jobs.
        state: where loaded graphs go.
        confirm: asked before graph data replaces the open data (unsaved work); False cancels.
        ask_columns: the loader's options for a file (columns of a table); None cancels.

    Signals:
        warmed_up: torch and RDKit are loaded (a note on the device torch sees; "" when loading failed).
        loaded: the state holds the file's graphs (the job's :class:`app.tasks.Loaded`).
        report_read: a ranked report was read (the report).
        session_asked: a session file was opened (its path): the sessions controller opens it.
        model_asked: a model file was opened (its path): the model-file controller loads it.
    """

    warmed_up = Signal(str)
    loaded = Signal(object)
    report_read = Signal(object)
    session_asked = Signal(str)
    model_asked = Signal(str)

    def __init__(self, runner: Runner, state: AppState, confirm: Callable[[], bool],
                 ask_columns: Callable[[str], dict | None], parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self.state = state
        self._confirm, self._ask_columns = confirm, ask_columns
        self.ready = False  # torch and RDKit loaded
        self._pending: Callable[[], None] | None = None  # an opening asked for while torch loads
        self._pending_name = ""  # the name of its file
        self._reading = ""  # the name of the file being read
        self.warm_timer = QTimer(self, singleShot=True, interval=250)  # after the window has been drawn:
        self.warm_timer.timeout.connect(self._warm_up)  # loading torch's libraries holds Python's lock
        runner.changed.connect(self._open_pending)

    def warm_up(self) -> None:
        """Load torch and RDKit in the background, a moment after the window shows."""
        self.busy.emit("Loading torch and RDKit…", True)
        self.warm_timer.start()

    @Slot()
    def _warm_up(self) -> None:
        self.runner.start("warmup", tasks.warm_up, self._warmed_up, self._warm_up_failed)

    @Slot(object)
    def _warmed_up(self, device_note: str) -> None:
        self.ready = True
        self.warmed_up.emit(device_note)
        self.idle.emit()
        self.said.emit("Ready." if self._pending is None else "")

    @Slot(str)
    def _warm_up_failed(self, message: str) -> None:
        """torch or RDKit cannot load: the form says what it can, the message box why."""
        self.ready = True
        self.warmed_up.emit("")
        self.failed.emit(message)

    def _wait_for_warm_up(self, opening: Callable[[], None], name: str) -> None:
        """Keep one opening until torch has loaded: the newest one asked for, saying which it replaced."""
        replaced = f" (instead of {self._pending_name})" if self._pending is not None and \
            self._pending_name != name else ""
        self._pending, self._pending_name = opening, name
        self.said.emit(f"Loading torch and RDKit, then {name}{replaced}…")

    @Slot()
    def _open_pending(self) -> None:
        """Open the file asked for while torch was loading, once the warm-up job has ended."""
        if self.ready and self._pending is not None and not self.runner.blocking():
            pending, self._pending = self._pending, None
            pending()

    def open_dropped(self, paths: list[str]) -> None:
        """Open what was dropped on the window: one file or folder, or the files of one TU collection
        (the collection); several other paths open none of them, and the warning names them.

        Args:
            paths: the local files and folders dropped (empty: only links to elsewhere were).
        """
        if not paths:
            self.status.emit("Only files and folders on this computer can be opened: drop them from a file "
                             "manager.", 8000)
            return
        if not self.ready:  # torch is still loading (core's readers load it): open them once it has
            self._wait_for_warm_up(functools.partial(self.open_dropped, paths), Path(paths[0]).name)
            return
        from core import tu_folder_of

        chosen = list(dict.fromkeys(str(tu_folder_of(p) or p) for p in paths))
        if len(chosen) > 1:
            names = ", ".join(Path(p).name for p in paths[:5]) + (f" and {len(paths) - 5:,} more" if len(paths) > 5
                                                                  else "")
            self.warning.emit("One file at a time", f"{counted(len(paths), 'file')} were dropped ({names}); "
                              "nothing was "
                              "opened. The window opens one data file, report, session or model at a time: drop "
                              "one of them, or the folder of a TU collection.")
            return
        self.open(chosen[0])

    def open(self, path: str, options: dict | None = None) -> None:
        """Open ``path``: a session file or a model file by their controllers (:func:`core.file_kind`:
        what the file holds, whatever its name), a
        ranked report in a tab of its own, else graph data into the state (asking for columns when a
        table's SMILES column is not obvious, unless ``options`` are given). One of a TU collection's
        files opens the collection (:func:`core.tu_folder_of`)."""
        if not self.ready:  # torch is still loading: open the file once it has
            self._wait_for_warm_up(functools.partial(self.open, path, options), Path(path).name)
            return
        if options is None:
            from core import tu_folder_of

            path = str(tu_folder_of(path) or path)
        if self.refused_while_busy("opening a file"):
            return
        kind = file_kind(path) if options is None else "data"
        if kind == "session":
            self.session_asked.emit(path)
            return
        if kind == "model":
            self.model_asked.emit(path)
            return
        from core import is_report

        if options is None and is_report(path):  # a ranked report (e.g. a screening result): its own tab
            self.read_report(path)
            return
        if not self._confirm():
            return
        if options is None:
            options = self._ask_columns(path)
            if options is None:
                return
        self.load(path, options)

    def load(self, path: str, options: dict) -> None:
        """Load the graphs of ``path`` with the loader's ``options``."""
        self.status.emit(f"Loading {path}…", 0)
        self.busy.emit(f"Loading {Path(path).name}…", True)
        self._reading = Path(path).name
        self.runner.start("load", functools.partial(tasks.load_data, path, options), self._loaded, self._failed,
                          self._rows_read)

    @Slot(object)
    def _rows_read(self, rows: int) -> None:
        self.said.emit(f"Loading {self._reading}: {counted(rows, 'row')} read…")

    def _stopped(self) -> None:
        self.idle.emit()
        self.said.emit(f"Stopped: {self._reading} was not opened.")
        self.status.emit(f"Stopped reading {self._reading}; the window holds what it held before.", 8000)

    @Slot(object)
    def _loaded(self, result: tasks.Loaded | None) -> None:
        if result is None:
            self._stopped()
            return
        self.idle.emit()
        graphs = result.graphs
        self.state.open_loaded(result)
        rejected = f", {counted(len(graphs.rejects), 'row')} rejected" if graphs.rejects else ""
        self.said.emit(f"Loaded {counted(len(graphs), 'graph')}{rejected}.")  # not "Loading…" any more
        repeated = graphs.repeated_ids_note()  # every row is kept; the ID alone no longer says which is meant
        measured = graphs.labels_note() or graphs.labels_case_note()
        said = [f"Loaded {counted(len(graphs), 'graph')} from {result.path}"
                + (f"; {counted(len(graphs.rejects), 'row')} rejected" if graphs.rejects else "")]
        if repeated:
            said.append(f"{repeated} (every row is kept)")
        if measured:
            said.append(f"Note: {measured}")
        said += [f"Note: {note}" for note in graphs.notes]  # what the reader changed (one-way TU edges)
        self.status.emit(". ".join(said) + ("." if len(said) > 1 else ""), 15000 if len(said) > 1 else 8000)
        self.loaded.emit(result)
        if len(graphs) == 0:
            self.warning.emit("Nothing to score", f"{result.path}: no row could be read as a graph. "
                              "Show rejected rows to see why.")

    def read_report(self, path: str) -> None:
        """Read the ranked CSV report ``path``, with a count of its rows as they come."""
        self.busy.emit(f"Reading report {Path(path).name}…", True)
        self._reading = Path(path).name
        self.runner.start("load", functools.partial(tasks.read_report, path), self._report_read, self._failed,
                          self._progress)

    @Slot(object)
    def _progress(self, rows: int) -> None:
        self.said.emit(f"Reading report: {counted(rows, 'row')}…")

    @Slot(object)
    def _report_read(self, report) -> None:
        if report is None:
            self._stopped()
            return
        self.idle.emit()
        self.said.emit(f"Opened report {Path(report.source).name}: {counted(len(report), 'row')}.")
        self.report_read.emit(report)
