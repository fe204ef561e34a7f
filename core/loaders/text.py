"""Reading text files as users have them: gzipped or not, UTF-8 (with or without BOM) or legacy 8-bit."""
from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Iterator

from ..errors import DataError

GZIP_MAGIC = b"\x1f\x8b"


def is_gzipped(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def _open_binary(path: Path) -> io.BufferedIOBase:
    return gzip.open(path, "rb") if is_gzipped(path) else open(path, "rb")


def read_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield (line number, line without its line ending), 1-based.

    Decodes UTF-8 (a BOM is dropped); at the first byte that is not UTF-8 it goes on
    in cp1252, the usual legacy encoding of spreadsheet exports. Streams the file,
    so a large library is never held in memory whole.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError("no such file", path)
    emitted = 0
    try:
        for number, line in _decoded(path, "utf-8-sig", "strict"):
            emitted = number
            yield number, line
        return
    except UnicodeDecodeError:
        pass
    for number, line in _decoded(path, "cp1252", "replace"):
        if number > emitted:
            yield number, line


def _decoded(path: Path, encoding: str, errors: str) -> Iterator[tuple[int, str]]:
    try:
        with _open_binary(path) as raw:
            text = io.TextIOWrapper(raw, encoding=encoding, errors=errors, newline=None)
            for number, line in enumerate(text, start=1):
                yield number, line.rstrip("\r\n")
    except (OSError, EOFError) as exc:
        raise DataError(f"cannot read file: {exc}", path) from None


def strip_compression(name: str) -> str:
    """'x.csv.gz' -> 'x.csv'."""
    return name[:-3] if name.lower().endswith(".gz") else name
