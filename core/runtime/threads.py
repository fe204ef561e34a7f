"""torch's CPU threads wait for each other asleep, not spinning, in the desktop app.

OpenMP's threads spin for a while when they wait at the end of each parallel product. On
cores that other programs also use, a spinning thread holds a core that another thread of the
same product is waiting for; a desktop's cores are always shared. Measured on an AMD EPYC
with 2 cores (medians of interleaved runs in fresh processes):

- AIDS training epochs beside one other busy process: 0.80-0.97 s spinning, 0.48-0.51 s asleep
  (``GOMP_SPINCOUNT=10000``, a short spin: 0.65 s); with the cores to itself, 0.25-0.27 s and
  0.24-0.27 s.
- Screening 50,000 MOSES rows, whose parsing workers share the cores with scoring: 3,220-3,577/s
  spinning, 3,538-3,587/s asleep.
- But REDDIT-BINARY training epochs alone, three rounds: 3.41, 3.25 and 3.47 s spinning; 4.67,
  3.77 and 3.45 s asleep. Waking the threads for its many short parallel steps can cost.

So the app sets it, and the ``glocalkd`` command, which mostly runs on cores of its own, keeps
OpenMP's default (set ``OMP_WAIT_POLICY=PASSIVE`` yourself, or pass ``--threads 1``, where the
cores are shared). OpenMP reads the setting once, when torch loads its runtime, so it is an
environment variable set before the first ``import torch``; the library never sets it on its own.
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
