"""Scoring cost per graph of each consensus component (what screening would pay per molecule).

Usage (worktree root)::

    nice -n 10 python -m research.consensus.timing [ROW] [--repeats 3] [--json OUT]

Fits every component on the fit part of fold 1 of ROW (default AIDS; the same split as
dump.py), then times ``score`` on all graphs of the data set (already loaded and parsed: the
time is scoring only, no file reading or SMILES parsing), ``--repeats`` times, and reports the
fastest repeat per graph. Also times the consensus step itself (conformal p-values of every
component against its calibration scores plus the Fisher / ACAT combination). One torch thread.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from research.consensus.combine import combine_stat, conformal_p  # noqa: E402
from research.consensus.dump import CAL_FRACTION, SPLIT_SEED, folds_of  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("row", nargs="?", default="AIDS")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--components", default="size,wl-lesinn,pk-lesinn,glocalkd")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from core import make_detector

    runs, graphs, is_anom, anomaly = folds_of(args.row)
    k, seed, train_idx, *_ = runs[0]
    normal = np.asarray(train_idx)[~is_anom[train_idx]]
    perm = np.random.default_rng([SPLIT_SEED, k]).permutation(len(normal))
    n_cal = int(round(CAL_FRACTION * len(normal)))
    cal_set = graphs.subset(np.sort(normal[perm[:n_cal]]).tolist())
    fit_set = graphs.subset(np.sort(normal[perm[n_cal:]]).tolist())
    out = {"row": args.row, "n_fit": len(fit_set), "n_cal": len(cal_set), "n_scored": len(graphs),
           "threads": torch.get_num_threads(), "components": {}}
    cal_scores, all_scores = {}, {}
    for comp in args.components.split(","):
        model = make_detector(comp, seed=0)
        t = time.perf_counter()
        model.fit(fit_set)
        fit_s = time.perf_counter() - t
        cal_scores[comp] = model.score(cal_set).score.astype(np.float64)
        best = np.inf
        for _ in range(args.repeats):
            t = time.perf_counter()
            s = model.score(graphs)
            best = min(best, time.perf_counter() - t)
        all_scores[comp] = s.score.astype(np.float64)
        out["components"][comp] = {"fit_seconds": fit_s, "score_seconds": best,
                                   "ms_per_graph": 1000 * best / len(graphs)}
        print(f"{comp}: fit {fit_s:.1f} s; scoring {len(graphs)} graphs {best:.3f} s = "
              f"{1000 * best / len(graphs):.4f} ms/graph", flush=True)
    best = np.inf
    for _ in range(args.repeats):
        t = time.perf_counter()
        P = np.stack([conformal_p(cal_scores[c], all_scores[c]) for c in all_scores], axis=1)
        combine_stat(P, "fisher")
        combine_stat(P, "acat")
        best = min(best, time.perf_counter() - t)
    out["combination_ms_per_graph"] = 1000 * best / len(graphs)
    print(f"p-values + Fisher + ACAT: {1000 * best / len(graphs):.5f} ms/graph")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
