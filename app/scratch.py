"""The app's scratch folder: the reports of scored files and the files of reopened sessions live
there while the window is open, and go with it when the window closes."""
from __future__ import annotations

from core import make_scratch, remove_scratch


def open_scratch() -> str:
    """Make the window's private scratch folder (in the system's temporary folder).

    Returns:
        Its path.
    """
    return str(make_scratch("glocalkd-studio-"))


def close_scratch(folder: str) -> None:
    """Remove the window's scratch folder and everything in it.

    Args:
        folder: the folder :func:`open_scratch` made.
    """
    remove_scratch(folder)
