"""Apply the rule of the known-anomaly path with the classifier view (research/README.md) to the
fold files of ``known_classifier_job.sh``.

Each fold file is one ``glocalkd evaluate ROW --method consensus --known-anomalies 10 --only K``:
its ``auc`` is the consensus with the classifier view, its readout ``weighed-views`` the same
weighed consensus, from the same fit, without it; ``normals_flagged`` is the share of the fold's
held-out normal graphs with p < 0.05 (with the view).

    python -m research.ranking.known_classifier_rule FOLDER [--json docs/results/ranking/known_classifier.json]

The rule, written before the product's run: adopted if the mean ROC-AUC over the 14 rows gains more
than two standard errors of the per-row differences, no row falls below 0.5, no more fold/draw pairs
lose over 0.05 than gain over 0.05, and held-out normal graphs with p < 0.05 stay between 3 and 7 %.
(A graph's score not depending on the others scored with it is a test of the product.)
"""
from __future__ import annotations

import argparse
import json
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

ROWS = ("AIDS", "BZR", "BZR__first-label", "DHFR", "DHFR__first-label", "ENZYMES", "hERG", "IMDB-BINARY",
        "PROTEINS_full", "PROTEINS_full__first-label", "NCI1", "Tox21_HSE", "Tox21_p53", "REDDIT-BINARY")


def read_folds(folder: Path) -> dict[str, list[dict]]:
    """Row name -> its folds (``fold``, ``with``, ``without``, ``flagged``), from ``ROW__foldK.json`` files."""
    rows: dict[str, list[dict]] = defaultdict(list)
    for path in sorted(folder.glob("*__fold*.json")):
        row = re.sub(r"__fold\d+$", "", path.stem)
        for fold in json.loads(path.read_text())["folds"]:
            rows[row].append({"fold": fold["fold"], "with": fold["auc"],
                              "without": fold["auc_readouts"].get("weighed-views", math.nan),
                              "flagged": fold.get("normals_flagged", math.nan)})
    return dict(rows)


def decide(rows: dict[str, list[dict]]) -> dict:
    """The per-row figures and the rule's four conditions."""
    table = {}
    for row in ROWS:
        folds = rows.get(row, [])
        if not folds:
            continue
        w, wo = np.array([f["with"] for f in folds]), np.array([f["without"] for f in folds])
        table[row] = {"folds": len(folds), "with": float(w.mean()), "without": float(wo.mean()),
                      "difference": float((w - wo).mean()), "flagged": float(np.nanmean([f["flagged"] for f in folds])),
                      "pairs_gain_over_0.05": int(np.sum(w - wo > 0.05)),
                      "pairs_lose_over_0.05": int(np.sum(wo - w > 0.05))}
    diffs = np.array([r["difference"] for r in table.values()])
    se = float(diffs.std(ddof=1) / math.sqrt(len(diffs))) if len(diffs) > 1 else math.nan
    flagged = float(np.mean([r["flagged"] for r in table.values()]))
    gain = sum(r["pairs_gain_over_0.05"] for r in table.values())
    lose = sum(r["pairs_lose_over_0.05"] for r in table.values())
    conditions = {
        "mean gain > 2 SE": bool(diffs.mean() > 2 * se),
        "no row below 0.5": bool(all(r["with"] >= 0.5 for r in table.values())),
        "no more pairs lose over 0.05 than gain": bool(lose <= gain),
        "normals flagged 3-7 %": bool(0.03 <= flagged <= 0.07),
    }
    return {"rows": table, "complete_rows": sum(r["folds"] == 5 for r in table.values()),
            "mean_with": float(np.mean([r["with"] for r in table.values()])),
            "mean_without": float(np.mean([r["without"] for r in table.values()])),
            "mean_difference": float(diffs.mean()), "se": se, "pairs_gain": gain, "pairs_lose": lose,
            "normals_flagged": flagged, "conditions": conditions,
            "adopted": bool(len(table) == len(ROWS) and all(conditions.values()))}


def main(argv: list[str] | None = None) -> dict:
    """Print the table and the decision; optionally write them as JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", type=Path, help="the fold files (known_classifier_job.sh's $OUT/known)")
    p.add_argument("--json", type=Path, help="write the figures here")
    args = p.parse_args(argv)
    result = decide(read_folds(args.folder))
    print(f"{'row':28s} folds  without   with   diff  flagged")
    for row, r in result["rows"].items():
        print(f"{row:28s} {r['folds']:5d}  {r['without']:.3f}  {r['with']:.3f} {r['difference']:+.3f}  "
              f"{100 * r['flagged']:5.1f} %")
    print(f"{'mean':28s} {len(result['rows']):5d}  {result['mean_without']:.3f}  {result['mean_with']:.3f} "
          f"{result['mean_difference']:+.3f} (SE {result['se']:.3f})  {100 * result['normals_flagged']:.1f} %")
    print(f"fold pairs: {result['pairs_gain']} gain over 0.05, {result['pairs_lose']} lose over 0.05")
    for name, held in result["conditions"].items():
        print(f"  {'yes' if held else 'NO '}  {name}")
    print("adopted" if result["adopted"] else "not adopted")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
