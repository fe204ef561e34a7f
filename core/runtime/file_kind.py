"""What a file GLocalKD Studio may be handed is, told from its contents before its name.

Sessions and model files are both zips: a session holds ``session.json``, a model file torch's
``*/data.pkl``. Deciding from the name first refused a model saved as ``x.glocalkd-session`` as a
damaged session, and a session renamed ``work.pt`` as a damaged model. This is the one place
that tells them apart: the app's File ▸ Open dispatches on it, and the model and session readers
use it to say what a file is when it is not theirs.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

from core.errors import ZIP_ERRORS

SESSION_SUFFIX = ".glocalkd-session"
SESSION_ENTRY = "session.json"  # the entry every session file holds
MODEL_SUFFIX = ".pt"


def file_kind(path: str | Path) -> str:
    """What opening ``path`` means, from its contents first, then its name (nothing is loaded).

    Args:
        path: a file or folder.

    Returns:
        ``"session"`` (a zip holding ``session.json``), ``"model"`` (torch's zip format: an entry
        ``*/data.pkl``); for a file whose contents do not say (not such a zip, or a damaged
        one), ``"session"`` for a ``.glocalkd-session`` name and ``"model"`` for a ``.pt`` name,
        so that its reader says what is wrong; else ``"data"`` (graph data, a TU collection's zip
        or a ranked report).
    """
    p = Path(path)
    try:
        if p.is_file() and zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as zf:
                names = zf.namelist()
            if SESSION_ENTRY in names:
                return "session"
            if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
                return "model"
    except ZIP_ERRORS:  # unreadable: the name decides, and its reader says why
        pass
    if p.name.lower().endswith(SESSION_SUFFIX):
        return "session"
    if p.suffix.lower() == MODEL_SUFFIX:
        return "model"
    return "data"


__all__ = ["SESSION_SUFFIX", "SESSION_ENTRY", "file_kind"]
