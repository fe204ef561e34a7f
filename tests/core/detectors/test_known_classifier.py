"""The known anomalies' classifier view: trained by weigh_views, joined by Fisher's rule, calibrated,
saved, screened and reviewed as the consensus's other views are."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from core import Review, load, make_detector, roc_auc
from core.detectors.consensus import fisher_two_statistic, leave_one_out_p_values
from core.detectors.known_classifier import CLASSIFIER_VIEW, KnownClassifier
from core.data.pvalues import conformal_p_values
from tests.conftest import DEMO_DATA

FAST = {"components": ["wl-lesinn", "size"], "component_params": {"wl-lesinn": {"ensemble_size": 16},
                                                                   "wl-count-lesinn": {"ensemble_size": 16}}}


def _float32(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float32).astype(np.float64)


@pytest.fixture(scope="module")
def herg():
    graphs = load(DEMO_DATA / "herg.tab")
    labels = np.array(graphs.labels)
    normal, blockers = np.flatnonzero(labels == "1"), np.flatnonzero(labels == "0")
    return graphs, normal, blockers


@pytest.fixture(scope="module")
def weighed(herg):
    """A fast consensus trained on 300 hERG non-blockers, weighed by 10 blockers; and its test set."""
    graphs, normal, blockers = herg
    model = make_detector("consensus", seed=0, **FAST).fit(graphs.subset(normal[:300]))
    unweighed = copy.deepcopy(model)
    model.weigh_views(graphs.subset(blockers[:10]))
    test = graphs.subset([*normal[300:400], *blockers[10:70]])
    return model, unweighed, test, np.r_[np.zeros(100, bool), np.ones(60, bool)]


def test_known_anomalies_train_the_classifier_view_which_joins_by_fishers_rule(weighed):
    model, _, test, _ = weighed
    assert isinstance(model.known_classifier_, KnownClassifier)
    assert model.scored_views() == ["wl-lesinn", "size", "wl-count-lesinn", CLASSIFIER_VIEW]
    scores = model.score(test)
    raw = scores.component_scores()
    weighed_statistic = scores.parts["weighed-views"].astype(np.float64)
    # the final statistic: Fisher's rule over the weighed views' p-value and the classifier view's
    expected = fisher_two_statistic(conformal_p_values(model.weighed_calibration_, weighed_statistic),
                                    model.known_classifier_.p_values(raw[CLASSIFIER_VIEW]))
    np.testing.assert_array_equal(scores.score, expected.astype(np.float32))
    # the calibration graphs' statistics are computed the same way, each against the others
    cal = model.known_classifier_.decisions(*model.calibration_features_)
    expected_cal = fisher_two_statistic(leave_one_out_p_values(model.weighed_calibration_),
                                        model.known_classifier_.p_values(cal))
    np.testing.assert_array_equal(model.calibration_scores_, _float32(expected_cal))
    # its reference values are out-of-fold: a training graph is not scored by a classifier that saw it
    view = model.components_["wl-lesinn"]
    in_fold = model.known_classifier_.decisions(view.kernel_.train_features_, view.kernel_.train_squares_)
    assert not np.array_equal(in_fold, model.known_classifier_.reference_)
    assert np.mean(in_fold) < np.mean(model.known_classifier_.reference_)  # trained on, they look more normal


def test_the_classifier_ranks_graphs_like_the_known_anomalies_higher(tmp_path):
    """Normal graphs are labelled rings of 6-9 nodes; the anomalies are the same rings with one chord
    (a triangle). Five known anomalies teach the classifier the chord's subtrees: it ranks held-out
    chorded rings above held-out plain rings."""
    from tests.conftest import ring, write_tu

    rng = np.random.default_rng(0)
    sizes = rng.integers(6, 10, size=140)
    plain = [(int(n), ring(int(n)), 0) for n in sizes[:120]]
    chorded = [(int(n), [*ring(int(n)), (0, 2)], 1) for n in sizes[120:]]
    data = load(write_tu(tmp_path, "CHORDS", plain + chorded))
    model = make_detector("consensus", seed=0, **FAST).fit(data.subset(range(100)))
    model.weigh_views(data.subset(range(120, 125)))
    test = data.subset([*range(100, 120), *range(125, 140)])
    is_anom = np.r_[np.zeros(20, bool), np.ones(15, bool)]
    scores = model.score(test)
    assert roc_auc(is_anom, scores.component_scores()[CLASSIFIER_VIEW]) == 1.0
    assert roc_auc(is_anom, scores.score) == 1.0


def test_without_the_classifier_view_the_weighed_consensus_is_unchanged(herg, weighed):
    model, unweighed, test, _ = weighed
    graphs, _, blockers = herg
    plain = copy.deepcopy(unweighed)
    plain.known_classifier = False
    plain.weigh_views(graphs.subset(blockers[:10]))
    assert plain.known_classifier_ is None and CLASSIFIER_VIEW not in plain.scored_views()
    assert plain.view_weights_ == model.view_weights_
    # the same weighed views: the part the classifier joins is the plain weighed consensus's statistic
    np.testing.assert_array_equal(model.score(test).parts["weighed-views"], plain.score(test).score)
    np.testing.assert_array_equal(model.weighed_calibration_, plain.calibration_scores_)


def test_a_graphs_score_does_not_depend_on_the_graphs_scored_with_it(weighed):
    model, _, test, _ = weighed
    together = model.score(test).score
    alone = np.concatenate([model.score(test.subset([i])).score for i in (0, 57, 130)])
    np.testing.assert_array_equal(alone, together[[0, 57, 130]])


def test_p_values_of_held_out_normal_graphs_stay_calibrated(herg, weighed):
    model, _, _, _ = weighed
    graphs, normal, _ = herg
    held = graphs.subset(normal[400:])
    p = model.p_values(model.score(held).score)
    assert 0.0 < np.mean(p < 0.2) < 0.4  # about 20 %: exchangeable with the calibration graphs


def test_the_model_file_keeps_the_classifier_view(weighed, tmp_path):
    model, _, test, _ = weighed
    model.save(tmp_path / "m.pt")
    loaded = make_detector("consensus").load(tmp_path / "m.pt")
    np.testing.assert_array_equal(loaded.known_classifier_.coef_, model.known_classifier_.coef_)
    np.testing.assert_array_equal(loaded.score(test).score, model.score(test).score)
    np.testing.assert_array_equal(loaded.calibration_scores_, model.calibration_scores_)


def test_a_model_file_from_before_the_classifier_view_loads_without_it(weighed):
    model, _, test, _ = weighed
    state = model.fitted_state()
    for key in ("calibration_features", "known_classifier", "weighed_calibration"):
        state.pop(key)
    state["view_weights"] = state["known_anomaly_auc"] = None  # an unweighed file of that time
    older = make_detector("consensus", **FAST)
    older.restore_fitted_state(state)
    assert older.known_classifier_ is None and older.calibration_features_ is None
    older.weigh_views(test.subset(list(range(100, 110))))  # weighing still works, without the classifier
    assert older.known_classifier_ is None and older.view_weights_ is not None


def test_a_review_without_marks_ranks_and_calibrates_as_the_weighed_model(weighed):
    model, _, test, _ = weighed
    own = model.score(test)
    ranked = Review(model, test).rerank()
    np.testing.assert_array_equal(ranked.statistic, own.score.astype(np.float64))
    np.testing.assert_array_equal(ranked.p_values, model.p_values(own.score))
    # and from a report's view columns, the classifier view's among them
    views = model.view_scores(test, own)
    assert list(views)[-1] == CLASSIFIER_VIEW
    from_columns = Review.from_view_scores(model, views)
    for i in (3, 120):
        from_columns.mark(i, True)
        from_columns.mark(i + 1, False)
    review = Review(model, test)
    for i, mark in from_columns.marks.items():
        review.mark(i, mark)
    np.testing.assert_array_equal(from_columns.rerank().statistic, review.rerank().statistic)


def test_scoring_and_reviewing_compute_the_wl_features_once(weighed, monkeypatch):
    """Consensus.score, view_scores and Review score WL-LESINN, WL counts, the classifier view (and
    the marks' kernel) from one computation of the set's WL features; the values are those of
    computing them for each."""
    import contextlib

    from core.detectors import consensus as consensus_module, review as review_module, wl_features

    model, _, test, _ = weighed
    calls = []
    original = wl_features.WLFeatures._features
    monkeypatch.setattr(wl_features.WLFeatures, "_features", lambda self, *a: calls.append(1) or original(self, *a))
    own = model.score(test)
    views = model.view_scores(test)
    review = Review(model, test, similarity=True)
    assert len(calls) == 3 and set(views) == {"wl-lesinn", "size", "wl-count-lesinn", CLASSIFIER_VIEW}
    for module in (consensus_module, review_module):  # each view on its own
        monkeypatch.setattr(module, "shared_transforms", contextlib.nullcontext)
    apart = model.score(test)
    apart_views = model.view_scores(test)
    apart_review = Review(model, test, similarity=True)
    # each on its own: the three WL views for score and for view_scores, and for Review its two WL
    # views, the marks' kernel and the classifier (the structural check above can fail)
    assert len(calls) == 3 + 3 + 3 + 4
    np.testing.assert_array_equal(own.score, apart.score)
    assert all(np.array_equal(views[v], apart_views[v]) for v in views)
    np.testing.assert_array_equal(review.rerank().statistic, apart_review.rerank().statistic)


def test_with_a_pool_the_training_scores_are_the_pools(herg):
    graphs, normal, blockers = herg
    params = copy.deepcopy(FAST)
    params["component_params"]["wl-lesinn"]["pool_size"] = 50
    model = make_detector("consensus", seed=0, **params).fit(graphs.subset(normal[:300]))
    model.weigh_views(graphs.subset(blockers[:10]))
    assert len(model.known_classifier_.reference_) == 50
    assert len(model.train_scores_) == 50 and np.all(np.isfinite(model.train_scores_))


def test_an_evaluation_with_known_anomalies_reports_both_arms_and_the_calibration(tmp_path):
    """``glocalkd evaluate --known-anomalies K`` on a consensus with a WL view: each fold's AUC is the
    consensus with the classifier view, its ``weighed-views`` readout the same fit without it, and it
    records how many held-out normal graphs its p-values flag at 5 %."""
    from core.evaluation import evaluate
    from tests.conftest import ring, write_tu

    rng = np.random.default_rng(1)
    sizes = rng.integers(6, 10, size=100)
    # anomalies: rings with a chord, each chord its own (known anomalies count distinct graphs)
    graphs = [(int(n), ring(int(n)), 0) for n in sizes[:80]] + [(int(n), [*ring(int(n)), (0, 2 + k % 3)], 1)
                                                               for k, n in enumerate(sizes[80:])]
    result = evaluate(write_tu(tmp_path, "CHORDS", graphs), folds=2, method="consensus", known_anomalies=5,
                      model_params={"components": ["wl-lesinn", "size"], "reserve_views": [],
                                    "component_params": {"wl-lesinn": {"ensemble_size": 16}}})
    for fold in result.folds:
        assert {"weighed-views", "component:known-classifier"} <= set(fold.auc_readouts)
        assert 0.0 <= fold.normals_flagged <= 0.2
        assert fold.auc >= fold.auc_readouts["weighed-views"]
    summary = result.summary()
    assert "without the classifier view" in summary and "held-out normal graphs with p < 0.05" in summary
