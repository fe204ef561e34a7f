"""Start-up: seconds from the process's start to the first scored rows, as `glocalkd screen` runs.

    python -m benchmarks.first_row MODEL LIBRARY

Run in a fresh interpreter (as the command is): it counts the imports of core and torch, loading
the model (any detector's file), starting the workers and parsing and scoring the first chunk. Prints one JSON line.
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    import psutil

    started = psutil.Process().create_time()
    model_path, library = sys.argv[1], sys.argv[2]
    from core.detectors.model_file import load_detector
    from core.screening.pipeline import screen

    imported = time.time() - started
    model = load_detector(model_path, device="cpu")  # any detector's model file, as the command reads it
    loaded = time.time() - started
    first: list[float] = []

    def progress(read: int, scored: int) -> None:
        if not first:
            first.append(time.time() - started)
            first.append(scored)

    with tempfile.TemporaryDirectory() as tmp:
        screen(model, library, Path(tmp) / "r.csv", on_progress=progress,
               should_stop=lambda: bool(first))
    print(json.dumps({"imported_s": round(imported, 2), "model_loaded_s": round(loaded, 2),
                      "first_rows_scored_s": round(first[0], 2), "first_chunk_rows": first[1]}))


if __name__ == "__main__":
    main()
