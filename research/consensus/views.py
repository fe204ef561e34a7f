"""Dump new consensus components: a graph-statistics view and a node-label composition view.

Usage (worktree root, one row at a time, niced)::

    OMP_NUM_THREADS=1 nice -n 19 python -m research.consensus.views ROW [ROW ...]

Same folds, fit / calibration / test split and seeds as dump.py: the fold's ``meta.npz`` is
read, never re-drawn (and checked against dump.folds_of). Every setting below was fixed
before any run and is the same for every data set; only the fit part's graphs are used to fit
(vocabulary, standardisation, one-class models); test labels are only stored by dump.py.

Per graph, the structure vector (8 values)::

    log1p(nodes), log1p(undirected edges), density 2m / (n (n - 1)), degree mean, degree std,
    log1p(degree max), log1p(cycle rank m - n + c), log1p(connected components c)

and for labelled graphs (TU node labels, or a molecule's elements; plain graphs have none,
their "label" would be the degree, already in the structure vector)::

    label entropy (natural log, over the graph's own labels), share of nodes whose label the
    fit part never shows ("unseen"), the normalised histogram over the fit part's labels

Components written per fold (``<name>.npz`` with fit / cal / test scores, as dump.py):

- ``gstats-if``: IsolationForest(n_estimators=256, random_state=seed) on the full vector
  (structure + entropy + unseen + histogram), standardised with the fit part's mean and std
  (std 0 -> 1);
- ``gstats-lesinn``: LESINN(256, 256, euclidean, seed) on the same standardised vector;
- ``struct-if`` / ``struct-lesinn``: the same on the 8 structure values only;
- ``labels-lesinn`` (labelled rows only): LESINN(256, 256, euclidean, seed) on the raw
  normalised histogram plus the unseen share (a composition, not standardised).

``seed`` is the fold's model seed (0 for the cross-validated rows, 0..4 for Tox21's runs), as
for the other components. Per-component wall times go to ``dumps/<row>/views_times.json``.
"""
from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.sparse import csr_matrix  # noqa: E402
from scipy.sparse.csgraph import connected_components  # noqa: E402

from research.consensus.dump import ROWS, folds_of, row_dir  # noqa: E402

STRUCT = ("log_nodes", "log_edges", "density", "deg_mean", "deg_std", "log_deg_max", "log_cycle_rank",
          "log_components")
COMPONENTS = ("gstats-if", "gstats-lesinn", "struct-if", "struct-lesinn", "labels-lesinn")


def structure(edge_index: np.ndarray, n: int) -> np.ndarray:
    m = edge_index.shape[1] / 2.0  # as core.detectors.size counts edges
    if n == 0:
        return np.zeros(len(STRUCT))
    deg = np.bincount(edge_index[0], minlength=n).astype(np.float64)
    density = 2.0 * m / (n * (n - 1)) if n > 1 else 0.0
    adj = csr_matrix((np.ones(edge_index.shape[1]), (edge_index[0], edge_index[1])), shape=(n, n))
    c = connected_components(adj, directed=False)[0]
    cyc = max(m - n + c, 0.0)
    return np.array([np.log1p(n), np.log1p(m), density, deg.mean(), deg.std(), np.log1p(deg.max()),
                     np.log1p(cyc), np.log1p(c)])


def is_labelled(graphs) -> bool:
    from core.data.chem import ELEMENTS

    g = graphs.graphs[0]
    if g.get("node_label") is not None:
        return True
    x = g.get("x")
    return x is not None and x.shape[1] > len(ELEMENTS)


def per_graph(graphs) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """(graphs, 8) structure values and, for labelled sets, each graph's node labels."""
    from core.detectors.graph_kernels import node_labels

    S = np.stack([structure(g.edge_index.numpy().astype(np.int64), int(g.num_nodes)) for g in graphs.graphs])
    labels = [node_labels(g) for g in graphs.graphs] if is_labelled(graphs) else None
    return S, labels


def label_block(labels: list[np.ndarray], vocab: np.ndarray) -> np.ndarray:
    """(graphs, 2 + len(vocab)): entropy, unseen share, normalised histogram over vocab."""
    out = np.zeros((len(labels), 2 + len(vocab)))
    for i, lab in enumerate(labels):
        n = len(lab)
        if n == 0:
            continue
        _, cnt = np.unique(lab, return_counts=True)
        p = cnt / n
        out[i, 0] = -(p * np.log(p)).sum()
        pos = np.searchsorted(vocab, lab)
        known = (pos < len(vocab)) & (vocab[np.minimum(pos, len(vocab) - 1)] == lab)
        out[i, 1] = 1.0 - known.mean()
        np.add.at(out[i], 2 + pos[known], 1.0 / n)
    return out


def standardise(fit: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    mu, sd = fit.mean(0), fit.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    return [(a - mu) / sd for a in (fit,) + others]


def score_if(Xf, Xc, Xt, seed):
    from sklearn.ensemble import IsolationForest

    m = IsolationForest(n_estimators=256, random_state=seed).fit(Xf)
    return -m.score_samples(Xf), -m.score_samples(Xc), -m.score_samples(Xt)


def score_lesinn(Xf, Xc, Xt, seed):
    from core.detectors.lesinn import LESINN

    m = LESINN(256, 256, metric="euclidean", seed=seed).fit(Xf)
    return m.train_scores_, m.decision_function(Xc), m.decision_function(Xt)


def run_row(row: str, seed_offset: int = 0) -> None:
    """``seed_offset`` > 0: a robustness check, only the gstats views with seed + offset * 1000,
    written as ``<component>@<offset>.npz``."""
    log = lambda m: print(time.strftime("%H:%M:%S"), m, file=sys.stderr, flush=True)  # noqa: E731
    t0 = time.perf_counter()
    runs, graphs, is_anom, anomaly = folds_of(row)
    S_all, L_all = per_graph(graphs)
    tests = {}  # split protocol: one test set shared by the runs
    log(f"{row}: {len(graphs)} graphs, labelled {L_all is not None}, features {time.perf_counter() - t0:.1f} s")
    out = row_dir(row)
    tpath = out / "views_times.json"
    times = json.loads(tpath.read_text()) if tpath.exists() else {}
    for k, seed, _train_idx, test_set, y_test, test_idx in runs:
        fdir = out / f"fold{k}"
        if not (fdir / "meta.npz").exists():
            continue
        meta = np.load(fdir / "meta.npz")
        fit_idx, cal_idx = meta["fit_idx"], meta["cal_idx"]
        assert np.array_equal(meta["y_test"], y_test) and np.array_equal(meta["test_idx"], test_idx)
        assert int(meta["seed"]) == seed
        ROWS[row]  # noqa: B018
        if ROWS[row][1] == "cv":
            S_t = S_all[test_idx]
            L_t = None if L_all is None else [L_all[i] for i in test_idx]
        else:
            if "t" not in tests:
                tests["t"] = per_graph(test_set)
            S_t, L_t = tests["t"]
        S_f, S_c = S_all[fit_idx], S_all[cal_idx]
        blocks = {"struct": (S_f, S_c, S_t)}
        if L_all is not None:
            L_f = [L_all[i] for i in fit_idx]
            L_c = [L_all[i] for i in cal_idx]
            vocab = np.unique(np.concatenate(L_f))
            B_f, B_c, B_t = (label_block(L, vocab) for L in (L_f, L_c, L_t))
            blocks["gstats"] = (np.hstack([S_f, B_f]), np.hstack([S_c, B_c]), np.hstack([S_t, B_t]))
            blocks["labels"] = (B_f[:, 1:], B_c[:, 1:], B_t[:, 1:])
        else:
            blocks["gstats"] = blocks["struct"]  # plain graphs: no label block
        ft = times.setdefault(str(k), {})
        for comp in COMPONENTS:
            view, scorer = comp.rsplit("-", 1)
            if view not in blocks or (seed_offset and view != "gstats"):
                continue
            name = comp if not seed_offset else f"{comp}@{seed_offset}"
            path = fdir / f"{name}.npz"
            if path.exists():
                continue
            Xf, Xc, Xt = blocks[view]
            if view != "labels":
                Xf, Xc, Xt = standardise(Xf, Xc, Xt)
            t = time.perf_counter()
            f, c, te = (score_if if scorer == "if" else score_lesinn)(Xf, Xc, Xt, seed + 1000 * seed_offset)
            sec = time.perf_counter() - t
            np.savez(path, fit=np.asarray(f, float), cal=np.asarray(c, float), test=np.asarray(te, float))
            ft[name] = {"seconds_fit_and_score": sec, "dims": int(Xf.shape[1])}
            from sklearn.metrics import roc_auc_score

            log(f"  fold {k} {name}: dims {Xf.shape[1]}, {sec:.1f} s, test AUC {roc_auc_score(y_test, te):.4f}")
        tpath.write_text(json.dumps(times, indent=1) + "\n")


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("rows", nargs="*")
    ap.add_argument("--seed-offset", type=int, default=0)
    args = ap.parse_args(argv)
    for row in args.rows or list(ROWS):
        run_row(row, args.seed_offset)
    return 0


if __name__ == "__main__":
    sys.exit(main())
