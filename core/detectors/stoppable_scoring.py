"""Scoring a set of graphs that a person may stop: chunk by chunk, the same scores as one call.

A fitted detector's ``score`` runs to its end; a large set takes a minute or more. Every detector
whose graph scores do not depend on the batch (:func:`core.detectors.registry.scores_alone`:
all but the propagation-kernel views) gives the same scores chunk by chunk, so between chunks
the caller's ``should_stop`` can end the work and ``on_progress`` can count it. A batch-dependent
detector scores the set in one call, as screening scores such a file whole.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.data.graphset import GraphSet
from core.data.scores import Scores
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
        The scores, equal to ``model.score(graphs)``'s.

    Raises:
        SchemaMismatchError: the model cannot read graphs of this kind, naming their file and
            what to do.
        Stopped: ``should_stop`` returned True.
    """
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
