"""A candidate consensus checked outside the 14 rows, by the rule written before this ran
(research/README.md, "Two views that err on each other's rows"; with ``--extra``, the same check
of another candidate, e.g. "The rare-substructure view").

Three novelty tasks from data the choice never saw, five runs each (seeds 0-4). Each run fits the
candidate (the consensus with GLocalKD, WL-LESINN, graph size, WL counts and KME as components) on
2,000 molecules of MOSES's training set; the default is that fit with KME dropped and WL counts
back in reserve (:func:`as_default`; checked once against a default fitted by ``make_detector()``,
:func:`check_surgery`). Scored: MOSES's test set against its scaffold test set (*scaffold*), and
other MOSES training molecules against hERG's molecules (*herg*) and Tox21's testing molecules
(*tox21*). Reports ROC-AUC and the normal molecules' share with p < 0.05, each arm, and applies
the rule. Prints and writes JSON (``--json``). ``--extra a,b`` checks another candidate: the
default's components plus those views (its reserve view kept), against the same fit with them
dropped.

    PYTHONPATH=. OMP_NUM_THREADS=1 python -m research.ranking.two_views_outside [--extra VIEWS] [--json OUT]
"""
from __future__ import annotations

import argparse
import copy
import gzip
import itertools
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from core import load, make_detector, roc_auc
from research.consensus.pool_size import DATA, outside_smiles

TRAIN, TEST, SEEDS = 2_000, 1_000, 5
OTHER_MOSES = 100_000  # the herg and tox21 tasks' normal molecules start here in MOSES's training set
DEFAULT = ["glocalkd", "wl-lesinn", "size"]
RESERVE = ["wl-count-lesinn"]  # core.detectors.consensus.DEFAULT_RESERVE_VIEWS
TWO_VIEWS = ["wl-count-lesinn", "kme-lesinn"]  # the two-view candidate's views, added to DEFAULT


def moses_rows(name: str, start: int, count: int) -> list[str]:
    """``count`` SMILES of a MOSES file, from row ``start`` (0-based, after the header)."""
    with gzip.open(DATA / "moses" / f"{name}.csv.gz", "rt") as src:
        next(src)
        return [line.split(",")[0].strip() for line in itertools.islice(src, start, start + count)]


def moses_tasks(seed: int, novel: dict[str, list[str]]) -> dict[str, tuple[list[str], list[str]]]:
    """The three novelty tasks of one seed, task -> (normal SMILES, novel SMILES): the one set every
    check outside the 14 rows scores (``novel``: :func:`outside_smiles` of ``herg`` and ``tox21``)."""
    other = moses_rows("train", OTHER_MOSES + TEST * seed, TEST)
    return {"scaffold": (moses_rows("test", TEST * seed, TEST), moses_rows("test_scaffolds", TEST * seed, TEST)),
            "herg": (other, novel["herg"]), "tox21": (other, novel["tox21"])}


def candidate_views(extra: list[str]) -> tuple[list[str], list[str]]:
    """The candidate's components and reserve views: the default's components plus ``extra``, and
    the default's reserve views that ``extra`` does not promote."""
    return [*DEFAULT, *extra], [v for v in RESERVE if v not in extra]


def as_default(candidate):
    """The default consensus from a fitted candidate: the same views' fits, the added views dropped
    and the default's reserve views back in reserve."""
    default = copy.deepcopy(candidate)
    default.components, default.reserve_views = list(DEFAULT), list(RESERVE)
    for state in (default.components_, default.component_calibration_, default.component_train_):
        for view in [v for v in state if v not in DEFAULT + RESERVE]:
            state.pop(view)
    default._combine_reference_scores()
    return default


def graphs_of(smiles: list[str], folder: Path, name: str):
    """The product's graphs of a SMILES list (through a file, as a user's would be read)."""
    path = folder / f"{name}.smi"
    path.write_text("smiles\n" + "\n".join(smiles) + "\n")
    graphs = load(path)
    if len(graphs) != len(smiles):  # the labels below count on every molecule being read
        raise SystemExit(f"{name}: {len(smiles) - len(graphs)} of {len(smiles)} molecules not read")
    return graphs


def check_surgery(folder: Path, extra: list[str]) -> float:
    """Largest score difference between :func:`as_default` and ``make_detector()``'s default, on 300 molecules."""
    train = graphs_of(moses_rows("train", 0, 300), folder, "check_train")
    test = graphs_of(moses_rows("test", 0, 100), folder, "check_test")
    params = {"glocalkd": {"epochs": 5}}
    components, reserve = candidate_views(extra)
    cut = as_default(make_detector(components=components, reserve_views=reserve, component_params=params).fit(train))
    direct = make_detector(component_params=params).fit(train)
    gap = float(np.max(np.abs(cut.score(test).score - direct.score(test).score)))
    cal_gap = float(np.max(np.abs(cut.calibration_scores_ - direct.calibration_scores_)))
    return max(gap, cal_gap)


def arms(candidate, test, y: np.ndarray) -> dict:
    """ROC-AUC and the normals' share with p < 0.05 of the default and the candidate."""
    out = {}
    for name, model in (("default", as_default(candidate)), ("candidate", candidate)):
        s = model.score(test).score
        p = model.p_values(s)
        out[name] = {"auc": roc_auc(y, s), "normals_flagged": float(np.mean(p[y == 0] < 0.05))}
    return out


def verdict(runs: list[dict]) -> dict:
    """The rule's three conditions on the runs (the 14 rows' condition is applied beside it)."""
    diff = np.array([r["candidate"]["auc"] - r["default"]["auc"] for r in runs])
    out = {"gain": float(diff.mean()), "se": float(diff.std(ddof=1) / np.sqrt(len(diff))), "tasks": {}}
    for task in dict.fromkeys(r["task"] for r in runs):
        d = np.array([r["candidate"]["auc"] - r["default"]["auc"] for r in runs if r["task"] == task])
        out["tasks"][task] = {"gain": float(d.mean()), "se": float(d.std(ddof=1) / np.sqrt(len(d)))}
    out["flagged"] = float(np.mean([r["candidate"]["normals_flagged"] for r in runs]))
    out["flagged_default"] = float(np.mean([r["default"]["normals_flagged"] for r in runs]))
    out["passes"] = bool(out["gain"] > 2 * out["se"]
                         and all(t["gain"] >= -2 * t["se"] for t in out["tasks"].values())
                         and 0.03 <= out["flagged"] <= 0.07)
    return out


def main(argv: list[str] | None = None) -> dict:
    """Check the surgery, then fit and score each seed's three tasks, both arms."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", type=Path)
    p.add_argument("--seeds", type=int, default=SEEDS)
    p.add_argument("--extra", default=",".join(TWO_VIEWS), help="the views added to the default's components")
    args = p.parse_args(argv)
    extra = [v for v in args.extra.split(",") if v]
    components, reserve = candidate_views(extra)
    novel = {"herg": outside_smiles("herg"), "tox21": outside_smiles("tox21")}
    result: dict = {"components": components, "reserve_views": reserve, "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        result["surgery_gap"] = check_surgery(folder, extra)
        print("as_default against make_detector(): largest score gap", result["surgery_gap"], flush=True)
        for seed in range(args.seeds):
            train = graphs_of(moses_rows("train", TRAIN * seed, TRAIN), folder, "train")
            start = time.perf_counter()
            candidate = make_detector(components=components, reserve_views=reserve, seed=seed).fit(train)
            seconds = round(time.perf_counter() - start, 1)
            for task, (normal, outside) in moses_tasks(seed, novel).items():
                test = graphs_of(normal + outside, folder, "test")
                y = np.r_[np.zeros(len(normal), dtype=int), np.ones(len(test) - len(normal), dtype=int)]
                run = {"task": task, "seed": seed, "fit_seconds": seconds, "graphs": len(test), **arms(candidate, test, y)}
                print(json.dumps(run), flush=True)
                result["runs"].append(run)
    result["verdict"] = verdict(result["runs"])
    print(json.dumps(result["verdict"], indent=1), flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
