"""Would a view of GLocalKD's largest node errors keep single odd atoms in sight?

Usage (from a checkout whose ``research/consensus/dumps`` holds dump.py's per-fold files)::

    python -m research.consensus.node_views

On planted anomalies the consensus finds a single odd atom less well than GLocalKD alone: the
graph score averages the node errors, and graph size and WL-LESINN dilute it further. A
summary of the node errors that a single atom moves (their maximum, or their 90 % quantile)
could be a view of its own. Measured on the 14 rows of the competitor table, from the summaries
dump.py keeps for every fit, calibration and test graph, with conformal p-values and Fisher's
combination as in the product:

- ``+<summary>``: the default's three views and the summary as a fourth;
- ``<summary> for GLocalKD``: the summary in place of GLocalKD's graph score.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from research.consensus.combine import ROWS, conformal_p  # noqa: E402

DUMPS = Path(__file__).resolve().parent / "dumps"
SINGLES = ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn")
SUMMARIES = ("node_max", "node_q90")


def fold_aucs(fdir: Path) -> tuple[dict[str, float], dict[str, float]]:
    """ROC-AUC of every candidate and every single detector on one fold."""
    y = np.load(fdir / "meta.npz")["y_test"].astype(int)
    evidence, singles = {}, {}
    for c in SINGLES:
        path = fdir / f"{c}.npz"
        if path.exists():
            z = np.load(path)
            singles[c] = roc_auc_score(y, z["test"])
            evidence[c] = -2.0 * np.log(conformal_p(z["cal"], z["test"]))
    g = np.load(fdir / "glocalkd.npz")
    names = list(g["feat_names"])
    for s in SUMMARIES:
        i = names.index(s)
        evidence[s] = -2.0 * np.log(conformal_p(g["feat_cal"][:, i], g["feat_test"][:, i]))
    default = evidence["glocalkd"] + evidence["size"] + evidence["wl-lesinn"]
    cands = {"default": default}
    for s in SUMMARIES:
        cands[f"+{s}"] = default + evidence[s]
        cands[f"{s} for GLocalKD"] = default - evidence["glocalkd"] + evidence[s]
    return {k: roc_auc_score(y, v) for k, v in cands.items()}, singles


def main() -> int:
    table, best = {}, {}
    for row in ROWS:
        acc: dict[str, list[float]] = {}
        single: dict[str, list[float]] = {}
        for fdir in sorted((DUMPS / row).glob("fold*")):
            cands, singles = fold_aucs(fdir)
            for k, v in cands.items():
                acc.setdefault(k, []).append(v)
            for k, v in singles.items():
                single.setdefault(k, []).append(v)
        if not acc:
            raise SystemExit(f"{DUMPS / row}: no folds; run dump.py first")
        table[row] = {k: float(np.mean(v)) for k, v in acc.items()}
        best[row] = max(float(np.mean(v)) for v in single.values())
    default = np.array([table[r]["default"] for r in ROWS])
    print(f"{'candidate':24s}{'mean':>7s}{'gain (SE)':>17s}{'within 0.03':>13s}{'< 0.5':>7s}")
    for k in table[ROWS[0]]:
        a = np.array([table[r][k] for r in ROWS])
        d = a - default
        within = sum(x >= best[r] - 0.03 for x, r in zip(a, ROWS))
        print(f"{k:24s}{a.mean():7.3f}{d.mean():+10.3f} ({d.std(ddof=1) / np.sqrt(len(d)):.3f}){within:13d}"
              f"{int((a < 0.5).sum()):7d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
