"""The project's error types: one base class, with file and line where they are known."""
from __future__ import annotations


class GLocalKDError(Exception):
    """Base class of every error this package raises on purpose (bad input, bad model file).

    Its text is always one line (line breaks and other control characters from the input
    are shown escaped), so a command line or a status bar can show it as it is.
    """

    def __str__(self) -> str:
        return one_line(super().__str__())


def one_line(text: str) -> str:
    """``text`` with line breaks, tabs and other control characters written as escapes."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


class DataError(GLocalKDError):
    """Input that cannot be read; names the file and, where known, the line or record."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.reason = message
        self.path = str(path) if path is not None else None
        self.line = line
        where = ""
        if self.path:
            where = self.path + (f":{line}" if line is not None else "") + ": "
        super().__init__(where + message)


class NotApplicableError(GLocalKDError):
    """Data a detector cannot read by its nature (e.g. a fingerprint detector given graphs that are
    not molecules): the evaluation harness reports such a detector as "n/a" for that data."""


class ModelFileError(GLocalKDError):
    """A model file that is not ours, is damaged, or was written by an incompatible version."""


class SchemaMismatchError(GLocalKDError):
    """Data whose node features do not fit the feature schema a model was trained with."""


class SlowPrecisionWarning(UserWarning):
    """A precision was asked for that this device computes far slower than float32."""
