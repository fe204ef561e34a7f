"""Scoring a set of graphs that a person may stop: chunk by chunk, the same scores as one call.

A fitted detector's ``score`` runs to its end; a large set takes a minute or more. Every detector
whose graph scores do not depend on the batch (:func:`core.detectors.registry.scores_alone`:
all but the propagation-kernel views) gives the same scores chunk by chunk, so between chunks
the caller's ``should_stop`` can end the work and ``on_progress`` can count it. A batch-dependent
detector scores the set in one call, as screening scores such a file whole.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from core.data.graphset import GraphSet, Reject
from core.data.scores import NonFiniteScoreError, Scores
from core.errors import SchemaMismatchError, raise_if_stopped

SCORE_CHUNK = 2048  # graphs scored between two polls (a second or two of a consensus on one core)


def score_graphs(model, graphs: GraphSet, should_stop: Callable[[], bool] | None = None,
                 on_progress: Callable[[int, int], None] | None = None, chunk: int | None = None) -> Scores:
    """Score ``graphs`` with a fitted detector, stopping between chunks when asked.

    Args:
        model: the fitted detector.
        graphs: the graphs to score.
        should_stop: polled before each chunk; True stops the scoring (nothing is returned).
        on_progress: called as ``on_progress(done, total)`` after each chunk.
        chunk: graphs per chunk (None: SCORE_CHUNK).

    Returns:
        The scores, equal to ``model.score(graphs)``'s: of the graphs as the model reads them
        (:func:`core.detectors.base.as_model_reads`).

    Raises:
        DataError: graphs the model cannot read as it was trained (``as_model_reads``).
        SchemaMismatchError: the model cannot read graphs of this kind, naming their file and
            what to do.
        Stopped: ``should_stop`` returned True.
    """
    from core.detectors.base import as_model_reads

    graphs = as_model_reads(model, graphs)  # once, not chunk by chunk
    try:
        return _score_graphs(model, graphs, should_stop, on_progress, chunk)
    except SchemaMismatchError as exc:  # say which file, and what to do
        name = Path(graphs.source).name if graphs.source else "these graphs"
        raise SchemaMismatchError(f"{name} cannot be scored with this model: {exc}. Score a file of the kind the "
                                  "model was trained on, or train on this one.") from exc


def _score_graphs(model, graphs: GraphSet, should_stop, on_progress, chunk: int | None) -> Scores:
    from core.detectors.registry import scores_alone

    total, chunk = len(graphs), chunk or SCORE_CHUNK
    if not scores_alone(model) or total <= chunk:
        raise_if_stopped(should_stop, graphs.source or "the graphs", "scored")
        scores = model.score(graphs)
        if on_progress is not None:
            on_progress(total, total)
        return scores
    parts = []
    for lo in range(0, total, chunk):
        raise_if_stopped(should_stop, graphs.source or "the graphs", "scored")
        parts.append(model.score(graphs.subset(range(lo, min(lo + chunk, total)))))
        if on_progress is not None:
            on_progress(min(lo + chunk, total), total)
    return Scores.concat(parts)


OVERFLOW = ("the model's score of it overflows (not a finite number): its features lie far outside the "
            "training graphs' (node attributes of 1e30, say)")


def score_finite(model, graphs: GraphSet, on_progress: Callable[[int, int], None] | None = None,
                 ) -> tuple[GraphSet, Scores]:
    """Score a file's graphs as :func:`score_graphs` does, rejecting the graphs the model
    overflows on instead of refusing the whole set.

    Two graphs of finite but huge node attributes (1e30) ended ``glocalkd score`` of 30 graphs
    with no report, and the message blamed the model file. A graph's score does not depend on its
    batch (:func:`core.detectors.registry.scores_alone`), so the graphs at fault are found by
    scoring each alone; when every graph overflows, the model is at fault and the error stands.

    Args:
        model: the fitted detector.
        graphs: the graphs to score, as read (then as the model reads them:
            :func:`core.detectors.base.as_model_reads`).
        on_progress: as for :func:`score_graphs`.

    Returns:
        (the graphs scored, with those the model overflows on among their rejects, in input
        order; their scores).

    Raises:
        NonFiniteScoreError: every graph overflows the model, or it scores batches as a whole.
        SchemaMismatchError: as :func:`score_graphs`.
    """
    from core.detectors.base import as_model_reads
    from core.detectors.registry import scores_alone

    graphs = as_model_reads(model, graphs, whole=False)  # a molecule it cannot standardise: a rejected row
    try:
        return graphs, score_graphs(model, graphs, on_progress=on_progress)
    except NonFiniteScoreError:
        if not scores_alone(model):
            raise
        bad = set()
        for i in range(len(graphs)):
            try:
                model.score(graphs.subset([i]))
            except NonFiniteScoreError:
                bad.add(i)
        if len(bad) == len(graphs):
            raise
    keep = [i for i in range(len(graphs)) if i not in bad]
    rejects = [*graphs.rejects, *(Reject(graphs.meta[i].line, graphs.meta[i].id, OVERFLOW, graphs.meta[i].smiles)
                                  for i in sorted(bad))]
    rejects.sort(key=lambda r: (r.line is None, r.line or 0))
    kept = dataclasses.replace(graphs.subset(keep), rejects=rejects)
    return kept, score_graphs(model, kept, on_progress=on_progress)
