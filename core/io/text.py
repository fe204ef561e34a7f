"""Reading text files as users have them: gzipped or not, UTF-8 (with or without BOM), UTF-16
with a BOM (spreadsheet "Unicode text" exports) or legacy 8-bit; any line ending."""
from __future__ import annotations

import codecs
import csv
import gzip
import io
import sys
import zlib
from pathlib import Path
from collections.abc import Iterator

from core.errors import DataError

GZIP_MAGIC = b"\x1f\x8b"
# The longest line read (characters): far past any molecule (SMILES are refused past 100,000, see
# core.data.chem.MAX_SMILES_CHARS), small enough that one line (a gzip bomb's) cannot fill the memory.
MAX_LINE_CHARS = 8 * 2**20
SNIFF_BYTES = 8192
_UTF16_BOMS = {codecs.BOM_UTF16_LE: "utf-16", codecs.BOM_UTF16_BE: "utf-16"}
# Control bytes that text never holds (tab, line feed, form feed, carriage return and escape are fine).
_BINARY_BYTES = tuple(c for c in range(32) if c not in (9, 10, 11, 12, 13, 27)) + (127,)
# What a damaged or truncated gzip stream raises while it is read.
_READ_ERRORS = (OSError, EOFError, zlib.error)


def allow_large_csv_fields() -> None:
    """Lift the csv module's field limit (131,072 characters by default), process-wide.

    A SMILES, an id or a quoted cell may be longer, and a report that holds one must still be
    read back. Called when this module is imported, so every reader of tables and reports has it.
    """
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


allow_large_csv_fields()


def is_gzipped(path: Path) -> bool:
    """Whether a file is gzip-compressed, by its first two bytes (not its name).

    Args:
        path: the file.

    Returns:
        True when it starts with the gzip magic number.
    """
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def _open_binary(path: Path) -> io.BufferedIOBase:
    return gzip.open(path, "rb") if is_gzipped(path) else open(path, "rb")


def _sniff(path: Path) -> str | None:
    """The encoding a BOM announces (UTF-16), else None; refuses binary data (NUL bytes or
    more than 2% control characters in the first 8 KB)."""
    try:
        with _open_binary(path) as raw:
            head = raw.read(SNIFF_BYTES)
    except _READ_ERRORS as exc:
        raise DataError(f"cannot read file: {exc}", path) from None
    announced = next((enc for bom, enc in _UTF16_BOMS.items() if head.startswith(bom)), None)
    if announced is not None:
        if "\x00" not in head[: len(head) // 2 * 2].decode(announced, errors="replace"):
            return announced
        head = b"\x00"
    control = sum(head.count(bytes([c])) for c in _BINARY_BYTES)
    if b"\x00" in head or control > max(2, len(head) // 50):
        line = head[: head.index(b"\x00")].count(b"\n") + 1 if b"\x00" in head else None
        raise DataError("not a text file (it contains binary data); expected a text file such as "
                        "CSV, SMILES or SDF", path, line)
    return None


def count_line_ends(path: str | Path) -> int:
    """Count a file's line ends (``\\n`` bytes) as :func:`read_lines` opens it: gzipped by its content.

    A quick estimate of a file's rows, for progress: it reads bytes, not text.

    Args:
        path: the file.

    Returns:
        The number of ``\\n`` bytes in the (decompressed) file.

    Raises:
        DataError: the file cannot be read, or is a damaged gzip stream.
    """
    path = Path(path)
    try:
        with _open_binary(path) as raw:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: raw.read(1 << 20), b""))
    except _READ_ERRORS as exc:
        raise DataError(f"cannot read file (damaged or truncated?): {exc}", path) from None


def read_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Stream the numbered lines of a text file as users have them.

    Decodes UTF-8 (a BOM is dropped) or, after a UTF-16 BOM, UTF-16; a byte that is not
    UTF-8 is read as cp1252, the usual legacy encoding of spreadsheet exports, so a file in
    cp1252, or with a few rows in it, reads as written. Any of ``\\n``, ``\\r\\n`` and
    ``\\r`` ends a line. Streams the file, so a large library is never held in memory whole.

    Args:
        path: the text file, gzipped or not.

    Returns:
        An iterator of (line number, 1-based; line without its line ending).

    Raises:
        DataError: while iterating: the file does not exist, is binary (a NUL byte or many
            control bytes in its first 8 KB), has a line over ``MAX_LINE_CHARS`` characters, or
            is a damaged gzip stream (naming the last line read).
    """
    return _lines(path, endings=False)


def read_lines_and_endings(path: str | Path) -> Iterator[tuple[int, str, str]]:
    """Stream the numbered lines of a text file as :func:`read_lines` does, with each line's own ending.

    With the endings a quoted table cell that spans lines is rebuilt byte for byte.

    Args:
        path: the text file, gzipped or not.

    Returns:
        An iterator of (line number, line, ending): ``"\\n"``, ``"\\r\\n"``, ``"\\r"`` or ``""``
        at the end of the file.

    Raises:
        DataError: while iterating, as :func:`read_lines`.
    """
    return _lines(path, endings=True)


def _lines(path: str | Path, endings: bool) -> Iterator[tuple]:
    path = Path(path)
    if not path.is_file():
        raise DataError("a folder, not a file" if path.is_dir() else "no such file", path)
    announced = _sniff(path)
    if announced is not None:
        yield from _decoded(path, announced, "replace", endings)
        return
    yield from _decoded(path, "utf-8-sig", _LEGACY_BYTES, endings)


def _cp1252_for_bad_bytes(error: UnicodeDecodeError) -> tuple[str, int]:
    """Decode the bytes that are not UTF-8 as cp1252 (a byte cp1252 lacks as U+FFFD) and go on in
    UTF-8: a file of mixed encodings (rows pasted from a legacy export) keeps every UTF-8 row as
    written. Decoding the whole rest of the file as cp1252 instead turned the valid UTF-8 rows
    read just before the first bad byte (in the same 8 KB block) into mojibake."""
    bad = error.object[error.start:error.end]
    return bytes(bad).decode("cp1252", errors="replace"), error.end


_LEGACY_BYTES = "glocalkd-cp1252"
codecs.register_error(_LEGACY_BYTES, _cp1252_for_bad_bytes)


def _decoded(path: Path, encoding: str, errors: str, endings: bool) -> Iterator[tuple]:
    number = 0
    try:
        with _open_binary(path) as raw:
            text = io.TextIOWrapper(raw, encoding=encoding, errors=errors, newline="")  # endings kept as they are
            limit = MAX_LINE_CHARS
            while True:
                line = text.readline(limit + 1)  # bounded: one line never fills the memory
                if not line:
                    return
                number += 1
                if len(line) > limit and not line.endswith(("\n", "\r")):
                    raise DataError(f"line longer than {limit:,} characters: not a molecule, table or graph "
                                    "file this reads (or a damaged one)", path, number)
                body = line.rstrip("\r\n")
                yield (number, body, line[len(body):]) if endings else (number, body)
    except _READ_ERRORS as exc:
        where = f" after line {number}" if number else ""
        raise DataError(f"cannot read file{where} (damaged or truncated?): {exc}", path) from None


def strip_compression(name: str) -> str:
    """A file name without its ``.gz`` suffix, to read the suffix underneath.

    Args:
        name: the file name.

    Returns:
        The name without a final ``.gz`` (any case): ``x.csv.gz`` gives ``x.csv``.
    """
    return name[:-3] if name.lower().endswith(".gz") else name


DELIMITERS = (",", "\t", ";", "|")


def data_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Stream the numbered lines of a file that hold data: not blank, not ``#`` comments.

    Args:
        path: the text file (read by :func:`read_lines`).

    Yields:
        (line number, line) per data line.
    """
    for number, line in read_lines(path):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield number, line


def sniff_delimiter(header_line: str, suffix: str) -> str:
    """Guess the delimiter of a table from its header line.

    Args:
        header_line: the table's first data line.
        suffix: the file's suffix, lower case, without ``.gz`` (``.csv``, ``.tsv``, ...).

    Returns:
        The one of ``DELIMITERS`` most frequent in the header line, unless the suffix's own
        (``.csv``: comma, ``.tsv``/``.tab``: tab, else comma) is as frequent.
    """
    default = {".csv": ",", ".tsv": "\t", ".tab": "\t"}.get(suffix, ",")
    counts = {d: header_line.count(d) for d in DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > counts.get(default, 0) else default
