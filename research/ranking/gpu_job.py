"""The default consensus's GLocalKD component on every fold of the 14 rows, in parallel processes
(fold_scores.py's ``glocalkd`` view), for a GPU machine. Run it through ``gpu_job.sh``, which
bounds the time and packs whatever finished.

Usage (repository root)::

    DATASETS=/path/to/datasets OMP_NUM_THREADS=2 PYTHONPATH=. \\
        python research/ranking/gpu_job.py [ROW ...] [--procs 6] [--device cuda] [--epochs N]

Each (row, fold) is one job; the jobs run in ``--procs`` processes (spawned, each with
``OMP_NUM_THREADS`` threads), the longest first (an estimate from the rows' sizes: Tox21 p53 and
HSE, then REDDIT-BINARY, NCI1, AIDS, ...). Each process loads a row once and keeps it. Every fold
is written whole as it finishes (``out/<row>/fold<k>.glocalkd.npz``), and ``out/gpu_job.json``
(rewritten after each fold) holds the device, each fold's seconds and the per-row sums, so a run
stopped by a timeout still leaves every finished fold and its timings; with ``--pack FILE`` the
tarball of them is rewritten after each fold too, so even a run killed from outside returns them.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from fold_scores import OUT, ROWS, dump_separate, folds  # noqa: E402

# Rough cost of one fold, in units of one GPU step: ceil(fit graphs / 300) batches an epoch plus
# the fit part's nodes / 30,000 (a larger batch costs more), from the data sets' README figures.
# It only orders the jobs (longest first).
COST = {"Tox21_p53": 25.8, "Tox21_HSE": 24.4, "REDDIT-BINARY": 12.2, "NCI1": 6.3, "AIDS": 4.5,
        "PROTEINS_full": 2.5, "ENZYMES": 2.3, "IMDB-BINARY": 2.2, "PROTEINS_full:first-label": 1.4,
        "DHFR": 1.4, "DHFR:first-label": 1.3, "hERG": 1.2, "BZR": 1.2, "BZR:first-label": 1.1}


@functools.lru_cache(maxsize=2)
def _row_folds(row: str) -> dict:
    return {k: (seed, normal, known, test, y) for k, seed, normal, known, test, y in folds(row)}


def _init() -> None:
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))


def run_fold(row: str, k: int, device: str, epochs: int | None) -> tuple[str, int, float | None, str | None]:
    """Fit and score one fold; returns ``(row, k, seconds or None when already there, error or None)``."""
    try:
        seed, normal, known, test, y = _row_folds(row)[k]
        return row, k, dump_separate(row, "glocalkd", k, seed, normal, known, test, y, device, epochs), None
    except Exception as exc:  # noqa: BLE001 (a failed fold is reported, the others go on)
        return row, k, None, f"{type(exc).__name__}: {exc}"


def fold_numbers(row: str) -> list[int]:
    return [1, 2, 3, 4, 5]  # cv: 5 folds; split (Tox21): 5 model seeds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="*", default=list(ROWS))
    parser.add_argument("--procs", type=int, default=6)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--epochs", type=int, default=None, help="GLocalKD's epochs, to try the pipeline out only")
    parser.add_argument("--pack", type=Path, default=None,
                        help="a .tar.gz rewritten after each fold with every finished fold and gpu_job.json")
    args = parser.parse_args(argv)
    unknown = [r for r in args.rows if r not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; rows: {', '.join(ROWS)}")
    import torch

    jobs = sorted(((r, k) for r in args.rows for k in fold_numbers(r)), key=lambda j: -COST.get(j[0], 1.0))
    report = {"device": args.device, "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
              "torch": torch.__version__, "python": platform.python_version(), "cpus": os.cpu_count(),
              "procs": args.procs, "threads_per_proc": int(os.environ.get("OMP_NUM_THREADS", "1")),
              "epochs": args.epochs, "folds": {}, "errors": {}, "rows": {}}
    report_path = OUT / "gpu_job.json"
    OUT.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    print(f"{len(jobs)} folds on {report['gpu'] or args.device}, {args.procs} processes", flush=True)
    with ProcessPoolExecutor(args.procs, mp_context=get_context("spawn"), initializer=_init) as pool:
        pending = {pool.submit(run_fold, r, k, args.device, args.epochs) for r, k in jobs}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                row, k, seconds, error = future.result()
                wall = time.perf_counter() - start
                if error:
                    report["errors"][f"{row}/{k}"] = error
                    print(f"{row} fold {k}: FAILED {error}", flush=True)
                    continue
                report["folds"][f"{row}/{k}"] = {"seconds": seconds, "done_at_s": round(wall, 1)}
                done_k = [key for key in report["folds"] if key.rsplit("/", 1)[0] == row]
                fits = [report["folds"][key]["seconds"] for key in done_k if report["folds"][key]["seconds"]]
                report["rows"][row] = {"folds": len(done_k), "fit_seconds": round(sum(fits), 1),
                                       "done_at_s": round(wall, 1)}
                if len(done_k) == len(fold_numbers(row)):
                    print(f"ROW {row}: {len(done_k)} folds, {sum(fits):.1f} s of fits, done at {wall:.0f} s",
                          flush=True)
                report["wall_s"] = round(wall, 1)
                _write_json(report_path, report)
                if args.pack is not None:
                    pack(args.pack)
    print(f"all done in {time.perf_counter() - start:.0f} s; {len(report['errors'])} folds failed", flush=True)
    return 1 if report["errors"] else 0


def pack(target: Path) -> int:
    """Write ``target`` (a .tar.gz, whole or not at all) with gpu_job.json and every finished
    ``<row>/fold<k>.glocalkd.npz`` of OUT, paths relative to OUT; returns the number of folds."""
    import tarfile

    folds_done = sorted(OUT.glob("*/fold*.glocalkd.npz"))
    tmp = target.with_name(target.name + ".part")
    with tarfile.open(tmp, "w:gz") as tar:
        for path in [OUT / "gpu_job.json", *folds_done]:
            if path.exists():
                tar.add(path, arcname=str(path.relative_to(OUT)))
    os.replace(tmp, target)
    return len(folds_done)


def _write_json(path: Path, obj: dict) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(obj, indent=1) + "\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
