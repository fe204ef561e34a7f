"""Which TU collection a file belongs to, from the names beside it (nothing is read, torch is not
loaded): one of a collection's files chosen or dropped means the collection."""
from __future__ import annotations

from pathlib import Path


def tu_folder_of(path: str | Path) -> Path | None:
    """The folder of the TU collection that the file ``path`` is one of, if it is.

    A file ``DS_<anything>.txt`` in a folder that holds ``DS_A.txt`` and ``DS_graph_indicator.txt``
    and no other collection (one ``*_A.txt``) belongs to collection ``DS``: opening the file
    would read one of its text files as a table of SMILES.

    Args:
        path: a file (a folder, or a file of no collection, gives None).

    Returns:
        The collection's folder, or None.
    """
    p = Path(path)
    try:
        if p.suffix.lower() != ".txt" or not p.is_file():
            return None
        a_files = [f.name for f in p.parent.iterdir() if f.name.endswith("_A.txt") and f.is_file()]
    except OSError:  # an unreadable folder: the loader says why when the file is opened
        return None
    if len(a_files) != 1:
        return None
    ds = a_files[0][: -len("_A.txt")]
    if p.name.startswith(f"{ds}_") and (p.parent / f"{ds}_graph_indicator.txt").is_file():
        return p.parent
    return None


__all__ = ["tu_folder_of"]
