"""The app's *Score another file* job and the first review mark on its tab, timed without the window.

    python -m benchmarks.app_job MODEL LIBRARY [--no-review]

Runs :func:`app.tasks.screen_file` (what the app's background thread runs) on ``LIBRARY`` with
the model file ``MODEL`` and prints one JSON line: the pipeline's rate and seconds, and the
seconds including reading the ranked report back (as the app does to show it). Compare with
``glocalkd screen MODEL LIBRARY -o REPORT`` on the same file. For a consensus it then times the
tab's review (:func:`app.tasks.rerank`, the job a mark runs): the first mark from the views'
scores the report holds, the next mark, and the first mark of a report without them (its rows
scored again through the screening pipeline, as for a report from elsewhere).
"""
from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path


def _seconds(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    from app.review_book import model_unavailable
    from app.tasks import Job, rerank, screen_file
    from core.detectors.model_file import load_detector

    model = load_detector(sys.argv[1], device="cpu")
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        total, (report, summary) = _seconds(lambda: screen_file(model, sys.argv[2], str(Path(tmp) / "report.csv"),
                                                                Job()))
    out.update({"rows": len(report), "molecules_per_second_in_pipeline": round(summary.scored / summary.seconds),
                "pipeline_seconds": round(summary.seconds, 1), "seconds_with_reading_the_report_back": round(total, 1)})
    if "--no-review" not in sys.argv and not model_unavailable(model):
        first, (review, _, _, graphs) = _seconds(lambda: rerank(None, model, None, {0: True}, report=report))
        second, _ = _seconds(lambda: rerank(review, model, graphs, {0: True, 1: False}, report=report))
        elsewhere = dataclasses.replace(report, view_scores={})
        again, _ = _seconds(lambda: rerank(None, model, None, {0: True}, report=elsewhere))
        out.update({"first_mark_from_view_scores_s": round(first, 3), "next_mark_ms": round(1000 * second, 1),
                    "first_mark_scoring_again_s": round(again, 1)})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
