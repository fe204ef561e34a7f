"""Scoring cost per molecule of the graph-statistics views (views.py) on MOSES molecules.

Usage (worktree root)::

    OMP_NUM_THREADS=1 nice -n 19 python -m research.consensus.timing_views \
        [--fit 2000] [--score 20000] [--repeats 3] [--json OUT]

Reads the first ``--fit`` + ``--score`` SMILES of moses/train.csv.gz (parsing not timed), fits
the views on 80 % of the first ``--fit`` molecules (as the consensus would), then times, best
of ``--repeats``, per scored molecule: (a) the feature vectors from graph objects, one graph
at a time (views.per_graph + label_block, what views.py does), (b) the same features from
packed arrays (all molecules' edges in one array, connected components of the disjoint union
at once: what a screening path would do), (c) each scorer on the ready vectors.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.sparse import csr_matrix  # noqa: E402
from scipy.sparse.csgraph import connected_components  # noqa: E402

from research.consensus.dump import DATA  # noqa: E402
from research.consensus.views import label_block, per_graph, standardise  # noqa: E402


def packed_features(n_nodes, edges, edge_counts, labels, vocab):
    """Structure + label block of many graphs from packed arrays (edges: (2, E) with global node
    ids, both directions; labels: every node's label), vectorised over graphs."""
    g = len(n_nodes)
    node_ptr = np.concatenate([[0], np.cumsum(n_nodes)])
    N = node_ptr[-1]
    gid = np.repeat(np.arange(g), n_nodes)
    m = edge_counts / 2.0
    deg = np.bincount(edges[0], minlength=N).astype(np.float64)
    n = n_nodes.astype(np.float64)
    dsum = np.bincount(gid, deg, minlength=g)
    dsq = np.bincount(gid, deg * deg, minlength=g)
    dmean = dsum / np.maximum(n, 1)
    dstd = np.sqrt(np.maximum(dsq / np.maximum(n, 1) - dmean ** 2, 0))
    dmax = np.zeros(g)
    np.maximum.at(dmax, gid, deg)
    _, comp = connected_components(csr_matrix((np.ones(edges.shape[1]), (edges[0], edges[1])), shape=(N, N)),
                                   directed=False)
    c = np.bincount(gid[np.unique(comp, return_index=True)[1]], minlength=g).astype(np.float64)
    density = np.where(n > 1, 2 * m / np.maximum(n * (n - 1), 1), 0.0)
    S = np.column_stack([np.log1p(n), np.log1p(m), density, dmean, dstd, np.log1p(dmax),
                         np.log1p(np.maximum(m - n + c, 0)), np.log1p(c)])
    pos = np.searchsorted(vocab, labels)
    known = (pos < len(vocab)) & (vocab[np.minimum(pos, len(vocab) - 1)] == labels)
    H = np.zeros((g, len(vocab)))
    np.add.at(H, (gid[known], pos[known]), 1.0)
    H /= np.maximum(n, 1)[:, None]
    unseen = 1.0 - H.sum(1)
    # entropy over the graph's own labels (unseen ones included): counts per (graph, label)
    key = gid * (labels.max() + 1) + labels
    uk, cnt = np.unique(key, return_counts=True)
    p = cnt / n[uk // (labels.max() + 1)]
    ent = np.bincount(uk // (labels.max() + 1), -p * np.log(p), minlength=g)
    return S, np.column_stack([ent, unseen, H])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", type=int, default=2000)
    ap.add_argument("--score", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    from sklearn.ensemble import IsolationForest

    from core import load
    from core.detectors.lesinn import LESINN

    with gzip.open(DATA / "moses" / "train.csv.gz", "rt") as fh:
        lines = [next(fh) for _ in range(1 + args.fit + args.score)]
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "moses.csv"
        p.write_text("".join(lines))
        t = time.perf_counter()
        graphs = load(p)
        parse_s = time.perf_counter() - t
    fit_all = graphs.subset(range(args.fit))
    scored = graphs.subset(range(args.fit, len(graphs)))
    n_fit = int(round(0.8 * len(fit_all)))
    fit = fit_all.subset(range(n_fit))
    S_f, L_f = per_graph(fit)
    vocab = np.unique(np.concatenate(L_f))
    B_f = label_block(L_f, vocab)
    Xf_g = np.hstack([S_f, B_f])
    out = {"n_fit": n_fit, "n_scored": len(scored), "parse_seconds_untimed": parse_s, "dims_gstats": Xf_g.shape[1],
           "us_per_molecule": {}}
    best = lambda f: min(_t(f) for _ in range(args.repeats))  # noqa: E731

    def features_objects():
        S, L = per_graph(scored)
        return np.hstack([S, label_block(L, vocab)])

    # packed arrays, as a screening chunk holds them (built untimed)
    from core.detectors.graph_kernels import node_labels

    n_nodes = np.array([int(g.num_nodes) for g in scored.graphs])
    offs = np.concatenate([[0], np.cumsum(n_nodes)[:-1]])
    edges = np.concatenate([g.edge_index.numpy() + o for g, o in zip(scored.graphs, offs)], axis=1)
    edge_counts = np.array([g.edge_index.shape[1] for g in scored.graphs])
    labels = np.concatenate([node_labels(g) for g in scored.graphs])

    def features_packed():
        S, B = packed_features(n_nodes, edges, edge_counts, labels, vocab)
        return np.hstack([S, B])

    Xo = features_objects()
    Xp = features_packed()
    assert np.allclose(Xo, Xp), np.abs(Xo - Xp).max(0)
    m = len(scored)
    out["us_per_molecule"]["features (graph objects)"] = 1e6 * best(features_objects) / m
    out["us_per_molecule"]["features (packed arrays)"] = 1e6 * best(features_packed) / m
    Xf, Xs = standardise(Xf_g, Xp)
    les = LESINN(256, 256, metric="euclidean", seed=0).fit(Xf)
    out["us_per_molecule"]["gstats-lesinn scorer"] = 1e6 * best(lambda: les.decision_function(Xs)) / m
    blocks = lambda f, X: [f(X[i:i + 1024]) for i in range(0, len(X), 1024)]  # noqa: E731
    out["us_per_molecule"]["gstats-lesinn scorer (blocks of 1024)"] = \
        1e6 * best(lambda: blocks(les.decision_function, Xs)) / m
    ifo = IsolationForest(n_estimators=256, random_state=0).fit(Xf)
    out["us_per_molecule"]["gstats-if scorer"] = 1e6 * best(lambda: ifo.score_samples(Xs)) / m
    H_f, H_s = B_f[:, 1:], Xp[:, 9:]
    lab = LESINN(256, 256, metric="euclidean", seed=0).fit(H_f)
    out["us_per_molecule"]["labels-lesinn scorer"] = 1e6 * best(lambda: lab.decision_function(H_s)) / m
    out["us_per_molecule"]["labels-lesinn scorer (blocks of 1024)"] = \
        1e6 * best(lambda: blocks(lab.decision_function, H_s)) / m
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


def _t(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


if __name__ == "__main__":
    sys.exit(main())
