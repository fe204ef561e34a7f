"""Nothing long runs on the GUI thread: the SMARTS filter, the CSV and SDF exports, the model
files, the selected molecule's similar training molecules, the scaffold groups and the Evaluation
tab's figures are matched, written, read and computed by jobs on worker threads. Each core function they call is
wrapped to record whether it runs on the main (GUI) thread, and the window is driven through its
actions and its filter box, as a user drives it."""
import threading

import numpy as np

import core
from PySide6.QtWidgets import QFileDialog

from app.main_window import MainWindow
from tests.app.test_main_window import _idle, open_and_wait

WATCHED = ("smarts_matches", "report_output", "write_sdf", "save_detector", "load_detector",
           "SimilarityIndex", "scaffolds", "roc_auc", "roc_points")


def test_smarts_exports_model_files_neighbours_scaffolds_and_evaluation_never_run_on_the_gui_thread(qtbot, settings, herg_path, tmp_path,
                                                                   monkeypatch):
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    open_and_wait(qtbot, w, herg_path)
    w.form.detector.setCurrentIndex(w.form.detector.findData("size"))  # a savable model in a moment
    w.train()
    qtbot.waitUntil(lambda: _idle(w) and w.scores is not None, timeout=60000)

    on_gui: dict[str, list[bool]] = {name: [] for name in WATCHED}
    for name in WATCHED:
        original = getattr(core, name)

        def watched(*args, _name=name, _original=original, **kwargs):
            on_gui[_name].append(threading.current_thread() is threading.main_thread())
            return _original(*args, **kwargs)

        monkeypatch.setattr(core, name, watched)
    answers = {"save": "", "open": ""}
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (answers["save"], ""))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (answers["open"], ""))

    for suffix in (".csv", ".sdf"):  # File ▸ Export…, all rows
        out = tmp_path / f"rows{suffix}"
        answers["save"] = str(out)
        w.act_export.trigger()
        qtbot.waitUntil(lambda out=out: _idle(w) and out.is_file(), timeout=60000)
    model_file = tmp_path / "size.pt"
    answers["save"] = answers["open"] = str(model_file)
    w.act_save_model.trigger()
    qtbot.waitUntil(lambda: _idle(w) and model_file.is_file(), timeout=60000)
    before = w.model
    w.act_load_model.trigger()
    qtbot.waitUntil(lambda: _idle(w) and w.model is not before and w.scores is not None, timeout=60000)
    shown: list[int] = []
    w.results.selected_shown.connect(lambda i, _similar: shown.append(i))
    for row in (3, 1):  # rows selected: their similar training molecules (fingerprints built after the load)
        w.table.selectRow(row)
    qtbot.waitUntil(lambda: w.state.selected in shown and w.heatmap.neighbours.count() > 0, timeout=30000)
    before = w.evaluation.auc_label.text()
    w.evaluation.anomaly_class.setCurrentIndex(1 - w.evaluation.anomaly_class.currentIndex())  # the other class
    qtbot.waitUntil(lambda: w.evaluation.auc_label.text().startswith("ROC-AUC")
                    and w.evaluation.auc_label.text() != before, timeout=30000)
    w.filters.group_scaffolds.setChecked(True)  # the Scaffolds view
    qtbot.waitUntil(lambda: len(w.scaffold_view.groups) > 0, timeout=30000)
    w.filters.group_scaffolds.setChecked(False)
    w.filters.smarts_edit.setText("c1ccccc1Cl")  # typed: applies after a pause
    qtbot.waitUntil(lambda: 0 < w.model_table.visible_count() < 655, timeout=30000)

    assert not any(any(calls) for calls in on_gui.values()), f"on the GUI thread: {on_gui}"
    assert all(on_gui.values()), f"not called: {[name for name, calls in on_gui.items() if not calls]}"


def _on_main() -> bool:
    return threading.current_thread() is threading.main_thread()


def test_a_jobs_callbacks_run_on_the_gui_thread_whatever_callable_they_are(qtbot):
    """A lambda or a partial given to the runner (not a bound method of a QObject) is still called
    on the GUI thread: with its result, its failure and its progress."""
    import functools

    from app.workers import Runner

    runner = Runner()
    seen: list[tuple[str, bool]] = []

    def reports(job):
        job.report(1)
        return 2

    def fails(job):
        raise ValueError("no")

    runner.start("lambda", reports, lambda _result: seen.append(("done", _on_main())), seen.append,
                 lambda _value: seen.append(("progress", _on_main())))
    runner.start("partial", fails, seen.append, functools.partial(lambda tag, _message: seen.append((tag, _on_main())),
                                                                   "failed"))
    qtbot.waitUntil(lambda: len(seen) == 3 and not runner.busy(), timeout=10000)
    assert sorted(seen) == [("done", True), ("failed", True), ("progress", True)]


def test_one_job_per_name_at_a_time(qtbot):
    import pytest

    from app.workers import Runner

    runner = Runner()
    release = threading.Event()
    done = []
    runner.start("job", lambda job: release.wait(10), done.append, done.append)
    with pytest.raises(RuntimeError, match="'job' is running"):
        runner.start("job", lambda job: None, done.append, done.append)
    release.set()
    qtbot.waitUntil(lambda: done == [True] and not runner.busy(), timeout=10000)


def test_a_job_has_ended_for_the_window_when_its_result_is_handled(qtbot):
    """In its own callback, and in any action the user takes once the result is shown, the runner
    is no longer busy with the job: the next job of that name starts (a session opened the moment
    warm-up ends was refused as "Busy" while the finished job's thread wound down)."""
    from app import workers

    runner = workers.Runner()
    seen = []

    def then_next(result):
        seen.append((result, runner.busy("job")))
        if result == 1:
            runner.start("job", lambda job: 2, then_next, seen.append)

    tasks = [runner.start("job", lambda job: 1, then_next, seen.append)]
    tasks.append(runner.start("fails", lambda job: 1 / 0, seen.append,
                              lambda message: seen.append(("failed", runner.busy("fails")))))
    qtbot.waitUntil(lambda: len(seen) == 3 and not runner.busy(), timeout=10000)
    assert [entry for entry in seen if entry[0] in (1, 2)] == [(1, False), (2, False)]
    assert ("failed", False) in seen
    # every thread waited for and let go once it has exited
    qtbot.waitUntil(lambda: not [t for t in tasks if any(t is task for task in workers._ALIVE.values())],
                    timeout=10000)


def test_a_newer_smarts_pattern_stops_the_running_match_and_its_result_is_shown(qtbot, settings, herg_path,
                                                                               monkeypatch):
    from app import tasks
    from core import smarts_matches

    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    open_and_wait(qtbot, w, herg_path)
    monkeypatch.setattr(tasks, "SMARTS_CHUNK", 1)  # a look at Stop after every molecule
    started = []
    w.smarts.matching.connect(started.append)
    w.filters.smarts_edit.setText("[#7]")
    w.apply_smarts()
    w.filters.smarts_edit.setText("c1ccccc1Cl")
    w.apply_smarts()  # while "[#7]" is matched
    qtbot.waitUntil(lambda: not w.smarts.is_matching(), timeout=60000)
    expected = smarts_matches([m.smiles for m in w.graphs.meta], "c1ccccc1Cl")
    assert started == ["[#7]", "c1ccccc1Cl"]
    assert w.model_table.visible_count() == int(expected.sum())
    assert sorted(w.model_table.visible_graphs().tolist()) == np.nonzero(expected)[0].tolist()


def test_a_newer_request_stops_the_running_job_and_only_the_newest_result_is_delivered(qtbot):
    from app.workers import LatestJob

    jobs = LatestJob("work")
    started = threading.Event()
    delivered, stale = [], []

    def slow(value, job):
        started.set()
        while not job.stopped():  # ends only when asked to
            threading.Event().wait(0.01)
        return value

    jobs.request(lambda job: slow("first", job), delivered.append, on_stale=stale.append)
    assert started.wait(10)
    jobs.request(lambda job: "second", delivered.append, on_stale=stale.append)
    jobs.request(lambda job: "third", delivered.append, on_stale=stale.append)  # replaces "second", never run
    qtbot.waitUntil(lambda: not jobs.busy(), timeout=10000)
    assert delivered == ["third"]
    assert stale == ["first"]
