"""Dump per-fold component scores for the consensus-detector study (issue: consensus detector).

Usage (from the worktree root, so that ``import core`` is this worktree's)::

    nice -n 10 python -m research.consensus.dump ROW [--components ...] [--ocgcn]
        [--only 1,2] [--seeds 5]

ROW is one of the 14 rows of docs/results.md's competitor table: ``AIDS``, ``BZR``,
``BZR:first-label``, ``DHFR``, ``DHFR:first-label``, ``ENZYMES``, ``hERG``, ``IMDB-BINARY``,
``PROTEINS_full``, ``PROTEINS_full:first-label``, ``NCI1``, ``Tox21_HSE``, ``Tox21_p53``,
``REDDIT-BINARY``.

Folds are the harness's (core/evaluate.py): ``cv`` = StratifiedKFold(5, shuffle, seed 1) over
the labelled graphs' labels as text; ``split`` (Tox21) = the training file's labelled graphs,
the testing file's labelled graphs, model seeds 0..4. The anomalous class comes from
``core.evaluate.choose_anomaly_label`` with the same rule as the table's row.

Per fold (or seed run) k: the training part's NORMAL graphs are permuted with
``np.random.default_rng([20221, k])`` and split into fit (the first 80 %, rounded) and
calibration (the other 20 %). Every component is fitted on the fit part only, and scores the
fit part (GLocalKD: a forward pass; the others: their own ``train_scores_``), the calibration
graphs and the test graphs. Nothing here looks at a test label except to store it.

Output: ``research/consensus/dumps/<row>/fold<k>/meta.npz`` (labels, indices) and one
``<component>.npz`` per component (scores of fit / cal / test, and for GLocalKD a per-graph
summary matrix of its errors), plus ``dumps/<row>/times.json`` (wall seconds of fit and of
scoring per component and fold). A component already dumped for a fold is skipped, so the
script can be rerun to resume or to add ``--ocgcn``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

DATA = Path(os.environ.get("DATASETS", "../shared/datasets"))  # the folder holding the benchmark data sets
HERE = Path(__file__).resolve().parent
DUMPS = HERE / "dumps"
CAL_FRACTION = 0.2
SPLIT_SEED = 20221

ROWS = {
    "AIDS": ("AIDS", "cv", None, "minority"),
    "BZR": ("BZR", "cv", None, "minority"),
    "BZR:first-label": ("BZR", "cv", None, "first-label"),
    "DHFR": ("DHFR", "cv", None, "minority"),
    "DHFR:first-label": ("DHFR", "cv", None, "first-label"),
    "ENZYMES": ("ENZYMES", "cv", None, "minority"),
    "hERG": ("herg.tab", "cv", None, "0"),
    "IMDB-BINARY": ("IMDB-BINARY", "cv", None, "minority"),
    "PROTEINS_full": ("PROTEINS_full", "cv", None, "minority"),
    "PROTEINS_full:first-label": ("PROTEINS_full", "cv", None, "first-label"),
    "NCI1": ("NCI1", "cv", None, "minority"),
    "Tox21_HSE": ("Tox21_HSE_training", "split", "Tox21_HSE_testing", "minority"),
    "Tox21_p53": ("Tox21_p53_training", "split", "Tox21_p53_testing", "minority"),
    "REDDIT-BINARY": ("REDDIT-BINARY", "cv", None, "minority"),
}
DEFAULT_COMPONENTS = ("size", "wl-lesinn", "pk-lesinn", "glocalkd")
FEATURES = ("graph", "node_mean", "node_std", "node_max", "node_q50", "node_q90", "size_readout",
            "log_nodes", "log_edges")


def row_dir(row: str) -> Path:
    return DUMPS / row.replace(":", "__")


def folds_of(row: str, n_seeds: int = 5):
    """[(k, model seed, train GraphSet indices, test GraphSet, test anomalous 0/1)], the graphs,
    the anomalous label. The same folds as core.evaluate.evaluate."""
    from sklearn.model_selection import StratifiedKFold

    from core import load
    from core import choose_anomaly_label

    data, protocol, test, rule = ROWS[row]
    graphs = load(DATA / data)
    labelled = [i for i, lab in enumerate(graphs.labels) if lab is not None]
    if len(labelled) < len(graphs):
        graphs = graphs.subset(labelled)
    anomaly = choose_anomaly_label(graphs, rule)
    labels = np.array(graphs.labels, dtype=object)
    is_anom = labels == anomaly
    runs = []
    if protocol == "cv":
        splitter = StratifiedKFold(n_splits=5, shuffle=True, random_state=1)
        for k, (tr, te) in enumerate(splitter.split(np.zeros(len(labels)), labels.astype(str)), start=1):
            runs.append((k, 0, tr, graphs.subset(te.tolist()), is_anom[te].astype(np.int8), te))
    else:
        tg = load(DATA / test)
        t_labels = np.array(tg.labels, dtype=object)
        keep = [i for i, lab in enumerate(t_labels) if lab is not None]
        test_set = tg.subset(keep)
        y = (t_labels[keep] == anomaly).astype(np.int8)
        for k, seed in enumerate(range(n_seeds), start=1):
            runs.append((k, seed, np.arange(len(labels)), test_set, y, np.asarray(keep)))
    return runs, graphs, is_anom, anomaly


def glocalkd_features(scores, graphs) -> np.ndarray:
    """Per-graph summaries of one GLocalKD model's errors (columns: FEATURES)."""
    n = len(scores)
    out = np.zeros((n, len(FEATURES)), dtype=np.float64)
    p = scores.parts
    ptr = scores.node_ptr
    err = scores.node_errors.astype(np.float64)
    for i in range(n):
        e = err[ptr[i]:ptr[i + 1]]
        if len(e) == 0:
            e = np.zeros(1)
        out[i, 2] = e.std()
        out[i, 4], out[i, 5] = np.quantile(e, [0.5, 0.9])
    out[:, 0] = p["graph"]
    out[:, 1] = p["node_mean"]
    out[:, 3] = p["node_max"]
    out[:, 6] = p["size"]
    out[:, 7] = np.log1p([int(g.num_nodes) for g in graphs.graphs])
    out[:, 8] = np.log1p([int(g.edge_index.shape[1]) / 2 for g in graphs.graphs])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("row", choices=sorted(ROWS))
    ap.add_argument("--components", default=",".join(DEFAULT_COMPONENTS))
    ap.add_argument("--ocgcn", action="store_true", help="also OCGCN at its defaults (last)")
    ap.add_argument("--only", default=None, help="fold / seed-run numbers, e.g. 1,2")
    ap.add_argument("--seeds", type=int, default=5, help="split protocol: seed runs")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from core import make_detector

    comps = [c for c in args.components.split(",") if c]
    if args.ocgcn and "ocgcn" not in comps:
        comps.append("ocgcn")
    only = None if args.only is None else {int(v) for v in args.only.split(",")}
    log = lambda m: print(time.strftime("%H:%M:%S"), m, file=sys.stderr, flush=True)  # noqa: E731

    t0 = time.perf_counter()
    runs, graphs, is_anom, anomaly = folds_of(args.row, args.seeds)
    log(f"{args.row}: {len(graphs)} graphs, anomalous class {anomaly!r}, loaded in {time.perf_counter() - t0:.1f} s")
    out = row_dir(args.row)
    out.mkdir(parents=True, exist_ok=True)
    times_path = out / "times.json"
    times = json.loads(times_path.read_text()) if times_path.exists() else {}
    times.setdefault("row", args.row)
    times.setdefault("anomaly_label", str(anomaly))
    times.setdefault("folds", {})

    for k, seed, train_idx, test_set, y_test, test_idx in runs:
        if only is not None and k not in only:
            continue
        fdir = out / f"fold{k}"
        fdir.mkdir(exist_ok=True)
        normal = np.asarray(train_idx)[~is_anom[train_idx]]
        perm = np.random.default_rng([SPLIT_SEED, k]).permutation(len(normal))
        n_cal = int(round(CAL_FRACTION * len(normal)))
        cal_idx, fit_idx = np.sort(normal[perm[:n_cal]]), np.sort(normal[perm[n_cal:]])
        fit_set, cal_set = graphs.subset(fit_idx.tolist()), graphs.subset(cal_idx.tolist())
        np.savez(fdir / "meta.npz", y_test=y_test, fit_idx=fit_idx, cal_idx=cal_idx, test_idx=test_idx,
                 seed=seed, n_fit=len(fit_idx), n_cal=len(cal_idx), n_test=len(y_test),
                 n_test_anom=int(y_test.sum()))
        ft = times["folds"].setdefault(str(k), {"seed": seed, "n_fit": len(fit_idx), "n_cal": len(cal_idx),
                                                "n_test": len(y_test), "n_test_anom": int(y_test.sum())})
        log(f"fold {k} (seed {seed}): fit {len(fit_idx)}, cal {len(cal_idx)}, test {len(y_test)} "
            f"({int(y_test.sum())} anomalous)")
        for comp in comps:
            path = fdir / f"{comp}.npz"
            if path.exists():
                continue
            model = make_detector(comp, seed=seed)
            t = time.perf_counter()
            model.fit(fit_set)
            fit_s = time.perf_counter() - t
            t = time.perf_counter()
            s_cal = model.score(cal_set)
            cal_s = time.perf_counter() - t
            t = time.perf_counter()
            s_test = model.score(test_set)
            test_s = time.perf_counter() - t
            arrays = {"cal": s_cal.score.astype(np.float64), "test": s_test.score.astype(np.float64)}
            if comp == "glocalkd":
                t = time.perf_counter()
                s_fit = model.score(fit_set)
                fit_score_s = time.perf_counter() - t
                arrays["fit"] = s_fit.score.astype(np.float64)
                arrays["feat_fit"] = glocalkd_features(s_fit, fit_set)
                arrays["feat_cal"] = glocalkd_features(s_cal, cal_set)
                arrays["feat_test"] = glocalkd_features(s_test, test_set)
                arrays["feat_names"] = np.array(FEATURES)
                arrays["final_loss"] = np.array(model.loss_history_[-1])
            else:
                fit_score_s = 0.0
                arrays["fit"] = np.asarray(model.train_scores_, dtype=np.float64)
            np.savez(path, **arrays)
            ft[comp] = {"fit_seconds": fit_s, "score_cal_seconds": cal_s, "score_test_seconds": test_s,
                        "score_fit_seconds": fit_score_s,
                        "score_seconds_per_graph": (cal_s + test_s) / max(1, len(cal_set) + len(test_set))}
            times_path.write_text(json.dumps(times, indent=1) + "\n")
            from sklearn.metrics import roc_auc_score

            log(f"  {comp}: fit {fit_s:.1f} s, score {cal_s + test_s:.2f} s; test AUC "
                f"{roc_auc_score(y_test, arrays['test']):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
