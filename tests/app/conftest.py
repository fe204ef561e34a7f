"""Offscreen, no modal question may wait for a click: a question no test answers is answered
Discard (e.g. "Save the trained model before quitting?" when a test's window closes)."""
import pytest
from PySide6.QtWidgets import QMessageBox


@pytest.fixture(autouse=True)
def answer_questions_discard(monkeypatch):
    monkeypatch.setattr(QMessageBox, "question", lambda *args, **kwargs: QMessageBox.StandardButton.Discard)
