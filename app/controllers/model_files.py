"""Saving the state's model to a file and loading one into the state, both in the background."""
from __future__ import annotations

import functools
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QWidget

from .. import tasks
from ..file_memory import FileMemory
from ..state import AppState, view_weights_text, with_suffix
from ..workers import Runner
from .base import Controller

MODEL_FILTER = "GLocalKD model (*.pt)"


class ModelFilesController(Controller):
    """Saves and loads models through jobs (:func:`app.tasks.save_model`, :func:`app.tasks.load_model`).

    Signals:
        saved: the model was written (its path).
        loaded: the state holds a loaded model (the model); its scores of the open graphs follow.
    """

    saved = Signal(str)
    loaded = Signal(object)

    def __init__(self, runner: Runner, state: AppState, files: FileMemory, parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self.state = state
        self.files = files

    def save_dialog(self, window: QWidget) -> None:
        """Ask where to save the model (named after the data) and save it there."""
        if self.state.model is None:
            self.warning.emit("No model", "Train a model first.")
            return
        stem = Path(self.state.data_path).stem or "model"
        path, _ = self.files.ask_save(window, "Save model", f"{stem}_model.pt", MODEL_FILTER)
        if path:
            self.save(path)

    def load_dialog(self, window: QWidget, device: str, normal_label: str | None) -> None:
        """Ask for a model file and load it (see :meth:`load`)."""
        path = self.files.ask_open(window, "Load model", f"{MODEL_FILTER};;All files (*)")
        if path:
            self.load(path, device, normal_label)

    def save(self, path: str) -> None:
        """Save the model in the background; ``.pt`` is added when the name has no extension, so the
        Load dialog lists it.

        Args:
            path: the file to write.
        """
        path = with_suffix(path)
        self.busy.emit(f"Saving the model to {Path(path).name}…", True)
        self.runner.start("save_model", functools.partial(tasks.save_model, self.state.model, path), self._saved,
                          functools.partial(self._cannot, "Cannot save model"))

    @Slot(object)
    def _saved(self, path: str) -> None:
        self.idle.emit()
        self.said.emit(f"Model saved: {Path(path).name}.")
        self.saved.emit(path)
        self.status.emit(f"Model saved to {path}", 8000)

    def load(self, path: str, device: str, normal_label: str | None) -> None:
        """Load the model in ``path`` onto ``device`` in the background; its graph-size baseline is
        fitted again on the open data's graphs of ``normal_label``."""
        self.busy.emit(f"Loading the model {Path(path).name}…", True)
        self.runner.start("load_model", functools.partial(tasks.load_model, path, device),
                          functools.partial(self._loaded, path, normal_label),
                          functools.partial(self._cannot, "Cannot load model"))

    def _loaded(self, path: str, normal_label: str | None, model) -> None:
        self.idle.emit()
        self.said.emit(f"Model loaded: {Path(path).name}.")
        self.state.set_model(model, normal_label)
        weighed = view_weights_text(model)
        self.status.emit(f"Model loaded from {path}" + (f". {weighed}" if weighed else ""), 12000)
        self.loaded.emit(model)

    def _cannot(self, title: str, message: str) -> None:
        """A job failed: said in a message box titled ``title`` (the data on screen stays)."""
        self.idle.emit()
        self.said.emit("")
        self.warning.emit(title, message)
