"""The app's *Score another file* job, timed without the window.

    python -m benchmarks.app_job MODEL LIBRARY

Runs :func:`app.tasks.screen_file` (what the app's background thread runs) on ``LIBRARY`` with
the model file ``MODEL`` and prints one JSON line: the pipeline's rate and seconds, and the
seconds including reading the ranked report back (as the app does to show it). Compare with
``glocalkd screen MODEL LIBRARY -o REPORT`` on the same file.
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    from app.tasks import Job, screen_file
    from core.detectors.model_file import load_detector

    model = load_detector(sys.argv[1], device="cpu")
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        _, summary = screen_file(model, sys.argv[2], str(Path(tmp) / "report.csv"), Job())
        total = time.perf_counter() - start
    print(json.dumps({"molecules_per_second_in_pipeline": round(summary.scored / summary.seconds),
                      "pipeline_seconds": round(summary.seconds, 1),
                      "seconds_with_reading_the_report_back": round(total, 1)}))


if __name__ == "__main__":
    main()
