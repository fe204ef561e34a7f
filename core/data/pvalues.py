"""p-values from scores and q-values from p-values: the statistics behind calibrated flags.

:func:`conformal_p_values` turns raw anomaly scores into the share of held-out normal graphs
scoring at least as high (split conformal); :func:`benjamini_hochberg` turns the p-values of a
scored set into q-values that bound the expected share of false alarms among the flagged;
:func:`report_q_values` gives every report's and flag's q-values, from the p-values as written.
:mod:`core.detectors.conformal` holds the calibration itself.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from core.errors import GLocalKDError


def conformal_p_values(calibration_scores: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Split-conformal p-values: ``(1 + #{calibration >= s}) / (n + 1)`` for every score ``s``.

    A higher score means more anomalous, so a small p-value means few held-out normal graphs
    score as high.

    Args:
        calibration_scores: scores of ``n`` normal graphs the detector did not train on.
        scores: the scores to calibrate, any shape. NaN scores get NaN p-values.

    Returns:
        float64 p-values in [1 / (n + 1), 1], the shape of ``scores``.

    Raises:
        GLocalKDError: there is no calibration score, or one is not finite.
    """
    cal = np.sort(np.asarray(calibration_scores, dtype=np.float64))
    if cal.size == 0 or not np.all(np.isfinite(cal)):
        raise GLocalKDError("calibration needs finite scores of at least one held-out normal graph")
    s = np.asarray(scores, dtype=np.float64)
    at_least = cal.size - np.searchsorted(cal, s, side="left")
    p = (1.0 + at_least) / (cal.size + 1.0)
    return np.where(np.isnan(s), np.nan, p)


def benjamini_hochberg(p_values: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values) of a set of tests.

    Flagging every graph with ``q <= alpha`` keeps the expected share of normal graphs among the
    flagged ones at most ``alpha`` (for independent or positively dependent p-values).

    Args:
        p_values: the p-values, any shape (a single one too); NaN ones are left out of the count.

    Returns:
        float64 q-values at most 1, the shape of ``p_values``; NaN stays NaN.

    Raises:
        GLocalKDError: a p-value below 0 (not a p-value).
    """
    shaped = np.asarray(p_values, dtype=np.float64)
    p = shaped.ravel()
    if np.any(p < 0):
        raise GLocalKDError(f"p-values are at least 0; {int((p < 0).sum())} are below (first {p[p < 0][0]:g})")
    q = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size:
        order = ok[np.argsort(p[ok], kind="stable")]
        ranked = p[order] * ok.size / np.arange(1, ok.size + 1)
        q[order] = np.minimum(np.minimum.accumulate(ranked[::-1])[::-1], 1.0)
    return q.reshape(shaped.shape)


def format_p(value: float) -> str:
    """Write a p- or q-value as report text.

    Args:
        value: the p- or q-value.

    Returns:
        Six significant digits; empty when the model is not calibrated (NaN).
    """
    return f"{value:.6g}" if np.isfinite(value) else ""


def report_q_values(p_values: np.ndarray) -> np.ndarray:
    """The q-values every report, export and flag gives: Benjamini-Hochberg's of the p-values as a
    report writes them (:func:`format_p`). A streamed report knows its p-values as text only
    (:func:`bh_q_table`), so q-values from the exact p-values differed from it in the sixth digit
    (0.0622951 against 0.0622949), and a flag at a false-discovery rate could too.

    Args:
        p_values: one p-value per row (NaN: the row has none).

    Returns:
        float64 q-values, the shape of ``p_values``; NaN where the p-value is.
    """
    p = np.asarray(p_values, dtype=np.float64)
    texts = [format_p(v) for v in p.ravel().tolist()]
    table = bh_q_table(Counter(t for t in texts if t))
    return np.array([float(table[t]) if t else np.nan for t in texts], dtype=np.float64).reshape(p.shape)


def bh_q_table(p_counts: dict[str, int]) -> dict[str, str]:
    """Benjamini-Hochberg q-values of a set known only by how many of its members have each p-value.

    What a streamed report needs, since its rows arrive in rank order but a q-value depends on
    every p-value at or above it. Sorted p-values take a few distinct values; a tie group's
    q-value is the minimum over its own and every larger group of
    ``p * n / (rows with p-values up to it)``, as in :func:`benjamini_hochberg`.

    Args:
        p_counts: p-value (as report text) to the number of rows that have it.

    Returns:
        p-value text to its q-value as text (six significant digits).
    """
    levels = sorted(p_counts, key=float)
    n = sum(p_counts.values())
    out, best, cumulative = {}, 1.0, np.cumsum([p_counts[v] for v in levels])
    for level, upto in zip(reversed(levels), reversed(cumulative)):
        best = min(best, float(level) * n / int(upto))
        out[level] = f"{best:.6g}"
    return out


def fdr_unreached_note(n_calibration: int, n_scored: int, alpha: float) -> str:
    """Why a false-discovery rate of ``alpha`` flags nothing, and what to do, in words.

    With ``n`` calibration graphs the smallest p-value is ``1 / (n + 1)``; a q-value multiplies a
    p-value by (rows scored / its rank), so on ``n_scored`` rows no q can reach ``alpha`` unless at
    least ``n_scored / (alpha * (n + 1))`` rows score above every calibration graph.

    Args:
        n_calibration: held-out normal graphs the model's p-values come from.
        n_scored: rows scored (the set the q-values are taken over).
        alpha: the false-discovery rate asked for.

    Returns:
        One paragraph naming the smallest p-value, how many rows would have to reach it (or that none
        can, when ``alpha`` is below it), and the remedies.
    """
    smallest = 1.0 / (n_calibration + 1)
    if alpha < smallest:  # no q-value can reach it, however many rows score above the calibration graphs
        calibration = 1.0 / alpha - 1
        more = (f"Hold out at least {int(np.ceil(calibration)):,} calibration graphs (a larger calibration share, or "
                "more normal graphs), ask" if calibration <= 1e9 else "Ask")
        return (f"With {n_calibration:,} calibration graphs the smallest p-value is 1/{n_calibration + 1:,} = "
                f"{smallest:.2g}, above {alpha:g}: no q-value can reach {alpha:g}. {more} for a rate of at least "
                f"{smallest:.2g}, or flag by p-value or by percentile instead.")
    needed = int(np.ceil(n_scored * smallest / alpha))
    return (f"With {n_calibration:,} calibration graphs the smallest p-value is 1/{n_calibration + 1:,} = "
            f"{smallest:.2g}, so on {n_scored:,} rows a q-value reaches {alpha:g} only if at least {needed:,} rows "
            "score above every calibration graph. Hold out more calibration graphs (a larger calibration share, "
            "e.g. 'glocalkd train --calibration 0.4'), score fewer rows at a time, or flag by p-value or by "
            "percentile instead.")
