"""Robustness of the graph-statistics view to its random seeds (a check, not a selection):
the mean ROC-AUC over the rows of gstats-LESINN / gstats-IF alone and in the Fisher sets, with
the views of ``views.py --seed-offset K`` (K = 0 is the dumped component).

Usage (worktree root)::

    python -m research.consensus.views_seeds [--offsets 0,1,2]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from research.consensus.combine import DUMPS, ROWS, auc, combine_stat, conformal_p  # noqa: E402

SETS = {"alone": (), "S3+": ("glocalkd", "size", "wl-lesinn"), "S4+": ("glocalkd", "size", "wl-lesinn", "pk-lesinn"),
        "G+WL+": ("glocalkd", "wl-lesinn")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--offsets", default="0,1,2")
    args = ap.parse_args(argv)
    offsets = [int(v) for v in args.offsets.split(",")]
    res = {}  # (view, offset, set) -> [row means]
    for row in ROWS:
        folds = [f for f in sorted((DUMPS / row).glob("fold*")) if (f / "meta.npz").exists()
                 and (f / "glocalkd.npz").exists()]
        for view in ("gstats-lesinn", "gstats-if"):
            for off in offsets:
                name = view if off == 0 else f"{view}@{off}"
                if not all((f / f"{name}.npz").exists() for f in folds):
                    continue
                per = {s: [] for s in SETS}
                for f in folds:
                    y = np.load(f / "meta.npz")["y_test"].astype(int)
                    comps = {c: np.load(f / f"{c}.npz") for c in set(sum(SETS.values(), ())) | {name}}
                    pv = {c: conformal_p(z["cal"], z["test"]) for c, z in comps.items()}
                    for s, members in SETS.items():
                        if not members:
                            per[s].append(auc(y, comps[name]["test"]))
                        else:
                            P = np.stack([pv[m] for m in members + (name,)], axis=1)
                            per[s].append(auc(y, combine_stat(P, "fisher")))
                for s in SETS:
                    res.setdefault((view, off, s), {})[row] = float(np.mean(per[s]))
    print("| view | seed offset | set | rows | mean ROC-AUC | rows < 0.5 |")
    print("|---|---|---|---|---|---|")
    for (view, off, s), v in sorted(res.items()):
        m = np.array(list(v.values()))
        print(f"| {view} | {off} | {s} | {len(m)} | {m.mean():.4f} | {int((m < 0.5).sum())} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
