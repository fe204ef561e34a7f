"""Compact tables for REPORT.md from combine.py's JSON (benchmarks/consensus/results.json).

Usage: python benchmarks/consensus/report_tables.py benchmarks/consensus/results.json
"""
from __future__ import annotations

import json
import sys

import numpy as np

KEY = ["glocalkd", "size", "wl-lesinn", "pk-lesinn", "muse-lw-cal", "muse-if-cal",
       "fisher/conf/S4", "acat/conf/S4", "minp/conf/S4", "stouffer/conf/S4", "fisher/conf/M4",
       "T-stouffer/conf/S4", "T-stouffer/conf/S4M"]
CAL = ["expected (conformal, n_cal)", "glocalkd", "size", "wl-lesinn", "pk-lesinn", "muse-lw-cal",
       "fisher/conf/S4", "fisher/conf/S4 recal", "acat/conf/S4", "acat/conf/S4 recal", "minp/conf/S4",
       "T-stouffer/conf/S4", "T-stouffer/conf/S4 recal"]


def main(path: str) -> None:
    d = json.load(open(path))
    per_row, summ = d["per_row"], d["summary"]
    rows = summ["rows"]
    cand = summ["candidates"]
    print("| row [folds/seeds] | best single in docs/results | " + " | ".join(KEY) + " |")
    print("|---|---|" + "---|" * len(KEY))
    for r in rows:
        ref = per_row[r]["reference"]
        cells = []
        for c in KEY:
            v = per_row[r]["auc"].get(c)
            cells.append("—" if v is None else f"{np.mean(v):.3f} ± {np.std(v):.3f}")
        print(f"| {r} [{len(per_row[r]['folds'])}] | {ref[0]:.3f} ({ref[1]}) | " + " | ".join(cells) + " |")
    print("| **mean over rows** | | " + " | ".join(f"**{cand[c]['mean']:.3f}**" for c in KEY) + " |")
    print("| rows within 0.03 of best single of this study | | "
          + " | ".join(f"{cand[c]['within_dump']}/{len(rows)}" for c in KEY) + " |")
    print("| rows within 0.03 of best in docs/results | | "
          + " | ".join(f"{cand[c]['within_table']}/{len(rows)}" for c in KEY) + " |")
    print("| rows below 0.5 | | " + " | ".join(str(cand[c]["below_half"]) for c in KEY) + " |")
    print()
    print("| row | " + " | ".join(CAL) + " |")
    print("|---|" + "---|" * len(CAL))
    colv = {c: [] for c in CAL}
    for r in rows:
        cells = []
        for c in CAL:
            v = per_row[r]["calib"].get(c)
            if v is not None:
                colv[c].append(np.mean(v))
            cells.append("—" if v is None else f"{np.mean(v):.3f}")
        print(f"| {r} | " + " | ".join(cells) + " |")
    print("| **mean** | " + " | ".join(f"**{np.mean(colv[c]):.3f}**" for c in CAL) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
