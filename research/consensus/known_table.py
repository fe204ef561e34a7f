"""The table of docs/consensus.md's known-anomalies section, from ``glocalkd evaluate`` results.

Usage (repository root)::

    python -m research.consensus.known_table RESULT.json [RESULT.json ...]

Each RESULT.json is written by ``glocalkd evaluate DATA --method consensus --known-anomalies K
--json RESULT.json``: per fold, the weighed consensus's ROC-AUC (``auc``) and the same model's
with equal weights (the ``equal-weights`` readout). Prints one markdown row per result, then the
means, the mean gain with the standard error of the per-row gains, rows below 0.5, and rows
within 0.03 of the row's best single detector of the competitor table (the best mean over the
study's folds of GLocalKD, graph size, WL-LESINN, PK-LESINN and OCGCN, from
``docs/results/consensus/candidates.json``).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from core.evaluation.results import read_json


CANDIDATES = Path(__file__).resolve().parents[2] / "docs" / "results" / "consensus" / "candidates.json"
SINGLES = ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn")


def best_single(r) -> float:
    """The best single detector's mean ROC-AUC on the row of the competitor table ``r`` measures."""
    row = r.dataset.replace(" ", "_") + ("__first-label" if r.anomaly_rule == "first-label" else "")
    auc = json.loads(CANDIDATES.read_text())["per_row"][row]["auc"]
    return max(float(np.mean(auc[c])) for c in SINGLES if c in auc)


def main(paths: list[str]) -> int:
    print("| data set (rule: anomalous class) [folds, known anomalies] | consensus, equal weights "
          "| with known anomalies | gain | best single detector |")
    print("|---|---|---|---|---|")
    equal_means, weighed_means, bests = [], [], []
    for path in paths:
        r = read_json(path)
        weighed = np.array([f.auc for f in r.folds])
        equal = np.array([f.auc_readouts["equal-weights"] for f in r.folds])
        equal_means.append(equal.mean())
        weighed_means.append(weighed.mean())
        bests.append(best_single(r))
        k = r.options.get("known_anomalies")
        print(f"| {r.dataset} ({r.anomaly_rule}: {r.anomaly_label}) [{len(r.folds)}, {k}] | {equal.mean():.3f} ± {equal.std():.3f} "
              f"| {weighed.mean():.3f} ± {weighed.std():.3f} | {weighed.mean() - equal.mean():+.3f} | {bests[-1]:.3f} |")
    gains = np.array(weighed_means) - np.array(equal_means)
    se = gains.std(ddof=1) / np.sqrt(len(gains)) if len(gains) > 1 else float("nan")
    print(f"| **mean of {len(paths)} rows** | **{np.mean(equal_means):.3f}** | **{np.mean(weighed_means):.3f}** "
          f"| {gains.mean():+.3f} (SE {se:.3f}) | {np.mean(bests):.3f} |")
    print(f"| rows below 0.5 | {sum(m < 0.5 for m in equal_means)} | {sum(m < 0.5 for m in weighed_means)} | | |")
    within = [sum(m >= b - 0.03 for m, b in zip(means, bests)) for means in (equal_means, weighed_means)]
    print(f"| rows within 0.03 of the best single detector | {within[0]} | {within[1]} | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
