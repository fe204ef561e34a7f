"""A file's scoring stopped in the window is resumed from its tab (File ▸ Resume stopped scoring):
the tab is replaced, in its place, by the whole file's results, which are the report ``glocalkd
score`` writes for the file; the action is on only for a stopped scoring's tab."""
from __future__ import annotations

import gzip

from app.actions import ACTIONS, facts_of
from core import read_report, score_file
from tests.app.test_main_window import _idle, open_and_wait, train_and_wait
from tests.conftest import RESOURCES


def test_a_stopped_scoring_resumes_into_the_whole_files_results_in_its_tab(qtbot, window, herg_path, tmp_path):
    library = tmp_path / "library.smi"
    with gzip.open(RESOURCES / "moses_sample.csv.gz", "rt") as fh:
        rows = [line.strip() for line in fh][1:] * 4  # 20,000 rows: Stop comes long before the end
    rows[5] = "C1CC"  # a reject the stopped run reads
    library.write_text("smiles id\n" + "".join(f"{s} m{k}\n" for k, s in enumerate(rows)))
    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window)  # the default consensus (small GCN settings): its rows can be reviewed
    resume = window.actions_by_name["resume_scoring"]
    assert not resume.isEnabled()

    window.screening.progress.connect(window.stop)  # Stop as soon as the first rows are scored
    window.score_file(str(library))
    qtbot.waitUntil(lambda: _idle(window) and len(window.report_views) == 1, timeout=60000)
    window.screening.progress.disconnect(window.stop)
    qtbot.waitUntil(lambda: _idle(window) and len(window.report_views) == 1, timeout=60000)
    stopped = window.report_views[0]
    assert stopped.report.stopped_after is not None and len(stopped.report) + len(stopped.report.rejects) < 20000
    window.results_tabs.setCurrentIndex(0)  # the training tab: nothing to resume there
    assert not resume.isEnabled()
    window.results_tabs.setCurrentWidget(stopped)
    assert resume.isEnabled()
    stopped.table.selectRow(2)  # a review mark on the stopped tab goes on its row in the whole file's tab
    window.actions_by_name["mark_anomaly"].trigger()
    qtbot.waitUntil(lambda: _idle(window) and len(stopped.book.marks) == 1, timeout=60000)
    marked = stopped.report.ids[next(iter(stopped.book.marks))]

    resume.trigger()
    qtbot.waitUntil(lambda: _idle(window) and stopped not in window.report_views, timeout=120000)
    (view,) = window.report_views
    assert window.results_tabs.indexOf(view) == 1 and window.results_tabs.currentWidget() is view
    assert view.report.stopped_after is None and len(view.report) == 19999 and len(view.report.rejects) == 1
    qtbot.waitUntil(lambda: _idle(window) and view.book.reranked is not None, timeout=60000)
    assert [view.report.ids[i] for i in view.book.marks] == [marked] and view.book.marks[
        next(iter(view.book.marks))] is True
    assert view.model_table.graph_index(0) == next(iter(view.book.marks))  # reviewed rows on top, as marked
    assert not resume.isEnabled()
    assert (f"Scored 19,999 molecules of library.smi ({20000 - len(stopped.report) - 1:,} rows read after line "
            f"{stopped.report.stopped_after:,} in") in window.side.progress_label.text()
    whole = score_file(window.model, library, tmp_path / "whole.csv", properties=True, view_scores=False)
    expected = read_report(whole.report)
    assert list(view.report.ids) == list(expected.ids) and list(view.report.score) == list(expected.score)


def test_a_stopped_scoring_saved_in_a_session_resumes_after_the_session_is_opened(qtbot, window, herg_path,
                                                                                  tmp_path):
    """Resume was offered only in the window that scored the file: a session kept the stopped
    report but not the file it was read from. The report's tab now carries its file and columns,
    into the session and back, and Resume reads on from there."""
    library = tmp_path / "library.csv"
    with gzip.open(RESOURCES / "moses_sample.csv.gz", "rt") as fh:
        rows = [line.strip() for line in fh][1:] * 3
    library.write_text("name,structure\n" + "".join(f"m{k},{s}\n" for k, s in enumerate(rows)))
    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window)
    window.screening.progress.connect(window.stop)
    window.screening.score_file(str(library), {"smiles_column": "structure", "id_column": "name"})
    qtbot.waitUntil(lambda: _idle(window) and len(window.report_views) == 1, timeout=60000)
    window.screening.progress.disconnect(window.stop)
    stopped = window.report_views[0].report
    assert stopped.stopped_after is not None
    window.report_views[0].table.selectRow(1)
    window.actions_by_name["mark_anomaly"].trigger()
    qtbot.waitUntil(lambda: _idle(window) and len(window.report_views[0].book.marks) == 1, timeout=60000)
    marked = stopped.ids[next(iter(window.report_views[0].book.marks))]
    session = str(tmp_path / "stopped.glocalkd-session")
    window.sessions.save(session)
    qtbot.waitUntil(lambda: _idle(window), timeout=60000)

    window.open_session(session)
    qtbot.waitUntil(lambda: _idle(window) and len(window.report_views) == 1
                    and window.report_views[0].report is not stopped, timeout=120000)
    reopened = window.report_views[0]
    assert reopened.report.scored_input == {"path": str(library),
                                            "options": {"smiles_column": "structure", "id_column": "name"}}
    window.results_tabs.setCurrentWidget(reopened)
    assert f"stopped after line {stopped.stopped_after:,}" in reopened.status.text()
    before = library.read_bytes()  # the reopened tab knows its file too: no export replaces it
    window.feedback.last_warning = ""
    window.export_report(str(library))
    qtbot.waitUntil(lambda: _idle(window) and bool(window.feedback.last_warning), timeout=60000)
    assert "is an input" in window.feedback.last_warning and library.read_bytes() == before
    resume = window.actions_by_name["resume_scoring"]
    assert resume.isEnabled()
    resume.trigger()
    qtbot.waitUntil(lambda: _idle(window) and reopened not in window.report_views, timeout=120000)
    (view,) = window.report_views
    assert view.report.stopped_after is None and len(view.report) == len(rows)
    qtbot.waitUntil(lambda: _idle(window) and view.book.reranked is not None, timeout=60000)
    assert [view.report.ids[i] for i in view.book.marks] == [marked]
    whole = score_file(window.model, library, tmp_path / "whole.csv", properties=True, view_scores=False,
                       smiles_column="structure", id_column="name")
    expected = read_report(whole.report)
    assert list(view.report.ids) == list(expected.ids) and list(view.report.score) == list(expected.score)


def test_the_resume_rule_reads_the_facts_it_is_given(window):
    assert facts_of(window.state, False, False, resumable=True).resumable
    assert not facts_of(window.state, False, False).resumable


def test_closing_a_tab_while_its_scoring_resumes_ends_the_job_and_no_tab_comes_back(qtbot, window, herg_path,
                                                                                    tmp_path):
    """Closing a stopped scoring's tab (answering Discard) while its Resume ran left the job running;
    when it ended, the whole file's tab came back, with it the unsaved work. A tab's jobs end with it
    (the rule the review's scoring followed), and what such a job returns is dropped."""
    library = tmp_path / "library.smi"
    with gzip.open(RESOURCES / "moses_sample.csv.gz", "rt") as fh:
        rows = [line.strip() for line in fh][1:] * 4
    library.write_text("smiles id\n" + "".join(f"{s} m{k}\n" for k, s in enumerate(rows)))
    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window, epochs=1)
    window.screening.progress.connect(window.stop)  # Stop as soon as the first rows are scored
    window.score_file(str(library))
    qtbot.waitUntil(lambda: _idle(window) and len(window.report_views) == 1, timeout=60000)
    window.screening.progress.disconnect(window.stop)
    (stopped,) = window.report_views
    assert stopped.report.stopped_after is not None
    closed = []

    def close_its_tab(_rows, _total):  # the user closes the tab while the resumed job reads on
        if not closed:
            closed.append(True)
            window.results_tabs.tabCloseRequested.emit(window.results_tabs.indexOf(stopped))

    window.screening.progress.connect(close_its_tab)
    window.results_tabs.setCurrentWidget(stopped)
    window.actions_by_name["resume_scoring"].trigger()
    qtbot.waitUntil(lambda: bool(closed) and _idle(window), timeout=120000)
    qtbot.wait(200)  # anything the ended job would still add has arrived
    assert window.report_views == [] and window.results_tabs.count() == 1
    assert not [text for text in window._unsaved.pending() if "library.smi" in text]
    assert "was closed" in window.side.progress_label.text()


def test_resume_is_off_with_its_reason_when_another_model_is_open(qtbot, window, herg_path, tmp_path):
    """Resume was offered on a stopped scoring's tab with another model open (trained since), then
    failed naming a scratch file: core refuses to mix two models' scores. It is now off, its
    tooltip saying why and naming the tab, and asking anyway says so without a scratch path."""
    library = tmp_path / "library.smi"
    with gzip.open(RESOURCES / "moses_sample.csv.gz", "rt") as fh:
        rows = [line.strip() for line in fh][1:] * 2
    library.write_text("smiles id\n" + "".join(f"{s} m{k}\n" for k, s in enumerate(rows)))
    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window, epochs=1)
    window.screening.progress.connect(window.stop)
    window.score_file(str(library))
    qtbot.waitUntil(lambda: _idle(window) and len(window.report_views) == 1, timeout=60000)
    window.screening.progress.disconnect(window.stop)
    (stopped,) = window.report_views
    resume = window.actions_by_name["resume_scoring"]
    window.results_tabs.setCurrentWidget(stopped)
    assert resume.isEnabled() and resume.toolTip() == next(s.tip for s in ACTIONS if s.name == "resume_scoring")

    train_and_wait(qtbot, window, epochs=2)  # another model: its fingerprint is not the report's
    window.results_tabs.setCurrentWidget(stopped)
    assert not resume.isEnabled()
    assert "another model" in resume.toolTip() and stopped.title in resume.toolTip()
    window.feedback.last_warning = ""
    window.report_tabs.resume_active()  # asked anyway (not through the greyed action)
    assert "another model" in window.feedback.last_warning and stopped.title in window.feedback.last_warning
    assert "_ranked.csv" not in window.feedback.last_warning and not window.runner.busy("score_file")
    assert stopped in window.report_views
