"""LESINN scores by each row's nearest columns only; the values must be exactly those of the
direct definition (every member's nearest point), whatever the rows, ties and tiles."""
import numpy as np
from scipy.spatial.distance import cdist
import pytest
from sklearn.metrics import pairwise_distances

from core.detectors import lesinn
from core.detectors.lesinn import LESINN, member_nearest


def direct_nearest(d: np.ndarray, position: np.ndarray) -> np.ndarray:
    return np.stack([d[:, cols].min(axis=1) for cols in position], axis=1)


def direct_scores(model: LESINN, d: np.ndarray) -> np.ndarray:
    """The definition: mean over members of the distance to the member's nearest point."""
    nearest = direct_nearest(d[:, model.used_], np.searchsorted(model.used_, model.members_))
    return np.where(np.isfinite(nearest), nearest, 0.0).mean(axis=1)


@pytest.mark.parametrize("n, subsample, members", [(400, 64, 50), (300, 256, 256), (40, 8, 16), (6, 1, 4)])
def test_scores_equal_the_definition(n, subsample, members):
    rng = np.random.default_rng(n)
    train = rng.random((n, 5))
    train[1] = train[0]  # a tie
    test = np.vstack([rng.random((250, 5)) * 1.5, train[:3]])
    model = LESINN(members, subsample, metric="precomputed", seed=2).fit(pairwise_distances(train))
    scores = model.decision_function(pairwise_distances(test, train))
    np.testing.assert_allclose(scores, direct_scores(model, pairwise_distances(test, train)), rtol=1e-12)


def test_rows_where_a_member_is_far_take_the_direct_way():
    rng = np.random.default_rng(0)
    position = np.stack([rng.choice(500, 20, replace=False) for _ in range(30)])
    d = rng.random((40, 500))
    d[:10, position[0]] += 5.0  # member 0 has no point among these rows' nearest columns
    assert np.array_equal(member_nearest(d, position), direct_nearest(d, position))


def test_far_rows_taken_a_few_at_a_time_give_the_direct_values(monkeypatch):
    rng = np.random.default_rng(2)
    position = np.stack([rng.choice(500, 20, replace=False) for _ in range(30)])
    d = rng.random((40, 500))
    d[:13, position[3]] += 5.0
    monkeypatch.setattr(lesinn, "ROW_TILE_VALUES", 2 * position.size)  # two rows a group
    assert np.array_equal(member_nearest(d, position), direct_nearest(d, position))


def test_scores_do_not_depend_on_the_tile(monkeypatch):
    rng = np.random.default_rng(1)
    train, test = rng.random((200, 4)), rng.random((100, 4))
    model = LESINN(32, 16, seed=0).fit(train)
    whole = model.decision_function(test)
    monkeypatch.setattr(lesinn, "ROW_TILE_VALUES", 7 * 200)  # 7 rows a tile
    assert np.array_equal(model.decision_function(test), whole)
    refit = LESINN(32, 16, seed=0).fit(train)
    assert np.array_equal(refit.train_scores_, model.train_scores_)


def test_members_are_summed_in_their_order():
    """The mean over members adds them one after another (not pairwise), so that a score does not
    change with how the sum is vectorised."""
    rng = np.random.default_rng(4)
    train, test = rng.random((300, 3)) * 1e3, rng.random((50, 3)) * 1e-3
    model = LESINN(64, 8, seed=0).fit(train)
    nearest = member_nearest(cdist(test, train)[:, model.used_],
                             np.searchsorted(model.used_, model.members_))
    running = np.zeros(len(test))
    for m in range(nearest.shape[1]):
        running += nearest[:, m]
    assert np.array_equal(model.decision_function(test), running / nearest.shape[1])


def test_a_scorer_fitted_or_restored_again_scores_by_its_new_members():
    """The members' columns are kept between calls: fitting or restoring anew must replace them,
    even when the new members use as many points (the same number of columns)."""
    rng = np.random.default_rng(1)
    first, second, queries = rng.normal(size=(40, 4)), rng.normal(size=(40, 4)), rng.normal(size=(30, 4))

    def fitted(train, seed):
        model = LESINN(16, 30, metric="precomputed", seed=seed).fit(pairwise_distances(train))
        assert len(model.used_) == 40  # every point used: the same columns whatever the members
        return model

    model = fitted(first, 0)
    model.decision_function(pairwise_distances(queries, first))  # fills the columns
    model.seed = 7
    model.fit(pairwise_distances(second))
    expected = direct_scores(fitted(second, 7), pairwise_distances(queries, second))
    np.testing.assert_allclose(model.decision_function(pairwise_distances(queries, second)), expected, rtol=1e-12)
    model.restore_fitted_state(fitted(first, 5).fitted_state())
    expected = direct_scores(fitted(first, 5), pairwise_distances(queries, first))
    np.testing.assert_allclose(model.decision_function(pairwise_distances(queries, first)), expected, rtol=1e-12)
