"""The consensus tables of docs/consensus.md and docs/results.md, from the per-fold AUCs.

    python -m research.consensus.tables [docs/results/consensus/candidates.json]

Prints two markdown tables: the components and the consensus per row (mean ± std over the
folds or seeds; the best single detector of each row in italics), as in docs/consensus.md, and
the consensus beside the best single method of the competitor table, as in docs/results.md.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SINGLES = ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn")
CONSENSUS = "fisher/conf/S3"
WITH_PK = "fisher/conf/S4"
LABELS = {"glocalkd": "GLocalKD", "size": "graph size", "wl-lesinn": "WL-LESINN", "pk-lesinn": "PK-LESINN",
          "ocgcn": "OCGCN"}


def _cell(v, best: bool = False):
    if v is None:
        return "not measured"
    text = f"{np.mean(v):.3f} ± {np.std(v):.3f}"
    return f"*{text}*" if best else text


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs/results/consensus/candidates.json"
    rows = json.loads(path.read_text())["per_row"]
    columns = SINGLES + (CONSENSUS, WITH_PK)
    print("| data set (rule) [folds] | " + " | ".join(LABELS[c] for c in SINGLES)
          + " | **consensus** | consensus + PK-LESINN |")
    print("|" + "---|" * (len(columns) + 1))
    means = {c: [] for c in columns}
    within = {c: 0 for c in columns}
    for row, r in rows.items():
        auc = r["auc"]
        measured = {c: float(np.mean(auc[c])) for c in columns if auc.get(c) is not None}
        best = max(measured[c] for c in SINGLES if c in measured)
        for c, m in measured.items():
            means[c].append(m)
            within[c] += m >= best - 0.03
        cells = [_cell(auc.get(c), c in SINGLES and measured.get(c) == best) for c in columns]
        print(f"| {row} [{len(r['folds'])}] | " + " | ".join(cells) + " |")
    print("| **mean of the rows measured** | " + " | ".join(
        f"**{np.mean(means[c]):.3f}**" + ("" if len(means[c]) == len(rows) else f" ({len(means[c])} rows)")
        for c in columns) + " |")
    print("| rows below 0.5 | " + " | ".join(str(sum(m < 0.5 for m in means[c])) for c in columns) + " |")
    print("| rows within 0.03 of the best single detector | " + " | ".join(str(within[c]) for c in columns) + " |")
    print()
    print("| data set (rule) | consensus | best single method (competitor table) | difference |")
    print("|---|---|---|---|")
    diffs = []
    for row, r in rows.items():
        best, name = r["reference"]
        c = float(np.mean(r["auc"][CONSENSUS]))
        diffs.append(c - best)
        print(f"| {row} | {c:.3f} | {best:.3f} ({name}) | {c - best:+.3f} |")
    bests = [r["reference"][0] for r in rows.values()]
    cons = [float(np.mean(r["auc"][CONSENSUS])) for r in rows.values()]
    print(f"| **mean** | **{np.mean(cons):.3f}** | **{np.mean(bests):.3f}** | {np.mean(diffs):+.3f} |")
    d = np.array(diffs)
    print(f"\nwins (above the best single): {(d > 0).sum()}; within 0.03: {(np.abs(d) <= 0.03).sum()}; "
          f"more than 0.03 below: {(d < -0.03).sum()}")


if __name__ == "__main__":
    main()
