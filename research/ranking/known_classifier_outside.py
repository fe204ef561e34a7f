"""The known-anomaly path with the classifier view, checked outside the 14 rows (research/README.md,
"The known-anomaly path with the classifier view": "the same rule is then checked on a data set the
project does not have").

A chemist's novelty task: the default consensus (the product's training, default settings) trained
on the first 2,000 molecules of MOSES's training set; scored: the next 2,000 MOSES molecules
(normal) and an outside collection (novel): hERG's 655 molecules, then the molecules of Tox21's
two testing files. Ten molecules of the outside collection are the known anomalies (five draws,
seeds 0-4), left out of the scored set; each draw weighs the same fitted model twice, with the
classifier view and without it. Reports ROC-AUC and the share of the MOSES test molecules with
p < 0.05, each arm. Prints and writes JSON (``--json``).

    PYTHONPATH=. OMP_NUM_THREADS=1 python -m research.ranking.known_classifier_outside [--json OUT]
"""
from __future__ import annotations

import argparse
import copy
import gzip
import itertools
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from core import TrainSpec, load, roc_auc, train_model, weigh_known_anomalies
from research.consensus.pool_size import DATA, outside_smiles

TRAIN_ROWS, TEST_ROWS, KNOWN, DRAWS = 2_000, 2_000, 10, 5


def arms(model, known, test, y: np.ndarray) -> dict:
    """ROC-AUC and the normals' share with p < 0.05, with and without the classifier view."""
    out = {}
    for name, on in (("with", True), ("without", False)):
        weighed = copy.deepcopy(model)
        weighed.known_classifier = on
        weigh_known_anomalies(weighed, known)
        s = weighed.score(test).score
        p = weighed.p_values(s)
        out[name] = {"auc": roc_auc(y, s), "normals_flagged": float(np.mean(p[y == 0] < 0.05))}
    return out


def main(argv: list[str] | None = None) -> dict:
    """Fit once, then each outside collection's draws, both arms."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    with gzip.open(DATA / "moses" / "train.csv.gz", "rt") as src, tempfile.TemporaryDirectory() as tmp:
        next(src)
        rows = [line.split(",")[0] for line in itertools.islice(src, TRAIN_ROWS + TEST_ROWS)]
        train = Path(tmp) / "train.smi"
        train.write_text("smiles\n" + "\n".join(rows[:TRAIN_ROWS]) + "\n")
        start = time.perf_counter()
        model = train_model(load(train), TrainSpec(seed=0)).model
        result: dict = {"train_seconds": round(time.perf_counter() - start, 1), "tasks": {}}
        for outside in ("herg", "tox21"):
            novel = outside_smiles(outside)
            folds = []
            for seed in range(DRAWS):
                known_idx = set(np.random.default_rng(seed).choice(len(novel), KNOWN, replace=False).tolist())
                scored = [s for i, s in enumerate(novel) if i not in known_idx]
                files = {"known": [novel[i] for i in sorted(known_idx)], "test": rows[TRAIN_ROWS:] + scored}
                for name, smiles in files.items():
                    (Path(tmp) / f"{name}.smi").write_text("smiles\n" + "\n".join(smiles) + "\n")
                known, test = load(Path(tmp) / "known.smi"), load(Path(tmp) / "test.smi")
                y = np.r_[np.zeros(TEST_ROWS, dtype=int), np.ones(len(test) - TEST_ROWS, dtype=int)]
                fold = {"seed": seed, **arms(model, known, test, y)}
                print(outside, json.dumps(fold), flush=True)
                folds.append(fold)
            diffs = np.array([f["with"]["auc"] - f["without"]["auc"] for f in folds])
            result["tasks"][outside] = {
                "novel": len(novel), "folds": folds,
                "auc_with": float(np.mean([f["with"]["auc"] for f in folds])),
                "auc_without": float(np.mean([f["without"]["auc"] for f in folds])),
                "difference": float(diffs.mean()), "se": float(diffs.std(ddof=1) / np.sqrt(len(diffs))),
                "normals_flagged_with": float(np.mean([f["with"]["normals_flagged"] for f in folds])),
                "normals_flagged_without": float(np.mean([f["without"]["normals_flagged"] for f in folds]))}
            t = result["tasks"][outside]
            print(f"{outside}: {t['auc_without']:.4f} -> {t['auc_with']:.4f} ({t['difference']:+.4f}, SE "
                  f"{t['se']:.4f}); normals flagged {100 * t['normals_flagged_without']:.1f} % -> "
                  f"{100 * t['normals_flagged_with']:.1f} %", flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
