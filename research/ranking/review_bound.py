"""How far 30 reviews could lift the unreviewed rest at best: bounds read from the test labels,
never a method (research/README.md, "What 30 reviews can give at best").

On each fold of fold_scores.py's per-fold scores, the simulated analyst of review_simulation.py
reviews 30 graphs on the fast consensus; its unreviewed rest is then ranked three ways that no
loop could match, each using the rest's own labels:

- ``best_view``: the best of the five label-free views (graph size, WL-LESINN, WL counts, KME,
  spectral), chosen per fold on the rest's labels;
- ``best_weights``: the best Fisher weighting of the five views' p-values, weights from
  {0, 0.25, 0.5, 0.75, 1} each, chosen per fold on the rest's labels;
- ``supervised``: a class-balanced logistic regression (scikit-learn, ``C=1``) on the WL-LESINN
  view's cosine-normalised WL features and the five views' standardised ``-log p``, trained on
  four fifths of the rest's labels and scoring the fifth (stratified 5-fold cross-validation):
  hundreds of labels, against the loop's 30.

And the anomalies that 30 perfect reviews find: ``min(30, anomalies in the fold's test set)``,
against the label-free top 30's. Prints a table and writes JSON (``--json``).

With ``--found``, bounds on the other goal, the anomalies found in 30 reviews, on the default
consensus (GLocalKD, WL-LESINN, graph size; the folds' GLocalKD fits needed), each read from the
fold's test labels over the six views (GLocalKD and the five above):

- ``default_top30``: the default's label-free top 30; ``found_loop``: the current loop's 30 reviews;
- ``found_best_view``: the best single view's top 30, chosen per fold;
- ``found_best_weights``: the best Fisher weighting's top 30, weights from {0, ¼, ½, ¾, 1} each;
- ``found_clairvoyant``: three rounds of ten, each round the weighting whose ten highest unreviewed
  graphs hold the most anomalies (a loop that knew the labels of the next ten it reviews);
- ``found_supervised``: the top 30 of a class-balanced logistic regression on the WL features and
  the six views' ``-log p``, out-of-fold over all the test graphs (stratified 5-fold CV).

``--add-view VIEW`` reads one more view of the fold files beside the six (repeatable).

    PYTHONPATH=. OMP_NUM_THREADS=1 python research/ranking/review_bound.py [ROW ...] [--found [--add-view V]] [--json OUT]
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fold_scores import ROWS, fold_paths, kernel_columns, load_fold, row_folder
from review_simulation import COMPONENTS, RESERVE, ROUNDS, PER_ROUND, _loop, _rank

VIEWS = ("size", "wl-lesinn", "wl-count-lesinn", "kme-lesinn", "spectral-lesinn")
GRID = np.array([w for w in itertools.product((0.0, 0.25, 0.5, 0.75, 1.0), repeat=len(VIEWS)) if sum(w) > 0])


def columns_auc(y: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """ROC-AUC of each column of ``scores`` (ties count half), by the rank-sum formula."""
    from scipy.stats import rankdata

    ranks = rankdata(scores, axis=0)
    positives, negatives = int(y.sum()), int((~y).sum())
    return (ranks[y].sum(axis=0) - positives * (positives + 1) / 2) / (positives * negatives)


def fold_bounds(d: dict) -> dict:
    """One fold's rest after the simulated loop, and the three bounds on it."""
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.preprocessing import normalize

    from core.detectors.conformal import conformal_p_values
    from core.evaluation.metrics import roc_auc

    y = d["y"].astype(bool)
    views = COMPONENTS + RESERVE
    free = _rank(d, {}, views).statistic
    marks, final = _loop(d, y, views)
    rest = np.setdiff1d(np.arange(len(y)), list(marks))
    yr = y[rest]
    logp = np.column_stack([-np.log(conformal_p_values(d[f"{v}:cal"], d[f"{v}:test"])) for v in VIEWS])[rest]
    out = {"found": int(sum(marks.values())), "top30_label_free": int(y[np.argsort(-free, kind="stable")[:30]].sum()),
           "found_perfect": int(min(ROUNDS * PER_ROUND, y.sum())),
           "rest_label_free": roc_auc(yr, free[rest]), "rest_review": roc_auc(yr, final.statistic[rest])}
    out["best_view"] = max(roc_auc(yr, logp[:, j]) for j in range(len(VIEWS)))
    out["best_weights"] = float(columns_auc(yr, logp @ GRID.T).max())
    splits = int(min(5, yr.sum(), (~yr).sum()))
    kernel = kernel_columns(d)
    if kernel is not None and splits >= 2:
        standard = (logp - logp.mean(0)) / (logp.std(0) + 1e-9)
        x = sp.hstack([normalize(kernel.features.tocsr()[rest]), sp.csr_matrix(standard)]).tocsr()
        model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000)
        cv = StratifiedKFold(splits, shuffle=True, random_state=0)
        out["supervised"] = roc_auc(yr, cross_val_predict(model, x, yr, cv=cv, method="decision_function"))
    return out


FOUND_VIEWS = ("glocalkd",) + VIEWS


def weight_grid(n_views: int) -> np.ndarray:
    """Every weighting of ``n_views`` views with weights from {0, 1/4, 1/2, 3/4, 1}, all zero left out."""
    return np.array([w for w in itertools.product((0.0, 0.25, 0.5, 0.75, 1.0), repeat=n_views) if sum(w) > 0])
DEFAULT_VIEWS = ("glocalkd", "wl-lesinn", "size")  # core.detectors.consensus.DEFAULT_COMPONENTS


def _top(y: np.ndarray, scores: np.ndarray, k: int = ROUNDS * PER_ROUND) -> int:
    """Anomalies among the ``k`` highest scores (ties in index order)."""
    return int(y[np.argsort(-scores, kind="stable")[:k]].sum())


def clairvoyant_found(y: np.ndarray, combined: np.ndarray) -> int:
    """Anomalies found by ROUNDS rounds of PER_ROUND reviews, each round reviewing the ten highest
    unreviewed graphs of whichever column of ``combined`` (graphs x weightings) holds the most."""
    left, found = np.ones(len(y), bool), 0
    for _ in range(ROUNDS):
        masked = np.where(left[:, None], combined, -np.inf)
        tops = np.argpartition(-masked, PER_ROUND, axis=0)[:PER_ROUND]
        hits = y[tops].sum(axis=0)
        best = int(np.argmax(hits))
        found += int(hits[best])
        left[tops[:, best]] = False
    return found


def fold_found_bounds(d: dict, views_read: tuple = FOUND_VIEWS) -> dict:
    """One fold's anomalies found in 30 reviews: the default's label-free top 30, the current loop,
    and the bounds of the module docstring (``--found``) over ``views_read`` (those the fold holds:
    a view that cannot read the row's graphs, e.g. one for molecules only, is left out)."""
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.preprocessing import normalize

    from core.detectors.conformal import conformal_p_values

    y = d["y"].astype(bool)
    views_read = tuple(v for v in views_read if f"{v}:test" in d)
    views = DEFAULT_VIEWS + RESERVE
    marks, _ = _loop(d, y, views, components=DEFAULT_VIEWS)
    logp = np.column_stack([-np.log(conformal_p_values(d[f"{v}:cal"], d[f"{v}:test"])) for v in views_read])
    combined = logp @ weight_grid(len(views_read)).T
    out = {"default_top30": _top(y, _rank(d, {}, views, components=DEFAULT_VIEWS).statistic),
           "found_loop": int(sum(marks.values())),
           "found_best_view": max(_top(y, logp[:, j]) for j in range(len(views_read))),
           "found_best_weights": max(_top(y, combined[:, i]) for i in range(combined.shape[1])),
           "found_clairvoyant": clairvoyant_found(y, combined),
           "found_perfect": int(min(ROUNDS * PER_ROUND, y.sum()))}
    kernel = kernel_columns(d)
    splits = int(min(5, y.sum(), (~y).sum()))
    if kernel is not None and splits >= 2:
        standard = (logp - logp.mean(0)) / (logp.std(0) + 1e-9)
        x = sp.hstack([normalize(kernel.features.tocsr()), sp.csr_matrix(standard)]).tocsr()
        model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000)
        cv = StratifiedKFold(splits, shuffle=True, random_state=0)
        out["found_supervised"] = _top(y, cross_val_predict(model, x, y, cv=cv, method="decision_function"))
    return out


def main(argv: list[str] | None = None) -> dict:
    """Every fold of the rows asked (all 14 by default); per-row means and the mean of the rows."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("rows", nargs="*", default=list(ROWS))
    p.add_argument("--found", action="store_true", help="the bounds on the anomalies found, on the default consensus")
    p.add_argument("--add-view", action="append", default=[],
                   help="with --found: a view of the fold files read beside the six (e.g. rare-substructure)")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    keys = ("rest_label_free", "rest_review", "best_view", "best_weights", "supervised",
            "top30_label_free", "found", "found_perfect")
    if args.found:
        keys = ("default_top30", "found_loop", "found_best_view", "found_best_weights", "found_clairvoyant",
                "found_supervised", "found_perfect")
    views_read = FOUND_VIEWS + tuple(args.add_view)
    bounds = (lambda d: fold_found_bounds(d, views_read)) if args.found else fold_bounds
    per_row = {}
    print("| data set (rule) | " + " | ".join(keys) + " |\n" + "|---" * (len(keys) + 1) + "|")
    for row in args.rows:
        folds = [bounds(load_fold(path)) for path in fold_paths(row_folder(row))]
        per_row[row] = {k: float(np.mean([f[k] for f in folds if k in f])) if any(k in f for f in folds) else None
                        for k in keys}
        print(f"| {row} | " + " | ".join("n/a" if per_row[row][k] is None else f"{per_row[row][k]:.3f}"
                                         for k in keys) + " |", flush=True)
    mean = {k: float(np.mean([r[k] for r in per_row.values() if r[k] is not None])) for k in keys}
    print("| **mean** | " + " | ".join(f"{mean[k]:.3f}" for k in keys) + " |")
    if args.found:  # each figure against the default's label-free top 30, on the mean of the rows
        result = {"views": list(views_read), "per_row": per_row, "mean": mean,
                  "ratio": {k: mean[k] / mean["default_top30"] for k in keys if k != "default_top30"}}
        print("against the label-free top 30: " + ", ".join(f"{k} {v:.3f}" for k, v in result["ratio"].items()))
    else:
        result = {"views": list(views_read), "per_row": per_row, "mean": mean, "found_ratio": mean["found"] / mean["top30_label_free"],
                  "found_perfect_ratio": mean["found_perfect"] / mean["top30_label_free"]}
        print(f"found in 30 reviews / label-free top 30: {result['found_ratio']:.3f}; "
              f"with 30 perfect reviews: {result['found_perfect_ratio']:.3f}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
