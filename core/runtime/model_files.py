"""Model files on disk: the one place that writes and reads them, with a digest of their contents.

A model file is a dict of tensors, numbers, strings, lists and dicts written with ``torch.save``
and read with torch's ``weights_only`` loader (no code in a file can run). The writer adds
``"digest": "sha256:..."``, a hash of everything else in the file (:func:`state_digest`); the
reader recomputes it, so one flipped bit in a weight, a score or a setting is a
:class:`~core.errors.ModelFileError` rather than a model that scores every molecule ``inf``.

Files written before the digest existed have none and still load. Whatever the digest says,
a file holding a NaN or infinite number is refused: no model this project trains holds one.
"""
from __future__ import annotations

import hashlib
import math
import os
import struct
from pathlib import Path
from typing import Any

DIGEST_KEY = "digest"
DIGEST_PREFIX = "sha256:"
# suffixes of the files the project reads as data or writes as reports: a model file named so was
# opened by the app (and by every reader of that format) as what its name promised, and failed
NOT_MODEL_SUFFIXES = (".csv", ".tsv", ".tab", ".txt", ".smi", ".sdf", ".sd", ".mol", ".json", ".html", ".xlsx",
                      ".xls", ".parquet", ".gz", ".bz2", ".xz", ".zip")


def model_name_problem(path: str | Path) -> str | None:
    """Say what is wrong with a model file's name, if anything: a model file is torch's format, so
    a name ending in a data or report format's suffix (``model.csv``) promises what it is not.

    Args:
        path: the model file to write.

    Returns:
        The reason, worded to follow the file's name, or None for a name that fits (``.pt`` or
        any other suffix).
    """
    suffix = Path(path).suffix.lower()
    if suffix in NOT_MODEL_SUFFIXES:
        return (f"a model file is written (torch's format), not {suffix}, which is a data or report format; "
                "name it .pt")
    return None


def version_problem(version: Any, readable: tuple[int, ...]) -> str | None:
    """Say why a model file's ``version`` entry cannot be read, if it cannot: one rule for every
    kind of model file (a string "2" was reported as "version '2' ... it reads version 2").

    Args:
        version: the file's ``version`` entry, as read.
        readable: the versions this release reads, oldest first.

    Returns:
        The reason, worded to follow the file's name, or None for a readable version.
    """
    newest = max(readable)
    if version in readable and isinstance(version, int) and not isinstance(version, bool):
        return None
    if not isinstance(version, int) or isinstance(version, bool):
        return (f"its version entry is {version!r}, not a version number: the file is damaged or was not "
                "written by GLocalKD Studio")
    if version > newest:
        return (f"model file version {version} was written by a newer GLocalKD Studio (this one reads "
                f"version {newest}); update GLocalKD Studio")
    shown = ("version " if len(readable) == 1 else "versions ") + ", ".join(str(v) for v in readable)
    return f"model file version {version} is not read by this release (it reads {shown}); train the model again"


def state_digest(state: dict) -> str:
    """A SHA-256 digest of a model file's contents (every entry but the digest itself).

    The hash walks the structure, not ``torch.save``'s bytes (those hold a random id), so the
    same contents always give the same digest: dict keys in sorted order, each value tagged with
    its type, tensors by dtype, shape and raw bytes, floats by their exact bits.

    Args:
        state: the dict a model file holds.

    Returns:
        ``"sha256:"`` and 64 hexadecimal digits.
    """
    h = hashlib.sha256()
    _feed(h, {k: v for k, v in state.items() if k != DIGEST_KEY})
    return DIGEST_PREFIX + h.hexdigest()


def _feed(h, value: Any) -> None:
    import torch

    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    elif isinstance(value, dict):
        h.update(f"D{len(value)}".encode())
        for key in sorted(value, key=repr):
            _feed(h, key)
            _feed(h, value[key])
    elif isinstance(value, (list, tuple)):
        h.update(f"{'L' if isinstance(value, list) else 'U'}{len(value)}".encode())
        for item in value:
            _feed(h, item)
    elif isinstance(value, bool) or value is None:
        h.update(f"B{value!r}".encode())
    elif isinstance(value, int):
        h.update(f"I{value}".encode())
    elif isinstance(value, float):
        h.update(b"F" + struct.pack("<d", value))
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        h.update(f"S{len(data)}:".encode() + data)
    else:
        raise TypeError(f"a {type(value).__name__} cannot go into a model file")


def non_finite_entry(value: Any, where: str = "") -> str | None:
    """The path of the first NaN or infinite number in a model file's contents, or None.

    Args:
        value: a model file's contents (or a part of them).
        where: the path of ``value`` inside the file, for the answer.

    Returns:
        e.g. ``"predictor/convs.0.lin.weight"``, or None when every number is finite.
    """
    import torch

    if isinstance(value, torch.Tensor):
        if value.is_floating_point() or value.is_complex():
            return None if bool(torch.isfinite(value).all()) else where or "(top level)"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else where or "(top level)"
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = non_finite_entry(item, f"{where}/{key}" if where else str(key))
        if found is not None:
            return found
    return None


def write_model_file(path: str | Path, state: dict) -> None:
    """Write a model file atomically (:func:`core.runtime.files.atomic_output`) with the digest of its contents.

    Args:
        path: the file to write.
        state: what the file holds (tensors, numbers, strings, lists and string-keyed dicts).

    Raises:
        GLocalKDError: the name promises another format (:func:`model_name_problem`).
        TypeError: ``state`` holds a value that cannot go into a model file.
        OSError: the file cannot be written (a folder of that name, no such folder, a full disk, a
            file-size limit), naming ``path``.
    """
    import torch

    from core.errors import GLocalKDError
    from core.runtime.files import atomic_output, check_outputs

    problem = model_name_problem(path)
    if problem is not None:
        raise GLocalKDError(f"{path}: {problem}")
    check_outputs([path], [])  # before the state is encoded, as every command checks its outputs
    state = {**state, DIGEST_KEY: state_digest(state)}
    with atomic_output(path) as fh:
        try:
            torch.save(state, fh)
        except RuntimeError as exc:  # torch's writer turns the write's OSError into its own error
            cause = exc.__context__ or exc.__cause__
            if isinstance(cause, OSError):
                raise OSError(cause.errno, cause.strerror or str(cause), str(path)) from None
            raise


def read_model_file(path: str | Path) -> Any:
    """The contents of a model file, read with torch's ``weights_only`` loader and checked.

    A missing, unreadable or foreign file (a session file is said to be one), contents that do
    not match their digest, and a NaN or infinite number anywhere in the file are a
    :class:`~core.errors.ModelFileError` naming the file. A file without a digest (written before
    it existed) is read as it is, after the same check of its numbers.

    Args:
        path: the model file.

    Returns:
        The file's contents (usually a dict), the digest entry removed.
    """
    import torch

    from core.errors import ModelFileError
    from core.runtime.file_kind import file_kind

    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: {'a folder, not a model file' if path.is_dir() else 'no such model file'}")
    if not os.access(path, os.R_OK):
        raise ModelFileError(f"{path}: cannot read the model file (permission denied)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except PermissionError:
        raise ModelFileError(f"{path}: cannot read the model file (permission denied)") from None
    except Exception as exc:
        if file_kind(path) == "session":  # torch's reader said only "RuntimeError" of it
            raise ModelFileError(f"{path}: a GLocalKD Studio session file, not a model file: open it in GLocalKD "
                                 "Studio (File ▸ Open), which opens the session with its model") from None
        raise ModelFileError(f"{path}: not a GLocalKD Studio model file, or damaged ({type(exc).__name__})") from None
    if not isinstance(state, dict):
        return state  # the detector's reader says what it is not
    if DIGEST_KEY in state:
        stored = state.pop(DIGEST_KEY)
        try:
            actual = state_digest(state)
        except (TypeError, RuntimeError) as exc:
            raise ModelFileError(f"{path}: damaged model file ({exc})") from None
        if stored != actual:
            raise ModelFileError(f"{path}: damaged model file (its contents do not match the digest written "
                                 "with them: the file was changed or corrupted after it was saved)")
    bad = non_finite_entry(state)
    if bad is not None:
        raise ModelFileError(f"{path}: damaged model file ({bad} holds NaN or infinite values)")
    return state
