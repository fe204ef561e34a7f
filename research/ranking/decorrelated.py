"""Weights from the views' dependence, by the rule written before the run (research/README.md,
"Weights from the views' dependence").

Fisher's rule counts each view once and reads them as independent; on normal graphs they are
not. The candidate pools every batch-independent view the fold files hold (GLocalKD, graph size,
WL-LESINN, WL counts, KME, spectral, rare-substructure; the property view where the graphs are
molecules) by Fisher's rule with the long-only minimum-variance weights of their evidence
``-2 log p`` on the fold's calibration graphs (leave-one-out p-values).

``diagnose`` (no labels read): the correlation of each pair of views' evidence over each fold's
calibration graphs, averaged over the folds and then the rows, and the weights the candidate
gives each view, per row. ``rule``: the candidate and the same views with equal weights against
the default recombined from the same per-fold scores (fold_scores.py, GLocalKD's fits included),
by docs/consensus.md's rule, and the share of held-out normal graphs each flags at p < 0.05,
then the diagnosis; writes JSON with ``--json``.

A view whose calibration evidence does not vary (every calibration graph tied) has no
correlation to weigh by; it would get weight 0 (reported when it happens).

    PYTHONPATH=. OMP_NUM_THREADS=1 python research/ranking/decorrelated.py diagnose|rule [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fold_scores import ROWS, fold_paths, load_fold, row_folder  # noqa: E402

DEFAULT = ("glocalkd", "wl-lesinn", "size")
VIEWS = ("glocalkd", "size", "wl-lesinn", "wl-count-lesinn", "kme-lesinn", "spectral-lesinn", "rare-substructure")
MOLECULE_VIEWS = ("property-lesinn",)  # where the fold's graphs are molecules


def fold_views(d) -> list[str]:
    """The candidate's views on one fold: every view of VIEWS, and the molecule views it holds."""
    return [*VIEWS, *(v for v in MOLECULE_VIEWS if f"{v}:test" in d)]


def calibration_evidence(d, views: list[str]) -> np.ndarray:
    """(calibration graphs, views): each calibration graph's -2 log p against the other calibration graphs."""
    from core.detectors.consensus import leave_one_out_p_values

    return np.column_stack([-2.0 * np.log(leave_one_out_p_values(d[f"{v}:cal"])) for v in views])


def min_variance_weights(evidence: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Long-only minimum-variance weights of the columns' correlation, scaled to a mean of 1, and
    the columns left at 0 because they do not vary."""
    varies = evidence.std(axis=0) > 0
    flat = [int(i) for i in np.flatnonzero(~varies)]
    corr = np.corrcoef(evidence[:, varies].T)
    m = corr.shape[0]
    result = minimize(lambda w: w @ corr @ w, np.full(m, 1.0 / m), jac=lambda w: 2.0 * corr @ w,
                      bounds=[(0.0, 1.0)] * m, constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1.0}],
                      method="SLSQP", options={"ftol": 1e-12, "maxiter": 500})
    if not result.success:
        raise RuntimeError(f"minimum-variance weights: {result.message}")
    w = np.zeros(evidence.shape[1])
    w[varies] = np.clip(result.x, 0.0, None)
    return w * len(w) / w.sum(), flat


def diagnose() -> dict:
    """Label-free: the views' evidence correlation over the calibration graphs, and the weights."""
    per_row, corrs = {}, []
    for row in ROWS:
        folds = [load_fold(p) for p in fold_paths(row_folder(row))]
        row_corr = np.mean([np.corrcoef(calibration_evidence(d, list(VIEWS)).T) for d in folds], axis=0)
        corrs.append(row_corr)
        weights = [min_variance_weights(calibration_evidence(d, fold_views(d)))[0] for d in folds]
        per_row[row] = {"views": fold_views(folds[0]), "weights": np.mean(weights, axis=0).tolist(),
                        "calibration_graphs": int(len(folds[0]["size:cal"]))}
    mean = np.mean(corrs, axis=0)
    print("evidence correlation on the calibration graphs, mean over the rows:")
    print(" " * 18 + " ".join(f"{v[:8]:>8}" for v in VIEWS))
    for v, line in zip(VIEWS, mean):
        print(f"{v:>18} " + " ".join(f"{x:+8.2f}" for x in line))
    print("\nweights per row (mean over the folds; mean of a fold's weights is 1):")
    for row, r in per_row.items():
        print(f"{row:>28} " + ", ".join(f"{v} {w:.2f}" for v, w in zip(r["views"], r["weights"])))
    return {"views": list(VIEWS), "correlation": mean.tolist(), "per_row": per_row}


def _calibration_share(d, views: list[str], weights: np.ndarray | None) -> float:
    """Held-out normal test graphs with p < 0.05: the combined statistic against the calibration
    graphs' combined leave-one-out statistics."""
    from core.detectors.conformal import conformal_p_values
    from core.detectors.consensus import combine_p_values, leave_one_out_p_values

    loo = np.column_stack([leave_one_out_p_values(d[f"{v}:cal"]) for v in views])
    test = np.column_stack([conformal_p_values(d[f"{v}:cal"], d[f"{v}:test"]) for v in views])
    reference = combine_p_values(loo, "fisher", weights)
    statistic = combine_p_values(test, "fisher", weights)
    return float(np.mean(conformal_p_values(reference, statistic[d["y"] == 0]) < 0.05))


def rule() -> dict:
    """The candidate and the equal-weight pool against the default, per row and by the rule."""
    from analyse import rule_verdict
    from core.detectors.conformal import conformal_p_values
    from core.detectors.consensus import combine_p_values
    from core.evaluation.metrics import roc_auc

    arms = ("default", "candidate", "equal")
    per_row: dict[str, dict] = {}
    flat_seen = set()
    for row in ROWS:
        aucs = {a: [] for a in arms}
        shares = {a: [] for a in arms}
        for path in fold_paths(row_folder(row)):
            d = load_fold(path)
            views = fold_views(d)
            weights, flat = min_variance_weights(calibration_evidence(d, views))
            flat_seen |= {(row, views[i]) for i in flat}
            p = {v: conformal_p_values(d[f"{v}:cal"], d[f"{v}:test"]) for v in views}
            for arm, arm_views, w in (("default", list(DEFAULT), None), ("candidate", views, weights),
                                      ("equal", views, None)):
                statistic = combine_p_values(np.column_stack([p[v] for v in arm_views]), "fisher", w)
                aucs[arm].append(roc_auc(d["y"], statistic))
                shares[arm].append(_calibration_share(d, arm_views, w))
        per_row[row] = {a: float(np.mean(aucs[a])) for a in arms} | {
            f"{a}:std": float(np.std(aucs[a])) for a in arms} | {
            f"{a}:flagged": float(np.mean(shares[a])) for a in arms}
    base = {r: v["default"] for r, v in per_row.items()}
    verdicts = {a: rule_verdict({r: v[a] for r, v in per_row.items()}, base) for a in ("candidate", "equal")}
    print("| data set (rule) | default | candidate: dependence weights | all views, equal weights |")
    print("|---|---|---|---|")
    for row, v in per_row.items():
        print(f"| {row} | {v['default']:.3f} | {v['candidate']:.3f} | {v['equal']:.3f} |")
    for arm, o in verdicts.items():
        flagged = np.mean([v[f"{arm}:flagged"] for v in per_row.values()])
        print(f"{arm}: mean {o['mean']:.3f} against {o['base_mean']:.3f}, gain {o['gain']:+.3f} (SE {o['se']:.3f}), "
              f"rows below 0.5: {o['below_half']} (new: {o['new_below_half']}), held-out normals p < 0.05: "
              f"{flagged:.3f}, passes: {o['passes']}")
    print(f"default: held-out normals p < 0.05: {np.mean([v['default:flagged'] for v in per_row.values()]):.3f}")
    if flat_seen:
        print(f"views with constant calibration evidence (weight 0): {sorted(flat_seen)}")
    return {"per_row": per_row, "verdicts": verdicts, "constant_views": sorted(map(list, flat_seen)),
            "views": list(VIEWS), "molecule_views": list(MOLECULE_VIEWS)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("command", choices=("diagnose", "rule"))
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    out = diagnose() if args.command == "diagnose" else rule() | {"diagnosis": diagnose()}
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
