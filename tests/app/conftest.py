"""Offscreen, no modal question may wait for a click: a question no test answers is answered
Discard (e.g. "Save the trained model before quitting?" when a test's window closes), and the
question before quitting while work runs, Stop and quit. The patch has a MonkeyPatch of its own,
so that a test's ``monkeypatch.undo()`` leaves it in place."""
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox


@pytest.fixture(autouse=True)
def answer_questions_discard():
    patch = pytest.MonkeyPatch()
    patch.setattr(QMessageBox, "question", lambda *args, **kwargs: QMessageBox.StandardButton.Discard)
    from app.widgets import dialogs

    patch.setattr(dialogs, "ask_stop_to_quit", lambda *args: True)  # its own box: a Stop and quit button
    yield
    patch.undo()


@pytest.fixture(autouse=True)
def empty_clipboard():
    """Each test leaves the clipboard empty: text the offscreen platform's clipboard still held
    when Python exited crashed it (a segmentation fault after every test had passed)."""
    yield
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is not None:
        QApplication.clipboard().clear()


@pytest.fixture
def settings(tmp_path):
    """Settings of the test's own (an INI file in its temporary folder), never the user's."""
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings):
    """The main window, shown; its jobs and drawing process stopped afterwards."""
    from app.main_window import MainWindow

    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    yield w
    w.runner.stop_all()
    w.structures.shutdown()
