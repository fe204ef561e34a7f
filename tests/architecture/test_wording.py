"""Counts in messages go through ``core.counted``: a count written straight before its noun
("{n} graphs") said "Loaded 1 graphs" when one molecule was opened, in the window and the
command line alike."""
from __future__ import annotations

import re
from pathlib import Path

from core import counted

ROOT = Path(__file__).resolve().parents[2]
NOUNS = "graphs|molecules|rows|files|reports|nodes|atoms|anomalies"
# a replacement field right before a plural noun; a rate ("rows/s") is not a count
COUNT_BEFORE_NOUN = re.compile(r"\{[^{}\n]*\} (?:" + NOUNS + r")\b(?!/)")
HAND_MADE_PLURAL = re.compile(r"""\{['"]s['"] (?:if|\*)""")  # {'s' if n != 1 else ''}, {'s' * (n != 1)}


def test_one_reads_singular_and_every_other_count_plural():
    assert counted(1, "graph") == "1 graph"
    assert counted(0, "graph") == "0 graphs"
    assert counted(12345, "row") == "12,345 rows"
    assert counted(1, "anomaly", "anomalies") == "1 anomaly"
    assert counted(2, "anomaly", "anomalies") == "2 anomalies"


def test_no_message_writes_a_count_straight_before_its_noun():
    found = []
    for path in [*(ROOT / "app").rglob("*.py"), *(ROOT / "core" / "cli").rglob("*.py")]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if COUNT_BEFORE_NOUN.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "use core.counted(n, noun):\n" + "\n".join(found)


def test_no_plural_is_made_by_hand():
    """One rule for plurals: each hand-made one ("row{'s' if n != 1 else ''}") was a second path."""
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in [*(ROOT / "app").rglob("*.py"), *(ROOT / "core").rglob("*.py")]
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if HAND_MADE_PLURAL.search(line)]
    assert not found, "use core.counted(n, noun):\n" + "\n".join(found)
