"""Saving the state's model to a file and loading one into the state."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from ..state import AppState, app_wording, view_weights_text, with_suffix
from .base import Controller


class ModelFilesController(Controller):
    """Saves and loads models (small files: on the GUI thread, as the dialogs that ask for them).

    Signals:
        saved: the model was written (its path).
        loaded: the state holds a loaded model (the model).
    """

    saved = Signal(str)
    loaded = Signal(object)

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(parent)
        self.state = state

    def save(self, path: str) -> str | None:
        """Save the model; ``.pt`` is added when the name has no extension, so the Load dialog lists it.

        Args:
            path: the file to write.

        Returns:
            The path written, or None when it could not be (a warning says why).
        """
        from core import GLocalKDError

        path = with_suffix(path)
        try:
            self.state.model.save(path)
        except (GLocalKDError, OSError) as exc:
            self.warning.emit("Cannot save model", app_wording(exc))
            return None
        self.saved.emit(path)
        self.status.emit(f"Model saved to {path}", 8000)
        return path

    def load(self, path: str, device: str, normal_label) -> None:
        """Load the model in ``path`` onto ``device``; its graph-size baseline is fitted again on the
        open data's graphs of ``normal_label``."""
        from core import GLocalKDError, load_detector

        try:
            model = load_detector(path, device=device)
        except GLocalKDError as exc:
            self.warning.emit("Cannot load model", app_wording(exc))
            return
        self.state.set_model(model)
        self.state.normal_label = normal_label
        weighed = view_weights_text(model)
        self.status.emit(f"Model loaded from {path}" + (f". {weighed}" if weighed else ""), 12000)
        self.loaded.emit(model)
