"""Size-stratified (Mondrian) calibration of the default consensus's structural views, by the rule
written before the run (research/README.md, "Size-stratified calibration").

Fisher's rule reads the views' p-values as independent evidence. Graph size is a view of its own,
and if GLocalKD's and WL-LESINN's scores also follow size on normal graphs, the consensus counts
size two or three times. A Mondrian p-value compares a graph only with the calibration graphs of
its own size stratum, so those two views speak of structure at a given size.

``diagnose`` (no labels read): per row, the Spearman correlation of each view's score with the
node count over each fold's calibration graphs (normal graphs the views did not fit), averaged
over the folds. ``rule``: the candidate (GLocalKD's and WL-LESINN's p-values taken within two
strata, the calibration graphs' median node count the boundary; graph size's as before) against
the default recombined from the same per-fold scores (fold_scores.py, GLocalKD's fits included),
by docs/consensus.md's rule; writes JSON with ``--json``.

    PYTHONPATH=. OMP_NUM_THREADS=1 python research/ranking/mondrian.py diagnose|rule [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fold_scores import ROWS, fold_paths, folds, load_fold, row_folder  # noqa: E402

STRATIFIED = ("glocalkd", "wl-lesinn")  # the views whose p-values are taken within size strata
DEFAULT = ("glocalkd", "wl-lesinn", "size")


def node_counts(graphs) -> np.ndarray:
    return np.array([int(g.num_nodes) for g in graphs.graphs])


def mondrian_p_values(cal: np.ndarray, cal_sizes: np.ndarray, scores: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Split-conformal p-values within two size strata: graphs with at most the calibration
    graphs' median node count, and the larger ones; each graph against its stratum's calibration
    graphs only (``core.data.pvalues.conformal_p_values`` within each)."""
    from core.detectors.conformal import conformal_p_values

    boundary = np.median(cal_sizes)
    cal_small, small = cal_sizes <= boundary, sizes <= boundary
    p = np.empty(len(scores))
    for cal_part, part in ((cal_small, small), (~cal_small, ~small)):
        if part.any():
            # a stratum without calibration graphs (every one the same size) falls back to all of them
            p[part] = conformal_p_values(cal[cal_part] if cal_part.any() else cal, scores[part])
    return p


def row_folds(row: str):
    """Per fold: the saved scores and the calibration and test graphs' node counts."""
    from core.detectors.conformal import DEFAULT_CALIBRATION_FRACTION, calibration_split

    paths = fold_paths(row_folder(row))
    for (k, seed, normal, _known, test, y), path in zip(folds(row), paths):
        d = load_fold(path)
        if not np.array_equal(d["y"], y):
            raise SystemExit(f"{row} fold {k}: the saved scores are not this fold's")
        _fit, cal_idx = calibration_split(len(normal), DEFAULT_CALIBRATION_FRACTION, seed)
        cal_sizes = node_counts(normal.subset(cal_idx))
        if len(cal_sizes) != len(d["size:cal"]):
            raise SystemExit(f"{row} fold {k}: {len(cal_sizes)} calibration graphs, the scores have {len(d['size:cal'])}")
        yield d, cal_sizes, node_counts(test)


def diagnose() -> dict:
    from scipy.stats import spearmanr

    out = {}
    print("| data set | " + " | ".join(f"{v}: Spearman with nodes" for v in DEFAULT) + " |")
    print("|---|" + "---|" * len(DEFAULT))
    for row in ROWS:
        rho = {v: [] for v in DEFAULT}
        for d, cal_sizes, _ in row_folds(row):
            for v in DEFAULT:
                rho[v].append(float(spearmanr(d[f"{v}:cal"], cal_sizes).statistic))
        out[row] = {v: float(np.mean(r)) for v, r in rho.items()}
        print(f"| {row} | " + " | ".join(f"{out[row][v]:+.2f}" for v in DEFAULT) + " |")
    for v in DEFAULT:
        vals = [r[v] for r in out.values()]
        print(f"{v}: mean {np.mean(vals):+.2f}, |rho| > 0.3 on {sum(abs(x) > 0.3 for x in vals)} rows")
    return {"per_row": out}


def rule() -> dict:
    from analyse import fisher, rule_verdict

    from core.detectors.conformal import conformal_p_values
    from core.evaluation.metrics import roc_auc

    base, new, flagged = {}, {}, {}
    for row in ROWS:
        a, b, f = [], [], []
        for d, cal_sizes, test_sizes in row_folds(row):
            y = d["y"]
            plain = {v: conformal_p_values(d[f"{v}:cal"], d[f"{v}:test"]) for v in DEFAULT}
            strata = dict(plain) | {v: mondrian_p_values(d[f"{v}:cal"], cal_sizes, d[f"{v}:test"], test_sizes)
                                    for v in STRATIFIED}
            a.append(roc_auc(y, fisher([plain[v] for v in DEFAULT])))
            b.append(roc_auc(y, fisher([strata[v] for v in DEFAULT])))
            f.append({v: float(np.mean(strata[v][y == 0] < 0.05)) for v in STRATIFIED})
        base[row], new[row] = float(np.mean(a)), float(np.mean(b))
        flagged[row] = {v: float(np.mean([x[v] for x in f])) for v in STRATIFIED}
        print(f"| {row} | {base[row]:.3f} | {new[row]:.3f} | {new[row] - base[row]:+.3f} | "
              + " | ".join(f"{100 * flagged[row][v]:.1f} %" for v in STRATIFIED) + " |")
    verdict = rule_verdict(new, base)
    print(f"14 rows: {verdict['mean']:.3f} against {verdict['base_mean']:.3f}, gain {verdict['gain']:+.3f} "
          f"(SE {verdict['se']:.3f}), rows below 0.5 {verdict['below_half']} (new: {verdict['new_below_half']}), "
          f"passes: {verdict['passes']}")
    return {"default": base, "candidate": new, "flagged": flagged, "verdict": verdict}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("diagnose", "rule"))
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    out = diagnose() if args.what == "diagnose" else rule()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
