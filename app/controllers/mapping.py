"""The chemical-space map: computed in the background once per (space, method), then kept."""
from __future__ import annotations

import functools

from PySide6.QtCore import QObject, Signal, Slot

from .. import tasks
from ..state import AppState
from ..workers import Runner
from .base import Controller


class MapController(Controller):
    """Computes maps of the state's graphs in the model's spaces and keeps them until the data or
    scores change (the state's signals).

    Signals:
        ready: a map is ready to show (the map).
    """

    ready = Signal(object)

    def __init__(self, runner: Runner, state: AppState, parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self.state = state
        self._cache: dict = {}
        state.data_changed.connect(self.forget)
        state.scores_changed.connect(self.forget)

    def forget(self) -> None:
        """Drop the kept maps (new data or scores)."""
        self._cache = {}

    def compute(self, space: str, method: str, seed: int) -> None:
        """Show the map of ``space`` by ``method``: the kept one, or one computed in the background."""
        st = self.state
        if st.model is None or st.graphs is None or st.scores is None:
            self.warning.emit("No map yet", "Train or load a model and score a data set first.")
            return
        key = (space, method)
        if key in self._cache:
            self.ready.emit(self._cache[key])
            return
        if self.refused_while_busy("computing the map"):  # a click during training did nothing, and said nothing
            return
        self.busy.emit(f"Computing the {space} map ({method})…", True)
        job = functools.partial(tasks.compute_map, st.model, st.graphs, space, method, seed)
        self.runner.start("map", job, self._computed, self._failed)

    @Slot(object)
    def _computed(self, result) -> None:
        key, space_map = result
        self.idle.emit()
        self.said.emit("Map ready.")
        self._cache[key] = space_map
        self.ready.emit(space_map)
