"""Conformal p-values: their formula, Benjamini-Hochberg q-values, the calibration split, the
model file, and the promise itself: about 5 % of held-out normal graphs get p < 0.05."""
from __future__ import annotations

import numpy as np
import pytest

from core import GLocalKD, GLocalKDError, load
from core.detectors.conformal import (benjamini_hochberg, calibration_groups, calibration_split,
                                      conformal_p_values, fit_calibrated)
from tests.conftest import RESOURCES


def test_p_value_is_the_share_of_calibration_scores_at_least_as_high():
    cal = np.array([1.0, 2.0, 2.0, 3.0])
    p = conformal_p_values(cal, np.array([0.5, 2.0, 2.5, 9.0, np.nan]))
    np.testing.assert_allclose(p[:4], [5 / 5, 4 / 5, 2 / 5, 1 / 5])
    assert np.isnan(p[4])
    with pytest.raises(GLocalKDError):
        conformal_p_values(np.array([]), np.array([1.0]))


def test_benjamini_hochberg_matches_its_definition():
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(size=40), rng.uniform(0, 0.01, size=10), [np.nan]])
    q = benjamini_hochberg(p)
    finite = ~np.isnan(p)
    n = finite.sum()
    order = np.argsort(p[finite])
    ps = p[finite][order]
    expected = np.array([min(1.0, min(ps[j] * n / (j + 1) for j in range(i, n))) for i in range(n)])
    np.testing.assert_allclose(q[finite][order], expected)
    assert np.isnan(q[-1])
    assert np.all(q[finite] >= p[finite])


def test_the_calibration_split_is_seeded_disjoint_and_large_enough():
    fit, cal = calibration_split(100, 0.2, seed=1)
    assert len(cal) == 20 and len(fit) == 80 and not set(fit) & set(cal)
    assert np.array_equal(cal, calibration_split(100, 0.2, seed=1)[1])
    assert len(calibration_split(50, 0.1)[1]) == 19  # never fewer than 19: p could not go below 0.05
    with pytest.raises(GLocalKDError, match="too few"):
        calibration_split(19, 0.5)


def test_a_grouped_split_keeps_every_group_on_one_side_but_the_last_one_drawn():
    """Whole groups fill the calibration share in a seeded order; only the group that would
    overfill it is cut, and the sizes are those of the split drawn graph by graph."""
    groups = [f"s{(i * 7) % 23}" for i in range(230)]  # 23 series of 10, interleaved in the file
    fit, cal = calibration_split(230, 0.2, seed=4, groups=groups)
    plain_fit, plain_cal = calibration_split(230, 0.2, seed=4)
    assert (len(fit), len(cal)) == (len(plain_fit), len(plain_cal)) == (184, 46)
    assert not set(fit) & set(cal) and len(set(fit) | set(cal)) == 230
    both = {groups[i] for i in cal} & {groups[i] for i in fit}
    assert len(both) == 1 and len({groups[i] for i in cal}) == 5  # four series whole, the fifth cut
    assert np.array_equal(cal, calibration_split(230, 0.2, seed=4, groups=groups)[1])
    assert not np.array_equal(cal, calibration_split(230, 0.2, seed=5, groups=groups)[1])
    with pytest.raises(GLocalKDError, match="groups"):
        calibration_split(230, 0.2, groups=groups[:-1])


def test_molecules_are_grouped_by_scaffold_and_other_graphs_are_not(tmp_path, tu_folder):
    """Analogues share their Bemis-Murcko scaffold's group; an acyclic molecule is a group of its
    own; graphs that are not molecules with a SMILES are drawn one by one (None)."""
    path = tmp_path / "series.smi"
    path.write_text("smiles\nc1ccccc1CCO\nc1ccccc1CCN\nC1CCNCC1C(=O)O\nCCO\nCCN\n")
    groups = calibration_groups(load(path))
    assert groups[0] == groups[1] != groups[2]
    assert len({groups[3], groups[4], groups[0], groups[2]}) == 4
    assert calibration_groups(load(tu_folder)) is None


@pytest.fixture(scope="module")
def moses():
    return load(RESOURCES / "moses_sample.csv.gz")


def test_held_out_normal_graphs_are_flagged_at_the_promised_rate(moses):
    """Train on 200 molecules, calibrate on 600 others, then 4,200 further normal molecules: the
    share with p < 0.05 must lie in 0.03-0.07. A model this size overfits its 200 training
    molecules, so p-values taken against the training scores instead (no held-out calibration)
    flag far more: the same check fails without calibration."""
    order = np.random.default_rng(0).permutation(len(moses))
    train, held = moses.subset(np.sort(order[:800])), moses.subset(np.sort(order[800:]))
    model = GLocalKD(epochs=60, hidden_dim=128, out_dim=64, lr=1e-3, batch_size=50, seed=0)
    fit_calibrated(model, train, fraction=0.75, seed=0)
    assert len(model.calibration_scores_) == 600
    scores = model.score(held).score
    flagged = float((model.p_values(scores) < 0.05).mean())
    assert 0.03 <= flagged <= 0.07, flagged
    uncalibrated = float((conformal_p_values(model.train_scores_, scores) < 0.05).mean())
    assert uncalibrated > 0.07, uncalibrated


def test_calibration_travels_in_the_model_file_and_a_refit_drops_it(moses, tmp_path):
    model = fit_calibrated(GLocalKD(epochs=2, hidden_dim=16, out_dim=8), moses.subset(range(200)), 0.2)
    model.save(tmp_path / "m.pt")
    loaded = GLocalKD.load(tmp_path / "m.pt", device="cpu")
    np.testing.assert_array_equal(loaded.calibration_scores_, model.calibration_scores_)
    s = model.score(moses.subset(range(200, 260))).score
    np.testing.assert_array_equal(loaded.p_values(s), model.p_values(s))
    loaded.fit(moses.subset(range(100)))
    assert not loaded.is_calibrated
    with pytest.raises(GLocalKDError, match="not calibrated"):
        loaded.p_values(s)


def test_p_values_never_change_the_ranking(moses):
    model = fit_calibrated(GLocalKD(epochs=2, hidden_dim=16, out_dim=8), moses.subset(range(300)), 0.3)
    s = model.score(moses.subset(range(300, 500))).score
    p = model.p_values(s)
    i, j = np.triu_indices(len(s), 1)
    assert np.all((s[i] > s[j]) <= (p[i] <= p[j]))


def test_a_consensus_weighed_by_known_anomalies_keeps_its_promise(moses):
    """Weights from 10 known anomalies (the largest held-out molecules, which graph size ranks
    first) change the combined statistic; the calibration graphs' statistics are recomputed
    with them, so about 5 % of the other held-out normal molecules still get p < 0.05."""
    from core import make_detector

    order = np.random.default_rng(0).permutation(len(moses))
    train, held = moses.subset(np.sort(order[:800])), moses.subset(np.sort(order[800:]))
    atoms = np.array([int(g.num_nodes) for g in held.graphs])
    largest = np.argsort(-atoms, kind="stable")[:10]
    model = make_detector("consensus", components=("wl-lesinn", "size"), calibration=0.5, seed=0).fit(train)
    model.weigh_views(held.subset(largest))
    assert model.view_weights_["size"] > 1.0 > model.view_weights_["wl-lesinn"]
    rest = held.subset(np.setdiff1d(np.arange(len(held)), largest))
    flagged = float((model.p_values(model.score(rest).score) < 0.05).mean())
    assert 0.03 <= flagged <= 0.07, flagged


@pytest.fixture(scope="module")
def sixty_molecules():
    from tests.conftest import DEMO_DATA

    return load(DEMO_DATA / "herg.tab").subset(range(60))


@pytest.mark.parametrize("given", [{"fraction": 1.5}, {"fraction": -0.1}, {"fraction": float("nan")},
                                   {"fraction": 20}, {"fraction": "0.2"}, {"seed": -1}, {"seed": 1.5},
                                   {"seed": 2 ** 70}])
def test_fit_with_calibration_refuses_a_share_or_seed_out_of_range(given, sixty_molecules):
    """A share of 1.5 or 20 (meant as 20 %) left the model silently without p-values, and seed -1
    raised numpy's bare ValueError; both are refused naming the parameter, as the plan refuses them."""
    from core import ParameterError, fit_with_calibration, make_detector

    with pytest.raises(ParameterError, match=f"^{next(iter(given))} must be"):
        fit_with_calibration(make_detector("size"), sixty_molecules, **given)
