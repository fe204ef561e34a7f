"""What standardising molecules does to the hERG demo: ROC-AUC with and without, the rankings'
Spearman correlation, how many molecules change, and the cost per molecule.

    python -m benchmarks.standardise_herg [--detector glocalkd] [--seeds 0 1 2] [--epochs N]

Trains on every molecule (the app's default *Normal graphs*), scores them all and ranks the
minority class (hERG blockers, label 1, as the app's Evaluation tab) against the rest; prints
one JSON line per seed and a summary line.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

HERG = Path(__file__).resolve().parents[1] / "app" / "demo_data" / "herg.tab"


def main() -> None:
    from rdkit import Chem
    from scipy.stats import spearmanr

    from core import TrainSpec, choose_anomaly_label, load, roc_auc, train_model, wait_passively

    parser = argparse.ArgumentParser()
    parser.add_argument("--detector", default="glocalkd")
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2], help="none: the timings only")
    parser.add_argument("--epochs", type=int)
    args = parser.parse_args()
    wait_passively()
    from core.data.standardise import standardise_mol

    plain, std = load(HERG), load(HERG, standardise=True)  # also the warm-up: imports, RDKit's tables
    timings = {}
    for flag in (False, True):
        start = time.perf_counter()
        graphs = load(HERG, standardise=flag)
        timings[flag] = (time.perf_counter() - start) / (len(graphs) + len(graphs.rejects))
    mols = [Chem.MolFromSmiles(m.smiles) for m in plain.meta]
    start = time.perf_counter()
    for mol in mols:
        standardise_mol(mol)
    timings["steps"] = (time.perf_counter() - start) / len(mols)
    assert [m.id for m in plain.meta] == [m.id for m in std.meta]  # no molecule rejected by standardising
    changed = sum(Chem.CanonSmiles(a.smiles) != b.smiles for a, b in zip(plain.meta, std.meta))
    anomaly = choose_anomaly_label(plain, "minority")
    is_anomaly = np.array([m.label == anomaly for m in plain.meta])
    params = {"epochs": args.epochs} if args.epochs else {}
    rows = []
    for seed in args.seeds:
        scores = {}
        for name, graphs in (("as_read", plain), ("standardised", std)):
            model = train_model(graphs, TrainSpec(detector=args.detector, params=params, seed=seed,
                                                  device="cpu")).model
            scores[name] = model.score(graphs).score
        row = {"seed": seed, "auc_as_read": round(roc_auc(is_anomaly, scores["as_read"]), 4),
               "auc_standardised": round(roc_auc(is_anomaly, scores["standardised"]), 4),
               "spearman": round(float(spearmanr(scores["as_read"], scores["standardised"])[0]), 4)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps({"detector": args.detector, "molecules": len(plain), "changed_by_standardising": changed,
                      "anomalous_label": anomaly,
                      **({"mean_auc_as_read": round(float(np.mean([r["auc_as_read"] for r in rows])), 4),
                          "mean_auc_standardised": round(float(np.mean([r["auc_standardised"] for r in rows])), 4),
                          "mean_spearman": round(float(np.mean([r["spearman"] for r in rows])), 4)} if rows else {}),
                      "ms_per_molecule_reading": round(timings[False] * 1000, 2),
                      "ms_per_molecule_reading_standardised": round(timings[True] * 1000, 2),
                      "ms_per_molecule_standardising": round(timings["steps"] * 1000, 2)}))


if __name__ == "__main__":
    main()
