"""Two-step detectors on the WL kernel (a graph kernel, then LESINN or an isolation forest)
score graphs a block at a time, so that the dense kernel against the training graphs stays
bounded: a graph's score must not depend on the block it falls in."""
import numpy as np
import pytest

from core import load, make_detector
from core.detectors import two_step


@pytest.mark.parametrize("detector", ["wl-lesinn", "wl-iforest"])
def test_scores_do_not_depend_on_the_block_size(herg_path, monkeypatch, detector):
    graphs = load(herg_path)
    model = make_detector(detector, seed=0).fit(graphs.subset(np.arange(300)))
    whole = model.score(graphs).score
    monkeypatch.setattr(two_step, "KERNEL_BLOCK_VALUES", 300 * 7)  # 7 graphs a block
    blocks = model.score(graphs).score
    assert len(whole) == len(graphs) and np.array_equal(whole, blocks)


def test_the_propagation_kernel_scores_every_graph_at_once(herg_path, monkeypatch):
    """Its hashing depends on the graphs transformed together: no blocks."""
    graphs = load(herg_path)
    model = make_detector("pk-lesinn", seed=0).fit(graphs.subset(np.arange(300)))
    whole = model.score(graphs).score
    monkeypatch.setattr(two_step, "KERNEL_BLOCK_VALUES", 300 * 7)
    assert np.array_equal(whole, model.score(graphs).score)


def test_a_pool_as_large_as_the_fit_set_changes_nothing(herg_path):
    """Up to ``pool_size`` fit graphs the detector is the paper's, bit for bit."""
    graphs = load(herg_path)
    fit = graphs.subset(np.arange(300))
    every = make_detector("wl-lesinn", seed=3).fit(fit)
    pooled = make_detector("wl-lesinn", seed=3, pool_size=300).fit(fit)
    assert np.array_equal(every.score(graphs).score, pooled.score(graphs).score)
    assert np.array_equal(every.train_scores_, pooled.train_scores_)


@pytest.mark.parametrize("detector", ["wl-lesinn", "wl-count-lesinn"])
def test_a_pool_fits_on_a_seeded_draw_and_scores_the_other_fit_graphs_as_new(herg_path, detector):
    graphs = load(herg_path)
    fit = graphs.subset(np.arange(300))
    pooled = make_detector(detector, seed=3, pool_size=100).fit(fit)
    pool = pooled.pool(300)
    assert pool is not None and len(pool) == 100 and np.array_equal(pool, np.unique(pool))
    assert pooled.kernel_.n_train_ == 100 and len(pooled.train_scores_) == 300
    # the same as the detector fitted on the pool's graphs alone
    alone = make_detector(detector, seed=3).fit(fit.subset(pool.tolist()))
    assert np.array_equal(pooled.score(graphs).score, alone.score(graphs).score)
    assert np.array_equal(pooled.train_scores_[pool], alone.train_scores_)
    rest = np.setdiff1d(np.arange(300), pool)
    assert np.array_equal(pooled.train_scores_[rest].astype(np.float32), alone.score(fit.subset(rest.tolist())).score)
    # the draw follows the seed, and only the seed
    assert np.array_equal(make_detector(detector, seed=3, pool_size=100).pool(300), pool)
    assert not np.array_equal(make_detector(detector, seed=4, pool_size=100).pool(300), pool)


def test_a_pool_of_no_graphs_is_refused(herg_path):
    from core.errors import GLocalKDError

    with pytest.raises(GLocalKDError, match="pool_size"):
        make_detector("wl-lesinn", pool_size=0).fit(load(herg_path).subset(np.arange(30)))
