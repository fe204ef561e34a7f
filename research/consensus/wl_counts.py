"""A WL view that keeps size: LESINN on the *unnormalised* Weisfeiler-Lehman subtree counts.

Usage (from a checkout whose ``research/consensus/dumps`` holds dump.py's per-fold files)::

    OMP_NUM_THREADS=1 python -m research.consensus.wl_counts [ROW ...]   # dump the view
    python -m research.consensus.wl_counts --summary

Why: WL-LESINN's kernel is normalised (cosine), so a graph is compared by the *shares* of its
subtrees, and a large graph's shares regress towards the common ones: on AIDS, where graph size
alone reaches 0.989, WL-LESINN ranks the anomalies below the normal graphs (0.275). With the
raw counts, ``d(x, y)^2 = k(x, x) + k(y, y) - 2 k(x, y)``, a graph with many more or fewer
subtrees is far from the training graphs, and unseen subtrees still count in ``k(x, x)``.

Fixed before the first run, the same for every data set: WL subtree features with 3 iterations
fitted on the fold's fit part (as the product's WL-LESINN), LESINN(256, 256) on those distances,
seed = the fold's model seed. Candidates: the view alone, the default with it in place of
WL-LESINN, and the default with it as a fourth view (Fisher over conformal p-values). Adoption,
as the study's rule says: a mean over the 14 rows above the default's by more than two standard
errors of the per-row differences, and no more rows below 0.5.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from research.consensus.combine import ROWS as ROW_ORDER, conformal_p  # noqa: E402

NAME = "wl-count-lesinn"
DUMPS = Path(__file__).resolve().parent / "dumps"


def count_distances(a, sq_a, b, sq_b) -> np.ndarray:
    """Euclidean distances between raw WL count vectors (rows of ``a`` against rows of ``b``)."""
    d = np.asarray((a @ b.T).toarray(), dtype=np.float64)
    d *= -2.0
    d += sq_a[:, None]
    d += sq_b[None, :]
    np.clip(d, 0.0, None, out=d)
    return np.sqrt(d, out=d)


def dump_row(row: str) -> None:
    from core.detectors.graph_kernels import labelled_graphs
    from core.detectors.lesinn import LESINN
    from core.detectors.wl_features import WLFeatures
    from dump import folds_of

    runs, graphs, _, _ = folds_of(row.replace("__", ":"))  # dump.py names rows with a colon
    labelled = labelled_graphs(graphs)
    test_cache = {}
    for k, seed, _train_idx, test_set, y_test, _test_idx in runs:
        fdir = DUMPS / row / f"fold{k}"
        if not (fdir / "meta.npz").exists() or (fdir / f"{NAME}.npz").exists():
            continue
        meta = np.load(fdir / "meta.npz")
        assert np.array_equal(meta["y_test"], y_test) and int(meta["seed"]) == seed
        t = time.perf_counter()
        wl = WLFeatures(3)
        f_fit, sq_fit = wl.fit([labelled[i] for i in meta["fit_idx"]])
        f_cal, sq_cal = wl.transform([labelled[i] for i in meta["cal_idx"]])
        if id(test_set) not in test_cache:
            test_cache.clear()
            test_cache[id(test_set)] = labelled_graphs(test_set)
        f_test, sq_test = wl.transform(test_cache[id(test_set)])
        model = LESINN(256, 256, metric="precomputed", seed=seed).fit(count_distances(f_fit, sq_fit, f_fit, sq_fit))
        cal = model.decision_function(count_distances(f_cal, sq_cal, f_fit, sq_fit))
        test = model.decision_function(count_distances(f_test, sq_test, f_fit, sq_fit))
        np.savez(fdir / f"{NAME}.npz", fit=model.train_scores_, cal=cal, test=test)
        print(f"{row} fold {k}: {time.perf_counter() - t:.1f} s, test AUC {roc_auc_score(y_test, test):.3f}",
              file=sys.stderr, flush=True)


def summary() -> int:
    singles = ("glocalkd", "size", "wl-lesinn", "pk-lesinn", "ocgcn")
    cands = {"default": ("glocalkd", "size", "wl-lesinn"), NAME: (NAME,),
             f"{NAME} for WL-LESINN": ("glocalkd", "size", NAME),
             f"+{NAME}": ("glocalkd", "size", "wl-lesinn", NAME)}
    table, best = {}, {}
    for row in ROW_ORDER:
        acc: dict[str, list[float]] = {}
        single: dict[str, list[float]] = {}
        for fdir in sorted((DUMPS / row).glob("fold*")):
            y = np.load(fdir / "meta.npz")["y_test"].astype(int)
            ev = {}
            for c in set(singles) | {NAME}:
                if (fdir / f"{c}.npz").exists():
                    z = np.load(fdir / f"{c}.npz")
                    ev[c] = -2.0 * np.log(conformal_p(z["cal"], z["test"]))
                    if c in singles:
                        single.setdefault(c, []).append(roc_auc_score(y, z["test"]))
            if NAME not in ev:
                raise SystemExit(f"{fdir}: no {NAME}.npz; run this script with the row first")
            for cand, views in cands.items():
                acc.setdefault(cand, []).append(roc_auc_score(y, sum(ev[v] for v in views)))
        table[row] = {c: float(np.mean(v)) for c, v in acc.items()}
        best[row] = max(float(np.mean(v)) for v in single.values())
    default = np.array([table[r]["default"] for r in ROW_ORDER])
    print("row".ljust(28) + "".join(c[:24].rjust(26) for c in cands) + "best single".rjust(13))
    for row in ROW_ORDER:
        print(row[:27].ljust(28) + "".join(f"{table[row][c]:26.3f}" for c in cands) + f"{best[row]:13.3f}")
    for c in cands:
        a = np.array([table[r][c] for r in ROW_ORDER])
        d = a - default
        within = sum(x >= best[r] - 0.03 for x, r in zip(a, ROW_ORDER))
        print(f"{c:32s} mean {a.mean():.3f}  gain {d.mean():+.3f} (SE {d.std(ddof=1) / np.sqrt(len(d)):.3f})  "
              f"within 0.03: {within}  below 0.5: {int((a < 0.5).sum())}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*")
    ap.add_argument("--summary", action="store_true")
    args = ap.parse_args(argv)
    if args.summary:
        return summary()
    for row in args.rows or ROW_ORDER:
        dump_row(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
