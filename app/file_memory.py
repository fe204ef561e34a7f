"""Where the user's files are: the recent files and the folder every file dialog starts in, kept
in QSettings so that they outlive the session. The window asks here instead of asking Qt."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog, QMenu, QWidget

MAX_RECENT = 8
GRAPH_DATA = "*.smi *.smiles *.csv *.tsv *.tab *.txt *.sdf *.gz *.zip"  # the files the app opens as graphs
FILE_FILTER = (f"Graph data ({GRAPH_DATA});;"
               "SMILES (*.smi *.smiles);;Tables (*.csv *.tsv *.tab *.txt *.gz);;SDF (*.sdf *.sdf.gz);;"
               "TU collection (*.zip);;All files (*)")
# File > Open also opens the app's own files (a session, a model: see core.file_kind)
OPEN_FILTER = (f"Graph data, sessions and models ({GRAPH_DATA} *.glocalkd-session *.pt);;"
               f"GLocalKD Studio session (*.glocalkd-session);;GLocalKD model (*.pt);;{FILE_FILTER}")


class FileMemory:
    """Recent files (newest first, at most ``MAX_RECENT``) and the last folder any dialog used."""

    def __init__(self, settings: QSettings, not_recent: Path | None = None):
        self.settings = settings
        self.not_recent = not_recent  # a folder whose files are never listed (the demos have their own menu)

    def recent(self) -> list[str]:
        value = self.settings.value("files/recent", [])
        if isinstance(value, str):  # QSettings gives a one-item list back as a string
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent(self, path: str) -> bool:
        """Put ``path`` first among the recent files and remember its folder; False for a file of
        the folder never listed."""
        if self.not_recent is not None and Path(path).resolve().parent == self.not_recent:
            return False
        recent = [path] + [p for p in self.recent() if p != path]
        self.settings.setValue("files/recent", recent[:MAX_RECENT])
        self.remember_dir(str(Path(path).parent))
        return True

    def fill_recent_menu(self, menu: QMenu, open_path: Callable[[str], None]) -> None:
        """Fill ``menu`` with the recent files, each opened by ``open_path``; disabled when there are none."""
        menu.clear()
        recent = self.recent()
        for path in recent:
            menu.addAction(path, lambda p=path: open_path(p))
        menu.setEnabled(bool(recent))

    def last_dir(self) -> str:
        """The folder every file dialog starts in: the last one used in any of them."""
        return str(self.settings.value("files/last_dir", str(Path.home())))

    def remember_dir(self, folder: str) -> None:
        """Start the next dialog in ``folder``; never in the demos' folder (inside the installed
        app: scoring a demo file must not send the next export there)."""
        if self.not_recent is not None and Path(folder).resolve() == Path(self.not_recent).resolve():
            return
        self.settings.setValue("files/last_dir", folder)

    def ask_open(self, parent: QWidget, title: str, filters: str) -> str:
        """A file to open ("" when cancelled), starting in the last folder."""
        path, _ = QFileDialog.getOpenFileName(parent, title, self.last_dir(), filters)
        if path:
            self.remember_dir(str(Path(path).parent))
        return path

    def ask_folder(self, parent: QWidget, title: str) -> str:
        path = QFileDialog.getExistingDirectory(parent, title, self.last_dir())
        if path:
            self.remember_dir(str(Path(path).parent))
        return path

    def ask_save(self, parent: QWidget, title: str, name: str, filters: str) -> tuple[str, str]:
        """A file to write and the filter chosen (("", "") when cancelled), offered as ``name``
        in the last folder."""
        path, chosen = QFileDialog.getSaveFileName(parent, title, str(Path(self.last_dir()) / name), filters)
        if path:
            self.remember_dir(str(Path(path).parent))
        return path, chosen
