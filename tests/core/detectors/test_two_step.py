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
