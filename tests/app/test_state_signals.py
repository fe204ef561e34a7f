"""The app state says each change by a psygnal signal, without Qt: what is sent, in which order,
and what the state holds when a listener hears it."""
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from app.state import AppState

SIGNALS = ("data_changed", "model_changed", "scores_changed", "selection_changed", "flag_rule_changed")


@pytest.fixture
def heard():
    """A state whose every signal is recorded as (name, args, what the state held then)."""
    state = AppState()
    log: list[tuple] = []
    for name in SIGNALS:
        getattr(state, name).connect(lambda *args, _name=name: log.append(
            (_name, args, state.graphs, state.model, state.scores, state.selected)))
    return state, log


def _names(log) -> list[str]:
    return [entry[0] for entry in log]


def test_opening_data_is_sent_once_the_state_holds_it(heard):
    state, log = heard
    graphs = SimpleNamespace(name="g")
    state.set_data("a.smi", graphs, "schema")
    assert _names(log) == ["data_changed"]
    _, _, held_graphs, _, held_scores, _ = log[0]
    assert held_graphs is graphs and held_scores is None  # listeners see the new data, scores cleared


def test_training_sends_the_model_then_its_scores(heard):
    state, log = heard
    state.set_data("a.smi", SimpleNamespace(), "")
    model, scores = SimpleNamespace(name="m"), SimpleNamespace(name="s")
    log.clear()
    state.set_trained(model, scores, 10, None, None, None)
    assert _names(log) == ["model_changed", "scores_changed"]
    assert log[0][1] == (model,) and log[0][3] is model and log[1][4] is scores


def test_a_loaded_model_clears_the_scores_which_follow_later(heard):
    state, log = heard
    old_scores = SimpleNamespace()
    state.set_trained(SimpleNamespace(), old_scores, 1, "1", None, None)
    loaded = SimpleNamespace(name="loaded")
    log.clear()
    state.set_model(loaded, normal_label="0")
    # the scores are gone, and said so: the table, map and evaluation showed the old model's as
    # current when the loaded model could not score the graphs, or its scoring was stopped
    assert _names(log) == ["model_changed", "scores_changed"] and log[1][4] is None
    assert state.scores is None and state.normal_label == "0"
    new_scores = SimpleNamespace()
    state.set_scores(new_scores)
    assert _names(log) == ["model_changed", "scores_changed", "scores_changed"] and log[2][4] is new_scores
    log.clear()
    state.set_model(SimpleNamespace(name="again"))  # scores were there: they are gone, said again
    assert _names(log) == ["model_changed", "scores_changed"]
    log.clear()
    state.set_model(SimpleNamespace(name="third"))  # none were there: nothing more to say
    assert _names(log) == ["model_changed"]


def test_weighing_sends_the_new_model_and_the_scores_under_it(heard):
    state, log = heard
    state.set_trained(SimpleNamespace(), SimpleNamespace(), 1, None, None, None, known_label="0")
    weighed, scores = SimpleNamespace(name="weighed"), SimpleNamespace()
    log.clear()
    state.set_weighed(weighed, scores)
    assert _names(log) == ["model_changed", "scores_changed"]
    assert state.model is weighed and state.scores is scores and state.known_label is None
    log.clear()
    state.set_weighed(SimpleNamespace(), None)  # no graphs open: no scores to send
    assert _names(log) == ["model_changed"]


def test_selection_is_sent_with_the_graph_index_and_cleared_by_new_data(heard):
    state, log = heard
    state.set_data("a.smi", SimpleNamespace(), "")
    log.clear()
    state.select(3)
    state.select(3)  # selected anew (e.g. its row after new scores): its drawing follows again
    assert [(n, args) for n, args, *_ in log] == [("selection_changed", (3,))] * 2 and state.selected == 3
    log.clear()
    state.set_data("b.smi", SimpleNamespace(), "")
    assert [(n, args) for n, args, *_ in log] == [("data_changed", ()), ("selection_changed", (None,))]


def test_the_flag_rule_is_sent_and_the_flags_follow_it(heard):
    state, log = heard
    train_scores = np.arange(100, dtype=float)
    model = SimpleNamespace(threshold=lambda pct: float(np.percentile(train_scores, pct)))
    scores = SimpleNamespace(score=np.array([10.0, 50.0, 96.0, 99.5]))
    state.set_data("a.smi", [0, 1, 2, 3], "")
    state.set_trained(model, scores, 100, None, None, None)
    flags = []
    state.flag_rule_changed.connect(lambda: flags.append(state.flagged().tolist()))
    state.set_flag_rule("percentile", 95.0)
    state.set_flag_rule("percentile", 40.0)
    assert flags == [[False, False, True, True], [False, True, True, True]]
    state.set_flag_rule("p", 0.01)
    assert state.flag_rule == "p" and state.alpha == 0.01 and state.percentile == 40.0
    assert _names(log)[-3:] == ["flag_rule_changed"] * 3


def test_a_listener_that_disconnects_hears_nothing_more(heard):
    state, _ = heard
    got = []

    def listen():
        got.append(1)

    state.scores_changed.connect(listen)
    state.set_scores(SimpleNamespace())
    state.scores_changed.disconnect(listen)
    state.set_scores(SimpleNamespace())
    assert got == [1]


def test_the_state_and_its_signals_work_without_qt():
    """Emitting and receiving in a process that never imports Qt (psygnal, not Qt signals)."""
    code = ("import sys\n"
            "from app.state import AppState\n"
            "state, got = AppState(), []\n"
            "state.data_changed.connect(lambda: got.append(len(state.graphs)))\n"
            "state.selection_changed.connect(got.append)\n"
            "state.set_data('a.smi', [1, 2], '')\n"
            "state.select(1)\n"
            "assert got == [2, 1], got\n"
            "assert not [m for m in sys.modules if m.startswith('PySide6')], 'Qt imported'\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
