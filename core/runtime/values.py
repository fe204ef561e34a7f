"""What a setting's value may be: a whole count, a seed, a finite number. The one set of rules by
which every detector, the screening run and the report writer check the settings they are given
(``chunk_size=2.5`` once passed a ``< 1`` check and failed deep inside with a bare TypeError)."""
from __future__ import annotations

import re

import numpy as np

from core.runtime.seeds import SEED_MAX


def is_count(value, low: int = 1) -> bool:
    """Whether ``value`` is a whole number (not a bool) of at least ``low``: a setting that counts.

    Args:
        value: the setting's value.
        low: the smallest value allowed.

    Returns:
        True when it keeps the rule.
    """
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= low


SEED = f"a whole number from 0 to {SEED_MAX}"  # the rule of every seed (training, evaluation, studies)


def is_seed(value) -> bool:
    """Whether ``value`` is a seed every random generator here takes: a whole number (not a bool)
    from 0 to :data:`SEED_MAX` (numpy refuses negative seeds, torch larger ones).

    Args:
        value: the seed.

    Returns:
        True when it keeps the rule.
    """
    return is_count(value, 0) and value <= SEED_MAX


def is_number(value, low: float = 0.0, above: bool = False) -> bool:
    """Whether ``value`` is a finite number (not a bool) of at least ``low`` (above it with ``above``).

    Args:
        value: the setting's value.
        low: the bound.
        above: the value must exceed ``low`` rather than reach it.

    Returns:
        True when it keeps the rule.
    """
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool) and \
        bool(np.isfinite(value)) and (value > low if above else value >= low)


DEVICE_NAMES = "'auto', 'cpu', 'cuda' or 'cuda:N'"


def is_device_name(device: object) -> bool:
    """Tell whether a setting names a device this package can use (whether it is there is
    :func:`resolve_device`'s question).

    Args:
        device: the setting.

    Returns:
        True for ``auto``, ``cpu``, ``cuda`` and ``cuda:N``.
    """
    return isinstance(device, str) and re.fullmatch(r"auto|cpu|cuda(:\d+)?", device) is not None
