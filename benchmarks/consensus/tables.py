"""The consensus tables of docs/consensus.md and docs/results.md, from the per-fold AUCs.

    python benchmarks/consensus/tables.py [docs/results/consensus/candidates.json]

Prints two markdown tables: the components and the consensus per row (mean ± std over the
folds or seeds), and the consensus beside the best single method of the competitor table.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SINGLES = ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn")
CONSENSUS = "fisher/conf/S3"
LABELS = {"glocalkd": "GLocalKD", "size": "graph size", "wl-lesinn": "WL-LESINN", "pk-lesinn": "PK-LESINN",
          "ocgcn": "OCGCN"}


def _cell(v):
    return "not measured" if v is None else f"{np.mean(v):.3f} ± {np.std(v):.3f}"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs/results/consensus/candidates.json"
    rows = json.loads(path.read_text())["per_row"]
    head = "| data set (rule) [folds] | " + " | ".join(LABELS[c] for c in SINGLES) + " | **consensus** |"
    print(head + "\n|" + "---|" * (len(SINGLES) + 2))
    means = {c: [] for c in SINGLES + (CONSENSUS,)}
    for row, r in rows.items():
        auc = r["auc"]
        cells = []
        for c in SINGLES + (CONSENSUS,):
            v = auc.get(c)
            if v is not None:
                means[c].append(np.mean(v))
            cells.append(_cell(v))
        print(f"| {row} [{len(r['folds'])}] | " + " | ".join(cells) + " |")
    print("| **mean of the rows measured** | " + " | ".join(
        f"**{np.mean(means[c]):.3f}** ({len(means[c])})" for c in SINGLES + (CONSENSUS,)) + " |")
    print("| rows below 0.5 | " + " | ".join(str(sum(m < 0.5 for m in means[c])) for c in SINGLES + (CONSENSUS,))
          + " |")
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
