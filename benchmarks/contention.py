"""`train` and `screen` beside a fixed CPU load, at the default and at every --threads value (not a test).

    python -m benchmarks.contention [--busy 2] [--molecules 2000] [--epochs 10] [--rows 50000]
                                    [--threads 0,1,2] [--library ../shared/datasets/moses/train.csv.gz]

It starts ``--busy`` processes that spin on the CPU (other programs on a shared machine), then
times the ``glocalkd`` command as a user runs it, each run a fresh process: ``train`` of the
default detector on the first ``--molecules`` MOSES molecules for ``--epochs`` epochs, and
``screen`` of the next ``--rows`` rows with the model trained first (untimed). ``--threads 0``
is the default setting. It prints each wall time and its ratio to the best setting of that job,
the load average before and after, and writes ``benchmarks/out/contention.json``.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _molecules(library: Path, skip: int, count: int) -> list[str]:
    """``count`` SMILES of a one-column MOSES file after its header and ``skip`` rows."""
    opener = gzip.open if library.suffix == ".gz" else open
    out = []
    with opener(library, "rt") as fh:
        next(fh)
        for i, line in enumerate(fh):
            if i >= skip + count:
                break
            if i >= skip:
                out.append(line.split(",")[0].strip())
    return out


def _glocalkd(args: list[str], threads: int) -> float:
    """Wall seconds of one ``python -m core ...`` run (``threads`` 0: no --threads option)."""
    extra = ["--threads", str(threads)] if threads else []
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "core", *args, *extra], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--busy", type=int, default=2, help="processes spinning on the CPU beside the runs")
    p.add_argument("--molecules", type=int, default=2000, help="training molecules")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--rows", type=int, default=50000, help="screened rows")
    p.add_argument("--threads", default=None, help="comma-separated --threads values (0: the default); "
                   "default: 0 and 1 .. the usable CPUs")
    p.add_argument("--library", default=str(ROOT.parent / "shared" / "datasets" / "moses" / "train.csv.gz"))
    args = p.parse_args()
    from core.runtime.threads import usable_cpus

    settings = [int(t) for t in args.threads.split(",")] if args.threads else [0, *range(1, usable_cpus() + 1)]
    with tempfile.TemporaryDirectory(prefix="contention-") as tmp:
        tmp = Path(tmp)
        train, library = tmp / "train.smi", tmp / "library.smi"
        train.write_text("".join(f"{s} t{i}\n" for i, s in enumerate(_molecules(Path(args.library), 0,
                                                                                  args.molecules))))
        library.write_text("".join(f"{s} s{i}\n" for i, s in enumerate(
            _molecules(Path(args.library), args.molecules, args.rows))))
        train_args = ["train", str(train), "--epochs", str(args.epochs), "-o"]
        _glocalkd([*train_args, str(tmp / "model.pt")], 0)  # the screening model (untimed)
        load_before = os.getloadavg()
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
        results: dict[str, dict[int, float]] = {"train": {}, "screen": {}}
        try:
            for threads in settings:
                results["train"][threads] = _glocalkd([*train_args, str(tmp / f"m{threads}.pt")], threads)
                results["screen"][threads] = _glocalkd(["screen", str(tmp / "model.pt"), str(library), "-o",
                                                        str(tmp / f"r{threads}.csv")], threads)
                print(f"--threads {threads or 'default'}: train {results['train'][threads]:.1f} s, "
                      f"screen {results['screen'][threads]:.1f} s", flush=True)
        finally:
            for hog in hogs:
                hog.kill()
        load_after = os.getloadavg()
    print(f"{args.busy} busy processes; load average before {load_before[0]:.1f}, after {load_after[0]:.1f}; "
          f"{usable_cpus()} usable CPUs")
    for job, times in results.items():
        best = min(times.values())
        print(f"{job}: " + ", ".join(f"{'default' if t == 0 else t}: {s:.1f} s ({s / best:.2f}x best)"
                                     for t, s in times.items()))
    out = ROOT / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "contention.json").write_text(json.dumps(
        {"busy": args.busy, "molecules": args.molecules, "epochs": args.epochs, "rows": args.rows,
         "load_before": load_before, "load_after": load_after, "usable_cpus": usable_cpus(),
         "seconds": {job: {str(t): s for t, s in times.items()} for job, times in results.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
