"""The consensus detector: calibrated components combined into one p-value."""
from __future__ import annotations

import numpy as np
import pytest

from core import GLocalKDError, load, make_detector, roc_auc
from core.detectors.conformal import calibration_split
from core.detectors.consensus import combine_p_values, leave_one_out_p_values
from tests.conftest import RESOURCES

SMALL = {"glocalkd": {"epochs": 3, "hidden_dim": 16, "out_dim": 8}, "wl-lesinn": {"ensemble_size": 16}}


def test_the_rules_rank_strong_evidence_first_and_ignore_a_component_that_says_normal():
    p = np.array([[0.5, 0.5], [0.001, 0.9], [0.001, 0.999], [0.2, 0.2]])
    for rule in ("fisher", "minp"):
        t = combine_p_values(p, rule)
        assert t[1] > t[0] and t[2] > t[3], rule
    # Cauchy's tan((0.5 - p) pi) is as large below zero for p near 1 as above it for p near 0:
    # a component calling an anomaly very normal cancels another's strong evidence
    cauchy = combine_p_values(p, "cauchy")
    assert cauchy[1] > cauchy[0] and cauchy[2] < cauchy[3]
    with pytest.raises(GLocalKDError):
        combine_p_values(p, "mean")


def test_leave_one_out_p_values_rank_each_calibration_graph_among_the_others():
    np.testing.assert_allclose(leave_one_out_p_values(np.array([3.0, 1.0, 2.0])), [1 / 3, 1.0, 2 / 3])


@pytest.fixture(scope="module")
def herg():
    return load(RESOURCES / "herg.tab")


def test_consensus_finds_what_any_of_its_views_finds(herg):
    """Train on hERG blockers; score held-out blockers and non-blockers. The consensus must beat
    a coin and keep GLocalKD's node errors for the heatmaps."""
    labels = np.array(herg.labels)
    normal = np.flatnonzero(labels == "1")
    order = np.random.default_rng(0).permutation(normal)
    train, held = order[:300], order[300:]
    test = np.sort(np.concatenate([held, np.flatnonzero(labels == "0")]))
    model = make_detector("consensus", component_params=SMALL, seed=0).fit(herg.subset(np.sort(train)))
    assert set(model.components_) == {"glocalkd", "wl-lesinn", "size"}
    assert len(model.calibration_scores_) == 60
    scores = model.score(herg.subset(test))
    auc = roc_auc(labels[test] == "0", scores.score)
    assert auc > 0.6, auc
    assert scores.has_node_scores and np.isfinite(scores.node_errors).all()
    assert set(scores.parts) == {"component:glocalkd", "component:wl-lesinn", "component:size"}
    p = model.p_values(scores.score)
    assert np.all((p > 0) & (p <= 1))
    # the fitted statistics are the scores score() gives: a tie is a tie (flags, p-values)
    fit_idx, _ = calibration_split(300, model.calibration, model.seed)
    np.testing.assert_array_equal(model.score(herg.subset(np.sort(train)[fit_idx])).score, model.train_scores_)
    assert model.p_values(np.array([model.calibration_scores_.max()]))[0] == pytest.approx(
        (1 + np.sum(model.calibration_scores_ == model.calibration_scores_.max())) / 61)
    per_component = model.component_p_values(herg.subset(test[:10]))
    assert set(per_component) == set(model.components)
    # each component's own score, as its detector alone scores the graphs (for per-component AUCs)
    own = model.component_scores(herg.subset(test[:10]))
    assert list(own) == model.components == list(scores.component_scores())
    for name, detector in model.components_.items():
        np.testing.assert_allclose(own[name], detector.score(herg.subset(test[:10])).score, rtol=1e-6)
        np.testing.assert_array_equal(scores.component_scores()[name][:10],
                                      detector.score(herg.subset(test[:10])).score.astype(np.float32))
    assert model.components_["glocalkd"].score(herg.subset(test[:1])).parts  # GLocalKD's readouts ...
    assert model.components_["glocalkd"].score(herg.subset(test[:1])).component_scores() == {}  # ... no components


def test_invalid_components_or_rule_are_one_clear_error(herg):
    for params in ({"components": ("glocalkd", "nope")}, {"components": ()}, {"rule": "vote"},
                   {"components": ("size", "size")}, {"calibration": 1.5}):
        with pytest.raises(GLocalKDError):
            make_detector("consensus", **params).fit(herg.subset(range(100)))


def test_an_evaluation_of_the_consensus_records_each_component_auc(tmp_path):
    from core.evaluation import evaluate
    from tests.conftest import ring, write_tu

    rng = np.random.default_rng(0)
    graphs = [(n, ring(n), 0) for n in rng.integers(6, 9, size=60)] + [(n, ring(n), 1) for n in (14, 15, 16, 17, 18)] * 2
    data = write_tu(tmp_path, "RINGS", graphs)
    result = evaluate(data, folds=2, method="consensus",
                      model_params={"component_params": SMALL, "components": ("glocalkd", "size")})
    fold = result.folds[0]
    assert set(fold.auc_readouts) >= {"component:glocalkd", "component:size"}
    assert fold.auc_readouts["component:size"] > 0.9  # the anomalies are the large rings
    assert "component size" in result.summary()
