"""The project's error types: one base class, with file and line where they are known, and the
parameters a message names, so that each front end can word them its own way."""
from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable, Mapping

# what reading a damaged zip (a session file, a zipped TU collection) raises beside OSError: a bad
# or truncated archive, an entry compressed by a method Python lacks (deflate64, as some zippers
# write) or encrypted, and a corrupt deflate stream; every reader of a zip catches all of them
ZIP_ERRORS: tuple[type[BaseException], ...] = (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError,
                                               RuntimeError, NotImplementedError, zlib.error)


class GLocalKDError(Exception):
    """Base class of every error this package raises on purpose (bad input, bad model file).

    Its text is always one line (line breaks and other control characters from the input
    are shown escaped), so a command line or a status bar can show it as it is.

    A message that names parameters (``params``) holds each as a ``{name}`` placeholder:
    ``str(error)`` writes the Python name (``normal_label``), :meth:`worded` the front end's
    (``--normal-label`` on the command line, the form field's label in the app).
    """

    params: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.worded({})

    def worded(self, names: Mapping[str, str]) -> str:
        """The message with each parameter it names written as ``names`` says (the Python name
        when ``names`` has none for it).

        Args:
            names: parameter name -> the words a front end uses for it.

        Returns:
            One line.
        """
        text = super().__str__()
        for param in self.params:
            text = text.replace("{" + param + "}", names.get(param, param))
        return one_line(text)


class ParameterError(GLocalKDError):
    """A setting that cannot be used: the message names the parameters it is about.

    Args:
        message: the text, each parameter written ``{name}``, e.g. ``"{calibration} must be
            below 1"``.
        params: the parameters the message names, the one at fault first.
    """

    def __init__(self, message: str, *params: str):
        super().__init__(message)
        self.params = params

    @property
    def param(self) -> str:
        """The parameter at fault."""
        return self.params[0]


def one_line(text: str) -> str:
    """Write line breaks, tabs and other control characters of ``text`` as escapes.

    Args:
        text: the text to quote in a one-line message.

    Returns:
        ``text`` itself when it is printable, else a copy with escapes.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


class DataError(GLocalKDError):
    """Input that cannot be read; names the file and, where known, the line or record."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None,
                 params: tuple[str, ...] = ()):
        self.reason = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.params = params  # the parameters the message names, as ``{name}`` placeholders
        where = ""
        if self.path:
            where = self.path + (f":{line}" if line is not None else "") + ": "
        super().__init__(where + message)


class NotApplicableError(GLocalKDError):
    """Data a detector cannot read by its nature (e.g. a fingerprint detector given graphs that are
    not molecules): the evaluation harness reports such a detector as "n/a" for that data."""


class Stopped(Exception):
    """A long job stopped because its caller's ``should_stop`` asked it to: a writer wrote nothing
    (the file at the path, if any, is as it was) and a reader returned nothing. Not an error of the
    input."""


def raise_if_stopped(should_stop: Callable[[], bool] | None, path: object, done: str = "written") -> None:
    """A long job's check between rows: raise :class:`Stopped` when ``should_stop`` says so.

    Args:
        should_stop: the caller's "stop now?" (None: never).
        path: the file being written or read, named in the exception.
        done: what the file was to be ("written", "read"), for the message.

    Raises:
        Stopped: ``should_stop`` returned True.
    """
    if should_stop is not None and should_stop():
        raise Stopped(f"{path}: stopped before it was {done}")


class ModelFileError(GLocalKDError):
    """A model file that is not ours, is damaged, or was written by an incompatible version."""


class SchemaMismatchError(GLocalKDError):
    """Data whose node features do not fit the feature schema a model was trained with."""


class SlowPrecisionWarning(UserWarning):
    """A precision was asked for that this device computes far slower than float32."""
