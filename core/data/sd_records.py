"""SD records written the one way: text folded onto one line, and the rows never scored as
records of their own. Both SD writers (a training tab's graphs, :func:`core.viz.sharing.write_sdf`,
and a ranked report's rows, :func:`core.io.report_sdf.write_report_sdf`) use them: a report's
writer once wrote ids as they were, so an id holding a line ``$$$$`` split the file."""
from __future__ import annotations

from collections.abc import Iterable


def sd_text(text: str) -> str:
    """Make ``text`` one SDF line that cannot end a record, a molblock or a data item.

    Each line break becomes a space, and a line that would read as the record's end (``$$$$``),
    the molblock's end (``M  END``, as a title) or a data header (``>``) starts with an
    underscore. SDF has no escapes: one molecule's name must never split the file.

    Args:
        text: an id, a name or a property value.

    Returns:
        The text to write.
    """
    line = " ".join(text.splitlines()) if text else ""
    if line.lstrip().startswith(("$$$$", ">", "M  END")):
        line = "_" + line
    return line


def reject_records(writer, rejects: Iterable, not_read: str | None = None) -> int:
    """Write each rejected row as a record without atoms, so that an SD file of every row loses
    none: its ``id``, its ``input`` (the row's text) and its ``status`` (``rejected: <reason>``),
    as the CSV report lists it; read back, such a record is rejected again ("no atoms").

    Args:
        writer: an open ``rdkit.Chem.SDWriter``.
        rejects: the rejected rows (each with ``id``, ``text`` and its ``status``).
        not_read: a stopped run's status for the rows it never read, written as one more record
            (:func:`core.io.report.not_read_status`; None: the run was not stopped).

    Returns:
        The number of records written.
    """
    from rdkit import Chem

    written = 0
    for reject in rejects:
        mol = Chem.Mol()
        mol.SetProp("_Name", sd_text(str(reject.id)))
        mol.SetProp("id", sd_text(str(reject.id)))
        if str(reject.text or ""):
            mol.SetProp("input", sd_text(str(reject.text)))
        mol.SetProp("status", sd_text(reject.status))
        writer.write(mol)
        written += 1
    if not_read is not None:
        mol = Chem.Mol()
        mol.SetProp("status", not_read)
        writer.write(mol)
        written += 1
    return written
