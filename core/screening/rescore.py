"""A ranked report's rows scored again by each view of a model, the way a file is scored.

A review re-weighs the views of a consensus (:meth:`core.Review.from_view_scores`). A report
screened by that very model with ``--view-scores`` holds their scores; any other report's rows
are scored again here, through the screening pipeline (:func:`core.screening.pipeline.screen`:
parsing workers, the batch featurizer, the molecule views scored in the workers, GLocalKD in
batches), not one graph at a time: the one path by which molecules are scored in bulk.
"""
from __future__ import annotations

import csv
from collections.abc import Callable

import numpy as np

from core.errors import DataError, GLocalKDError
from core.io.ranked_report import RankedReport, read_report
from core.runtime.files import atomic_output
from core.runtime.scratch import scratch_folder
from core.screening.pipeline import screen


def report_view_scores(model, report: RankedReport, workers: int | None = None,
                       on_progress: Callable[[int, int], None] | None = None,
                       should_stop: Callable[[], bool] | None = None) -> dict[str, np.ndarray]:
    """Each view's raw score of every scored row of a report, as screening the rows again gives it.

    Each row's SMILES as read (the report's ``smiles`` column) is scored, so a model that
    standardises its molecules standardises them as it did when it scored the file.

    Args:
        model: a fitted consensus with Fisher's rule.
        report: the ranked report (:func:`core.read_report`).
        workers: parsing processes (None: one per usable CPU core).
        on_progress: called with (rows read, rows scored) as the rows are scored.
        should_stop: polled between chunks; True stops the scoring.

    Returns:
        View name -> float64 array, row i's score at position i, for every view of ``model.reported_views()``.

    Raises:
        DataError: a row's SMILES cannot be read (the row, its id and the reason are named).
        GLocalKDError: the scoring was stopped.
        ParameterError: the model is not a consensus with Fisher's rule.
    """
    with scratch_folder("glocalkd-rescore-") as tmp:
        rows = tmp / "rows.csv"
        with atomic_output(rows, "w", newline="", encoding="utf-8") as fh:
            out = csv.writer(fh)
            out.writerow(["smiles", "row"])
            out.writerows([str(smiles), k] for k, smiles in enumerate(report.smiles))
        summary = screen(model, rows, tmp / "report.csv", workers=workers, smiles_column="smiles",
                         id_column="row", on_progress=on_progress, should_stop=should_stop, view_scores=True)
        if summary.stopped:
            raise GLocalKDError("stopped before every row was scored again")
        again = read_report(tmp / "report.csv")
    if again.rejects:
        reject = min(again.rejects, key=lambda r: int(r.id))
        k = int(reject.id)
        raise DataError(f"row {k + 1} ({report.ids[k]}): {reject.reason}", report.source)
    position = again.ids.astype(np.int64)
    scores = {}
    for name, values in again.view_scores.items():
        column = np.full(len(report), np.nan)
        column[position] = values
        scores[name] = column
    return scores
