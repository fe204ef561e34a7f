"""Consensus candidates with the graph-statistics and node-label views (views.py) beside the
dumped components (dump.py): ROC-AUC per row, calibration of the re-calibrated Fisher p-value.

Usage (worktree root)::

    python -m research.consensus.combine_views [--json docs/results/consensus/views.json]

The candidate list below was written before any combination was computed and is the same for
every data set. A view a row does not have (labels-lesinn on plain graphs) is left out of that
row's combination, as a product would do. Every p-value is the conformal one against the
fold's calibration graphs (combine.conformal_p); Fisher = -2 sum log p; its calibration is the
full-conformal re-calibration of combine.py (the product's).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

from research.consensus.combine import (ALPHA, DUMPS, ROWS, auc, cal_loo_p, combine_stat, conformal_p,  # noqa: E402
                     reference_best, stat_to_p)

OLD = ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn")
NEW = ("gstats-if", "gstats-lesinn", "struct-if", "struct-lesinn", "labels-lesinn")
G, SZ, WL, PK = "glocalkd", "size", "wl-lesinn", "pk-lesinn"
S3 = (G, SZ, WL)
SETS = {
    "S3": S3,
    "S3+gstats-if": S3 + ("gstats-if",),
    "S3+gstats-lesinn": S3 + ("gstats-lesinn",),
    "S3+struct-if": S3 + ("struct-if",),
    "S3+struct-lesinn": S3 + ("struct-lesinn",),
    "S3+labels-lesinn": S3 + ("labels-lesinn",),
    "S3+gstats-if+labels-lesinn": S3 + ("gstats-if", "labels-lesinn"),
    "S3+gstats-lesinn+labels-lesinn": S3 + ("gstats-lesinn", "labels-lesinn"),
    "G+WL+gstats-if": (G, WL, "gstats-if"),
    "G+WL+gstats-lesinn": (G, WL, "gstats-lesinn"),
    "G+WL+struct-if": (G, WL, "struct-if"),
    "G+WL+struct-lesinn": (G, WL, "struct-lesinn"),
    "G+WL+gstats-if+labels-lesinn": (G, WL, "gstats-if", "labels-lesinn"),
    "G+WL+gstats-lesinn+labels-lesinn": (G, WL, "gstats-lesinn", "labels-lesinn"),
    "S4+gstats-if": S3 + (PK, "gstats-if"),
    "S4+gstats-lesinn": S3 + (PK, "gstats-lesinn"),
}
# Second batch, written after the first table (the Fisher sets above) was seen: weights from
# the dependence of the components on the calibration graphs (no labels), and the Cauchy rule.
DECOR_SETS = ("S3", "S3+gstats-lesinn", "S4+gstats-lesinn")
CAUCHY_SETS = ("S3+gstats-lesinn", "S4+gstats-lesinn")
REQUIRED = ("glocalkd", "size", "wl-lesinn", "pk-lesinn") + NEW[:4]


def load_fold(fdir: Path) -> dict:
    meta = np.load(fdir / "meta.npz")
    comps = {}
    for c in OLD + NEW:
        p = fdir / f"{c}.npz"
        if p.exists():
            z = np.load(p)
            comps[c] = (z["cal"], z["test"])
    return {"y": meta["y_test"].astype(int), "comps": comps, "n_cal": int(meta["n_cal"])}


def fold_results(fold: dict) -> tuple[dict, dict]:
    y, comps = fold["y"], fold["comps"]
    normal = y == 0
    aucs, calib = {}, {}
    n_cal = fold["n_cal"]
    calib["expected (conformal, n_cal)"] = (math.ceil(ALPHA * (n_cal + 1)) - 1) / (n_cal + 1)
    pv = {}
    for c, (cal, test) in comps.items():
        aucs[c] = auc(y, test)
        pv[c] = conformal_p(cal, test)
        calib[c] = float(np.mean(pv[c][normal] < ALPHA))
    for name, members in SETS.items():
        members = [m for m in members if m in comps]
        P = np.stack([pv[m] for m in members], axis=1)
        t = combine_stat(P, "fisher")
        key = f"fisher/{name}"
        aucs[key] = auc(y, t)
        calib[key + " chi2"] = float(np.mean(stat_to_p(t, "fisher", len(members))[normal] < ALPHA))
        Pc = np.stack([cal_loo_p(comps[m][0], comps[m][1], False) for m in members], axis=2)
        Tc = combine_stat(Pc, "fisher")
        p_rec = (1.0 + (Tc >= t[:, None]).sum(axis=1)) / (Tc.shape[1] + 1.0)
        calib[key + " recal"] = float(np.mean(p_rec[normal] < ALPHA))
    for name in DECOR_SETS:
        members = [m for m in SETS[name] if m in comps]
        w = decor_weights([comps[m][0] for m in members])
        P = np.stack([pv[m] for m in members], axis=1)
        t = -2.0 * np.log(P) @ w
        key = f"wfisher-decor/{name}"
        aucs[key] = auc(y, t)
        Pc = np.stack([cal_loo_p(comps[m][0], comps[m][1], False) for m in members], axis=2)
        Tc = -2.0 * np.log(Pc) @ w
        p_rec = (1.0 + (Tc >= t[:, None]).sum(axis=1)) / (Tc.shape[1] + 1.0)
        calib[key + " recal"] = float(np.mean(p_rec[normal] < ALPHA))
        for i, m in enumerate(members):
            aucs[f"{key} weight {m}"] = float(w[i])  # not an AUC: the weights, for the record
    for name in CAUCHY_SETS:
        members = [m for m in SETS[name] if m in comps]
        P = np.stack([pv[m] for m in members], axis=1)
        t = combine_stat(P, "acat")
        key = f"cauchy/{name}"
        aucs[key] = auc(y, t)
        Pc = np.stack([cal_loo_p(comps[m][0], comps[m][1], False) for m in members], axis=2)
        Tc = combine_stat(Pc, "acat")
        p_rec = (1.0 + (Tc >= t[:, None]).sum(axis=1)) / (Tc.shape[1] + 1.0)
        calib[key + " recal"] = float(np.mean(p_rec[normal] < ALPHA))
    return aucs, calib


def decor_weights(cals: list[np.ndarray]) -> np.ndarray:
    """Generalised-least-squares weights of the components' -2 log p on the calibration graphs
    (leave-one-out conformal p-values among them): w = R^-1 1 for their correlation R, negative
    weights set to 0, scaled to sum to the number of components. Independent components get
    equal weights (Fisher); two that say the same thing share one weight."""
    n = len(cals[0])
    X = np.stack([-2.0 * np.log((1.0 + (n - np.searchsorted(np.sort(c), c, side="left") - 1)) / n) for c in cals], 1)
    R = np.corrcoef(X, rowvar=False)
    R = np.nan_to_num(R, nan=0.0)
    np.fill_diagonal(R, 1.0)
    w = np.linalg.solve(R + 1e-9 * np.eye(len(cals)), np.ones(len(cals)))
    w = np.maximum(w, 0.0)
    if w.sum() <= 0:
        w = np.ones(len(cals))
    return w * len(cals) / w.sum()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    per_row = {}
    for row in ROWS:
        fres = []
        for fdir in sorted((DUMPS / row).glob("fold*"), key=lambda p: int(p.name[4:])):
            if not (fdir / "meta.npz").exists():
                continue
            f = load_fold(fdir)
            if not all(c in f["comps"] for c in REQUIRED):
                continue
            a, cb = fold_results(f)
            fres.append((fdir.name, a, cb))
        if not fres:
            continue
        names = sorted(set.intersection(*(set(a) for _, a, _ in fres)))
        cnames = sorted(set.intersection(*(set(c) for _, _, c in fres)))
        per_row[row] = {"folds": [n for n, _, _ in fres],
                        "auc": {n: [a[n] for _, a, _ in fres] for n in names},
                        "calib": {n: [c[n] for _, _, c in fres] for n in cnames},
                        "reference": reference_best(row)}
    rows = list(per_row)
    mean = lambda r, n: float(np.mean(per_row[r]["auc"][n])) if n in per_row[r]["auc"] else np.nan  # noqa: E731
    best_old = np.array([max(mean(r, s) for s in OLD if s in per_row[r]["auc"]) for r in rows])
    best_all = np.array([max(mean(r, s) for s in OLD + NEW if s in per_row[r]["auc"]) for r in rows])
    ref = np.array([(per_row[r]["reference"] or (np.nan,))[0] for r in rows])
    cands = sorted({n for r in rows for n in per_row[r]["auc"] if " weight " not in n})
    summary = {}
    for n in cands:
        m = np.array([mean(r, n) for r in rows])
        ok = ~np.isnan(m)
        summary[n] = {"rows": int(ok.sum()), "mean": float(np.nanmean(m)), "below_half": int(np.sum(m[ok] < 0.5)),
                      "within_best_old": int(np.sum(m[ok] >= best_old[ok] - 0.03)),
                      "within_best_all": int(np.sum(m[ok] >= best_all[ok] - 0.03)),
                      "within_table": int(np.nansum(m[ok] >= ref[ok] - 0.03)), "min": float(np.nanmin(m))}
    singles = [s for s in OLD + NEW if s in summary and summary[s]["rows"] == len(rows)]
    min_below = min(summary[s]["below_half"] for s in singles)
    print(f"rows: {len(rows)} " + ", ".join(f"{r} [{len(per_row[r]['folds'])}]" for r in rows))
    print(f"fewest rows below 0.5 of a single detector on every row: {min_below}")
    print("| candidate | rows | mean | min | <0.5 | within 0.03 (best of old singles) | (best of all singles) "
          "| (best in docs/results) | recal calib |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, v in sorted(summary.items(), key=lambda kv: -kv[1]["mean"]):
        cal = [np.mean(per_row[r]["calib"][n + " recal"]) for r in rows if n + " recal" in per_row[r]["calib"]]
        cal = [np.mean(per_row[r]["calib"][n]) for r in rows if n in per_row[r]["calib"]] if not cal else cal
        print(f"| {n} | {v['rows']} | {v['mean']:.3f} | {v['min']:.3f} | {v['below_half']} | {v['within_best_old']} "
              f"| {v['within_best_all']} | {v['within_table']} | {np.mean(cal):.3f} |" if cal else "|")
    show = (["glocalkd", "size", "wl-lesinn", "pk-lesinn"] + list(NEW) + ["fisher/" + s for s in SETS]
            + ["wfisher-decor/" + s for s in DECOR_SETS] + ["cauchy/" + s for s in CAUCHY_SETS])
    print()
    print("| row [folds] | best old single | " + " | ".join(show) + " |")
    print("|---|---|" + "---|" * len(show))
    for i, r in enumerate(rows):
        print(f"| {r} [{len(per_row[r]['folds'])}] | {best_old[i]:.3f} | "
              + " | ".join("—" if np.isnan(mean(r, n)) else f"{mean(r, n):.3f}" for n in show) + " |")
    if args.json:  # compact: fold AUCs (and the decor weights) rounded, calibration as means
        keep_cal = lambda k: k.endswith("recal") or k in NEW or k.startswith("expected")  # noqa: E731
        Path(args.json).write_text(json.dumps({
            "about": "research/consensus/combine_views.py over the dumps of dump.py and views.py",
            "rows": rows, "folds": {r: per_row[r]["folds"] for r in rows},
            "candidate_sets": SETS, "decor_sets": DECOR_SETS, "cauchy_sets": CAUCHY_SETS,
            "fewest_rows_below_half_of_a_single": min_below, "summary": summary,
            "reference": {r: per_row[r]["reference"] for r in rows},
            "auc_folds": {r: {k: [round(x, 4) for x in v] for k, v in per_row[r]["auc"].items()} for r in rows},
            "calib_mean": {r: {k: round(float(np.mean(v)), 4) for k, v in per_row[r]["calib"].items() if keep_cal(k)}
                           for r in rows}}, indent=0) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
