"""The rule's run for scaffold-grouped calibration of molecule data (research/README.md,
"Scaffold-grouped calibration for molecules"): each check with the calibration share drawn
whole scaffolds at a time (the product, :func:`core.detectors.conformal.calibration_groups`) and
graph by graph (as before: ``calibration_groups`` answering None).

1. The default consensus (``make_detector()``, GLocalKD included) trained on 2,000 neighbouring
   rows of MOSES's training file (the outside check's rows, seeds 0 and 4), scoring 1,000 other
   MOSES molecules (rows from 100,000 + 1,000 * seed): the share with p < 0.05.
2. hERG, the 14 rows' protocol (``glocalkd evaluate herg.tab --anomaly 0``, 5 folds, one thread):
   ROC-AUC per fold and the held-out normal molecules with p < 0.05.

Prints the verdict of the rule and writes JSON (``--json``).

    DATASETS=../shared/datasets PYTHONPATH=. OMP_NUM_THREADS=1 python -m research.ranking.scaffold_calibration --json OUT
"""
from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
from pathlib import Path

import numpy as np

import core.detectors.consensus as consensus_module
from core import make_detector
from research.consensus.pool_size import DATA
from research.ranking.two_views_outside import OTHER_MOSES, TEST, TRAIN, graphs_of, moses_rows

SEEDS = (0, 4)


@contextlib.contextmanager
def split(how: str):
    """Within it the consensus draws its calibration share ``scaffold`` by scaffold (the product)
    or ``one by one`` (as before)."""
    product = consensus_module.calibration_groups
    if how == "one by one":
        consensus_module.calibration_groups = lambda graphs: None
    try:
        yield
    finally:
        consensus_module.calibration_groups = product


def moses_check(folder: Path) -> list[dict]:
    """Check 1: the default consensus's share of other MOSES molecules with p < 0.05, each split."""
    runs = []
    for seed in SEEDS:
        train = graphs_of(moses_rows("train", TRAIN * seed, TRAIN), folder, "train")
        other = graphs_of(moses_rows("train", OTHER_MOSES + TEST * seed, TEST), folder, "other")
        run = {"seed": seed}
        for how in ("scaffold", "one by one"):
            with split(how):
                model = make_detector(seed=seed).fit(train)
            run[how] = float(np.mean(model.p_values(model.score(other).score) < 0.05))
        print(json.dumps(run), flush=True)
        runs.append(run)
    return runs


def herg_check(folder: Path) -> dict:
    """Check 2: ``glocalkd evaluate`` on hERG with each split; per-fold ROC-AUC and flagged normals."""
    from core.cli.main import main as cli

    out = {}
    for how in ("scaffold", "one by one"):
        path = folder / f"herg_{how.replace(' ', '_')}.json"
        with split(how):
            if cli(["evaluate", str(DATA / "herg.tab"), "--anomaly", "0", "--threads", "1", "--json", str(path)]):
                raise SystemExit(f"glocalkd evaluate failed ({how})")
        folds = json.loads(path.read_text())["folds"]
        out[how] = {"auc": [f["auc"] for f in folds], "normals_flagged": [f["normals_flagged"] for f in folds]}
        print(how, json.dumps(out[how]), flush=True)
    return out


def verdict(moses: list[dict], herg: dict) -> dict:
    """The rule's first two conditions (the third is the test suite)."""
    diff = np.subtract(herg["scaffold"]["auc"], herg["one by one"]["auc"])
    se = float(diff.std(ddof=1) / np.sqrt(len(diff)))
    flagged = float(np.mean(herg["scaffold"]["normals_flagged"]))
    out = {"moses_flagged_scaffold": [r["scaffold"] for r in moses], "herg_auc_change": float(diff.mean()),
           "herg_auc_change_se": se, "herg_flagged_scaffold": flagged,
           "herg_flagged_one_by_one": float(np.mean(herg["one by one"]["normals_flagged"]))}
    out["passes"] = bool(all(r["scaffold"] <= 0.07 for r in moses) and 0.03 <= flagged <= 0.07
                         and diff.mean() >= -2 * se)
    return out


def main(argv: list[str] | None = None) -> dict:
    """Run both checks and apply the rule."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        result = {"herg": herg_check(folder), "moses": moses_check(folder)}
    result["verdict"] = verdict(result["moses"], result["herg"])
    print(json.dumps(result["verdict"], indent=1), flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
