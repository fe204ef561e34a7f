"""The window asks one question, ``app.review_book.scored_by``, whether the open model scored a
report: four places compared fingerprints themselves, and a report written before the consensus's
fingerprint changed was another model's in each (no Resume, no review from its view scores, plain
HTML drawings)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMPARED = re.compile(r"model_fingerprint\s*[!=]=|[!=]=\s*\S*model_fingerprint|fingerprint\(\)\s*[!=]=|[!=]=\s*\S*\.fingerprint\(\)")


def test_the_app_compares_a_reports_model_only_through_scored_by():
    found = [f"{p.relative_to(ROOT)}:{n}" for p in (ROOT / "app").rglob("*.py")
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if COMPARED.search(line)]
    assert not found, f"ask app.review_book.scored_by(report, model): {found}"
