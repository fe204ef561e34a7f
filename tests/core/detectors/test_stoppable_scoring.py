"""Scoring a set a person may stop: chunk by chunk it gives the very scores of one call, polls
``should_stop`` between chunks, and scores a batch-dependent detector whole."""
from __future__ import annotations

import numpy as np
import pytest

from core import Stopped, load, make_detector, score_graphs
from tests.conftest import DEMO_DATA


@pytest.fixture(scope="module")
def herg_consensus():
    graphs = load(DEMO_DATA / "herg.tab")
    model = make_detector(component_params={"glocalkd": dict(epochs=2, hidden_dim=16, out_dim=8)},
                          device="cpu").fit(graphs.subset(range(300)))
    return model, graphs.subset(range(300, 655))


def test_chunk_by_chunk_the_scores_are_those_of_one_call(herg_consensus):
    model, test = herg_consensus
    whole = model.score(test)
    seen = []
    chunked = score_graphs(model, test, on_progress=lambda done, total: seen.append((done, total)), chunk=100)
    np.testing.assert_array_equal(chunked.score, whole.score)
    np.testing.assert_array_equal(chunked.node_errors, whole.node_errors)
    assert chunked.component_scores().keys() == whole.component_scores().keys()
    for name, values in whole.component_scores().items():
        np.testing.assert_array_equal(chunked.component_scores()[name], values)
    assert seen == [(100, 355), (200, 355), (300, 355), (355, 355)]


def test_should_stop_ends_the_scoring_between_chunks(herg_consensus):
    model, test = herg_consensus
    polls = []

    def stop_at_third() -> bool:
        polls.append(1)
        return len(polls) >= 3

    with pytest.raises(Stopped, match="scored"):
        score_graphs(model, test, should_stop=stop_at_third, chunk=100)
    assert len(polls) == 3


def test_a_batch_dependent_detector_is_scored_whole(herg_consensus, monkeypatch):
    _, test = herg_consensus
    model = make_detector("pk-lesinn", ensemble_size=8).fit(test.subset(range(100)))
    batches = []
    score = model.score
    monkeypatch.setattr(model, "score", lambda graphs: batches.append(len(graphs)) or score(graphs))
    score_graphs(model, test, chunk=50)
    assert batches == [len(test)]
