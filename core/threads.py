"""torch's CPU threads wait for each other asleep, not spinning, where the cores are shared.

OpenMP's threads spin while they wait at the end of each parallel product. On cores that other
processes also use, a spinning thread holds a core that another thread of the same product is
waiting for. Measured here (session 11, 2 cores, AIDS training epochs, medians of interleaved
runs): with one other busy process, 0.80-0.97 s spinning and 0.48-0.51 s asleep (1 thread:
0.46 s); with the cores to itself, 0.25-0.27 s and 0.24-0.27 s. Screening 50,000 MOSES rows,
whose parsing workers share the cores with scoring: 3,220-3,577/s spinning, 3,538-3,587/s asleep.

OpenMP reads the setting once, when torch loads its runtime, so it is an environment variable
set before the first ``import torch``. The library never sets it on its own: the ``glocalkd``
command and the app do, at start-up, unless the user has set it.
"""
from __future__ import annotations

import os
import sys


def wait_passively() -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless it is set already; returns whether it could still
    take effect (torch not imported yet)."""
    if "torch" in sys.modules:
        return False
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return True
