"""A ranked report's rows (e.g. a scored file's, read back) as an SDF file with the report's
columns as SD properties, the way :func:`core.viz.sharing.write_sdf` shares scored graphs."""
from __future__ import annotations

from pathlib import Path
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from core.data.graph_molecules import NOT_MOLECULES
from core.data.scores import checked_rank, score_text
from core.data.sd_records import reject_records, sd_text
from core.errors import GLocalKDError, raise_if_stopped
from core.io.ranked_report import RankedReport
from core.io.report import not_read_status
from core.runtime.files import atomic_output


def write_report_sdf(path: str | Path, report: RankedReport, rows: Sequence[int] | None = None,
                     review: Mapping[int, str] | None = None, rank: np.ndarray | None = None,
                     should_stop: Callable[[], bool] | None = None) -> int:
    """Write the molecules of a ranked report to an SDF file, atomically, in rank order.

    Each record carries the SD properties ``id``, ``name``, ``rank``, ``score``, ``p_value`` and
    ``q_value`` (when known), ``label``, ``top_atoms``, the chemist's properties (``mw``,
    ``clogp``, ...) and ``alerts`` (when the report has that column and the molecule any).

    Args:
        path: the SDF file to write.
        report: a ranked report read by :func:`core.io.ranked_report.read_report`.
        rows: row indices to write (e.g. those a filter shows); default all.
        review: an analyst's marks, row index -> ``"anomaly"`` or ``"not anomaly"``: the ``review``
            property (when given, every molecule has it, empty where its row is not marked).
        rank: each row's rank (1 = top) when it is not the report's order, e.g. an analyst's
            review's; the ``rank`` property and the order follow it.
        should_stop: polled before each molecule; True stops the writing and raises
            :class:`core.errors.Stopped` (nothing is written).

    Returns:
        The number of records written: the molecules (rows whose SMILES RDKit cannot parse are
        skipped) and, with every row (``rows`` None), each rejected row as a record without atoms
        and, for a stopped run, one record saying so (:func:`core.data.sd_records.reject_records`).

    Raises:
        GLocalKDError: rows are chosen but none has a SMILES (an SD file of them would be empty),
            or ``path`` is the report itself: nothing is written.
        Stopped: ``should_stop`` returned True.
    """
    from rdkit import Chem

    from core.runtime.files import check_outputs

    check_outputs([path], [report.source] if report.source else [])  # first: never over the report it reads

    from core.data.chem import parse_smiles
    from core.data.properties import set_sd_properties

    rank = checked_rank(len(report), rank)
    chosen = np.arange(len(report)) if rows is None else np.asarray(list(rows), dtype=np.int64)
    chosen = chosen[np.argsort(rank[chosen], kind="stable")]
    if len(chosen) and not any(str(report.smiles[i]) for i in chosen.tolist()):
        raise GLocalKDError(NOT_MOLECULES.format(path=Path(path).name))
    written = 0
    with atomic_output(path, "w", encoding="utf-8") as fh, Chem.SDWriter(fh) as writer:  # closed before the file
        for i in chosen.tolist():
            raise_if_stopped(should_stop, path)
            mol = parse_smiles(report.scored_smiles(i))[0]  # what was scored: the molecule its top atoms number
            if mol is None:
                continue
            mol = Chem.Mol(mol)
            ident = sd_text(str(report.ids[i]))
            mol.SetProp("_Name", ident)
            mol.SetProp("id", ident)
            name = sd_text(str(report.names[i]))
            if name and name != ident:
                mol.SetProp("name", name)
            mol.SetIntProp("rank", int(rank[i]))
            mol.SetProp("score", score_text(float(report.score[i])))
            for prop, values in (("p_value", report.p_value), ("q_value", report.q_value)):
                if np.isfinite(values[i]):
                    mol.SetProp(prop, f"{float(values[i]):.4g}")
            if str(report.labels[i]):
                mol.SetProp("label", sd_text(str(report.labels[i])))
            if str(report.top_nodes[i]):
                mol.SetProp("top_atoms", sd_text(str(report.top_nodes[i])))
            set_sd_properties(mol)
            if report.alerts is not None and str(report.alerts[i]):
                mol.SetProp("alerts", sd_text(str(report.alerts[i])))
            if review:
                mol.SetProp("review", review.get(i, ""))
            writer.write(mol)
            written += 1
        if rows is None:  # every row: the rejected ones and the rows never read too (none is lost)
            stopped = report.stopped_after
            written += reject_records(writer, report.rejects, None if stopped is None else not_read_status(stopped))
    return written
