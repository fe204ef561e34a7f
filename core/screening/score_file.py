"""Score one file into a ranked report: the entry that ``glocalkd score`` and the app's *Score
another file* share, so that a file gets the same report whichever the user reaches for.

A molecule file (SMILES list, table or SDF, optionally gzipped) that the model reads as
molecules streams through the screening pipeline (:func:`core.screening.pipeline.screen`); a TU
collection, or a file for a model of other graphs, is loaded and scored whole. Either way the
molecules are standardised when the model was trained on standardised ones, the report holds
p-values when the model is calibrated, and it ends with the end row that names the model.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.data.graphset import GraphSet
from core.errors import ParameterError
from core.detectors.conformal import model_p_values
from core.detectors.stoppable_scoring import score_finite
from core.io.load import is_molecule_list, load
from core.io.report import check_report_output, write_report
from core.screening.pipeline import ScreenSummary, screen
from core.screening.scoring import molecule_schema
from core.screening.featurize import report_views


@dataclass
class ScoredFile:
    """What :func:`score_file` did.

    Attributes:
        report: the ranked report written.
        summary: the pipeline's account when the file was streamed (rows, rejects, rate,
            stopped), else None.
        graphs: the graphs when the file was loaded whole (their rejects included), else None.
        p_values: their p-values when loaded whole by a calibrated model, else None.
    """

    report: Path
    summary: ScreenSummary | None = None
    graphs: GraphSet | None = None
    p_values: np.ndarray | None = None


def is_streamed(model, path: str | Path) -> bool:
    """Whether :func:`score_file` streams ``path`` through the screening pipeline.

    Args:
        model: the fitted detector.
        path: the file.

    Returns:
        True for a molecule file (by its suffix) and a model that reads molecules (atom features,
        or no node features at all) and scores each graph alone (not PK-LESINN, whose scores
        depend on the batch: the file is then scored whole, as in training).
    """
    from core.detectors.registry import scores_alone

    schema = molecule_schema(model)
    return is_molecule_list(path) and (schema is None or schema.mode == "atom") and scores_alone(model)


def score_file(model, path: str | Path, report: str | Path, smiles_column: str | None = None,
               id_column: str | None = None, label_column: str | None = None, top_k: int = 5,
               properties: bool = False, alerts: bool = False, view_scores: bool = False,
               on_progress: Callable[[int, int], None] | None = None,
               should_stop: Callable[[], bool] | None = None, **screen_options) -> ScoredFile:
    """Score a file with a fitted model into a ranked report.

    Args:
        model: the fitted detector.
        path: a molecule file or a TU collection.
        report: the CSV report to write (atomically).
        smiles_column: a table's SMILES column (None: found by its common names).
        id_column: a table's id column, or an SDF data field.
        label_column: a table's label column, or an SDF data field.
        top_k: each row's largest node errors in ``top_nodes``.
        properties: add the chemist's properties (molecules only: a TU collection gets none).
        alerts: add the structural alerts (molecules only).
        view_scores: add each view's raw score (a consensus with Fisher's rule; see
            :func:`core.screening.featurize.report_views`).
        on_progress: called with (rows read, rows scored) as the work goes on.
        should_stop: polled between chunks of a streamed file; True stops it, keeping the rows
            scored (a file loaded whole is scored whole).
        **screen_options: more options of :func:`core.screening.pipeline.screen` for a streamed
            file (``workers``, ``chunk_size``, ``batch_graphs``, ``precision``, ``top``, ``resume``).

    Returns:
        What was done (:class:`ScoredFile`).

    Raises:
        DataError: the file cannot be read, or holds no readable molecule.
        SchemaMismatchError: the model cannot score this kind of graph (naming the file).
        ParameterError: ``view_scores`` of a model that has no views to report.
        GLocalKDError: the report is the file read or is named for another format
            (:func:`core.io.report.check_report_output`).
    """
    if view_scores:
        report_views(model)  # refused before any work
    check_report_output(report, [path])
    if is_streamed(model, path):
        summary = screen(model, path, report, smiles_column=smiles_column, id_column=id_column,
                         label_column=label_column, top_k=top_k, on_progress=on_progress, should_stop=should_stop,
                         properties=properties, alerts=alerts, view_scores=view_scores, **screen_options)
        return ScoredFile(Path(report), summary=summary)
    if screen_options.get("resume"):  # only a streamed run stops part way, with a report to continue
        raise ParameterError("{resume} continues a stopped run of a molecule file streamed in chunks; this file is "
                             "scored whole", "resume")
    graphs = load(path, smiles_column=smiles_column, id_column=id_column, label_column=label_column,
                  standardise=bool(getattr(model, "standardises", False)))
    progress = None if on_progress is None else (lambda done, total: on_progress(done, done))
    graphs, scores = score_finite(model, graphs, on_progress=progress)  # a mismatch is named there, as for the app
    p_values = model_p_values(model, scores.score)
    molecules = graphs.is_molecular  # graphs that are not molecules have no structures: no empty columns
    write_report(report, graphs, scores, top_k=top_k, p_values=p_values, properties=properties and molecules,
                 alerts=alerts and molecules,
                 view_scores=model.view_scores(graphs, scores) if view_scores else None, model=model.fingerprint())
    return ScoredFile(Path(report), graphs=graphs, p_values=p_values)
