"""The SMARTS filter: every open molecule matched against the pattern in the background."""
from __future__ import annotations

import functools

from PySide6.QtCore import QObject, Signal, Slot

from .. import tasks
from ..state import AppState
from ..workers import Runner
from .base import Controller


class SmartsController(Controller):
    """Matches the state's molecules against a SMARTS pattern (:func:`app.tasks.match_smarts`).

    It has a runner of its own: filtering as you type neither waits for nor holds up opening,
    training or scoring. A pattern asked for while one is matched stops that match (between chunks
    of molecules) and is matched next (the last one asked for only); a result for graphs that are no longer open, or for a pattern no longer asked for, is
    not shown; the last result is kept, so new scores of the same graphs are filtered at once. A failure is said in a message box (``warning``); the busy indicator is the filter
    bar's (``matching``), so the side panel's progress bar stays with the long jobs.

    Signals:
        matching: a pattern is being matched (the pattern).
        matched: the filter to apply (a boolean mask over the open graphs; None: no filter).
        invalid: the pattern does not parse as SMARTS (the pattern).
    """

    matching = Signal(str)
    matched = Signal(object)
    invalid = Signal(str)

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(parent)
        self.state = state
        self.runner = Runner(self)
        self.runner.changed.connect(self._next)
        self._wanted: tuple | None = None  # (graphs, pattern) the filter asks for now
        self._running: tuple | None = None  # (graphs, pattern) being matched
        self._known: tuple | None = None  # (graphs, pattern, SmartsMatch) of the last match
        state.data_changed.connect(self._forget)

    def match(self, pattern: str) -> None:
        """Filter the open graphs by ``pattern`` ("" or no graphs: no filter, at once; the pattern of
        the last match: its result, at once)."""
        graphs = self.state.graphs
        self._wanted = (graphs, pattern) if pattern and graphs is not None else None
        if self._wanted is None:
            self.matched.emit(None)
        elif self._is_known(self._wanted):
            self._deliver(self._known[2])
        else:
            self._next()

    def is_matching(self) -> bool:
        """Whether a match runs or waits to run."""
        return self.runner.busy() or (self._wanted is not None and not self._is_known(self._wanted))

    def stop(self) -> None:
        """Wait for a running match to end (the window is closing)."""
        self._wanted = None
        self.runner.stop_all()

    def _forget(self) -> None:
        self._known = None  # other graphs: the last match's are not kept alive

    def _is_known(self, key: tuple) -> bool:
        return self._known is not None and _same(self._known, key)

    def _deliver(self, result: tasks.SmartsMatch) -> None:
        if result.valid:
            self.matched.emit(result.mask)
        else:
            self.invalid.emit(self._wanted[1])

    @Slot()
    def _next(self) -> None:
        if self._wanted is None or self._is_known(self._wanted):
            return
        if self.runner.busy():
            if self._running is not None and not _same(self._running, self._wanted):
                self.runner.stop("smarts")  # a newer pattern or other graphs: the running match ends early
            return
        graphs, pattern = self._running = self._wanted
        self.matching.emit(pattern)
        smiles = [m.smiles for m in graphs.meta]
        self.runner.start("smarts", functools.partial(tasks.match_smarts, smiles, pattern), self._done,
                          self._cannot)

    @Slot(object)
    def _done(self, result: tasks.SmartsMatch) -> None:
        running, self._running = self._running, None
        if running is None or result.stopped or running[0] is not self.state.graphs:
            return  # stopped, or other graphs are open now: the pattern asked for now is matched next
        self._known = (*running, result)
        if self._wanted is not None and _same(running, self._wanted):
            self._deliver(result)  # else the pattern asked for now is matched next

    @Slot(str)
    def _cannot(self, message: str) -> None:
        running, self._running = self._running, None
        self.warning.emit("SMARTS filter", message)
        if running is not None and self._wanted is not None and _same(running, self._wanted):
            self._wanted = None  # not tried again until the pattern or the data change
            self.matched.emit(None)  # the filter is off


def _same(a: tuple, b: tuple) -> bool:
    """Whether two (graphs, pattern, ...) are about the same graphs and pattern."""
    return a[0] is b[0] and a[1] == b[1]
