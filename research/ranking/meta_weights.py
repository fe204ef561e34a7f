"""Weights learnt on the other data sets: the rule of research/README.md, from the per-fold scores.

Each row's Fisher weights over six views are chosen from the *other* data sets' rows, by a
similarity-weighted vote over label-free meta-features of the row's normal training graphs
(MetaOD's idea with the simplest learner); a row's own group (a data set's two labellings, or
Tox21's two assays) is held out, so no row's labels choose its own weights.

Usage (repository root, after ``fold_scores.py`` has written the fast views' fold files)::

    DATASETS=../shared/datasets PYTHONPATH=. python research/ranking/meta_weights.py features
    PYTHONPATH=. python research/ranking/meta_weights.py rule [--json docs/results/ranking/meta-weights.json]
    DATASETS=../shared/datasets PYTHONPATH=. python research/ranking/meta_weights.py outside [--json ...]

``features`` reads each row's first fold's normal training graphs (it needs the data) and writes
``out/meta_features.json``; ``rule`` needs only the fold files and that file. ``outside`` is the
check outside the 14 rows (``two_views_outside.py``'s three MOSES tasks, seeds 0-4, its rule
unchanged): each seed's weighting chosen with all 14 rows as the other rows and the meta-features of
that seed's 2,000 MOSES training molecules, on a consensus of the six views, against the default
(the same fit with the added views dropped, WL counts back in reserve, no weights).
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyse import rule_verdict  # noqa: E402
from fold_scores import OUT, ROWS, fold_paths, folds, load_fold, row_folder  # noqa: E402

VIEWS = ("glocalkd", "size", "wl-lesinn", "wl-count-lesinn", "kme-lesinn", "spectral-lesinn")
DEFAULT = (1, 1, 1, 0, 0, 0)  # GLocalKD, graph size, WL-LESINN with one weight each: the default consensus
GRID = [w for w in itertools.product((0, 1, 2), repeat=len(VIEWS)) if any(w)]
GROUPS = {"BZR": "BZR", "BZR:first-label": "BZR", "DHFR": "DHFR", "DHFR:first-label": "DHFR",
          "PROTEINS_full": "PROTEINS_full", "PROTEINS_full:first-label": "PROTEINS_full",
          "Tox21_HSE": "Tox21", "Tox21_p53": "Tox21"}  # every other row is a group of its own
FEATURES = ("log mean nodes", "mean degree", "log(1 + node descriptions)", "continuous attributes",
            "node count CV")
FEATURE_FILE = OUT / "meta_features.json"


def group(row: str) -> str:
    return GROUPS.get(row, row)


def meta_features(graphs) -> list[float]:
    """The five label-free meta-features of a GraphSet (research/README.md's list)."""
    nodes = np.array([g.num_nodes for g in graphs.graphs], dtype=float)
    edges = np.array([g.edge_index.shape[1] for g in graphs.graphs], dtype=float)  # both directions
    descriptions: set = set()
    attributes = False
    for g in graphs.graphs:
        if getattr(g, "node_label", None) is not None:
            descriptions.update(map(tuple, g.node_label.reshape(len(g.node_label), -1).tolist()))
        elif getattr(g, "x", None) is not None:
            descriptions.update(map(tuple, g.x.tolist()))
        attributes = attributes or getattr(g, "node_attr", None) is not None
    return [float(np.log(nodes.mean())), float(edges.sum() / nodes.sum()), float(np.log1p(len(descriptions))),
            float(attributes), float(nodes.std() / nodes.mean())]


def write_features() -> dict[str, list[float]]:
    out = {}
    for row in ROWS:
        _k, _seed, normal, *_ = next(folds(row))
        out[row] = meta_features(normal)
        print(row, " ".join(f"{name} {v:.3f}" for name, v in zip(FEATURES, out[row])), flush=True)
    FEATURE_FILE.parent.mkdir(parents=True, exist_ok=True)
    FEATURE_FILE.write_text(json.dumps(out, indent=1))
    return out


def weighting_aucs(row: str) -> np.ndarray:
    """ROC-AUC of every weighting of GRID on each fold of a row, shape (folds, len(GRID))."""
    from core.detectors.conformal import conformal_p_values
    from core.detectors.consensus import combine_p_values
    from core.evaluation.metrics import roc_auc

    paths = fold_paths(row_folder(row))
    if len(paths) != 5:
        raise SystemExit(f"{row}: {len(paths)} fold files, 5 needed (run fold_scores.py {row})")
    table = np.empty((len(paths), len(GRID)))
    for i, path in enumerate(paths):
        d = load_fold(path)
        missing = [v for v in VIEWS if f"{v}:test" not in d]
        if missing:
            raise SystemExit(f"{path}: no {', '.join(missing)} scores")
        p = np.column_stack([conformal_p_values(d[f"{v}:cal"], d[f"{v}:test"]) for v in VIEWS])
        for j, w in enumerate(GRID):
            table[i, j] = roc_auc(d["y"], combine_p_values(p, "fisher", np.array(w, dtype=float)))
    return table


def choose(target: np.ndarray, others: list[str], features: dict, row_auc: dict, equal: bool = False) -> tuple:
    """The weighting the other rows vote for: similarity-weighted mean ROC-AUC, ties to the smaller sum."""
    f = np.array([features[s] for s in others])
    mean, sd = f.mean(axis=0), f.std(axis=0)
    sd[sd == 0] = 1.0
    z, t = (f - mean) / sd, (np.asarray(target) - mean) / sd
    if equal:
        sim = np.ones(len(others))
    else:
        pairs = [np.linalg.norm(z[a] - z[b]) for a, b in itertools.combinations(range(len(others)), 2)]
        h = float(np.median(pairs))
        sim = np.exp(-((z - t) ** 2).sum(axis=1) / (2 * h * h))
    vote = sim @ np.array([row_auc[s] for s in others]) / sim.sum()
    best = vote.max()
    ties = [j for j in range(len(GRID)) if vote[j] >= best - 1e-12]
    j = min(ties, key=lambda k: (sum(GRID[k]), k))
    return GRID[j], sim


def rule(json_out: Path | None) -> dict:
    features = json.loads(FEATURE_FILE.read_text())
    tables = {row: weighting_aucs(row) for row in ROWS}
    row_auc = {row: t.mean(axis=0) for row, t in tables.items()}  # per weighting, the mean over folds
    base = {row: float(row_auc[row][GRID.index(DEFAULT)]) for row in ROWS}
    arms: dict[str, dict] = {"meta": {}, "equal": {}}
    chosen: dict[str, dict] = {"meta": {}, "equal": {}}
    similarity: dict[str, dict] = {}
    for row in ROWS:
        others = [s for s in ROWS if group(s) != group(row)]
        for arm in arms:
            w, sim = choose(np.array(features[row]), others, features, row_auc, equal=arm == "equal")
            arms[arm][row] = float(row_auc[row][GRID.index(w)])
            chosen[arm][row] = dict(zip(VIEWS, w))
            if arm == "meta":
                similarity[row] = {s: round(float(v), 3) for s, v in sorted(zip(others, sim), key=lambda x: -x[1])[:3]}
    all_rows, _ = choose(np.zeros(len(FEATURES)), list(ROWS), features, row_auc, equal=True)
    verdicts = {arm: rule_verdict(arms[arm], base) for arm in arms}
    print("| data set (rule) | default | weights from similar data sets | weights from all other data sets |")
    print("|---|---|---|---|")
    for row in ROWS:
        print(f"| {row} | {base[row]:.3f} | {arms['meta'][row]:.3f} | {arms['equal'][row]:.3f} |")
    for arm, v in verdicts.items():
        print(f"{arm}: mean {v['mean']:.3f} (default {v['base_mean']:.3f}), gain {v['gain']:+.3f} (SE {v['se']:.3f}), "
              f"below 0.5 {v['below_half']}, new below 0.5 {v['new_below_half']}, passes {v['passes']}")
    for row in ROWS:
        w = chosen["meta"][row]
        print(f"{row}: {' '.join(f'{k}={x}' for k, x in w.items() if x)}; nearest {similarity[row]}")
    print("the 14 rows together choose:", dict(zip(VIEWS, all_rows)))
    result = {"views": list(VIEWS), "features": {"names": list(FEATURES), "per_row": features},
              "groups": {row: group(row) for row in ROWS}, "default": base,
              "per_row": arms, "chosen": chosen, "nearest": similarity, "verdicts": verdicts,
              "fourteen_rows_choose": dict(zip(VIEWS, all_rows)),
              "folds": {row: [[float(x) for x in t[:, GRID.index(DEFAULT)]]] for row, t in tables.items()}}
    if json_out:
        json_out.write_text(json.dumps(result, indent=1) + "\n")
    return result


def weighed(candidate, weights: dict[str, int]):
    """The six-view consensus with the chosen weights (a weight-0 view's evidence counts for nothing)."""
    import copy

    model = copy.deepcopy(candidate)
    w = np.array([weights[v] for v in model.views], dtype=float)
    model.view_weights_ = dict(zip(model.views, (w * len(w) / w.sum()).tolist()))  # a mean of 1
    model._combine_reference_scores()
    return model


def outside(json_out: Path | None) -> dict:
    """The check outside the 14 rows, by two_views_outside.py's rule, unchanged."""
    import tempfile
    import time

    from core import make_detector, roc_auc
    from research.ranking.two_views_outside import (TRAIN, as_default, graphs_of, moses_rows, moses_tasks,
                                                    outside_smiles, verdict)

    features = json.loads(FEATURE_FILE.read_text())
    row_auc = {row: weighting_aucs(row).mean(axis=0) for row in ROWS}
    novel = {"herg": outside_smiles("herg"), "tox21": outside_smiles("tox21")}
    result: dict = {"views": list(VIEWS), "runs": [], "chosen": {}, "meta_features": {}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for seed in range(5):
            train = graphs_of(moses_rows("train", TRAIN * seed, TRAIN), folder, "train")
            target = meta_features(train)
            w, sim = choose(np.array(target), list(ROWS), features, row_auc)
            chosen = dict(zip(VIEWS, w))
            result["chosen"][seed], result["meta_features"][seed] = chosen, target
            print(f"seed {seed}: meta-features {np.round(target, 3).tolist()}, weights {chosen}, nearest "
                  f"{sorted(zip(ROWS, np.round(sim, 3)), key=lambda x: -x[1])[:3]}", flush=True)
            start = time.perf_counter()
            fitted = make_detector(components=list(VIEWS), reserve_views=[], seed=seed).fit(train)
            seconds = round(time.perf_counter() - start, 1)
            arms_ = (("default", as_default(fitted)), ("candidate", weighed(fitted, chosen)))
            for task, (normal, novel_smiles) in moses_tasks(seed, novel).items():
                test = graphs_of(normal + novel_smiles, folder, "test")
                y = np.r_[np.zeros(len(normal), dtype=int), np.ones(len(test) - len(normal), dtype=int)]
                run = {"task": task, "seed": seed, "fit_seconds": seconds, "graphs": len(test)}
                for name, model in arms_:
                    scores = model.score(test).score
                    run[name] = {"auc": roc_auc(y, scores),
                                 "normals_flagged": float(np.mean(model.p_values(scores)[y == 0] < 0.05))}
                print(json.dumps(run), flush=True)
                result["runs"].append(run)
    result["verdict"] = verdict(result["runs"])
    print(json.dumps(result["verdict"], indent=1), flush=True)
    if json_out:
        json_out.write_text(json.dumps(result, indent=1) + "\n")
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=("features", "rule", "outside"))
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args()
    if args.what == "features":
        write_features()
    elif args.what == "rule":
        rule(args.json)
    else:
        outside(args.json)


if __name__ == "__main__":
    main()
