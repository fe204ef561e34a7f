"""A session file damaged inside (its model, a report, its training entry) is refused naming the
session file, and never half-restores the window."""
from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.app.test_main_window import _idle, open_and_wait, train_and_wait


@pytest.fixture
def saved(qtbot, window, herg_path, tmp_path) -> Path:
    """A trained window with a scored file's tab, saved as a session."""
    w = window
    data = tmp_path / "herg.tab"
    shutil.copy(herg_path, data)
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w)
    library = tmp_path / "lib.smi"
    library.write_text("CCO a1\nc1ccccc1O a2\nCCCCN a3\n")
    w.score_file(str(library), {})
    qtbot.waitUntil(lambda: _idle(w) and len(w.report_views) == 1, timeout=60000)
    path = tmp_path / "good.glocalkd-session"
    w.sessions.save(str(path))
    qtbot.waitUntil(lambda: _idle(w) and path.exists(), timeout=60000)
    return path


def damaged_copy(good: Path, bad: Path, member: str, data: bytes | None = None, edit=None) -> Path:
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(bad, "w") as zout:
        for item in zin.namelist():
            content = zin.read(item)
            if item == member:
                content = data if data is not None else json.dumps(edit(json.loads(content))).encode()
            zout.writestr(item, content)
    return bad


def open_session(qtbot, w, path: Path) -> str:
    w.feedback.last_warning = ""
    w.sessions.open(str(path))
    qtbot.waitUntil(lambda: _idle(w) and bool(w.feedback.last_warning), timeout=60000)
    return w.feedback.last_warning


@pytest.mark.parametrize("member, junk", [("model.pt", b"not a model"), ("reports/0.csv", b"hello,world\n1,2\n")])
def test_a_damaged_part_is_named_with_the_session_file_not_a_scratch_copy(qtbot, window, saved, tmp_path,
                                                                           member, junk):
    bad = damaged_copy(saved, tmp_path / "bad.glocalkd-session", member, data=junk)
    model = window.state.model
    said = open_session(qtbot, window, bad)
    assert "bad.glocalkd-session" in said and "damaged" in said and "session-" not in said
    assert window.state.model is model and len(window.report_views) == 1  # the window as it was


def refused_as_damaged(qtbot, window, saved: Path, tmp_path, part: str, key: str, value) -> None:
    """Open a copy of ``saved`` whose ``session.json`` has ``doc[part][key] = value``: it must be
    refused, naming the session file and the part, with the window left as it was."""
    def edit(doc):
        doc[part][key] = value
        return doc

    bad = damaged_copy(saved, tmp_path / "bad.glocalkd-session", "session.json", edit=edit)
    model, graphs = window.state.model, window.graphs
    said = open_session(qtbot, window, bad)
    assert "bad.glocalkd-session" in said and part in said
    assert window.state.model is model and window.graphs is graphs and len(window.report_views) == 1


def test_a_malformed_training_entry_is_refused_and_the_window_stays_as_it_was(qtbot, window, saved, tmp_path):
    """``"trained_on_shown": "655 graphs"`` raised ValueError in the middle of putting the session
    back: the model gone, the tabs replaced, no message."""
    refused_as_damaged(qtbot, window, saved, tmp_path, "training", "trained_on_shown", "655 graphs")


@pytest.mark.parametrize("key, value", [("smarts", 5), ("text", 7), ("ranges", {"MW": ["a", 1]}),
                                        ("ranges", {"MW": [1]}), ("percentile", "95"), ("flagged_only", "yes"),
                                        ("group", 5)])
def test_a_filter_of_the_wrong_kind_is_refused_and_the_window_stays_as_it_was(qtbot, window, saved, tmp_path,
                                                                               key, value):
    """``"smarts": 5`` raised TypeError in a slot half way through putting the session back: the
    model and data swapped in, the filters and tabs not, and "Opening the session..." for ever."""
    refused_as_damaged(qtbot, window, saved, tmp_path, "filters", key, value)


@pytest.mark.parametrize("name", ["ABSOLUTE", "../../../../../../../../VICTIM", "sub/x.csv", "..", 5])
def test_a_report_name_that_is_not_a_bare_file_name_writes_nothing_outside_the_scratch_folder(
        qtbot, window, saved, tmp_path, name):
    """A shared session file whose report entry was named ``/home/you/.bashrc`` (or ``../../x``)
    wrote the report's bytes there when the session was opened: the name was a path. It is refused
    as damaged before anything is written, and the window stays as it was."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    name = {"ABSOLUTE": str(victim)}.get(name, name)
    if isinstance(name, str) and "VICTIM" in name:
        name = name.replace("VICTIM", str(victim).lstrip("/"))

    def edit(doc):
        doc["reports"][0]["name"] = name
        return doc

    bad = damaged_copy(saved, tmp_path / "bad.glocalkd-session", "session.json", edit=edit)
    model = window.state.model
    said = open_session(qtbot, window, bad)
    assert "bad.glocalkd-session" in said and "name" in said
    assert victim.read_text() == "precious" and not (tmp_path / "sub").exists()
    assert window.state.model is model and len(window.report_views) == 1


def test_two_embedded_reports_of_one_name_keep_their_own_rows(qtbot, window, saved, tmp_path):
    """Embedded reports were copied to the scratch folder under their names, so a second report of
    the same name overwrote the first's file, which its tab reads again (the HTML export)."""
    from core import read_report

    def edit(doc):
        doc["reports"].append(dict(doc["reports"][0], embedded="reports/1.csv"))
        return doc

    bad = damaged_copy(saved, tmp_path / "two.glocalkd-session", "session.json", edit=edit)
    with zipfile.ZipFile(bad, "a") as zf:
        zf.writestr("reports/1.csv", zipfile.ZipFile(saved).read("reports/0.csv").replace(b"a1", b"zz"))
    window.sessions.open(str(bad))
    qtbot.waitUntil(lambda: _idle(window) and len(window.report_views) == 2, timeout=60000)
    first, second = (read_report(view.report.source) for view in window.report_views)
    assert "a1" in first.ids and "zz" in second.ids and view_sources_differ(window)


def view_sources_differ(window) -> bool:
    return len({view.report.source for view in window.report_views}) == len(window.report_views)


@pytest.mark.parametrize("key, value", [("options", {"smiles_column": 5}), ("options", {"columns": "smiles"}),
                                        ("graphs", 7), ("path", ""), ("path", "  ")])
def test_a_malformed_data_entry_is_refused_as_damage_not_a_traceback(qtbot, window, saved, tmp_path, key, value):
    """``{"smiles_column": 5}`` reached the loader, which failed with "'int' object has no
    attribute 'lower'" and a traceback in the warning; an empty path was read as the current
    folder, as a TU collection."""
    refused_as_damaged(qtbot, window, saved, tmp_path, "data", key, value)


def test_a_form_value_out_of_every_range_is_left_out_not_a_half_restored_window(qtbot, window, saved, tmp_path):
    """``"epochs": Infinity`` (which Python's json reads) raised OverflowError in the middle of putting
    the session back: its report tabs closed, nothing else restored, no message."""
    def edit(doc):
        doc["form"]["epochs"], doc["form"]["seed"] = float("inf"), 2 ** 40
        return doc

    bad = damaged_copy(saved, tmp_path / "edited.glocalkd-session", "session.json", edit=edit)
    opened = []
    window.sessions.opened.connect(opened.append)
    window.sessions.open(str(bad))
    qtbot.waitUntil(lambda: _idle(window) and bool(opened), timeout=60000)
    assert len(window.report_views) == 1 and window.state.model is not None and window.form.epochs.value() >= 1


def _one_entry_session(folder: Path) -> tuple[Path, bytes]:
    from app.session_file import write_session

    path = folder / "s.glocalkd-session"
    write_session(str(path), {"data": None, "form": {"epochs": 3}}, None, [])
    return path, path.read_bytes()


@pytest.mark.parametrize("damage", ["deflate64", "encrypted"])
def test_a_session_zipped_as_python_cannot_read_is_refused_as_damage(tmp_path, damage):
    """An entry compressed by deflate64 (as Windows' zipper writes) or marked encrypted reached the
    user as a bare NotImplementedError or RuntimeError."""
    import struct

    from app.session_file import read_session
    from core import GLocalKDError

    path, raw = _one_entry_session(tmp_path)
    central = raw.find(b"PK\x01\x02")
    changed = bytearray(raw)
    if damage == "deflate64":
        changed[central + 10:central + 12] = struct.pack("<H", 9)
    else:
        changed[central + 8] |= 1
    path.write_bytes(bytes(changed))
    with pytest.raises(GLocalKDError, match="not a GLocalKD Studio session file, or damaged"):
        read_session(str(path), str(tmp_path), "cpu")


def test_every_byte_of_a_damaged_deflate_stream_is_refused_as_damage(tmp_path):
    """A flipped byte in the compressed session.json gave a bare zlib.error; any byte flipped there
    is now refused as damage (the deflate stream or the entry's CRC notices every one)."""
    from app.session_file import read_session
    from core import GLocalKDError

    path, raw = _one_entry_session(tmp_path)
    info = zipfile.ZipFile(path).getinfo("session.json")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    refused = 0
    for k in range(start, start + info.compress_size):
        changed = bytearray(raw)
        changed[k] ^= 0xFF
        path.write_bytes(bytes(changed))
        try:
            read_session(str(path), str(tmp_path), "cpu")
        except GLocalKDError:
            refused += 1
    assert refused == info.compress_size


def test_a_session_that_cannot_be_written_is_refused_first_naming_its_file(tmp_path):
    """Saving a session over a folder said ".../.d2.glocalkd-session.1k5ye6_i.tmp: Is a directory":
    the file is checked before the model and reports are gathered, and the error names it."""
    from app.session_file import write_session

    class Model:
        can_save = True

        def save(self, path):
            raise AssertionError("the model was saved before the session file was checked")

    path = tmp_path / "d2.glocalkd-session"
    path.mkdir()
    with pytest.raises(IsADirectoryError) as caught:
        write_session(str(path), {"data": None}, Model(), [])
    assert caught.value.filename == str(path) and ".tmp" not in str(caught.value)
