"""Two-sided conformal p-values in the consensus, from the per-fold dumps of dump.py.

    python -m research.consensus.two_sided

A two-sided p-value calls a graph odd when a component scores it unusually high *or* unusually
low: p = min(1, 2 min(p_high, p_low)). Prints, per row and over the 14 rows, the ROC-AUC of
Fisher's combination over GLocalKD, graph size and WL-LESINN with one-sided p-values (the
product), with every component two-sided, with graph size alone two-sided, and of the four
components with PK-LESINN, all two-sided. No test label chooses anything here.
"""
from __future__ import annotations

import numpy as np

from research.consensus.combine import DUMPS, ROWS, auc, conformal_p, load_fold

S3 = ("glocalkd", "size", "wl-lesinn")
VARIANTS = {"one-sided (product)": (S3, ()), "all two-sided": (S3, S3), "size two-sided": (S3, ("size",)),
            "with PK-LESINN, all two-sided": (S3 + ("pk-lesinn",), S3 + ("pk-lesinn",))}


def fisher_auc(fold: dict, members: tuple[str, ...], two_sided: tuple[str, ...]) -> float:
    columns = []
    for name in members:
        cal, test = fold["comps"][name]
        p = conformal_p(cal, test)
        if name in two_sided:
            p = np.minimum(1.0, 2 * np.minimum(p, conformal_p(-cal, -test)))
        columns.append(p)
    return auc(fold["y"], -2 * np.log(np.column_stack(columns)).sum(axis=1))


def main() -> None:
    means: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for row in ROWS:
        folds = [load_fold(f) for f in sorted((DUMPS / row).glob("fold*"))]
        out = {}
        for variant, (members, two) in VARIANTS.items():
            aucs = [fisher_auc(f, members, two) for f in folds if f and all(m in f["comps"] for m in members)]
            out[variant] = float(np.mean(aucs))
            means[variant].append(out[variant])
        print(row, {k: round(v, 3) for k, v in out.items()})
    for variant, values in means.items():
        print(f"{variant}: mean {np.mean(values):.3f} over {len(values)} rows, {sum(v < 0.5 for v in values)} below 0.5")


if __name__ == "__main__":
    main()
