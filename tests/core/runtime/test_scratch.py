"""Scratch folders: removed whole, even when a late writer writes into them while they are removed."""
from __future__ import annotations

import os

import pytest

from core.runtime.scratch import make_scratch, remove_scratch, scratch_folder


def test_a_scratch_folder_is_private_and_removed_with_what_it_holds(tmp_path):
    folder = make_scratch(".screen-", tmp_path)
    assert folder.parent == tmp_path and folder.name.startswith(".screen-")
    assert (folder.stat().st_mode & 0o777) == 0o700
    (folder / "sub").mkdir()
    (folder / "sub" / "chunk.csv").write_text("x")
    remove_scratch(folder)
    assert list(tmp_path.iterdir()) == []
    remove_scratch(folder)  # already gone: no error


def test_a_writer_that_writes_while_the_folder_is_removed_leaves_nothing(tmp_path, monkeypatch):
    """A cancelled task writing its chunk file between the removal's listing and its last rmdir:
    removed in place, the folder would stay, holding the late file."""
    folder = make_scratch(".screen-", tmp_path)
    (folder / "chunk-1.csv").write_text("taken")
    real_rmdir = os.rmdir
    late = []

    def rmdir_after_a_late_write(path, *args, **kwargs):
        try:
            (folder / f"late-{len(late)}.csv").write_text("a chunk of a cancelled task")
            late.append("written")
        except FileNotFoundError:
            late.append("refused")
        return real_rmdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "rmdir", rmdir_after_a_late_write)
    remove_scratch(folder)
    monkeypatch.undo()
    assert late and set(late) == {"refused"}  # the folder was gone from its name before the removal began
    assert list(tmp_path.iterdir()) == []


def test_the_with_block_removes_its_folder_on_an_error(tmp_path):
    with pytest.raises(RuntimeError):
        with scratch_folder("session-", tmp_path) as folder:
            (folder / "model.pt").write_bytes(b"x")
            raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []
