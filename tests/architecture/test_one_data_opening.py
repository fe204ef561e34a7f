"""The window opens data one way, ``AppState.open_loaded``, with all that reading it gave: a
session's restore called ``set_data`` with its own argument list and left out the properties, so
a reopened session had no MW, cLogP or TPSA column and its property ranges filtered nothing."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SET_DATA = re.compile(r"\.set_data\(")


def test_only_the_state_calls_set_data_on_itself():
    found = [f"{p.relative_to(ROOT)}:{n}" for p in (ROOT / "app").rglob("*.py") if p.name != "state.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if SET_DATA.search(line) and "model_table.set_data(" not in line]
    assert not found, f"open data with AppState.open_loaded(loaded): {found}"
