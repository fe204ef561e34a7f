"""How far can a fixed combination rule go? An upper bound chosen with the test labels.

Usage (from a checkout whose ``research/consensus/dumps`` holds the per-fold files of
dump.py and views.py)::

    python -m research.consensus.bound [--json OUT.json]

A fixed rule gives every data set the same weights. Every label-free rule of the study is one
(the default: Fisher, weight 1 on GLocalKD, graph size and WL-LESINN). Here the weights are
chosen *on the test labels*, to maximise the goals themselves, so no fixed rule can beat what is
found below. If even that falls short of a goal, the goal needs something a fixed rule over these
views does not have: a better view, or information about the anomalies of each data set.

Searched, all on conformal p-values of the per-fold dumps:

- ``fisher-grid``: weighted Fisher ``sum_c w_c (-2 log p_c)`` over the four views that use only
  a graph's own score (GLocalKD, graph size, WL-LESINN, graph statistics with LESINN); every
  weight in {0, 0.5, 1, 2, 4}: an exhaustive grid.
- ``<rule>-search``: weighted Fisher, weighted Stouffer (``sum_c w_c z_c``, ``z = Phi^-1(1 - p)``)
  and weighted max evidence (``max_c w_c (-log p_c)``) over all ten views (the four, LESINN on
  the unnormalised WL counts of wl_counts.py, PK-LESINN, graph statistics with an isolation
  forest, structure-only statistics with LESINN and with an isolation forest, and WL-iForest,
  dumped with ``dump.py ROW --components wl-iforest``); weights in {0, 0.25, 0.5, 1, 2, 4} by
  coordinate ascent from the default, until no single change helps. A local search: its optimum
  is a lower bound on the best of the family, which is why the exhaustive grids are reported too.

Each search is run twice: maximising the mean ROC-AUC over the 14 rows first (ties by the count
of rows within 0.03 of the best single detector), and maximising that count first.

Two wider searches of the ten-view weighted Fisher, so that the local search's optimum is not
taken for the family's (``--wide``):

- ``fisher-grid-coarse``: every weighting of the ten views in {0, 1, 3} (59,048 of them):
  exhaustive, on a coarser grid;
- ``fisher-restarts``: coordinate ascent as above from ``--restarts`` random starts (weights
  drawn from the search grid, seed 0), the best end point kept.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from research.consensus.combine import ROWS, conformal_p  # noqa: E402

DUMPS = Path(__file__).resolve().parent / "dumps"
OWN_SCORE_VIEWS = ("glocalkd", "size", "wl-lesinn", "gstats-lesinn")
ALL_VIEWS = OWN_SCORE_VIEWS + ("wl-count-lesinn", "pk-lesinn", "gstats-if", "struct-lesinn", "struct-if", "wl-iforest")
SINGLES = ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn")
DEFAULT = {"glocalkd": 1.0, "size": 1.0, "wl-lesinn": 1.0}
RULES = {
    "fisher": (lambda p: -2.0 * np.log(p), "sum"),
    "stouffer": (lambda p: stats.norm.isf(np.minimum(p, 1.0 - 1e-4)), "sum"),
    "max-evidence": (lambda p: -np.log(p), "max"),
}


def load_rows(views) -> tuple[dict, dict]:
    """Per row, per fold: the test labels and each view's conformal p-values; and each row's
    best single detector (mean AUC over folds, chosen on the labels, as in the tables)."""
    folds: dict[str, list] = {}
    best: dict[str, float] = {}
    for row in ROWS:
        singles: dict[str, list[float]] = {}
        for fdir in sorted((DUMPS / row).glob("fold*")):
            y = np.load(fdir / "meta.npz")["y_test"].astype(int)
            p = {}
            for c in set(views) | set(SINGLES):
                path = fdir / f"{c}.npz"
                if not path.exists():
                    continue
                z = np.load(path)
                if c in views:
                    p[c] = conformal_p(z["cal"], z["test"])
                if c in SINGLES:
                    singles.setdefault(c, []).append(roc_auc_score(y, z["test"]))
            missing = set(views) - set(p)
            if missing:
                raise SystemExit(f"{fdir}: no per-fold file for {sorted(missing)}")
            folds.setdefault(row, []).append((y, p))
        if row not in folds:
            raise SystemExit(f"{DUMPS / row}: no folds; run dump.py and views.py first")
        best[row] = max(float(np.mean(v)) for v in singles.values())
    return folds, best


def fast_auc(y: np.ndarray, s: np.ndarray) -> float:
    """ROC-AUC by the Mann-Whitney rank sum (ties share their mean rank): roc_auc_score's value,
    without its checks, for the many thousands of weightings searched."""
    n1 = int(y.sum())
    n0 = len(y) - n1
    return float((rankdata(s)[y].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


class Objective:
    """Scores a weighting of one rule on all rows: (mean AUC, rows within 0.03, rows < 0.5)."""

    def __init__(self, folds: dict, best: dict, views, rule: str):
        transform, self.reduce = RULES[rule]
        self.views = tuple(views)
        self.best = best
        self.evidence = {row: [(y.astype(bool), np.stack([transform(p[c]) for c in self.views])) for y, p in fs]
                         for row, fs in folds.items()}

    def __call__(self, w: dict) -> tuple[float, int, int, list[float]]:
        wv = np.array([w.get(c, 0.0) for c in self.views])[:, None]
        aucs = []
        for row in ROWS:
            per_fold = []
            for y, e in self.evidence[row]:
                s = (wv * e).sum(0) if self.reduce == "sum" else (wv * e).max(0)
                per_fold.append(fast_auc(y, s))
            aucs.append(float(np.mean(per_fold)))
        within = sum(a >= self.best[r] - 0.03 for a, r in zip(aucs, ROWS))
        return float(np.mean(aucs)), int(within), int(sum(a < 0.5 for a in aucs)), aucs


def grid_search(obj: Objective, grid, key) -> tuple[dict, tuple]:
    best_w, best_t = None, None
    for ws in itertools.product(grid, repeat=len(obj.views)):
        if sum(ws) == 0:
            continue
        w = dict(zip(obj.views, ws))
        t = obj(w)
        if best_t is None or key(t) > key(best_t):
            best_w, best_t = w, t
    return best_w, best_t


def coordinate_ascent(obj: Objective, grid, key, start: dict) -> tuple[dict, tuple]:
    w = {c: start.get(c, 0.0) for c in obj.views}
    cur = obj(w)
    changed = True
    while changed:
        changed = False
        for c in obj.views:
            for g in grid:
                if g == w[c] or sum(w.values()) - w[c] + g == 0:
                    continue
                trial = dict(w, **{c: g})
                t = obj(trial)
                if key(t) > key(cur):
                    w, cur, changed = trial, t, True
    return w, cur


def wide_search(obj: Objective, keys: dict, restarts: int) -> list:
    """The ten-view Fisher family searched wider: an exhaustive coarse grid, then random restarts
    of the coordinate ascent; the best of each for every objective."""
    found = []
    bests = {k: (None, None) for k in keys}
    for ws in itertools.product((0, 1, 3), repeat=len(obj.views)):
        if sum(ws) == 0:
            continue
        w = dict(zip(obj.views, ws))
        t = obj(w)
        for k, key in keys.items():
            if bests[k][1] is None or key(t) > key(bests[k][1]):
                bests[k] = (w, t)
    found += [("fisher-grid-coarse", k, w, t) for k, (w, t) in bests.items()]
    grid = (0, 0.25, 0.5, 1, 2, 4)
    rng = np.random.default_rng(0)
    for k, key in keys.items():
        best_w, best_t = None, None
        for _ in range(restarts):
            start = dict(zip(obj.views, rng.choice(grid, size=len(obj.views))))
            if sum(start.values()) == 0:
                continue
            w, t = coordinate_ascent(obj, grid, key, start)
            if best_t is None or key(t) > key(best_t):
                best_w, best_t = w, t
        found.append(("fisher-restarts", k, best_w, best_t))
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    ap.add_argument("--wide", action="store_true", help="also the coarse exhaustive grid and random restarts")
    ap.add_argument("--restarts", type=int, default=20)
    args = ap.parse_args(argv)
    folds, best = load_rows(ALL_VIEWS)
    keys = {"mean first": lambda t: (t[0], t[1]), "within-0.03 count first": lambda t: (t[1], t[0])}
    found = []
    default = Objective(folds, best, OWN_SCORE_VIEWS, "fisher")
    found.append(("default (not searched)", "-", DEFAULT, default(DEFAULT)))
    for kname, key in keys.items():
        w, t = grid_search(default, (0, 0.5, 1, 2, 4), key)
        found.append(("fisher-grid", kname, w, t))
    for rule in RULES:
        obj = Objective(folds, best, ALL_VIEWS, rule)
        for kname, key in keys.items():
            w, t = coordinate_ascent(obj, (0, 0.25, 0.5, 1, 2, 4), key, DEFAULT)
            found.append((f"{rule}-search", kname, w, t))
        if args.wide and rule == "fisher":
            found += wide_search(obj, keys, args.restarts)
    print(f"best single detector per row, chosen on the labels: mean {np.mean(list(best.values())):.3f}")
    print(f"{'candidate':24s}{'objective':26s}{'mean':>7s}{'within':>8s}{'< 0.5':>7s}  weights")
    for name, kname, w, t in found:
        ws = ", ".join(f"{c} {v:g}" for c, v in w.items() if v)
        print(f"{name:24s}{kname:26s}{t[0]:7.3f}{t[1]:8d}{t[2]:7d}  {ws}")
    if args.json:
        out = {"best_single": best, "found": [
            {"candidate": n, "objective": k, "weights": {c: v for c, v in w.items() if v},
             "mean": t[0], "within_0.03": t[1], "below_half": t[2], "rows": dict(zip(ROWS, t[3]))}
            for n, k, w, t in found]}
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
