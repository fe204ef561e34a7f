"""Writing a result file safely: whole or not at all, never through a link or a guessable name.

The new content goes to a temporary file created with ``O_CREAT | O_EXCL`` under a random name
in the target's own directory (``tempfile.mkstemp``), so nobody who can write that directory can
plant a link for us to follow; it is then renamed over the target, which replaces a link at the
target's name rather than writing through it. This module is the one place that writes a file a
user named: ``tests/architecture/test_one_writer.py`` fails on any other write to a path."""
from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from core.errors import GLocalKDError


@contextmanager
def atomic_output(path: str | Path, mode: str = "wb", **open_args) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; on success it replaces ``path``.

    The finished file keeps the old file's permissions, or gets the usual ones for a new file
    (0666 less the umask); on any error the temporary file is removed and ``path`` is untouched.

    Args:
        path: the file to write; a link at that name is replaced, never written through.
        mode: a write mode of :func:`open` (``"wb"``, ``"w"``).
        **open_args: passed to :func:`open` (``encoding``, ``newline``).

    Yields:
        The open temporary file, used as the context manager's value.

    Raises:
        OSError: no file can be made beside ``path`` (:func:`check_writable`'s errors), or writing
            it fails (a full disk, a file-size limit); each names ``path``.
    """
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=_hidden_prefix(path), suffix=".tmp", dir=_folder(path))
    except OSError as exc:  # name the file asked for and why, never the temporary file's name
        check_writable(path)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, mode, **open_args) as fh:
            yield fh
        replace_output(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        # a write that names no file, or the temporary file (the rename names it first), failed
        # for ``path``: say so by the name the user gave, never the hidden temporary one
        if exc.filename is None or str(exc.filename) == tmp:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_only(folder: Path) -> bool:
    """Whether ``folder`` lies on a file system mounted read-only (False where that cannot be told)."""
    try:
        return bool(os.statvfs(folder).f_flag & getattr(os, "ST_RDONLY", 0))
    except (OSError, AttributeError):
        return False


def replace_output(finished: str | Path, path: str | Path) -> None:
    """Move a finished file to ``path`` by a rename, which replaces a link at that name rather than writing through it.

    The file was written in a private scratch folder or by :func:`atomic_output`.

    Args:
        finished: the complete file, on the same file system as ``path``.
        path: where it goes; it keeps the permissions of our own file already there, else gets
            0666 less the umask, as a file the user made with any other program (a link or a
            hard link planted at that name lends it nothing).
    """
    path = Path(path)
    _refuse_special(path)
    try:
        old = os.lstat(path)
        # the old file's mode only when it is ours alone: not a link, not a second name of another file
        owner = os.geteuid() if hasattr(os, "geteuid") else old.st_uid
        ours = stat.S_ISREG(old.st_mode) and old.st_nlink == 1 and old.st_uid == owner
        mode = old.st_mode & 0o777 if ours else new_file_mode()
    except OSError:
        mode = new_file_mode()
    try:
        os.chmod(finished, mode)
    except OSError:
        pass
    os.replace(finished, path)


def _refuse_special(path: Path) -> None:
    """Refuse a name that leads to something other than a file or nothing: a device (``/dev/null``),
    a pipe or a socket, which the rename would replace by a regular file (as root, deleting
    ``/dev/null``). A link to a file is fine: the link is replaced, as always."""
    try:
        mode = os.stat(path).st_mode  # what the name leads to, through links
    except OSError:  # nothing there (or a dangling link): a new file
        return
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        kind = "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a pipe" if stat.S_ISFIFO(mode) else \
            "a socket" if stat.S_ISSOCK(mode) else "not a regular file"
        raise OSError(errno.EINVAL, f"Is {kind}, not a file: results are written whole, by replacing the file at "
                      "that name; name a file", str(path))


def new_file_mode() -> int:
    """Give the permissions a new file gets here, as any other program would create it.

    Returns:
        0666 less the process's umask (0644 under the usual 022).
    """
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux's
    ``/proc/self/status``), else by setting and restoring it."""
    try:
        found = re.search(r"^Umask:\s*([0-7]+)", Path("/proc/self/status").read_text(), re.MULTILINE)
        if found:
            return int(found.group(1), 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# of the target's name, the part its temporary and probe files beside it begin with: a name of up to
# 255 bytes (NAME_MAX) is legal, and ".NAME." plus the random part and ".tmp" went past it
_NAME_PART = 40


def _hidden_prefix(path: Path) -> str:
    """The start of a temporary (or probe) file's name beside ``path``: hidden, and recognisable by
    a prefix of the target's name short enough to leave a legal name for any legal target's."""
    return f".{path.name[:_NAME_PART]}."


def _folder(path: Path) -> str:
    return str(path.parent) if str(path.parent) else "."


def check_writable(path: str | Path, make_folder: bool = False) -> None:
    """Check that a file can be written at ``path``, before any long work starts.

    Args:
        path: the output file.
        make_folder: the writer makes missing folders (``--json``): then the nearest folder that
            exists must be writable, and nothing on the way may be a file.

    Raises:
        IsADirectoryError: ``path`` is a folder.
        OSError: ``path`` is a device (``/dev/null``), a pipe or a socket, which writing would replace.
        NotADirectoryError: the folder it goes in is a file.
        FileNotFoundError: the folder it goes in does not exist.
        PermissionError: no file can be created in that folder (permissions, a read-only or
            special file system). Each names ``path``.
    """
    path = Path(path)
    folder = Path(_folder(path))
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "Is a folder, not a file", str(path))
    _refuse_special(path)
    if make_folder:
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, f"Not a folder: {folder}", str(path))
    if not folder.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"No such file or directory (no folder {folder})", str(path))
    if not os.access(folder, os.W_OK | os.X_OK):
        if _read_only(folder):  # not a matter of permissions: nothing is written on that file system
            raise PermissionError(errno.EROFS, f"Read-only file system (cannot write in {folder})", str(path))
        raise PermissionError(errno.EACCES, f"Permission denied (cannot write in {folder})", str(path))
    try:  # what the writer will do: create a file there (finds read-only and special file systems too)
        fd, probe = tempfile.mkstemp(prefix=_hidden_prefix(path), suffix=".probe", dir=folder)
    except OSError as exc:
        raise PermissionError(exc.errno or errno.EACCES, f"{exc.strerror or 'Permission denied'} (cannot write in "
                              f"{folder})", str(path)) from None
    os.close(fd)
    os.unlink(probe)


def check_outputs(outputs: Sequence[str | Path], inputs: Sequence[str | Path],
                  make_folders: Sequence[str | Path] = ()) -> None:
    """Check a command's output files before it does any work: the one check of every command.

    Args:
        outputs: the files the command will write.
        inputs: the files and folders it reads (a folder holds every file under it).
        make_folders: the outputs whose writer makes their missing folders.

    Raises:
        GLocalKDError: an output name is empty or ends in a slash (a folder's), or an output is
            an input, lies inside an input folder, or is named twice (compared as resolved paths
            and as files, so links and hard links count).
        OSError: an output cannot be written (see :func:`check_writable`).
    """
    made = {str(Path(p)) for p in make_folders}
    seen: dict[Path, str] = {}
    for output in outputs:
        if not str(output).strip():  # Path("") is the current folder
            raise GLocalKDError("an output file name is empty: name the file to write")
        if str(output).endswith(("/", os.sep)):  # Path() drops the slash: "new/" was written as a file named new
            raise GLocalKDError(f"the output {output} names a folder (it ends in {str(output)[-1]}): name the file "
                                "to write in it")
        out = Path(output)
        resolved = out.resolve()
        for given in inputs:
            if _overlaps(out, resolved, Path(given)):
                raise GLocalKDError(f"the output {output} is an input of this command, or lies inside one ({given}): "
                                    "it would be overwritten; write elsewhere")
        check_writable(out, make_folder=str(out) in made)
        if resolved in seen:
            raise GLocalKDError(f"the output {output} is named twice ({seen[resolved]}): write them to two files")
        seen[resolved] = str(output)


def _overlaps(out: Path, resolved: Path, given: Path) -> bool:
    """Whether writing ``out`` would touch the input ``given`` (the same file, or a file inside it)."""
    if not given.exists():
        return False
    source = given.resolve()
    if resolved == source or source in resolved.parents:
        return True
    try:
        return out.exists() and os.path.samefile(out, given)
    except OSError:
        return False

