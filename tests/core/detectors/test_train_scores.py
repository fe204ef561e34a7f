"""A detector's ``train_scores_`` said to be its scores of the training graphs are those scores to
the last bit, so that the consensus may take them instead of scoring its fit graphs again (that
second GLocalKD pass was most of the wait after a person stopped a consensus's training)."""
from __future__ import annotations

import numpy as np
import pytest

from core import load, make_detector
from core.detectors.registry import DETECTORS

NET = {"epochs": 2, "hidden_dim": 8, "out_dim": 4, "device": "cpu"}
SAID = [name for name in DETECTORS if make_detector(name).TRAIN_SCORES_ARE_SCORES]


def test_glocalkd_says_so():
    assert "glocalkd" in SAID


@pytest.mark.parametrize("name", SAID)
def test_training_scores_said_to_be_scores_are_the_training_graphs_scores(name, herg_path):
    graphs = load(herg_path).subset(range(50))
    model = make_detector(name, **(NET if name == "glocalkd" else {})).fit(graphs)
    assert np.array_equal(model.train_scores_, model.score(graphs).score)


def test_the_consensus_keeps_each_views_scores_of_its_fit_graphs(herg_path):
    from core.detectors.conformal import calibration_groups, calibration_split

    graphs = load(herg_path).subset(range(80))
    model = make_detector("consensus", component_params={"glocalkd": NET}).fit(graphs)
    fit_idx, _ = calibration_split(len(graphs), model.calibration, model.seed, calibration_groups(graphs))
    fit = graphs.subset(fit_idx)
    assert set(model.component_train_) == set(model.views)
    for name in model.views:
        again = model.components_[name].score(fit).score.astype(np.float64)
        assert np.array_equal(model.component_train_[name], again), name


def test_the_consensus_runs_glocalkd_over_its_fit_graphs_once(herg_path, monkeypatch):
    """GLocalKD scores its fit graphs as it ends training; the consensus took those scores from it
    instead of a second pass (once: when it ends training; then the calibration graphs)."""
    from core.detectors.glocalkd import GLocalKD

    scored: list[int] = []
    real = GLocalKD.score

    def counting(self, graphs, *args, **kwargs):
        scored.append(len(graphs))
        return real(self, graphs, *args, **kwargs)

    monkeypatch.setattr(GLocalKD, "score", counting)
    graphs = load(herg_path).subset(range(80))
    model = make_detector("consensus", component_params={"glocalkd": NET}).fit(graphs)
    fit_size = len(model.component_train_["glocalkd"])
    assert scored == [fit_size, len(graphs) - fit_size]
