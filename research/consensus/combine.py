"""Consensus candidates from the per-fold dumps of dump.py: conformal p-values, their
combinations, MUSE-style one-class scoring of GLocalKD's error summaries; ROC-AUC per row and
calibration of the p-values on held-out normal graphs.

Usage (worktree root)::

    python -m research.consensus.combine [--json OUT.json] [--markdown OUT.md]

Every rule below is the same for every data set and uses only the fit and calibration graphs
(normal training graphs) of a fold; test labels are read only to compute ROC-AUC and the
calibration fractions.

Conformal p-value of a score s against calibration scores a_1..a_n (higher = more anomalous):
``p = (1 + #{a_i >= s}) / (n + 1)``. Its "tail" variant keeps that inside the bulk and, above
the (k+1)-th largest calibration score u (k = max(5, ceil(n / 10))), replaces the step function
by the exponential tail fitted to the k exceedances (mean excess beta):
``p = (k + 1) / (n + 1) * exp(-(s - u) / beta)``, so graphs beyond every calibration graph
keep an order instead of all tying at 1 / (n + 1). It changes nothing at p >= (k + 1)/(n + 1)
(at least 0.1, so not the p < 0.05 decisions when n >= 10... only the ordering in the tail).

Combinations of m p-values: Fisher (chi2 with 2m d.o.f. of -2 sum log p), Cauchy / ACAT
(mean of tan((0.5 - p) pi), equal weights), min-p with Bonferroni (m min p). Re-calibration
("recal"): the combined statistic T of a test graph is ranked among the combined statistics of
the calibration graphs, each computed from full-conformal component p-values against the other
calibration graphs plus the test graph, which makes the n + 1 statistics exchangeable under
the null, so ``(1 + #{T_j >= T}) / (n + 1)`` is a valid conformal p-value whatever the
dependence between the components.

The formulas the product has are core's own: conformal p-values
(:func:`core.data.pvalues.conformal_p_values`), leave-one-out p-values and the Fisher and min-p
statistics (:mod:`core.detectors.consensus`). What is left here is what only the study needs:
the tail variant, ACAT's numerical form (see :func:`combine_stat`), Stouffer, each
combination's own p-value and the MUSE-style candidates.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.covariance import LedoitWolf
from sklearn.ensemble import IsolationForest
from sklearn.metrics import roc_auc_score

from core.data.pvalues import conformal_p_values
from core.detectors.consensus import combine_p_values, leave_one_out_p_values

HERE = Path(__file__).resolve().parent
DUMPS = HERE / "dumps"
REPO = HERE.parent.parent
ROWS = ["AIDS", "BZR", "BZR__first-label", "DHFR", "DHFR__first-label", "ENZYMES", "hERG", "IMDB-BINARY",
        "PROTEINS_full", "PROTEINS_full__first-label", "NCI1", "Tox21_HSE", "Tox21_p53", "REDDIT-BINARY"]
BASE = ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn")
ALPHA = 0.05
CACHE_VERSION = 1  # bump when a candidate's definition changes


# ---------------------------------------------------------------------------- p-values
def conformal_p(cal: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The product's conformal p-value of scores ``s`` against calibration scores ``cal``."""
    return conformal_p_values(cal, s)


def loo_counts(cal: np.ndarray) -> np.ndarray:
    """#{i != j: cal_i >= cal_j} for every calibration score j (from the product's leave-one-out p-value)."""
    return np.rint(leave_one_out_p_values(cal) * len(cal) - 1.0).astype(np.int64)


def tail_model(cal: np.ndarray):
    cal = np.asarray(cal, dtype=np.float64)
    n = len(cal)
    k = min(max(5, math.ceil(n / 10)), n - 1)
    desc = np.sort(cal)[::-1]
    u = desc[k]
    beta = float(np.mean(desc[:k] - u))
    if not beta > 0:
        beta = max(abs(u), 1.0) * 1e-6
    return n, k, u, beta


def tail_p(cal: np.ndarray, s: np.ndarray, model=None) -> np.ndarray:
    n, k, u, beta = model or tail_model(cal)
    p = conformal_p(cal, s)
    above = s > u
    p[above] = (k + 1.0) / (n + 1.0) * np.exp(-(s[above] - u) / beta)
    return np.clip(p, 1e-300, 1.0)


def cal_loo_p(cal: np.ndarray, test: np.ndarray, tail: bool) -> np.ndarray:
    """(m, n): component p-value of calibration graph j computed against the other calibration
    graphs plus test graph x (full conformal), for every test graph x (rows)."""
    n = len(cal)
    cnt = loo_counts(cal)[None, :] + (test[:, None] >= cal[None, :])
    p = (1.0 + cnt) / (n + 1.0)
    if tail:
        n_, k, u, beta = tail_model(cal)
        above = cal > u
        p[:, above] = (k + 1.0) / (n + 1.0) * np.exp(-(cal[above] - u) / beta)
    return np.clip(p, 1e-300, 1.0)


# the study's rule names -> the product's (core.detectors.consensus.RULES)
PRODUCT_RULES = {"fisher": "fisher", "minp": "minp"}


def combine_stat(p: np.ndarray, rule: str) -> np.ndarray:
    """Combined statistic along the last axis, larger = more anomalous.

    Fisher and min-p are the product's (:func:`core.detectors.consensus.combine_p_values`).
    Stouffer is not in the product. ACAT is the study's own form, ``1 / tan(p pi)``: the
    product's ``cauchy`` rule, ``tan((0.5 - p) pi)``, is the same function but ends at
    -1.6e16 where p = 1 (this form at -3.2e14), which changes ties among graphs that one view
    calls wholly normal; the study's recorded ACAT figures come from this form."""
    p = np.asarray(p, dtype=np.float64)
    if rule == "stouffer":
        return probit(p).sum(axis=-1) / np.sqrt(p.shape[-1])
    if rule == "acat":
        # tan((0.5 - p) pi) = 1 / tan(p pi); for tiny p use 1 / (p pi) to avoid overflow
        t = np.where(p < 1e-15, 1.0 / (p * np.pi), 1.0 / np.tan(np.pi * np.minimum(p, 1 - 1e-15)))
        return t.mean(axis=-1)
    if rule not in PRODUCT_RULES:
        raise ValueError(rule)
    flat = combine_p_values(p.reshape(-1, p.shape[-1]), PRODUCT_RULES[rule])
    return flat.reshape(p.shape[:-1])


def stat_to_p(t: np.ndarray, rule: str, m: int) -> np.ndarray:
    """The combination's own (independence / Cauchy-tail / Bonferroni) p-value."""
    if rule == "fisher":
        return stats.chi2.sf(t, 2 * m)
    if rule == "acat":
        return 0.5 - np.arctan(t) / np.pi
    if rule == "minp":  # the product's statistic is -log(min p)
        return np.minimum(1.0, m * np.exp(-t))
    if rule == "stouffer":
        return stats.norm.sf(t)
    raise ValueError(rule)


# ---------------------------------------------------------------------------- MUSE-style
def muse_transform(feat: np.ndarray) -> np.ndarray:
    """log of the 7 error summaries (positive, heavy-tailed) and the 2 log sizes as they are."""
    f = np.array(feat, dtype=np.float64)
    f[:, :7] = np.log(np.maximum(f[:, :7], 1e-12))
    return f


def maha_fit(X: np.ndarray):
    mu, sd = X.mean(0), X.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    lw = LedoitWolf().fit((X - mu) / sd)
    return mu, sd, lw


def maha_score(model, X: np.ndarray) -> np.ndarray:
    mu, sd, lw = model
    return lw.mahalanobis((X - mu) / sd)


def muse_components(g: dict) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per MUSE variant: (calibration scores usable for conformal p-values, test scores)."""
    Ff, Fc, Ft = (muse_transform(g[f"feat_{s}"]) for s in ("fit", "cal", "test"))
    out = {}
    # (1) Ledoit-Wolf Mahalanobis fitted on the calibration graphs' summaries (errors of graphs
    # the model never trained on); calibration scores by leave-one-out refits (jackknife).
    model = maha_fit(Fc)
    loo = np.array([maha_score(maha_fit(np.delete(Fc, j, 0)), Fc[j:j + 1])[0] for j in range(len(Fc))])
    out["muse-lw-cal"] = (loo, maha_score(model, Ft))
    # (2) the same fitted on the fit graphs' summaries (training errors), calibrated on cal.
    mf = maha_fit(Ff)
    out["muse-lw-fit"] = (maha_score(mf, Fc), maha_score(mf, Ft))
    # (3) IsolationForest on the calibration summaries; cal scores by 5-fold cross-fitting.
    ifo = IsolationForest(n_estimators=200, random_state=0).fit(Fc)
    cal_if = np.zeros(len(Fc))
    folds = np.arange(len(Fc)) % 5
    for f in range(5):
        tr, te = folds != f, folds == f
        if te.any():
            cal_if[te] = -IsolationForest(n_estimators=200, random_state=0).fit(Fc[tr]).score_samples(Fc[te])
    out["muse-if-cal"] = (cal_if, -ifo.score_samples(Ft))
    # (4) error summaries only (no size columns), LW on cal: what GLocalKD's errors add beyond size.
    Fc7, Ft7 = Fc[:, :7], Ft[:, :7]
    m7 = maha_fit(Fc7)
    loo7 = np.array([maha_score(maha_fit(np.delete(Fc7, j, 0)), Fc7[j:j + 1])[0] for j in range(len(Fc7))])
    out["muse-lw-cal-errors"] = (loo7, maha_score(m7, Ft7))
    return out


def stacked_component(fold: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """One joint one-class model over every view: the MUSE summaries plus log WL-LESINN and
    log PK-LESINN scores, Ledoit-Wolf Mahalanobis on the calibration graphs (LOO for them)."""
    c = fold["comps"]
    if "glocalkd" not in fold or not all(k in c for k in ("wl-lesinn", "pk-lesinn")):
        return None
    g = fold["glocalkd"]
    Fc, Ft = muse_transform(g["feat_cal"]), muse_transform(g["feat_test"])
    extra_c = np.log(np.maximum(np.stack([c["wl-lesinn"][0], c["pk-lesinn"][0]], 1), 1e-12))
    extra_t = np.log(np.maximum(np.stack([c["wl-lesinn"][1], c["pk-lesinn"][1]], 1), 1e-12))
    Xc, Xt = np.hstack([Fc, extra_c]), np.hstack([Ft, extra_t])
    loo = np.array([maha_score(maha_fit(np.delete(Xc, j, 0)), Xc[j:j + 1])[0] for j in range(len(Xc))])
    return loo, maha_score(maha_fit(Xc), Xt)


# ---------------------------------------------------------------------------- per fold
def load_fold(fdir: Path) -> dict | None:
    meta = np.load(fdir / "meta.npz")
    fold = {"y": meta["y_test"].astype(int), "comps": {}, "n_cal": int(meta["n_cal"])}
    for c in BASE:
        p = fdir / f"{c}.npz"
        if p.exists():
            z = np.load(p)
            fold["comps"][c] = (z["cal"], z["test"])
            if c == "glocalkd":
                fold["glocalkd"] = {k: z[k] for k in ("feat_fit", "feat_cal", "feat_test")}
    return fold


def auc(y, s) -> float:
    return float(roc_auc_score(y, s))


def fold_results(fold: dict) -> tuple[dict, dict]:
    """(AUC per candidate, fraction of test normals with p < ALPHA per p-valued candidate)."""
    y = fold["y"]
    normal = y == 0
    comps = dict(fold["comps"])
    if "glocalkd" in fold:
        comps.update(muse_components(fold["glocalkd"]))
        st = stacked_component(fold)
        if st is not None:
            comps["stack-lw-cal"] = st
    aucs, calib = {}, {}
    n_cal = fold["n_cal"]
    # what an exact conformal p-value gives: P(p < ALPHA) = (ceil(ALPHA (n+1)) - 1) / (n + 1)
    calib["expected (conformal, n_cal)"] = (math.ceil(ALPHA * (n_cal + 1)) - 1) / (n_cal + 1)
    pv = {"conf": {}, "tail": {}}
    for c, (cal, test) in comps.items():
        aucs[c] = auc(y, test)
        pv["conf"][c] = conformal_p(cal, test)
        pv["tail"][c] = tail_p(cal, test)
        calib[c] = float(np.mean(pv["conf"][c][normal] < ALPHA))
        aucs[f"{c} [conformal p]"] = auc(y, -pv["conf"][c])
        aucs[f"{c} [tail p]"] = auc(y, -pv["tail"][c])
    subsets = {
        "S3": ("glocalkd", "size", "wl-lesinn"),
        "S4": ("glocalkd", "size", "wl-lesinn", "pk-lesinn"),
        "S5": ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn"),
        "M3": ("muse-lw-cal", "size", "wl-lesinn"),
        "M4": ("muse-lw-cal", "size", "wl-lesinn", "pk-lesinn"),
        "M4e": ("muse-lw-cal-errors", "size", "wl-lesinn", "pk-lesinn"),
        "K2": ("size", "wl-lesinn"),
        "K3": ("size", "wl-lesinn", "pk-lesinn"),
    }
    for sname, members in subsets.items():
        if not all(m in comps for m in members):
            continue
        for kind in ("conf", "tail"):
            P = np.stack([pv[kind][m] for m in members], axis=1)
            for rule in ("fisher", "acat", "minp", "stouffer"):
                name = f"{rule}/{kind}/{sname}"
                t = combine_stat(P, rule)
                aucs[name] = auc(y, t)
                calib[name] = float(np.mean(stat_to_p(t, rule, len(members))[normal] < ALPHA))
                if rule == "minp":
                    continue  # recalibration: done for Fisher and ACAT (min-p is Bonferroni-valid already)
                # full-conformal re-calibration of the combined statistic
                Pc = np.stack([cal_loo_p(comps[m][0], comps[m][1], kind == "tail") for m in members], axis=2)
                Tc = combine_stat(Pc, rule)  # (m_test, n_cal)
                n = Tc.shape[1]
                p_rec = (1.0 + (Tc >= t[:, None]).sum(axis=1)) / (n + 1.0)
                calib[name + " recal"] = float(np.mean(p_rec[normal] < ALPHA))
    transductive(y, comps, pv, subsets, aucs, calib)
    return aucs, calib


def batch_auc(cal: np.ndarray, test: np.ndarray) -> float:
    """ROC-AUC of the unlabelled test batch against the calibration (normal) graphs. With a
    share pi of anomalies in the batch and normal test graphs exchangeable with the calibration
    graphs, its expectation is 0.5 + pi (AUC - 0.5), AUC being the component's anomaly-vs-normal
    ROC-AUC: the same increasing function of AUC for every component of one batch."""
    return float(roc_auc_score(np.r_[np.zeros(len(cal)), np.ones(len(test))], np.r_[cal, test]))


def probit(p: np.ndarray) -> np.ndarray:
    return stats.norm.isf(np.clip(p, 1e-300, 1 - 1e-12))


def transductive(y, comps, pv, subsets, aucs, calib) -> None:
    """Candidates that look at the UNLABELLED test batch (never its labels): each component's
    batch AUC against the calibration graphs estimates its own ROC-AUC ordering (batch_auc)."""
    normal = y == 0
    sets = {"S4": subsets["S4"], "S5": subsets["S5"], "S4M": subsets["S4"] + ("muse-lw-cal",)}
    for sname, members in sets.items():
        if not all(m in comps for m in members):
            continue
        a_hat = np.array([batch_auc(*comps[m]) for m in members])
        # (1) select: the component with the largest batch AUC, its own scores
        j = int(np.argmax(a_hat))
        aucs[f"T-select/{sname}"] = auc(y, comps[members[j]][1])
        calib[f"T-select/{sname}"] = float(np.mean(pv["conf"][members[j]][normal] < ALPHA))
        # (2) select with sign: the largest |batch AUC - 0.5|; below 0.5 the component is read
        # the other way round (low scores anomalous)
        j = int(np.argmax(np.abs(a_hat - 0.5)))
        sign = 1.0 if a_hat[j] >= 0.5 else -1.0
        aucs[f"T-select+-/{sname}"] = auc(y, sign * comps[members[j]][1])
        # (3) weighted Stouffer over probit(1 - p) with weights max(0, batch AUC - 0.5)
        for kind in ("conf", "tail"):
            w = np.maximum(0.0, a_hat - 0.5)
            if w.sum() <= 0:
                w = np.ones_like(w)
            Z = np.stack([probit(pv[kind][m]) for m in members], axis=1)
            t = Z @ w / np.sqrt((w ** 2).sum())
            name = f"T-stouffer/{kind}/{sname}"
            aucs[name] = auc(y, t)
            calib[name] = float(np.mean(stats.norm.sf(t)[normal] < ALPHA))
            # re-calibration of the weighted statistic on the calibration graphs (weights fixed)
            Pc = np.stack([cal_loo_p(comps[m][0], comps[m][1], kind == "tail") for m in members], axis=2)
            Tc = probit(Pc) @ w / np.sqrt((w ** 2).sum())
            p_rec = (1.0 + (Tc >= t[:, None]).sum(axis=1)) / (Tc.shape[1] + 1.0)
            calib[name + " recal"] = float(np.mean(p_rec[normal] < ALPHA))
            # (4) the same with signs: weights a_hat - 0.5, negative ones reading the component
            # the other way round (p of the lower tail)
            wd = a_hat - 0.5
            Zs = []
            for i, m in enumerate(members):
                cal, test = comps[m]
                if wd[i] >= 0:
                    Zs.append(Z[:, i])
                else:
                    p_low = conformal_p(-cal, -test) if kind == "conf" else tail_p(-cal, -test)
                    Zs.append(probit(p_low))
            wa = np.abs(wd) if np.abs(wd).sum() > 0 else np.ones_like(wd)
            t2 = np.stack(Zs, axis=1) @ wa / np.sqrt((wa ** 2).sum())
            aucs[f"T-stouffer+-/{kind}/{sname}"] = auc(y, t2)
            calib[f"T-stouffer+-/{kind}/{sname}"] = float(np.mean(stats.norm.sf(t2)[normal] < ALPHA))


# ---------------------------------------------------------------------------- reference table
def reference_best(row: str) -> tuple[float, str] | None:
    """The best mean ROC-AUC of a single method in docs/results (the competitor table, plus
    GLocalKD at product defaults), and its name."""
    base, suf = (row.split("__", 1) + [""])[:2]
    suf = f"__{suf}" if suf else ""
    res = REPO / "docs" / "results"
    vals = {}
    try:
        vals["glocalkd (paper settings)"] = json.loads((res / f"{row}.json").read_text())["summary"]["auc"]["mean"]
        d = res / "candidates" / f"{base}{suf}__defaults.json"
        if d.exists():
            vals["glocalkd (defaults)"] = json.loads(d.read_text())["summary"]["auc"]["mean"]
        for m in ("ocgcn", "wl-iforest", "wl-lesinn", "pk-iforest", "pk-lesinn", "size"):
            vals[m] = json.loads((res / "methods" / f"{base}__{m}{suf}.json").read_text())["summary"]["auc"]["mean"]
    except FileNotFoundError:
        return None
    best = max(vals, key=vals.get)
    return vals[best], best


# ---------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--markdown", default=None)
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--no-cache", action="store_true", help="recompute every fold (else per-fold results "
                    "are cached beside the dumps and recomputed when a dump is newer)")
    args = ap.parse_args(argv)
    rows = [r for r in args.rows.split(",") if (DUMPS / r).exists()]
    per_row: dict[str, dict] = {}
    for row in rows:
        folds = sorted((DUMPS / row).glob("fold*"), key=lambda p: int(p.name[4:]))
        fres = []
        for fdir in folds:
            if not (fdir / "meta.npz").exists():
                continue
            cache = fdir / "combine_cache.json"
            newest = max(p.stat().st_mtime for p in fdir.glob("*.npz"))
            if cache.exists() and cache.stat().st_mtime > newest and not args.no_cache:
                c = json.loads(cache.read_text())
                if c.get("version") == CACHE_VERSION:
                    fres.append((fdir.name, c["aucs"], c["calib"]))
                    continue
            f = load_fold(fdir)
            if not all(c in f["comps"] for c in ("glocalkd", "size", "wl-lesinn", "pk-lesinn")):
                continue  # an unfinished fold
            a, cb = fold_results(f)
            cache.write_text(json.dumps({"version": CACHE_VERSION, "aucs": a, "calib": cb}))
            fres.append((fdir.name, a, cb))
        if not fres:
            continue
        names = sorted(set.intersection(*(set(a) for _, a, _ in fres)))
        cnames = sorted(set.intersection(*(set(c) for _, _, c in fres)))
        per_row[row] = {
            "folds": [n for n, _, _ in fres],
            "auc": {n: [a[n] for _, a, _ in fres] for n in names},
            "calib": {n: [c[n] for _, _, c in fres] for n in cnames},
            "reference": reference_best(row),
        }
    summary = summarise(per_row)
    text = render(per_row, summary)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"per_row": per_row, "summary": summary}, indent=1))
    return 0


SINGLES = ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn")


def summarise(per_row: dict) -> dict:
    rows = list(per_row)
    allnames = sorted(set.intersection(*(set(per_row[r]["auc"]) for r in rows))) if rows else []
    out = {}
    for n in allnames:
        means = np.array([np.mean(per_row[r]["auc"][n]) for r in rows])
        best_dump = np.array([max(np.mean(per_row[r]["auc"][s]) for s in SINGLES if s in per_row[r]["auc"])
                              for r in rows])
        ref = np.array([(per_row[r]["reference"] or (np.nan,))[0] for r in rows])
        out[n] = {"mean": float(means.mean()), "within_dump": int(np.sum(means >= best_dump - 0.03)),
                  "within_table": int(np.nansum(means >= ref - 0.03)), "below_half": int(np.sum(means < 0.5)),
                  "min": float(means.min())}
    return {"rows": rows, "candidates": out}


def render(per_row: dict, summary: dict) -> str:
    rows = summary["rows"]
    cand = summary["candidates"]
    done = ", ".join(f"{r} [{len(per_row[r]['folds'])}]" for r in rows)
    lines = [f"Rows with dumps: {len(rows)} ({done})", ""]
    lines.append("## All candidates, ranked by mean ROC-AUC over these rows")
    lines.append("")
    lines.append("| candidate | mean AUC | min row | rows within 0.03 of best single (this study's components) "
                 "| rows within 0.03 of best in docs/results | rows < 0.5 |")
    lines.append("|---|---|---|---|---|---|")
    for n, v in sorted(cand.items(), key=lambda kv: -kv[1]["mean"]):
        lines.append(f"| {n} | {v['mean']:.3f} | {v['min']:.3f} | {v['within_dump']}/{len(rows)} | "
                     f"{v['within_table']}/{len(rows)} | {v['below_half']} |")
    lines.append("")
    show = [c for c in ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn", "muse-lw-cal", "muse-lw-fit",
                        "muse-if-cal", "muse-lw-cal-errors", "stack-lw-cal", "fisher/conf/S3", "acat/conf/S3", "minp/conf/S3",
                        "fisher/conf/S4", "acat/conf/S4", "minp/conf/S4", "stouffer/conf/S4", "fisher/tail/S4", "acat/tail/S4",
                        "fisher/conf/M4", "acat/conf/M4", "fisher/tail/M4", "acat/tail/M4", "fisher/conf/S5",
                        "acat/conf/S5", "T-select/S4", "T-select+-/S4", "T-stouffer/conf/S4", "T-stouffer+-/conf/S4",
                        "T-select/S4M", "T-stouffer/conf/S4M", "T-select/S5", "T-stouffer/conf/S5")
            if c in cand or any(c in per_row[r]["auc"] for r in rows)]
    lines.append("## ROC-AUC per row (mean ± std over folds / seeds)")
    lines.append("")
    lines.append("| row [folds] | best in docs/results | " + " | ".join(show) + " |")
    lines.append("|---|---|" + "---|" * len(show))
    for r in rows:
        ref = per_row[r]["reference"]
        cells = []
        for c in show:
            v = per_row[r]["auc"].get(c)
            cells.append("—" if v is None else f"{np.mean(v):.3f} ± {np.std(v):.3f}")
        refs = f"{ref[0]:.3f} ({ref[1]})" if ref else "—"
        lines.append(f"| {r} [{len(per_row[r]['folds'])}] | {refs} | " + " | ".join(cells) + " |")
    lines.append("| **mean** | | " + " | ".join(
        f"**{cand[c]['mean']:.3f}**" if c in cand else "(not on every row)" for c in show) + " |")
    lines.append("")
    lines.append(f"## Calibration: fraction of held-out normal test graphs with p < {ALPHA} (mean over folds)")
    lines.append("")
    cal_show = ["expected (conformal, n_cal)", "glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn", "muse-lw-cal", "muse-lw-fit",
                "fisher/conf/S4", "fisher/conf/S4 recal", "acat/conf/S4", "acat/conf/S4 recal", "minp/conf/S4",
                "fisher/tail/S4", "fisher/tail/S4 recal", "acat/tail/S4", "acat/tail/S4 recal",
                "fisher/conf/M4", "fisher/conf/M4 recal", "acat/tail/M4", "acat/tail/M4 recal",
                "T-stouffer/conf/S4", "T-stouffer/conf/S4 recal", "T-stouffer/conf/S4M", "T-stouffer/conf/S4M recal"]
    cal_show = [c for c in cal_show if any(c in per_row[r]["calib"] for r in rows)]
    lines.append("| row | " + " | ".join(cal_show) + " |")
    lines.append("|---|" + "---|" * len(cal_show))
    colvals = {c: [] for c in cal_show}
    for r in rows:
        cells = []
        for c in cal_show:
            v = per_row[r]["calib"].get(c)
            if v is not None:
                colvals[c].append(np.mean(v))
            cells.append("—" if v is None else f"{np.mean(v):.3f}")
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    lines.append("| **mean** | " + " | ".join(f"**{np.mean(colvals[c]):.3f}**" if colvals[c] else "—"
                                            for c in cal_show) + " |")
    lines.append("")
    lines.append(times_table(rows))
    return "\n".join(lines) + "\n"


def times_table(rows: list[str]) -> str:
    """Wall seconds per fold of fitting (on the fit part) and ms per graph of scoring (cal +
    test graphs) per component, from dump.py's times.json (machine shared, load 3-7)."""
    comps = ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn")
    out = ["## Wall time per component (dump.py; mean over the folds run; fit = seconds per fold; "
           "score = ms per graph over the calibration and test graphs)", "",
           "| row | folds | n_fit / n_cal / n_test (fold 1) | " + " | ".join(comps) + " |",
           "|---|---|---|" + "---|" * len(comps)]
    for r in rows:
        path = DUMPS / r / "times.json"
        if not path.exists():
            continue
        t = json.loads(path.read_text())["folds"]
        first = t[sorted(t, key=int)[0]]
        cells = []
        for c in comps:
            v = [f[c] for f in t.values() if c in f]
            cells.append("—" if not v else f"fit {np.mean([x['fit_seconds'] for x in v]):.1f} s, score "
                         f"{1000 * np.mean([x['score_seconds_per_graph'] for x in v]):.2f} ms ({len(v)})")
        out.append(f"| {r} | {len(t)} | {first['n_fit']} / {first['n_cal']} / {first['n_test']} | "
                   + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
