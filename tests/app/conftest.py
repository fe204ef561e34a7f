"""Offscreen, no modal question may wait for a click: a question no test answers is answered
Discard (e.g. "Save the trained model before quitting?" when a test's window closes). The patch
has a MonkeyPatch of its own, so that a test's ``monkeypatch.undo()`` leaves it in place."""
import pytest
from PySide6.QtWidgets import QMessageBox


@pytest.fixture(autouse=True)
def answer_questions_discard():
    patch = pytest.MonkeyPatch()
    patch.setattr(QMessageBox, "question", lambda *args, **kwargs: QMessageBox.StandardButton.Discard)
    yield
    patch.undo()
