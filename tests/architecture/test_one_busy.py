"""The window has one meaning of "busy", ``Runner.blocking()``: actions were enabled by one rule and
refused by another (they looked enabled while marks re-ranked, then answered "Busy"), and the
Recent sessions menu and a file dropped while torch loaded followed a third. Only a runner of a
controller's own (the SMARTS filter's) may ask ``busy()`` of all its jobs."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANY_JOB = re.compile(r"\.busy\(\)")
OWN_RUNNER = {"app/controllers/smarts.py"}  # Runner(self): its jobs hold up nothing of the window's


def test_the_window_asks_blocking_not_busy_of_all_jobs():
    found = [f"{p.relative_to(ROOT)}:{n}" for p in (ROOT / "app").rglob("*.py")
             if str(p.relative_to(ROOT)) not in OWN_RUNNER and p.name != "workers.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if ANY_JOB.search(line)]
    assert not found, f"ask runner.blocking() (or busy(name) of one job): {found}"
