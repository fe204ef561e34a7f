"""Stop (Esc) and closing the window, for every job the window starts: each job is either one Stop
stops or one that runs to its end, by name (app.actions), and the long reads stop at once."""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from app.actions import RUN_TO_END, STOPPABLE
from tests.app.test_main_window import _idle

APP = Path(__file__).resolve().parents[2] / "app"


def started_job_names() -> dict[str, list[str]]:
    """Each job name the app's code starts on a runner (``runner.start("name", ...)`` or a controller's
    ``start_job("name", ...)``), with where."""
    found: dict[str, list[str]] = {}
    for path in sorted(APP.rglob("*.py")):
        for match in re.finditer(r"(?:runner\.start|start_job)\(\s*\"([^\"]+)\"", path.read_text()):
            found.setdefault(match.group(1), []).append(str(path.relative_to(APP.parent)))
    return found


def test_every_job_the_window_starts_is_named_either_stopped_by_stop_or_run_to_its_end():
    """A job added beside the others must say whether Stop stops it: a name in neither list fails
    here (loading a large file once ran past Stop for minutes)."""
    names = started_job_names()
    assert {"train", "load", "export", "score_file"} <= set(names)  # the scan reads the app's code
    undecided = {name: where for name, where in names.items() if name not in STOPPABLE + RUN_TO_END}
    assert not undecided, f"jobs neither STOPPABLE nor RUN_TO_END: {undecided}"
    assert not set(STOPPABLE) & set(RUN_TO_END)
    assert set(STOPPABLE + RUN_TO_END) <= set(names), "a listed job the app no longer starts"


@pytest.fixture
def slow_rows(monkeypatch):
    """Each molecule row takes 5 ms to read (a large file on a slow machine): 4,000 rows, 20 s."""
    from core.io import molecules

    read = molecules.read_row

    def slow(row, standardise=False):
        time.sleep(0.005)
        return read(row, standardise)

    monkeypatch.setattr(molecules, "read_row", slow)


@pytest.fixture
def big_smiles(tmp_path) -> Path:
    path = tmp_path / "library.smi"
    path.write_text("".join(f"{'C' * (1 + i % 9)}O mol{i}\n" for i in range(4000)))
    return path


def test_stop_ends_loading_a_large_file_and_the_window_keeps_what_it_held(qtbot, window, big_smiles, slow_rows):
    w = window
    w.open_path(str(big_smiles))
    qtbot.waitUntil(lambda: "rows read" in w.side.progress_label.text(), timeout=60000)
    assert w.act_stop.isEnabled() and w.side.stop_button.isEnabled()
    start = time.perf_counter()
    w.act_stop.trigger()
    qtbot.waitUntil(lambda: _idle(w), timeout=10000)
    assert time.perf_counter() - start < 5
    assert w.graphs is None and not w.feedback.last_warning
    assert "Stopped: library.smi was not opened" in w.side.progress_label.text()
    assert not w.act_stop.isEnabled() and w.act_open.isEnabled()


def test_closing_the_window_while_a_large_file_loads_closes_at_once(qtbot, window, big_smiles, slow_rows):
    w = window
    w.open_path(str(big_smiles))
    qtbot.waitUntil(lambda: "rows read" in w.side.progress_label.text(), timeout=60000)
    threads = [t for t, *_ in w.runner._running.values()]
    start = time.perf_counter()
    w.close()
    assert time.perf_counter() - start < 5
    assert threads and all(t.isFinished() for t in threads)


def test_stop_ends_scoring_the_open_graphs_and_leaves_them_unscored(qtbot, window, herg_path, tmp_path,
                                                                     monkeypatch):
    """A model is open and a large file is opened: it is scored chunk by chunk, counted, and Stop
    ends it at once; the graphs stay open, unscored, and the window says how to score them."""
    from core.detectors import stoppable_scoring
    from tests.app.test_main_window import open_and_wait, train_and_wait

    w = window
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w)
    model = w.state.model
    score = model.score

    def slow(graphs, *args, **kwargs):
        time.sleep(0.2)
        return score(graphs, *args, **kwargs)

    monkeypatch.setattr(model, "score", slow)
    monkeypatch.setattr(stoppable_scoring, "SCORE_CHUNK", 20)  # 655 graphs: 33 chunks, over 6 s
    w.open_path(str(herg_path))
    qtbot.waitUntil(lambda: "Scoring: " in w.side.progress_label.text(), timeout=60000)
    assert w.act_stop.isEnabled()
    start = time.perf_counter()
    w.act_stop.trigger()
    qtbot.waitUntil(lambda: _idle(w), timeout=10000)
    assert time.perf_counter() - start < 3
    assert w.graphs is not None and w.scores is None and w.state.model is model
    assert "Stopped: the open graphs are not scored" in w.side.progress_label.text()
    assert not w.feedback.last_warning and w.act_train.isEnabled()


def test_stop_before_the_first_epoch_keeps_the_trained_model_and_a_small_set_trains_as_the_command_line_does(
        qtbot, window, tmp_path, monkeypatch):
    """Stop pressed at once on a second training installed an untrained model ("Trained (stopped
    after 0 epochs)") over the trained one; and the default detector on 30 molecules fitted a
    consensus on 11 of them, where ``glocalkd train`` without --detector trains GLocalKD and says so."""
    from tests.app.test_main_window import open_and_wait, train_and_wait
    from tests.conftest import DEMO_DATA

    rows = (DEMO_DATA / "herg.tab").read_text().splitlines()
    data = tmp_path / "few.tab"
    data.write_text("\n".join(rows[:31]) + "\n")  # 30 molecules: too few to calibrate the consensus
    w = window
    open_and_wait(qtbot, w, data)
    train_and_wait(qtbot, w)  # the form's default: the consensus
    assert w.state.model.name == "glocalkd" and not w.state.model.is_calibrated
    assert "Training GLocalKD: the default consensus needs a calibration share (30 graphs are too few" in \
        w.statusBar().currentMessage()
    model, scores = w.state.model, w.state.scores
    from app import tasks

    prepared = tasks.prepared
    monkeypatch.setattr(tasks, "prepared", lambda *a: (time.sleep(0.5), prepared(*a))[1])  # Stop comes first
    w.form.epochs.setValue(100000)
    w.train()
    w.act_stop.trigger()  # at once: before the first epoch ends
    qtbot.waitUntil(lambda: _idle(w), timeout=120000)
    assert w.state.model is model and w.state.scores is scores
    assert "Training stopped before its first epoch ended: nothing was learnt; the model is as it was" in \
        w.statusBar().currentMessage()
    assert w.act_train.isEnabled()
