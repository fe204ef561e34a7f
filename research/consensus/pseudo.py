"""Pseudo-anomaly weighting: can generated anomalies tell, per data set, which view to trust?

Usage (worktree root)::

    OMP_NUM_THREADS=1 nice -n 19 python -m research.consensus.pseudo ROW [ROW ...]
    python -m research.consensus.pseudo --summary

The idea, in the manner of self-supervised model selection: perturb the held-out normal
calibration graphs, score the perturbed copies with every component, and trust each component
in proportion to how well it separates the perturbed copies from the calibration graphs. Only
the fold's fit and calibration graphs (normal training graphs) are used; test labels are read
only to compute ROC-AUC. Every setting below was fixed before the first run and is the same for
every data set.

Perturbations, each applied once to every calibration graph (seeded
``np.random.default_rng([20222, k])`` per fold k), q = max(1, round(0.2 n)) nodes and
r = max(1, round(0.2 m)) undirected edges of a graph with n nodes and m edges:

- ``rewire``: r edges removed at random, r random non-adjacent pairs joined (edge fields copied
  from a random removed edge); n and m unchanged;
- ``relabel``: q random nodes get every node field (``node_label``, ``node_attr``, ``x``) of a
  node drawn uniformly from all the fit graphs' nodes; structure unchanged;
- ``resize``: with probability 1/2, q random nodes removed (induced subgraph, at least 2 nodes
  kept), else q new nodes, each a copy of a random fit node's fields, joined by one edge to a
  random node of the graph.

Components: ``size`` and ``wl-lesinn`` (core detectors at their defaults, model seed of the fold)
and ``gstats-lesinn`` (views.py), all refitted on the fold's fit part exactly as their dumps
were (their calibration and test scores are checked against the dumps). GLocalKD is not among
them: scoring the perturbed graphs needs its trained model, which the dumps do not keep.

Weight of component c: ``w_c = max(0, AUC_c(pseudo vs calibration) - 0.5)`` over the three
perturbation types pooled. Candidates (the fold's test graphs, component p-values against the
calibration graphs as in combine.py):

- ``fisher``: equal-weight Fisher over the components (the reference);
- ``pw-fisher``: ``sum_c w_c (-2 log p_c) / sum_c w_c`` (equal weights if every w_c is 0);
- ``pw-select``: the component with the largest w_c alone.

Output: ``dumps/<row>/fold<k>/pseudo.npz`` (per component: pseudo scores per type) and, with
``--summary``, the table of real test AUCs beside the pseudo AUCs.
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

from research.consensus.dump import folds_of, row_dir  # noqa: E402

TYPES = ("rewire", "relabel", "resize")
COMPS = ("size", "wl-lesinn", "gstats-lesinn")
NODE_FIELDS = ("node_label", "node_attr", "x")
EDGE_FIELDS = ("edge_label", "edge_attr")
SHARE = 0.2


def _fields(g, names):
    return [f for f in names if g.get(f) is not None]


def _undirected(ei: np.ndarray) -> np.ndarray:
    """Column indices of the edges with src < dst (one per undirected edge)."""
    return np.flatnonzero(ei[0] < ei[1])


def _rebuild(g, keep_nodes: np.ndarray | None, ei: np.ndarray, eidx: np.ndarray, new_nodes=None):
    """A new Data with nodes ``keep_nodes`` (+ ``new_nodes`` rows), edges ``ei`` taking their edge
    fields from the old edge columns ``eidx``."""
    import torch
    from torch_geometric.data import Data

    out = {}
    n_old = int(g.num_nodes)
    keep = np.arange(n_old) if keep_nodes is None else keep_nodes
    for f in _fields(g, NODE_FIELDS):
        t = g[f][torch.as_tensor(keep, dtype=torch.long)]
        if new_nodes is not None:
            t = torch.cat([t, new_nodes[f]], 0)
        out[f] = t
    for f in _fields(g, EDGE_FIELDS):
        out[f] = g[f][torch.as_tensor(eidx, dtype=torch.long)]
    n = len(keep) + (0 if new_nodes is None else len(next(iter(new_nodes.values()))))
    return Data(edge_index=torch.as_tensor(ei, dtype=torch.long), num_nodes=n, **out)


def rewire(g, rng):
    ei = g.edge_index.numpy()
    n = int(g.num_nodes)
    und = _undirected(ei)
    m = len(und)
    if m == 0 or n < 3:
        return g
    r = max(1, round(SHARE * m))
    drop = rng.choice(und, size=r, replace=False)
    present = {(int(a), int(b)) for a, b in ei.T}
    added = []
    tries = 0
    while len(added) < r and tries < 50 * r:
        tries += 1
        a, b = rng.integers(0, n, 2)
        if a == b or (int(a), int(b)) in present:
            continue
        present.add((int(a), int(b)))
        present.add((int(b), int(a)))
        added.append((min(a, b), max(a, b)))
    dropped = set(map(int, drop))
    keep_cols = [c for c in und if int(c) not in dropped]
    src = [ei[:, c] for c in keep_cols]
    src_cols = list(keep_cols)
    for a, b in added:
        src.append(np.array([a, b]))
        src_cols.append(int(rng.choice(drop)))
    und_ei = np.array(src, dtype=np.int64).reshape(-1, 2).T
    ei2 = np.concatenate([und_ei, und_ei[::-1]], 1)
    cols = np.array(src_cols + src_cols, dtype=np.int64)
    return _rebuild(g, None, ei2, cols)


def node_pool(fit_graphs):
    """All fit nodes' fields, for drawing replacement nodes."""
    import torch

    g0 = fit_graphs[0]
    return {f: torch.cat([g[f] for g in fit_graphs], 0) for f in _fields(g0, NODE_FIELDS)}


def draw_nodes(pool, k, rng):
    import torch

    if not pool:
        return None
    total = len(next(iter(pool.values())))
    pick = torch.as_tensor(rng.integers(0, total, k), dtype=torch.long)
    return {f: t[pick] for f, t in pool.items()}


def relabel(g, rng, pool):
    if not pool:
        return None  # plain graphs: no node fields to change
    n = int(g.num_nodes)
    q = max(1, round(SHARE * n))
    nodes = rng.choice(n, size=min(q, n), replace=False)
    new = draw_nodes(pool, len(nodes), rng)
    out = g.clone()
    for f, t in new.items():
        v = out[f].clone()
        v[nodes] = t
        out[f] = v
    return out


def resize(g, rng, pool):

    ei = g.edge_index.numpy()
    n = int(g.num_nodes)
    q = max(1, round(SHARE * n))
    if rng.random() < 0.5 and n - q >= 2:
        keep = np.sort(rng.choice(n, size=n - q, replace=False))
        remap = -np.ones(n, dtype=np.int64)
        remap[keep] = np.arange(len(keep))
        cols = np.flatnonzero((remap[ei[0]] >= 0) & (remap[ei[1]] >= 0))
        return _rebuild(g, keep, remap[ei[:, cols]], cols)
    new = draw_nodes(pool, q, rng) if pool else {}
    anchors = rng.integers(0, n, q)
    add = np.stack([anchors, n + np.arange(q)])
    ei2 = np.concatenate([ei, add, add[::-1]], 1)
    fields = _fields(g, EDGE_FIELDS)
    if ei.shape[1] == 0 and fields:
        return g
    cols = np.concatenate([np.arange(ei.shape[1]), np.tile(rng.integers(0, max(1, ei.shape[1]), q), 2)])
    out = _rebuild(g, None, ei2, cols, new_nodes=new or None)
    if not new:
        out.num_nodes = n + q
    return out


def perturbed(cal_set, fit_set, rng):
    """{type: GraphSet of perturbed calibration graphs} (relabel absent for plain graphs)."""
    pool = node_pool(fit_set.graphs)
    out = {}
    for t in TYPES:
        gs = []
        for g in cal_set.graphs:
            if t == "rewire":
                h = rewire(g, rng)
            elif t == "relabel":
                h = relabel(g, rng, pool)
            else:
                h = resize(g, rng, pool)
            if h is None:
                break
            gs.append(h)
        if len(gs) == len(cal_set.graphs):
            s = cal_set.subset(range(len(cal_set)))
            s.graphs = gs
            out[t] = s
    return out


def gstats_scores(fit_set, cal_set, test_set, extra: dict, seed: int):
    """gstats-lesinn (views.py) fitted on fit_set; scores of cal, test and every extra set."""
    import views

    S_f, L_f = views.per_graph(fit_set)
    S_c, L_c = views.per_graph(cal_set)
    S_t, L_t = views.per_graph(test_set)
    ex = {k: views.per_graph(v) for k, v in extra.items()}
    if L_f is not None:
        vocab = np.unique(np.concatenate(L_f))
        blk = lambda S, L: np.hstack([S, views.label_block(L, vocab)])  # noqa: E731
        X_f, X_c, X_t = blk(S_f, L_f), blk(S_c, L_c), blk(S_t, L_t)
        X_e = {k: blk(*v) for k, v in ex.items()}
    else:
        X_f, X_c, X_t = S_f, S_c, S_t
        X_e = {k: v[0] for k, v in ex.items()}
    keys = list(X_e)
    Z = views.standardise(X_f, X_c, X_t, *[X_e[k] for k in keys])
    from core.detectors.lesinn import LESINN

    m = LESINN(256, 256, metric="euclidean", seed=seed).fit(Z[0])
    return (m.decision_function(Z[1]), m.decision_function(Z[2]),
            {k: m.decision_function(z) for k, z in zip(keys, Z[3:])})


def run_row(row: str) -> None:
    import torch

    torch.set_num_threads(1)
    from core import make_detector

    log = lambda m: print(time.strftime("%H:%M:%S"), m, file=sys.stderr, flush=True)  # noqa: E731
    runs, graphs, is_anom, anomaly = folds_of(row)
    out = row_dir(row)
    for k, seed, _train_idx, test_set, _y_test, _test_idx in runs:
        fdir = out / f"fold{k}"
        path = fdir / "pseudo.npz"
        if path.exists() or not (fdir / "meta.npz").exists():
            continue
        t0 = time.perf_counter()
        meta = np.load(fdir / "meta.npz")
        fit_set = graphs.subset(meta["fit_idx"].tolist())
        cal_set = graphs.subset(meta["cal_idx"].tolist())
        rng = np.random.default_rng([20222, k])
        pert = perturbed(cal_set, fit_set, rng)
        arrays = {}
        for comp in COMPS:
            if comp == "gstats-lesinn":
                s_cal, s_test, s_ex = gstats_scores(fit_set, cal_set, test_set, pert, seed)
            else:
                model = make_detector(comp, seed=seed).fit(fit_set)
                s_cal = model.score(cal_set).score
                s_test = model.score(test_set).score
                s_ex = {t: model.score(v).score for t, v in pert.items()}
            ref = np.load(fdir / f"{comp}.npz")
            for name, mine in (("cal", s_cal), ("test", s_test)):
                if not np.allclose(ref[name], mine, rtol=1e-5, atol=1e-6):
                    raise SystemExit(f"{row} fold {k} {comp}: {name} scores differ from the dump")
            for t, s in s_ex.items():
                arrays[f"{comp}/{t}"] = np.asarray(s, dtype=np.float64)
        np.savez(path, **arrays)
        log(f"{row} fold {k}: {sorted(pert)} in {time.perf_counter() - t0:.1f} s")


# ------------------------------------------------------------------------------ summary
def summary() -> dict:
    from sklearn.metrics import roc_auc_score

    from combine import ROWS as ORDER, conformal_p

    table = {}
    for row in ORDER:
        rdir = row_dir(row.replace("__", ":"))
        folds = sorted(rdir.glob("fold*/pseudo.npz"))
        if not folds:
            continue
        acc = {}
        for p in folds:
            fdir = p.parent
            y = np.load(fdir / "meta.npz")["y_test"]
            ps = np.load(p)
            comps = COMPS
            cal = {c: np.load(fdir / f"{c}.npz")["cal"] for c in comps}
            test = {c: np.load(fdir / f"{c}.npz")["test"] for c in comps}
            w, pseudo_auc = {}, {}
            for c in comps:
                ex = np.concatenate([ps[f"{c}/{t}"] for t in TYPES if f"{c}/{t}" in ps.files])
                yy = np.r_[np.zeros(len(cal[c])), np.ones(len(ex))]
                pseudo_auc[c] = roc_auc_score(yy, np.r_[cal[c], ex])
                w[c] = max(0.0, pseudo_auc[c] - 0.5)
            logp = {c: -2 * np.log(conformal_p(cal[c], test[c])) for c in comps}
            fisher = sum(logp.values())
            tw = sum(w.values())
            pw = sum(w[c] * logp[c] for c in comps) / tw if tw > 0 else fisher
            best = max(comps, key=lambda c: w[c])
            res = {f"auc:{c}": roc_auc_score(y, test[c]) for c in comps}
            res.update({f"pseudo:{c}": pseudo_auc[c] for c in comps})
            res.update({"fisher": roc_auc_score(y, fisher), "pw-fisher": roc_auc_score(y, pw),
                        "pw-select": roc_auc_score(y, test[best])})
            for key, v in res.items():
                acc.setdefault(key, []).append(v)
        table[row] = {key: float(np.mean(v)) for key, v in acc.items()} | {"folds": len(folds)}
    return table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*")
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    for row in args.rows:
        run_row(row)
    if args.summary:
        t = summary()
        keys = [k for k in next(iter(t.values())) if k != "folds"]
        print("row".ljust(28) + " ".join(k.split(":")[-1][:10].rjust(10) for k in keys))
        print("".ljust(28) + " ".join(k.split(":")[0][:10].rjust(10) for k in keys))
        for row, r in t.items():
            print(f"{row[:24]} [{r['folds']}]".ljust(28) + " ".join(f"{r.get(k, float('nan')):10.3f}" for k in keys))
        means = {k: np.mean([r[k] for r in t.values() if k in r]) for k in keys}
        print("mean".ljust(28) + " ".join(f"{means[k]:10.3f}" for k in keys))
        if args.json:
            Path(args.json).write_text(json.dumps(t, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
