"""End-to-end screening benchmark: SMILES text in, ranked CSV out (used by bench.py).

bench.py runs each library size in a fresh interpreter (``python -m benchmarks.screening_bench``),
so one size's memory peak is not raised by the heap an earlier size or part left behind.
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import MemorySampler, gcn_flops_per_node


def bench_screen(library: Path, rows: int, gflops: float, workers: int | None = None,
                 keep_report: Path | None = None, precision: str = "float32") -> dict:
    """Train a paper-width model briefly on 2,000 molecules of ``library`` (speed does not depend
    on how well it is trained), then screen its first ``rows`` SMILES end to end (``rows`` 0:
    the whole library file as it is, gzipped or not). ``keep_report`` keeps the ranked report."""
    from core import GLocalKD, load
    from core.screening.pipeline import screen

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        opener = gzip.open if str(library).endswith(".gz") else open
        lib = library if rows == 0 else tmp / "library.smi"
        train = tmp / "train.smi"
        with opener(library, "rt") as src:
            header = next(src)
            head = header if header.strip().lower() != "smiles" else ""
            if rows:
                with open(lib, "w") as dst:
                    dst.write(head)
                    for line in itertools.islice(src, rows):
                        dst.write(line)
                src.seek(0)
                next(src)
            with open(train, "w") as dst:
                dst.write(head)
                dst.writelines(itertools.islice(src, 2000))
        model = GLocalKD(epochs=1, device="cpu", seed=0).fit(load(train))
        report = keep_report or tmp / "report.csv"
        with MemorySampler() as memory:
            cpu_before = _cpu_seconds()
            start = time.perf_counter()
            summary = screen(model, lib, report, workers=workers, precision=precision)
            seconds = time.perf_counter() - start
            cpu_main, cpu_workers = (after - before for after, before in zip(_cpu_seconds(), cpu_before))
        cpu_main -= memory.cpu_seconds  # the memory sampler runs in this process; its CPU is not scoring
        with open(report) as fh:
            report_rows = sum(1 for _ in fh) - 1
    nodes_per_mol = summary.nodes / max(summary.scored, 1)
    flops_per_mol = 2 * gcn_flops_per_node(model.schema_.dim) * nodes_per_mol  # target + predictor forward
    bound = gflops * 1e9 / flops_per_mol
    rate = summary.rows / seconds
    return {"precision": precision, "rows": summary.rows, "scored": summary.scored, "rejected": summary.rejected,
            "report_rows": report_rows, "seconds": seconds, "molecules_per_second": rate,
            "nodes_per_molecule": nodes_per_mol, "bound_molecules_per_second": bound,
            "fraction_of_bound": rate / bound, "peak_memory_mb_pss": memory.peak_mb,
            "peak_main_mb_pss": memory.peak_main_mb, "peak_workers_mb_pss": memory.peak_children_mb,
            # RSS counts the pages processes share (torch, RDKit, the model the workers inherit at
            # fork) once in each of them: the PSS figures above are what the run used in all
            "peak_rss_mb_main": _peak_rss_mb_self(),
            "peak_rss_mb_largest_worker": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            "peak_pss_mb_by_tenth_of_run": memory.peaks_by_part(10),
            "cpu_us_per_molecule_main": cpu_main / summary.rows * 1e6,
            "cpu_us_per_molecule_workers": cpu_workers / summary.rows * 1e6,
            "memory_sampler_cpu_seconds": memory.cpu_seconds, "memory_samples": len(memory.samples),
            "cores": os.cpu_count(),
            # the rate the CPU time spent allows on the machine's cores, were they ours alone and
            # the work perfectly overlapped: unlike the wall-clock rate, other tenants do not lower it
            "cpu_limited_molecules_per_second": (os.cpu_count() or 1) * summary.rows / max(cpu_main + cpu_workers, 1e-9)}


def _peak_rss_mb_self() -> float:
    """This process's peak RSS. Not ``ru_maxrss``: Linux carries that across ``exec``, so a
    process started by bench.py would report bench.py's own peak (its REDDIT-BINARY training)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user + system) used so far by this process and by its finished children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def bench_screen_fresh(library: Path, rows: int, gflops: float, keep_report: Path | None = None,
                       precision: str = "float32") -> dict:
    """:func:`bench_screen` in a fresh Python process; returns its result."""
    root = Path(__file__).resolve().parents[1]
    cmd = [sys.executable, "-m", "benchmarks.screening_bench", str(library), "--rows", str(rows),
           "--gflops", str(gflops), "--precision", precision]
    if keep_report is not None:
        cmd += ["--keep-report", str(keep_report)]
    done = subprocess.run(cmd, cwd=root, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description="one end-to-end screening run; prints its result as JSON")
    p.add_argument("library", type=Path)
    p.add_argument("--rows", type=int, default=100000, help="0: the whole file")
    p.add_argument("--gflops", type=float, required=True, help="the machine's fp32 matmul GFLOP/s (for the bound)")
    p.add_argument("--precision", default="float32")
    p.add_argument("--keep-report", type=Path)
    args = p.parse_args()
    from core import retain_freed_memory

    retain_freed_memory()  # as the glocalkd command does
    print(json.dumps(bench_screen(args.library, args.rows, args.gflops, keep_report=args.keep_report,
                                  precision=args.precision)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
