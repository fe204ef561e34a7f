"""A feature column that is constant over the training graphs is divided by 1, never by its
rounding error: ten graphs of one size gave np.std 4e-16, and every other size a score of 1e29
(the size view is a view of the default consensus)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core import load, make_detector
from core.data.scaling import usable_spread

ROOT = Path(__file__).resolve().parents[3]
OCTANES = ["CCCCCCCC", "CC(C)CCCCC", "CCC(C)CCCC", "CCCC(C)CCC", "CC(C)(C)CCCC", "CC(C)C(C)CCC", "CC(C)CC(C)CC",
           "CCC(C)(C)CCC", "CCC(CC)CCC", "CC(C)CCC(C)C"]


@pytest.fixture(scope="module")
def octanes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("octanes")
    (folder / "train.smi").write_text("".join(f"{s} o{i}\n" for i, s in enumerate(OCTANES)))
    (folder / "probe.smi").write_text("CCCCCCCCC nonane\nCCCCCCC heptane\nCCCCCCCC octane\n")
    return load(folder / "train.smi"), load(folder / "probe.smi")


def test_np_std_of_one_value_is_rounding_and_counts_as_constant():
    spread = np.array([0.1, 0.2, 0.3] * 10 + [0.1]).std()  # a real spread
    same = np.full(10, 8.0 * 0.1).std()  # identical floats: a few ulp, or 0
    assert usable_spread([same, spread], [0.8, 0.2]).tolist() == [1.0, spread]


@pytest.mark.parametrize("name", ["size", "property-lesinn", "spectral-lesinn", "distance-lesinn"])
def test_graphs_of_one_size_give_finite_scores_of_the_other_sizes(octanes, name):
    train, probe = octanes
    for n in (7, 10):  # the guard fired or not by the number of graphs
        detector = make_detector(name).fit(train.subset(range(n)))
        scores = detector.score(probe).score
        assert np.all(np.isfinite(scores)) and np.all(np.abs(scores) < 1e6), (name, n, scores)
        assert np.all(np.abs(detector.train_scores_) < 1e6), (name, n)


def test_only_the_scaling_module_tests_a_spread_against_zero():
    pattern = ("std > 0", "std>0", "scale > 0, scale")
    found = [str(p.relative_to(ROOT)) for p in (ROOT / "core").rglob("*.py") if p.name != "scaling.py"
             and any(text in p.read_text(encoding="utf-8") for text in pattern)]
    assert not found, f"divide by core.data.scaling.usable_spread: {found}"
