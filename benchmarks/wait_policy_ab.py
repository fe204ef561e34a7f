"""Training epochs with OpenMP's threads spinning or asleep while they wait, interleaved (not a test).

    python benchmarks/wait_policy_ab.py AIDS [--epochs 6] [--repeats 2] [--busy 1] [--data ../shared/datasets]

OpenMP reads its waiting policy once, when torch loads, so each run is a fresh process: the
default (``OMP_WAIT_POLICY`` unset), ``PASSIVE`` (what the app sets, ``core/threads.py``) and a
short spin (``GOMP_SPINCOUNT=10000``), one after the other, ``--repeats`` times. Each run trains
on the normal graphs of the benchmark's first fold (``benchmarks/bench.py``'s split) and prints
its median and best epoch after the first. ``--busy N`` keeps N other processes spinning on the
CPU meanwhile, as other programs on a desktop would.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_RUN = """
import sys, numpy as np
sys.path.insert(0, {root!r})
from pathlib import Path
from benchmarks.common import first_fold_normals
from core import GLocalKD, retain_freed_memory
retain_freed_memory()
graphs = first_fold_normals(Path({data!r}), {dataset!r})
times = []
GLocalKD(epochs={epochs}, device="cpu", seed=0).fit(graphs, on_epoch=lambda info: times.append(info.seconds))
print(f"median {{np.median(times[1:]):.3f}} s, best {{min(times[1:]):.3f}} s")
"""

POLICIES = {"spinning (OpenMP's default)": {}, "asleep (OMP_WAIT_POLICY=PASSIVE)": {"OMP_WAIT_POLICY": "PASSIVE"},
            "short spin (GOMP_SPINCOUNT=10000)": {"GOMP_SPINCOUNT": "10000"}}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--busy", type=int, default=0, help="other processes spinning on the CPU meanwhile")
    args = p.parse_args()
    code = _RUN.format(root=str(ROOT), data=args.data, dataset=args.dataset, epochs=args.epochs)
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        for _ in range(args.repeats):
            for name, env in POLICIES.items():
                done = subprocess.run([sys.executable, "-c", code], env={**base, **env}, capture_output=True,
                                      text=True, check=True)
                print(f"{args.dataset}, {args.busy} busy: {name}: {done.stdout.strip()}", flush=True)
    finally:
        for hog in hogs:
            hog.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
