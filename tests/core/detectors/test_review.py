"""The review loop: marks re-rank the unreviewed graphs without training again."""
from __future__ import annotations

import numpy as np
import pytest

from core import GLocalKDError, Review, load, make_detector
from core.detectors.review import rank_with_marks

FAST = {"components": ["wl-lesinn", "size"], "component_params": {"wl-lesinn": {"ensemble_size": 16},
                                                                   "wl-count-lesinn": {"ensemble_size": 16}}}


@pytest.fixture(scope="module")
def scored(request):
    from tests.conftest import DEMO_DATA

    graphs = load(DEMO_DATA / "herg.tab")
    labels = np.array(graphs.labels)
    normal, rest = np.flatnonzero(labels == "1"), np.flatnonzero(labels == "0")
    model = make_detector("consensus", **FAST).fit(graphs.subset(normal[:300]))
    test = graphs.subset([*normal[300:400], *rest[:60]])
    return model, test, np.r_[np.zeros(100, bool), np.ones(60, bool)]


def test_without_marks_it_ranks_and_calibrates_as_the_consensus(scored):
    model, test, _ = scored
    review = Review(model, test)
    ranked = review.rerank()
    own = model.score(test).score
    np.testing.assert_array_equal(ranked.statistic, own.astype(np.float64))
    np.testing.assert_array_equal(ranked.p_values, model.p_values(own))
    assert ranked.weights == {"wl-lesinn": 1.0, "size": 1.0, "wl-count-lesinn": 0.0} and ranked.known_auc is None


def test_anomalies_weigh_the_views_as_known_anomalies_do(scored):
    model, test, is_anom = scored
    review = Review(model, test)
    for i in np.flatnonzero(is_anom)[:10]:
        review.mark(i, True)
    ranked = review.rerank()
    import copy

    same = copy.deepcopy(model)
    auc = same.weigh_views(test.subset(np.flatnonzero(is_anom)[:10].tolist()))
    assert ranked.known_auc == pytest.approx(auc)
    assert ranked.weights == pytest.approx(same.weights_now())
    np.testing.assert_array_equal(ranked.statistic, same.score(test).score.astype(np.float64))
    assert not np.isin(np.flatnonzero(is_anom)[:10], review.ranking()).any()


def test_graphs_marked_normal_join_the_calibration():
    cal = {"a": np.arange(20.0), "b": np.arange(20.0) * 2}
    scores = {"a": np.array([25.0, 30.0, 5.0]), "b": np.array([25.0, 1.0, 50.0])}
    weights = {"a": 1.0, "b": 1.0}
    marked = rank_with_marks(cal, scores, {0: False}, weights)
    joined = rank_with_marks({v: np.r_[cal[v], scores[v][0]] for v in cal}, scores, {}, weights)
    np.testing.assert_array_equal(marked.statistic, joined.statistic)
    np.testing.assert_array_equal(marked.p_values, joined.p_values)


def test_marks_are_checked(scored):
    model, test, _ = scored
    review = Review(model, test)
    with pytest.raises(GLocalKDError, match="no graph 999"):
        review.mark(999, True)
    review.mark(3, False)
    review.mark(3, None)
    assert review.marks == {}
    with pytest.raises(GLocalKDError, match="consensus"):
        Review(make_detector("size").fit(test), test)
