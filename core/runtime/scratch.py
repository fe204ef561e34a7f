"""Private scratch folders: made with a random name, removed whole even while something still writes.

A run that is stopped may leave writers behind it: a Dask task already running on a worker goes
on after the client cancels it and writes its chunk file into the run's folder. Removing the
folder in place races with such a writer (a file created between the listing and the final
``rmdir`` keeps the folder alive). So the folder is first renamed aside; a writer that comes
later finds no folder at the old name and fails there, and the renamed folder is removed with
only what it held at the rename. ``tests/architecture/test_one_scratch.py`` fails on any other
way of making or removing a folder."""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def make_scratch(prefix: str, parent: str | Path | None = None) -> Path:
    """Make a private folder (mode 0700, a name nobody can guess), to be removed by :func:`remove_scratch`.

    Args:
        prefix: the start of its name (a leading dot hides it beside a user's files).
        parent: the folder it goes in (None: the system's temporary folder).

    Returns:
        The new folder.
    """
    return Path(tempfile.mkdtemp(prefix=prefix, dir=None if parent is None else str(parent)))


def remove_scratch(folder: str | Path) -> None:
    """Remove a scratch folder and everything in it, even while a late writer still writes there.

    The folder is renamed aside first, so nothing can be created under its old name while it is
    removed; a folder that is already gone is no error.

    Args:
        folder: a folder made by :func:`make_scratch`.
    """
    folder = Path(folder)
    aside = folder.with_name(f"{folder.name}.removing-{uuid.uuid4().hex[:8]}")
    try:
        os.rename(folder, aside)
    except FileNotFoundError:
        return
    except OSError:  # a file system that cannot rename a folder: remove it where it is
        aside = folder
    shutil.rmtree(aside, ignore_errors=True)
    if aside.exists():  # a file held open where removing it is refused (Windows): once more
        shutil.rmtree(aside, ignore_errors=True)


@contextmanager
def scratch_folder(prefix: str, parent: str | Path | None = None) -> Iterator[Path]:
    """A scratch folder for the length of a ``with`` block, removed however the block ends.

    Args:
        prefix: the start of its name.
        parent: the folder it goes in (None: the system's temporary folder).

    Yields:
        The folder.
    """
    folder = make_scratch(prefix, parent)
    try:
        yield folder
    finally:
        remove_scratch(folder)
