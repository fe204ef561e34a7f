"""Do the p-values hold for new structures when the training set holds duplicates?

Many training sets hold the same structure more than once (under the WL views' own equivalence,
3 iterations: Tox21 about 43 %, hERG 27 %, AIDS 9 % of the graphs have a twin). A calibration
graph whose twin was fitted on scores low, so a screen of *new* structures could get p-values
that are too small. Here each data set's normal graphs are grouped by WL equivalence, 20 % of
the groups (whole) are held out as the new structures, and graph size, WL-LESINN and ECFP4 NN
(molecules only) are fitted and calibrated on the rest, by the product's random split
(``calibration_split``) and, for comparison, by a split that keeps each structure's copies on
one side. Prints the share of the new structures with p < 0.05, per seed and on average, and
writes docs/results/consensus/novel_structures.json.

    PYTHONPATH=. OMP_NUM_THREADS=1 python -m research.consensus.novel_structures
"""
import hashlib
import json
import os

import numpy as np

from core import load
from core.detectors.wl_features import WLFeatures
from core.detectors.graph_kernels import labelled_graphs
from core.detectors.catalog import make_single
from core.detectors.conformal import calibration_split, conformal_p_values
from core.errors import NotApplicableError

DATA = os.environ.get("DATASETS", "../shared/datasets")


def groups_of(graphs) -> np.ndarray:
    """Each graph's group: graphs with the same WL features (3 iterations) share one."""
    f, _ = WLFeatures(3).fit(labelled_graphs(graphs))
    f = f.tocsr()
    f.sort_indices()
    keys = [hashlib.sha1(f.indices[f.indptr[i]:f.indptr[i + 1]].tobytes()
                         + f.data[f.indptr[i]:f.indptr[i + 1]].tobytes()).hexdigest() for i in range(f.shape[0])]
    return np.unique(keys, return_inverse=True)[1]


def group_split(groups: np.ndarray, idx: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The product's split, with each structure's copies on the side of its first copy in the seeded order."""
    n = len(idx)
    n_cal = max(int(round(fraction * n)), 19)
    order = np.random.default_rng(seed).permutation(n)
    first: dict = {}
    for rank, i in enumerate(order):
        first.setdefault(groups[idx[i]], rank)
    cal = np.array([first[groups[idx[i]]] < n_cal for i in range(n)])
    return np.flatnonzero(~cal), np.flatnonzero(cal)


ROWS = {"Tox21_p53": ("Tox21_p53_training", "0"), "Tox21_HSE": ("Tox21_HSE_training", "0"), "hERG": ("herg.tab", "1"),
        "AIDS": ("AIDS", "1"), "DHFR": ("DHFR", None), "IMDB": ("IMDB-BINARY", None)}  # data, normal label (None: majority)


def row_figures(data: str, normal_label: str | None, seeds: int = 3) -> dict:
    """Per view and split: the new structures' share with p < 0.05, averaged over the seeds."""
    g = load(f"{DATA}/{data}")
    labels = np.array(g.labels, dtype=object).astype(str)
    if normal_label is None:
        values, counts = np.unique(labels, return_counts=True)
        normal_label = values[np.argmax(counts)]
    normal = np.flatnonzero(labels == normal_label)
    groups = groups_of(g)
    res: dict = {}
    for seed in range(seeds):
        rng = np.random.default_rng(100 + seed)
        unique = np.unique(groups[normal])
        held = set(rng.choice(unique, int(0.2 * len(unique)), replace=False).tolist())
        is_new = np.array([groups[i] in held for i in normal])
        train_idx, test = normal[~is_new], g.subset(normal[is_new].tolist())
        for how in ("random", "by-structure"):
            fit_i, cal_i = (calibration_split(len(train_idx), 0.2, seed) if how == "random"
                            else group_split(groups, train_idx, 0.2, seed))
            fit, cal = g.subset(train_idx[fit_i].tolist()), g.subset(train_idx[cal_i].tolist())
            for view in ("size", "wl-lesinn", "ecfp-nn"):
                try:
                    model = make_single(view, seed=seed).fit(fit)
                except NotApplicableError:
                    continue
                p = conformal_p_values(model.score(cal).score, model.score(test).score)
                res.setdefault(f"{view}:{how}", []).append(float(np.mean(p < 0.05)))
        print(data, seed, {k: round(v[-1], 3) for k, v in res.items()}, flush=True)
    return {k: float(np.mean(v)) for k, v in res.items()}


def main() -> None:
    out = {row: row_figures(data, label) for row, (data, label) in ROWS.items()}
    for row, figures in out.items():
        print(row, {k: round(v, 3) for k, v in figures.items()})
    with open("docs/results/consensus/novel_structures.json", "w") as f:
        f.write(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
