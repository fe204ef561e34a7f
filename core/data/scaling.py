"""One rule for dividing a feature column by its spread: a column that is constant up to
rounding is divided by 1, never by its rounding error.

``np.std`` of identical floats is often a few units in the last place rather than exactly 0, so
a test ``std > 0`` let 10 training graphs of one size give a spread of 4e-16 and every other
size a score of 1e29 (whether it did depended on the number of graphs).
"""
from __future__ import annotations

import numpy as np

CONSTANT_TOLERANCE = 1e-9  # a spread below this share of the column's size is rounding, not data


def usable_spread(spread, centre, fallback=1.0) -> np.ndarray:
    """The spread of each column where it is one, else ``fallback``.

    Args:
        spread: per column (a standard deviation, an interquartile range, ...).
        centre: per column (its mean or median), which sets what rounding is.
        fallback: per column or one value, where ``spread`` is rounding (another spread, or 1).

    Returns:
        ``spread`` where it exceeds :data:`CONSTANT_TOLERANCE` times ``max(|centre|, 1)``, else
        ``fallback``.
    """
    spread = np.asarray(spread, dtype=np.float64)
    tiny = CONSTANT_TOLERANCE * np.maximum(np.abs(np.asarray(centre, dtype=np.float64)), 1.0)
    return np.where(spread > tiny, spread, fallback)
