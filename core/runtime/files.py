"""Writing a result file safely: whole or not at all, never through a link or a guessable name.

The new content goes to a temporary file created with ``O_CREAT | O_EXCL`` under a random name
in the target's own directory (``tempfile.mkstemp``), so nobody who can write that directory can
plant a link for us to follow; it is then renamed over the target, which replaces a link at the
target's name rather than writing through it."""
from __future__ import annotations

import errno
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator


@contextmanager
def atomic_output(path: str | Path, mode: str = "wb", **open_args) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; on success it replaces ``path`` (keeping
    the old file's permissions, or 0644), on any error it is removed and ``path`` is untouched."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(fd, mode, **open_args) as fh:
            yield fh
        try:
            mode_bits = path.stat().st_mode & 0o777 if path.is_file() and not path.is_symlink() else 0o644
            os.chmod(tmp, mode_bits)
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_writable(path: str | Path) -> None:
    """Raise ``OSError`` naming ``path`` when a file cannot be written there (its folder is missing,
    not a folder, or not writable; or ``path`` is a folder): called before any long work."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "Is a folder, not a file", str(path))
    if not folder.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"No such file or directory (no folder {folder})", str(path))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, f"Permission denied (cannot write in {folder})", str(path))

