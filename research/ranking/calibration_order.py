"""Why one MOSES sample of the two-view outside check flagged 9.5-12.3 % of normal molecules at
p < 0.05 (research/README.md, "Calibration and the order of a training file").

MOSES's training file is ordered: neighbouring rows are often analogues of one series. The
outside check trained on 2,000 *contiguous* rows, so the 20 % calibration share (drawn at random
from them) holds analogues of the fit molecules, while the normal test molecules, from another
part of the file, do not. Conformal p-values promise ``P(p < a) <= a`` for molecules exchangeable
with the calibration molecules; these are not. Here each view is fitted on 2,000 MOSES training
molecules and scores 1,000 others, drawn two ways with the same seeds:

- ``contiguous``: the outside check's rows (training rows ``2000 * seed`` on, the others from row
  ``100,000 + 1,000 * seed``);
- ``random``: rows drawn at random from the whole file (seeded), training and others disjoint.

For each view (graph size, WL-LESINN, and the two as one consensus) it reports the share of the
other molecules with p < 0.05, and the WL kernel similarity of each calibration molecule, and of
each other molecule, to its nearest fit molecule (means), which shows the analogues. A remedy is
measured beside it: WL-LESINN calibrated on whole Bemis-Murcko scaffolds
(``wl-lesinn, scaffold split``), as the product now calibrates molecules
(:func:`core.detectors.conformal.calibration_groups`); the other arms draw the calibration share
graph by graph, as it did before (``calibration_groups`` answering None). Prints and writes JSON
(``--json``).

    PYTHONPATH=. OMP_NUM_THREADS=1 python -m research.ranking.calibration_order [--seeds 5] [--json OUT]
"""
from __future__ import annotations

import argparse
import gzip
import json
import tempfile
from pathlib import Path

import numpy as np

import core.detectors.consensus as consensus_module
from core import make_detector
from research.consensus.pool_size import DATA
from research.ranking.two_views_outside import OTHER_MOSES, TEST, TRAIN, graphs_of

VIEWS = {"size": ["size"], "wl-lesinn": ["wl-lesinn"], "size + wl-lesinn": ["size", "wl-lesinn"]}


def fit_split_one_by_one(views: list[str], seed: int, train):
    """The consensus of ``views`` fitted with its calibration share drawn graph by graph (as before
    molecules were drawn by scaffold)."""
    by_scaffold = consensus_module.calibration_groups
    consensus_module.calibration_groups = lambda graphs: None
    try:
        return make_detector(components=views, reserve_views=[], seed=seed).fit(train)
    finally:
        consensus_module.calibration_groups = by_scaffold


def nearest_similarity(model, fit_graphs, graphs) -> float:
    """Mean over ``graphs`` of the cosine-normalised WL kernel to the nearest of ``fit_graphs``
    (the WL-LESINN view's kernel: 1 for a graph with the same subtree counts as a fit graph)."""
    from sklearn.preprocessing import normalize

    from core.detectors.graph_kernels import labelled_graphs

    features = model.components_["wl-lesinn"].kernel_.kernel_  # the WL subtree features of the view
    a = normalize(features.transform(labelled_graphs(graphs))[0])
    b = normalize(features.transform(labelled_graphs(fit_graphs))[0])
    return float(np.mean((a @ b.T).max(axis=1).toarray()))


def main(argv: list[str] | None = None) -> dict:
    """Fit each view on each sample, score the others, and print the shares flagged."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    with gzip.open(DATA / "moses" / "train.csv.gz", "rt") as src:
        next(src)
        rows = [line.split(",")[0].strip() for line in src]
    from core.detectors.conformal import calibration_split

    result: dict = {"runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for seed in range(args.seeds):
            order = np.random.default_rng(seed).permutation(len(rows))
            samples = {"contiguous": (rows[TRAIN * seed:TRAIN * (seed + 1)],
                                      rows[OTHER_MOSES + TEST * seed:OTHER_MOSES + TEST * (seed + 1)]),
                       "random": ([rows[i] for i in order[:TRAIN]], [rows[i] for i in order[TRAIN:TRAIN + TEST]])}
            for sampling, (train_rows, other_rows) in samples.items():
                train = graphs_of(train_rows, folder, "train")
                other = graphs_of(other_rows, folder, "other")
                run = {"seed": seed, "sampling": sampling, "flagged": {}}
                for name, views in VIEWS.items():
                    model = fit_split_one_by_one(views, seed, train)
                    run["flagged"][name] = float(np.mean(model.p_values(model.score(other).score) < 0.05))
                    if name == "wl-lesinn":
                        fit_idx, cal_idx = calibration_split(len(train), model.calibration, seed)
                        fit = train.subset(fit_idx)
                        run["nearest_fit_similarity"] = {
                            "calibration": nearest_similarity(model, fit, train.subset(cal_idx)),
                            "others": nearest_similarity(model, fit, other)}
                model = make_detector(components=["wl-lesinn"], reserve_views=[], seed=seed).fit(train)
                run["flagged"]["wl-lesinn, scaffold split"] = float(
                    np.mean(model.p_values(model.score(other).score) < 0.05))
                print(json.dumps(run), flush=True)
                result["runs"].append(run)
    summary = {}
    for sampling in ("contiguous", "random"):
        runs = [r for r in result["runs"] if r["sampling"] == sampling]
        summary[sampling] = {
            "flagged": {n: [min(r["flagged"][n] for r in runs), float(np.mean([r["flagged"][n] for r in runs])),
                            max(r["flagged"][n] for r in runs)] for n in runs[0]["flagged"]},
            "nearest_fit_similarity": {k: float(np.mean([r["nearest_fit_similarity"][k] for r in runs]))
                                       for k in ("calibration", "others")}}
    result["summary"] = summary
    print(json.dumps(summary, indent=1), flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
