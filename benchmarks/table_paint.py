"""The results table with structures: paint times while scrolling 20,000 molecules, offscreen.

    QT_QPA_PLATFORM=offscreen python -m benchmarks.table_paint [--rows 20000] [--size small|large]
        [--no-similarity]

Opens a table of MOSES molecules (the app's results table, its structure delegate and drawing
process) in a 1600x1000 window, as a scored file with its properties, review marks and flagged
rows (made-up numbers; the Review column shown), and scrolls it three ways: dragging the scroll bar through the
whole table (50 rows a frame), turning the wheel (3 rows a frame) and paging. Each frame is painted
synchronously (``repaint``) and timed; between frames the event loop runs for one 60 Hz frame
(16 ms), as when a user scrolls, which is when drawn pictures arrive. Prints one JSON line per
way: the longest, 99th-percentile and median paint (wall-clock ms, and the GUI thread's CPU ms,
less sensitive to a busy machine, with the load average before and after), and the longest event-loop slice between frames (pictures
arriving); then the share of structure cells painted with their picture, the seconds until every
picture in sight is drawn after a jump to rows not seen yet, the same paints with structures off,
and the similarity query over the same rows (fingerprints, then one query). Figures depend on
the machine and what else runs on it: after each paint a fixed computation of about 8 ms runs
(``fixed_work_*``, wall clock), whose longest run shows the spikes the machine adds by itself.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

MOSES = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "moses" / "train.csv.gz"
FRAME_S = 0.016


def read_smiles(path: Path, rows: int) -> list[str]:
    with gzip.open(path, "rt") as fh:
        next(fh)
        return [line.strip() for _, line in zip(range(rows), fh)]


def properties(n: int) -> dict[str, np.ndarray]:
    """Made-up values for every property column (the table shows them as it shows computed ones)."""
    from core import PROPERTY_COLUMNS

    rng = np.random.default_rng(1)
    return {name: rng.random(n) * 500 for name in PROPERTY_COLUMNS}


def as_report(smiles: list[str]) -> SimpleNamespace:
    """The columns a ranked report gives the table, for ``smiles`` with made-up scores."""
    n = len(smiles)
    rng = np.random.default_rng(0)
    obj = lambda values: np.array(values, dtype=object)  # noqa: E731
    return SimpleNamespace(score=rng.random(n), graph_score=rng.random(n), node_score=rng.random(n),
                           ids=obj([f"MOSES-{k}" for k in range(n)]), names=obj([""] * n), smiles=obj(smiles),
                           labels=obj([""] * n), num_nodes=rng.integers(10, 30, n))


def _work(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def fixed_work(work_ms: float = 8.0):
    """A pure-Python computation of about ``work_ms``, run after each paint: its longest run says
    how much of a long paint the machine itself causes (another process, the hypervisor), as
    opposed to the table."""
    n = 20_000
    t = time.thread_time()
    _work(n)
    n = max(1, int(n * work_ms / 1000 / max(time.thread_time() - t, 1e-6)))
    return lambda: _work(n)


def summary(ms: list[float]) -> dict:
    return {"frames": len(ms), "max_ms": round(max(ms), 1), "p99_ms": round(float(np.percentile(ms, 99)), 1),
            "median_ms": round(statistics.median(ms), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--size", default="small", choices=("small", "large"))
    parser.add_argument("--data", default=str(MOSES))
    parser.add_argument("--no-similarity", action="store_true", help="skip the similarity query")
    args = parser.parse_args()

    from PySide6.QtWidgets import QApplication

    from app.main import keep_loaded_objects, paint_on_the_gui_thread
    from core import retain_freed_memory
    from app.structures import StructureImages, show_structures
    from app.widgets.table import COLUMNS, STRUCTURE_ROLE, ResultsModel, results_view

    retain_freed_memory()  # as the app does at start (app.main)
    paint_on_the_gui_thread()
    app = QApplication.instance() or QApplication([])
    smiles = read_smiles(Path(args.data), args.rows)
    model = ResultsModel()
    model.set_report(as_report(smiles), threshold=0.9)  # a tenth of the rows flagged
    model.set_properties(properties(len(smiles)))
    model.set_review({k: bool(k % 2) for k in range(0, len(smiles), 7)}, None)  # a seventh of the rows marked
    table = results_view(model)
    table.setColumnHidden(COLUMNS.index("Review"), False)
    images = StructureImages()
    show_structures(table, images)
    table.resize(1600, 1000)
    table.show()
    app.processEvents()
    keep_loaded_objects()  # as the app does once it has loaded (app.main)
    bar = table.verticalScrollBar()
    column = COLUMNS.index("Structure")
    hits = [0, 0]  # structure cells painted with their picture, all structure cells painted

    def count_cells() -> None:
        top, bottom = table.rowAt(0), table.rowAt(table.viewport().height() - 1)
        bottom = model.rowCount() - 1 if bottom < 0 else bottom
        for row in range(max(top, 0), bottom + 1):
            hits[1] += 1
            hits[0] += images.is_known(model.index(row, column).data(STRUCTURE_ROLE))

    def all_drawn() -> bool:
        top, bottom = table.rowAt(0), table.rowAt(table.viewport().height() - 1)
        bottom = model.rowCount() - 1 if bottom < 0 else bottom
        return all(images.is_known(model.index(row, column).data(STRUCTURE_ROLE)) for row in range(top, bottom + 1))

    def scroll(positions) -> tuple[list[float], list[float], list[float], list[float], list[float]]:
        paints, cpu, slices, slice_cpu, fixed = [], [], [], [], []
        for value in positions:
            bar.setValue(int(value))
            t, c = time.perf_counter(), time.thread_time()
            table.viewport().repaint()
            paints.append((time.perf_counter() - t) * 1000)
            cpu.append((time.thread_time() - c) * 1000)
            t = time.perf_counter()
            control()
            fixed.append((time.perf_counter() - t) * 1000)
            count_cells()
            end = time.perf_counter() + FRAME_S
            while time.perf_counter() < end:  # the rest of the frame: pictures arrive
                t, c = time.perf_counter(), time.thread_time()
                app.processEvents()
                slices.append((time.perf_counter() - t) * 1000)
                slice_cpu.append((time.thread_time() - c) * 1000)
                time.sleep(0.001)
        return paints, cpu, slices, slice_cpu, fixed

    results = {"rows": len(smiles), "size": args.size, "load_before": [round(x, 2) for x in os.getloadavg()]}
    control = fixed_work()
    for key in ("off", args.size):
        images.set_size(key)
        app.processEvents()
        maximum = bar.maximum()
        per_row = max(1, maximum // max(model.rowCount(), 1))  # scroll bar units per row
        ways = {"drag": np.linspace(0, maximum, 400),  # the whole table in 400 frames
                "wheel": np.arange(0, 300) * 3 * per_row + maximum // 3,  # 3 rows a frame, mid-table
                "page": np.arange(0, 200) * bar.pageStep() % max(maximum, 1)}
        hits[:] = [0, 0]
        for way, positions in ways.items():
            paints, cpu, slices, slice_cpu, fixed = scroll(positions)
            results[f"{key}_{way}"] = {**summary(paints), "cpu_max_ms": round(max(cpu), 1),
                                       "fixed_work_median_ms": round(statistics.median(fixed), 2),
                                       "fixed_work_max_ms": round(max(fixed), 1),
                                       "cpu_p99_ms": round(float(np.percentile(cpu, 99)), 1),
                                       "cpu_median_ms": round(statistics.median(cpu), 2),
                                       "longest_slice_ms": round(max(slices), 1),
                                       "longest_slice_cpu_ms": round(max(slice_cpu), 1)}
        if key != "off":
            results[f"{key}_pictures_painted"] = round(hits[0] / max(hits[1], 1), 3)
            bar.setValue(maximum // 2)  # a row of the table not seen yet: until every picture in sight is drawn
            app.processEvents()
            table.viewport().repaint()
            t = time.perf_counter()
            while not all_drawn() and time.perf_counter() - t < 60:
                app.processEvents()
                time.sleep(0.005)
            results[f"{key}_pictures_in_sight_after_s"] = round(time.perf_counter() - t, 2)
    images.shutdown()
    results["load_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.no_similarity:
        print(json.dumps(results))
        return

    from app import tasks

    t, c = time.perf_counter(), time.process_time()
    first = tasks.query_similarity(np.array(smiles, dtype=object), smiles[0], None, job=None)
    fingerprints_and_query = time.perf_counter() - t
    results["similarity_first_query_cpu_s"] = round(time.process_time() - c, 2)
    t = time.perf_counter()
    tasks.query_similarity(None, smiles[1], first.index, job=None)
    results["similarity_first_query_s"] = round(fingerprints_and_query, 2)
    results["similarity_next_query_ms"] = round((time.perf_counter() - t) * 1000, 1)
    t = time.perf_counter()
    model.set_similarity(first.similarities, 0.3)
    model.sort(COLUMNS.index("Similarity"))
    results["similarity_filter_and_sort_ms"] = round((time.perf_counter() - t) * 1000, 1)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
