"""A few known anomalies: can they tell, per data set, which view to trust?

Usage (worktree root, after dump.py and views.py)::

    python -m research.consensus.known [--k 10] [--draws 5] [--json OUT.json]

A different setting from the rest of the study: the user also has a handful of graphs known to
be anomalous (a chemist's reference actives). Simulated from the per-fold dumps, with every
setting fixed before the first run and the same for every data set:

- per fold, ``k = min(K, floor(a / 2))`` of the fold's a test anomalies are drawn as the *known*
  anomalies (``np.random.default_rng([20223, fold, draw])``, ``--draws`` draws per fold); they
  are removed from the test set, and every AUC (the default's too) is computed on the rest;
- each view c gets ``a_c``, the ROC-AUC of the known anomalies against the calibration graphs
  (held-out normal training graphs) under c's raw score; no test normal is used;
- candidates over the default's views (GLocalKD, graph size, WL-LESINN; ``+G``: graph
  statistics with LESINN as a fourth; ``+W``, measured later: LESINN on the unnormalised WL
  counts of wl_counts.py as a fourth):

  - ``known-select``: the view with the largest a_c alone;
  - ``known-fisher``: Fisher with weights ``w_c = max(0, a_c - 0.5)``
    (``sum_c w_c (-2 log p_c) / sum_c w_c``; equal weights if every w_c is 0);
  - ``+WG`` (measured after ``+W``): both as a fourth and fifth view. Its adoption rule, fixed
    before its first run: graph statistics become a second reserve view only if, at K = 10,
    ``known-fisher+WG`` beats ``known-fisher+W`` by at least two standard errors of the per-row
    differences, and at K = 3, 5 and 10 it loses more than 0.05 against equal weights in no
    more fold/draw pairs than ``known-fisher+W``;
  - ``known-cautious``: the same with ``w_c = max(0, a_c - se_c - 0.5)``, a view trusted only
    as far as its AUC exceeds chance by one standard error (Hanley and McNeil's, from the
    known-anomaly and calibration counts). Measured after the others, with its adoption rule
    fixed before its first run: it replaces ``known-fisher`` only if, at K = 3, 5 and 10, it
    loses more than 0.05 against equal weights in fewer fold/draw pairs, and its mean over the
    rows is lower by less than one standard error of the per-row differences.

The reference is the default (equal-weight Fisher over the three views) on the same reduced
test sets, and the best single view of the row on them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from core.detectors.consensus import leave_one_out_p_values
from research.consensus.combine import ROWS, conformal_p

DUMPS = Path(__file__).resolve().parent / "dumps"
DEFAULT = ("glocalkd", "size", "wl-lesinn")
SINGLES = ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn")


def load(fdir: Path, names) -> dict:
    out = {}
    for c in names:
        p = fdir / f"{c}.npz"
        if p.exists():
            z = np.load(p)
            out[c] = (z["cal"].astype(np.float64), z["test"].astype(np.float64))
    return out


def fisher(comps: dict, names, weights=None) -> np.ndarray:
    logs = {c: -2.0 * np.log(conformal_p(comps[c][0], comps[c][1])) for c in names}
    if weights is None or sum(weights.values()) <= 0:
        return sum(logs.values())
    return sum(weights[c] * logs[c] for c in names) / sum(weights.values())


def recal_flagged(comps: dict, names, weights, normal_test: np.ndarray) -> float:
    """Share of the test normals whose re-calibrated p-value of the weighted Fisher statistic is
    below 0.05 (the calibration graphs' statistics from leave-one-out p-values, as the product)."""
    tw = sum(weights.values())
    w = {c: (weights[c] / tw if tw > 0 else 1.0) for c in names}
    cal_stat = sum(w[c] * -2.0 * np.log(leave_one_out_p_values(comps[c][0])) for c in names)
    test_stat = sum(w[c] * -2.0 * np.log(conformal_p(comps[c][0], comps[c][1][normal_test])) for c in names)
    return float(np.mean(conformal_p(cal_stat, test_stat) < 0.05))


def auc_se(auc: float, n_pos: int, n_neg: int) -> float:
    """Hanley and McNeil's standard error of a ROC-AUC from n_pos anomalies and n_neg normals."""
    q1, q2 = auc / (2.0 - auc), 2.0 * auc * auc / (1.0 + auc)
    var = auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc) + (n_neg - 1) * (q2 - auc * auc)
    return float(np.sqrt(max(var, 0.0) / (n_pos * n_neg)))


def fold_draw(fdir: Path, fold: int, draw: int, K: int) -> dict | None:
    y = np.load(fdir / "meta.npz")["y_test"].astype(int)
    comps = load(fdir, SINGLES + ("gstats-lesinn", "wl-count-lesinn"))
    anom = np.flatnonzero(y == 1)
    k = min(K, len(anom) // 2)
    if k < 1:
        return None
    known = np.random.default_rng([20223, fold, draw]).choice(anom, size=k, replace=False)
    keep = np.setdiff1d(np.arange(len(y)), known)
    yk = y[keep]
    res = {}
    for c in comps:
        res[f"single:{c}"] = roc_auc_score(yk, comps[c][1][keep])
    for tag, names in (("", DEFAULT), ("+G", DEFAULT + ("gstats-lesinn",)), ("+W", DEFAULT + ("wl-count-lesinn",)),
                       ("+WG", DEFAULT + ("wl-count-lesinn", "gstats-lesinn"))):
        a = {c: roc_auc_score(np.r_[np.zeros(len(comps[c][0])), np.ones(k)],
                              np.r_[comps[c][0], comps[c][1][known]]) for c in names}
        w = {c: max(0.0, a[c] - 0.5) for c in names}
        best = max(names, key=lambda c: a[c])
        res[f"known-select{tag}"] = roc_auc_score(yk, comps[best][1][keep])
        res[f"known-fisher{tag}"] = roc_auc_score(yk, fisher(comps, names, w)[keep])
        if not tag:
            wc = {c: max(0.0, a[c] - auc_se(a[c], k, len(comps[c][0])) - 0.5) for c in names}
            res["known-cautious"] = roc_auc_score(yk, fisher(comps, names, wc)[keep])
        res[f"fisher{tag}"] = roc_auc_score(yk, fisher(comps, names)[keep])
        res[f"flagged:known-fisher{tag}"] = recal_flagged(comps, names, w, np.flatnonzero(y == 0))
        res[f"flagged:fisher{tag}"] = recal_flagged(comps, names, {c: 1.0 for c in names}, np.flatnonzero(y == 0))
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    table = {}
    losses: dict[str, list[bool]] = {}
    for row in ROWS:
        acc: dict[str, list[float]] = {}
        for fdir in sorted((DUMPS / row).glob("fold*")):
            fold = int(fdir.name[4:])
            for draw in range(args.draws):
                r = fold_draw(fdir, fold, draw, args.k)
                for key, v in (r or {}).items():
                    acc.setdefault(key, []).append(v)
                for key in ("known-fisher", "known-cautious", "known-fisher+W", "known-fisher+WG"):
                    if r:
                        losses.setdefault(key, []).append(r[key] < r["fisher"] - 0.05)
        table[row] = {key: float(np.mean(v)) for key, v in acc.items()}
    cands = ["fisher", "known-select", "known-fisher", "known-cautious", "fisher+G", "known-select+G",
             "known-fisher+G", "fisher+W", "known-select+W", "known-fisher+W",
             "known-fisher+WG"]
    print("row".ljust(28) + "".join(c.rjust(15) for c in cands) + "best single".rjust(13))
    diffs = {c: [] for c in cands}
    within = {c: 0 for c in cands}
    below = {c: 0 for c in cands}
    for row, r in table.items():
        best = max(r[f"single:{c}"] for c in SINGLES if f"single:{c}" in r)
        for c in cands:
            diffs[c].append(r[c] - r["fisher"])
            within[c] += r[c] >= best - 0.03
            below[c] += r[c] < 0.5
        print(row[:27].ljust(28) + "".join(f"{r[c]:15.3f}" for c in cands) + f"{best:13.3f}")
    print("mean".ljust(28) + "".join(f"{np.mean([r[c] for r in table.values()]):15.3f}" for c in cands)
          + f"{np.mean([max(r[f'single:{c}'] for c in SINGLES if f'single:{c}' in r) for r in table.values()]):13.3f}")
    print("gain over default (SE)".ljust(28) + "".join(
        f"{np.mean(diffs[c]):+8.3f} ({np.std(diffs[c], ddof=1) / np.sqrt(len(diffs[c])):.3f})" for c in cands))
    print("within 0.03 of best single".ljust(28) + "".join(f"{within[c]:15d}" for c in cands))
    print("rows below 0.5".ljust(28) + "".join(f"{below[c]:15d}" for c in cands))
    print("test normals p < 0.05".ljust(28) + "".join(
        f"{np.mean([r[f'flagged:{c}'] for r in table.values()]):15.3f}" if f"flagged:{c}" in table["AIDS"] else " " * 15
        for c in cands))
    for key, v in losses.items():
        print(f"{key}: loses more than 0.05 against equal weights in {np.mean(v):.3f} of {len(v)} fold/draw pairs")
    if args.json:
        Path(args.json).write_text(json.dumps({"k": args.k, "draws": args.draws, "rows": table}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
