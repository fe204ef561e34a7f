"""The project's error types: one base class, with file and line where they are known."""
from __future__ import annotations


class GLocalKDError(Exception):
    """Base class of every error this package raises on purpose (bad input, bad model file)."""


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


class ModelFileError(GLocalKDError):
    """A model file that is not ours, is damaged, or was written by an incompatible version."""


class SchemaMismatchError(GLocalKDError):
    """Data whose node features do not fit the feature schema a model was trained with."""
