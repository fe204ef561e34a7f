"""Every way of opening a path (the command line, a drop on the window, File > Open, the recent
files) opens every kind of file the app writes: a session file opens the session, a model file
loads the model, whatever its name. They all go through one dispatch
(:func:`core.file_kind`, the file's contents before its name): a way that bypassed it fails here."""
import shutil
import zipfile

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QFileDialog

from app import session_file
from app.main import open_at_start
from app.main_window import MainWindow
from core import file_kind, load, make_detector, save_detector

from .test_main_window import _idle, open_and_wait, train_and_wait


def _command_line(window, path, monkeypatch, qtbot):
    open_at_start(window, path, demo=False)


def _drop(window, path, monkeypatch, qtbot):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(path)])
    window.dropEvent(QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                                Qt.KeyboardModifier.NoModifier))


def _ready(qtbot, window):
    """The menus are on once torch and RDKit have loaded: a user clicks them then."""
    qtbot.waitUntil(lambda: window.opening.ready and _idle(window), timeout=120000)


def _file_open(window, path, monkeypatch, qtbot):
    _ready(qtbot, window)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (path, ""))
    window.act_open.trigger()


def _recent_files(window, path, monkeypatch, qtbot):
    _ready(qtbot, window)
    window.files.add_recent(path)
    window._rebuild_recent()
    action = next(a for a in window.recent_menu.actions() if a.text() == path)
    action.trigger()


WAYS = {"command line": _command_line, "drop": _drop, "File > Open": _file_open, "recent files": _recent_files}


@pytest.fixture
def written(qtbot, settings, herg_path, tmp_path):
    """A model file and a session file written by the app's own actions, each also under a name
    that says nothing of what it is; and the trained model's fingerprint."""
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w, epochs=2)
    model, session = tmp_path / "tiny.pt", tmp_path / "work.glocalkd-session"
    save_detector(w.model, model)
    w.sessions.save(str(session))
    qtbot.waitUntil(lambda: _idle(w) and session.exists(), timeout=60000)
    fingerprint = w.model.fingerprint()
    w.runner.stop_all()
    w.structures.shutdown()
    shutil.copy(model, tmp_path / "model_without_suffix")
    shutil.copy(session, tmp_path / "session_without_suffix")
    return {"model": str(model), "session": str(session), "fingerprint": fingerprint,
            "renamed model": str(tmp_path / "model_without_suffix"),
            "renamed session": str(tmp_path / "session_without_suffix")}


def _opened(qtbot, settings, way: str, path: str, monkeypatch):
    """A fresh window that opened ``path`` the ``way`` a user does, once done; the warning shown, if any."""
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    WAYS[way](w, path, monkeypatch, qtbot)

    def warned() -> str:  # the message box a failure shows (e.g. "unknown file type")
        return w.feedback.last_warning

    qtbot.waitUntil(lambda: bool(warned()) or (_idle(w) and w.model is not None and w.opening.ready), timeout=120000)
    return w, warned()


@pytest.mark.parametrize("way", list(WAYS))
def test_every_way_of_opening_opens_sessions_and_models(qtbot, settings, written, way, monkeypatch, herg_path):
    for kind in ("session", "model", "renamed session", "renamed model"):
        w, warning = _opened(qtbot, settings, way, written[kind], monkeypatch)
        assert not warning, f"{way}, {kind}: {warning}"
        assert w.model.fingerprint() == written["fingerprint"], f"{way}, {kind}"
        if "session" in kind:  # the session's data opened and scored by its model, not trained again
            qtbot.waitUntil(lambda window=w: _idle(window) and window.scores is not None, timeout=120000)
            assert w.state.data_path == str(herg_path) and len(w.graphs) == 655
        else:
            assert w.graphs is None  # a model alone: no data was opened in its place
        w.runner.stop_all()
        w.structures.shutdown()
        w.close()


def test_file_kind_reads_contents_then_names(tmp_path, written):
    smiles = tmp_path / "a.smi"
    smiles.write_text("CCO\n")
    tu = tmp_path / "TINY.zip"  # a TU collection in a zip is graph data
    with zipfile.ZipFile(tu, "w") as zf:
        zf.writestr("TINY/TINY_A.txt", "1, 2\n2, 1\n")
        zf.writestr("TINY/TINY_graph_indicator.txt", "1\n1\n")
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    assert [file_kind(str(p)) for p in (smiles, tu, broken, tmp_path, tmp_path / "missing.csv")] == ["data"] * 5
    assert file_kind(written["session"]) == file_kind(written["renamed session"]) == "session"
    assert file_kind(written["model"]) == file_kind(written["renamed model"]) == "model"


@pytest.mark.parametrize("name, kind", [("model.glocalkd-session", "model"), ("work.pt", "session")])
def test_file_open_opens_a_model_or_session_whatever_its_name(qtbot, settings, herg_path, tmp_path, monkeypatch,
                                                              name, kind):
    """A model saved as ``x.glocalkd-session`` was refused as a damaged session ("There is no item
    named 'session.json'"), and a session renamed ``work.pt`` as a damaged model ("RuntimeError"):
    File > Open went by the name before looking inside."""
    model = make_detector("size").fit(load(herg_path).subset(range(60)))
    path = tmp_path / name
    if kind == "model":
        save_detector(model, tmp_path / "m.pt")
        shutil.copy(tmp_path / "m.pt", path)
    else:
        session_file.write_session(str(tmp_path / "s.glocalkd-session"), {}, model, [])
        shutil.copy(tmp_path / "s.glocalkd-session", path)
    assert file_kind(str(path)) == kind
    w, warning = _opened(qtbot, settings, "File > Open", str(path), monkeypatch)
    assert not warning and type(w.model).__name__ == type(model).__name__
    assert w.model.score(load(herg_path).subset(range(5))).score.tolist() == \
        model.score(load(herg_path).subset(range(5))).score.tolist()
    w.runner.stop_all()
    w.structures.shutdown()


def test_opening_a_model_as_a_session_says_it_is_a_model(qtbot, window, herg_path, tmp_path):
    """Open session… (or a recent session) given a model file says what it is, not "damaged"."""
    save_detector(make_detector("size").fit(load(herg_path).subset(range(60))), tmp_path / "m.pt")
    shutil.copy(tmp_path / "m.pt", tmp_path / "m.glocalkd-session")
    _ready(qtbot, window)
    window.sessions.open(str(tmp_path / "m.glocalkd-session"))
    qtbot.waitUntil(lambda: bool(window.feedback.last_warning), timeout=60000)
    assert "m.glocalkd-session: a GLocalKD Studio model file, not a session file" in window.feedback.last_warning


def test_file_open_reads_a_smiles_list_saved_as_txt_without_asking_for_columns(qtbot, settings, tmp_path,
                                                                               monkeypatch):
    """File > Open on a bare SMILES list named ``.txt`` offered its first molecule, CCO, as the one
    column to choose; whatever was chosen lost that molecule or failed."""
    from app.widgets import dialogs

    path = tmp_path / "list.txt"
    path.write_text("CCO\nc1ccccc1\nCCN\nCCCl\n")
    monkeypatch.setattr(dialogs.ColumnDialog, "exec", lambda self: pytest.fail("no column to choose"))
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    _file_open(w, str(path), monkeypatch, qtbot)
    qtbot.waitUntil(lambda: _idle(w) and (w.graphs is not None or bool(w.feedback.last_warning)), timeout=60000)
    assert not w.feedback.last_warning and [m.smiles for m in w.graphs.meta] == ["CCO", "c1ccccc1", "CCN", "CCCl"]
    w.runner.stop_all()
    w.structures.shutdown()
