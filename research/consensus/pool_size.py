"""The bounded pool of the consensus's WL views, measured by the rule written before this ran
(research/consensus/README.md, "A bounded pool for the WL views").

On the rows whose fit part exceeds the pool (Tox21 HSE and p53: the harness's training and testing
files, model seeds 0-4), each fold's normal training graphs are split as the consensus splits them
(``calibration_split(n, 0.2, seed)``); graph size, WL-LESINN and WL counts are fitted on the fit
part with and without the pool, each scores the calibration and test graphs, and the fast
consensus (graph size and WL-LESINN, Fisher's rule on conformal p-values) is formed from them.
Then the novelty check outside the 14 rows: the first 20,000 molecules of MOSES's training set as
the training set, the next 2,000 as normal test molecules and the 655 of ``herg.tab`` as novel;
and, reported after the decision, the same with the molecules of Tox21's testing files as novel.
Prints and writes JSON (``--json``).

    PYTHONPATH=. OMP_NUM_THREADS=1 python -m research.consensus.pool_size [--json OUT]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from core import load, roc_auc
from core.detectors.catalog import make_single
from core.detectors.consensus import VIEW_POOL_SIZE, combine_p_values
from core.detectors.conformal import DEFAULT_CALIBRATION_FRACTION, calibration_split, conformal_p_values

DATA = Path(os.environ.get("DATASETS", "../shared/datasets"))
ROWS = ("Tox21_HSE", "Tox21_p53")
VIEWS = ("wl-lesinn", "wl-count-lesinn")


def fold_figures(normal, test, y: np.ndarray, seed: int) -> dict:
    """ROC-AUCs and the test normals' share with p < 0.05, each view and the fast consensus, both ways."""
    fit_idx, cal_idx = calibration_split(len(normal), DEFAULT_CALIBRATION_FRACTION, seed)
    fit, cal = normal.subset(fit_idx), normal.subset(cal_idx)
    out = {"fit_graphs": len(fit)}
    size = make_single("size", seed=seed).fit(fit)
    p_size = conformal_p_values(size.score(cal).score, size.score(test).score)
    for pool in (None, VIEW_POOL_SIZE):
        tag = "pool" if pool else "all"
        p = {}
        for view in VIEWS:
            start = time.perf_counter()
            model = make_single(view, seed=seed, pool_size=pool).fit(fit)
            test_scores = model.score(test).score
            p[view] = conformal_p_values(model.score(cal).score, test_scores)
            out[f"{view}:{tag}:auc"] = roc_auc(y, test_scores)
            out[f"{view}:{tag}:flagged"] = float(np.mean(p[view][y == 0] < 0.05))
            out[f"{view}:{tag}:seconds"] = round(time.perf_counter() - start, 2)
        fast = combine_p_values(np.column_stack([p_size, p["wl-lesinn"]]), "fisher")
        out[f"fast:{tag}:auc"] = roc_auc(y, fast)
    return out


def tox21(row: str) -> list[dict]:
    """The harness's five Tox21 runs (model seeds 0-4) of a row."""
    from research.ranking.fold_scores import folds

    out = []
    for k, seed, normal, _known, test, y in folds(row):
        figures = fold_figures(normal, test, y.astype(int), seed)
        print(row, k, json.dumps(figures), flush=True)
        out.append(figures)
    return out


def outside_smiles(outside: str) -> list[str]:
    """The outside collection's SMILES: hERG's 655 molecules (the rule's check), or the molecules of
    Tox21's two testing files rebuilt from their element and bond labels, each structure once (an
    extra check, reported after the decision)."""
    if outside == "herg":
        return [m.smiles for m in load(DATA / "herg.tab").meta]
    from rdkit import Chem

    from core.detectors.ecfp import molecules

    out: dict[str, None] = {}
    for name in ("Tox21_HSE_testing", "Tox21_p53_testing"):
        for mol in molecules(load(DATA / name)):
            try:
                text = Chem.MolToSmiles(mol)
            except (RuntimeError, ValueError):  # a rebuilt molecule RDKit cannot write
                continue
            if Chem.MolFromSmiles(text) is not None:
                out.setdefault(text, None)
    return list(out)


def novelty(outside: str = "herg", train_rows: int = 20_000, test_rows: int = 2_000) -> list[dict]:
    """MOSES-trained views scoring other MOSES molecules (normal) against an outside collection (novel)."""
    novel = outside_smiles(outside)
    with gzip.open(DATA / "moses" / "train.csv.gz", "rt") as src, tempfile.TemporaryDirectory() as tmp:
        next(src)
        rows = [line.split(",")[0] for line in itertools.islice(src, train_rows + test_rows)]
        train, moses = Path(tmp) / "train.smi", Path(tmp) / "moses.smi"
        train.write_text("smiles\n" + "\n".join(rows[:train_rows]) + "\n")
        moses.write_text("smiles\n" + "\n".join(rows[train_rows:] + novel) + "\n")
        normal, test = load(train), load(moses)
        if len(test) != test_rows + len(novel):
            raise SystemExit(f"{len(test)} test molecules read, not {test_rows + len(novel)}")
        y = np.r_[np.zeros(test_rows, dtype=int), np.ones(len(novel), dtype=int)]
        figures = fold_figures(normal, test, y, 0)
        print("novelty", outside, len(novel), json.dumps(figures), flush=True)
        return [figures]


def summary(folds: list[dict]) -> dict:
    """Per figure: mean with the pool, without, the mean difference and its standard error."""
    out = {}
    for key in ("wl-lesinn", "wl-count-lesinn", "fast"):
        a = np.array([f[f"{key}:all:auc"] for f in folds])
        b = np.array([f[f"{key}:pool:auc"] for f in folds])
        d = b - a
        se = float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else None  # one fit: no spread
        out[key] = {"all": float(a.mean()), "pool": float(b.mean()), "difference": float(d.mean()), "se": se}
    for view in VIEWS:
        out[f"{view}:flagged"] = {tag: float(np.mean([f[f"{view}:{tag}:flagged"] for f in folds])) for tag in ("all", "pool")}
        out[f"{view}:seconds"] = {tag: float(np.mean([f[f"{view}:{tag}:seconds"] for f in folds])) for tag in ("all", "pool")}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    results = {}
    for row in ROWS:
        folds = tox21(row)
        results[row] = {"folds": folds, "summary": summary(folds)}
    folds = novelty("herg")
    results["novelty"] = {"folds": folds, "summary": summary(folds)}
    folds = novelty("tox21-testing")
    results["novelty_tox21_testing"] = {"folds": folds, "summary": summary(folds)}
    for name, r in results.items():
        print(name, json.dumps(r["summary"], indent=1))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
