"""The recent files and the dialogs' folder outlive the window, in QSettings."""
from PySide6.QtCore import QSettings

from app.file_memory import MAX_RECENT, FileMemory


def test_recent_files_newest_first_without_repeats_capped_and_never_the_demos(tmp_path):
    ini = str(tmp_path / "settings.ini")
    demos = tmp_path / "demos"
    files = FileMemory(QSettings(ini, QSettings.Format.IniFormat), not_recent=demos)
    paths = [str(tmp_path / f"set{i}.smi") for i in range(MAX_RECENT + 2)]
    for p in paths:
        assert files.add_recent(p)
    assert files.add_recent(paths[3])  # opened again: first, and listed once
    assert not files.add_recent(str(demos / "herg.tab"))
    again = FileMemory(QSettings(ini, QSettings.Format.IniFormat))  # the next session
    expected = [paths[3]] + [p for p in reversed(paths) if p != paths[3]][:MAX_RECENT - 1]
    assert again.recent() == expected
    assert again.last_dir() == str(tmp_path)  # the folder of the last file opened


def test_a_file_of_the_demos_folder_does_not_send_the_next_dialog_into_the_installed_app(tmp_path):
    demos = tmp_path / "demos"
    demos.mkdir()
    files = FileMemory(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat), not_recent=demos)
    files.remember_dir(str(tmp_path / "work"))
    files.remember_dir(str(demos))  # a demo file scored through File > Score another file
    assert files.last_dir() == str(tmp_path / "work")
