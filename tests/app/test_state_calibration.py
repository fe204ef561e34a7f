"""The app's Qt-free state gives calibrated p- and q-values once a model is trained as the app trains it."""
from __future__ import annotations

import numpy as np

from app.state import AppState
from app import tasks
from core import load, report_q_values


class _Job:
    def report(self, info):
        pass

    def stopped(self) -> bool:
        return False

    def abandoned(self) -> bool:
        return False


def test_training_in_the_app_calibrates_and_the_state_answers_p_and_q(herg_path):
    graphs = load(herg_path)
    trained = tasks.train(graphs, "glocalkd", {"epochs": 2, "hidden_dim": 16, "out_dim": 8, "device": "cpu"},
                          None, _Job())
    assert trained.model.is_calibrated and len(trained.model.calibration_scores_) == 131
    state = AppState()
    state.graphs = graphs
    state.set_model(trained.model)
    state.set_scores(trained.scores)
    p, q = state.p_values(), state.q_values()
    np.testing.assert_array_equal(p, trained.model.p_values(trained.scores.score))
    np.testing.assert_array_equal(q, report_q_values(p))  # the reports' q-values (of the p-values as written)
    assert np.all((p > 0) & (p <= 1)) and np.all(q >= p)
