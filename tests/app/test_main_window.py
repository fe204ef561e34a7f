"""The desktop app driven as a user would (pytest-qt, offscreen)."""
import csv

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.main_window import MainWindow
from app.widgets.table import COLUMNS
from core import GLocalKD, load, load_detector

SMALL = {"hidden_dim": 16, "out_dim": 8, "epochs": 3, "batch_size": 64}


def _idle(window):
    return not window.runner.busy()


def evaluation_text(qtbot, window) -> str:
    """The evaluation tab's AUC line once computed: it is computed in the background on a runner
    of its own, which the window's idle state does not count, so every read waits for it here."""
    qtbot.waitUntil(lambda: not window.evaluation.auc_label.text().startswith("Computing"), timeout=60000)
    return window.evaluation.auc_label.text()


def open_and_wait(qtbot, window, path, **options):
    window.open_path(str(path), options or None)
    qtbot.waitUntil(lambda: _idle(window) and window.graphs is not None, timeout=60000)


def train_and_wait(qtbot, window, normal=None, detector=None, **params):
    """Train with small GCN settings; the window's detector (the consensus by default) unless
    ``detector`` names another."""
    p = {**SMALL, **params}
    if detector is not None:
        window.form.detector.setCurrentIndex(window.form.detector.findData(detector))
    window.form.epochs.setValue(p["epochs"])
    window.form.hidden.setValue(p["hidden_dim"])
    window.form.out_dim.setValue(p["out_dim"])
    window.form.batch.setValue(p["batch_size"])
    window.form.normal.setCurrentIndex(window.form.normal.findData(normal) if normal else 0)
    window.train()
    qtbot.waitUntil(lambda: _idle(window) and window.scores is not None, timeout=300000)  # 2 shared cores


def start_endless_training(qtbot, window, path, epochs_seen):
    """Open ``path`` and train a tiny model for 100,000 epochs; return once some epochs are done."""
    open_and_wait(qtbot, window, path)
    window.form.epochs.setValue(100000)
    window.form.hidden.setValue(16)
    window.form.out_dim.setValue(8)
    window.train()
    qtbot.waitUntil(lambda: len(window.training.losses) >= epochs_seen, timeout=60000)


def test_demo_flow_train_rank_heatmap_export(qtbot, window, herg_path, tmp_path):
    assert window.stack.currentIndex() == 0  # the welcome page offers the demos
    open_and_wait(qtbot, window, herg_path)
    assert window.stack.currentIndex() == 1
    assert window.model_table.rowCount() == 655
    assert window.side.progress_label.text() == "Loaded 655 graphs."
    assert "Labels: 0: 204, 1: 451" in window.side.summary.text()
    assert "RDKit atom features" in window.side.summary.text()
    # the paper's score by default: the extra readouts cost AUC on hERG (docs/results.md)
    assert not window.form.node_max.isChecked() and not window.form.size_term.isChecked()
    window.form.node_max.setChecked(True)
    window.form.size_term.setChecked(True)
    window.form.features.setCurrentText("atom-rings")

    window.form.detector.setCurrentIndex(window.form.detector.findData("glocalkd"))
    assert window.form._form.isRowVisible(window.form.lam)
    train_and_wait(qtbot, window, normal="1")
    assert window.model.name == "glocalkd" and len(window.model.loss_history_) == 3
    # 90 of the 451 normal molecules calibrate, held out whole scaffolds at a time, and it says so
    said = window.side.progress_label.text()
    assert "Trained on 451 graphs (90 of them held out to calibrate, whole scaffolds)" in said
    assert window.model.node_max and window.model.size_term and window.model.schema_.atom_version == 2
    assert "score + largest node error + size term" in window.side.summary.text()
    assert "with ring sizes" in window.side.summary.text()
    qtbot.waitUntil(lambda: window.heatmap.kind == "molecule", timeout=10000)
    assert "+ size " in window.heatmap.title.text() and "+ largest " in window.heatmap.title.text()

    # the table is ranked: rank 1 first, scores descending
    m = window.model_table
    score_col = m.headerData(4, Qt.Orientation.Horizontal)
    assert score_col == "Score"
    shown = [float(m.data(m.index(r, 4))) for r in range(50)]
    assert shown == sorted(shown, reverse=True)
    assert m.data(m.index(0, 0)) == "1"

    # the top row is selected and drawn as a molecule with its top atoms listed
    qtbot.waitUntil(lambda: window.heatmap.kind == "molecule", timeout=10000)
    assert window.heatmap.top.count() > 0
    assert window.heatmap.top.item(0).text()[0].isalpha()

    assert window.scores is not None  # noqa  (the state's scores, through the window)
    # the evaluation tab has an AUC for the labelled data (anomalous class 0 = the minority)
    assert window.evaluation.anomaly_class.currentData() == "0"
    assert evaluation_text(qtbot, window).startswith("ROC-AUC")
    # beside it, the AUC of the graph-size baseline fitted on the same training graphs
    from core import make_detector
    from core.evaluation.metrics import roc_auc

    size = make_detector("size").fit(window.graphs.with_label("1")).score(window.graphs).score
    expected = roc_auc(np.array([lab == "0" for lab in window.graphs.labels]), size)
    assert f"graph size alone: {expected:.3f}" in evaluation_text(qtbot, window)

    # the exported report matches the core's ranking
    out = tmp_path / "report.csv"
    window.export_report(str(out))
    qtbot.waitUntil(lambda: _idle(window) and out.exists(), timeout=180000)  # written in the background
    rows = list(csv.DictReader(open(out, encoding="utf-8")))
    end = rows.pop()  # the end row, naming the model that scored the rows
    assert end["status"].startswith(f"end of report: 655 rows; model {window.model.fingerprint()}; digest ")
    ranking = window.scores.ranking()
    assert [r["id"] for r in rows] == [window.graphs.meta[i].id for i in ranking]
    assert all(r["status"] == "ok" for r in rows)


def test_the_consensus_is_the_recommended_default_with_heatmaps_and_each_components_auc(qtbot, window, herg_path):
    form = window.form
    assert form.detector.itemData(0) == "consensus" and form.detector.currentIndex() == 0
    assert form.detector.itemText(0) == "Consensus (recommended)" and form.detector_name() == "consensus"
    assert form.detector.findData("glocalkd") > 0  # GLocalKD stays a choice
    open_and_wait(qtbot, window, herg_path)
    assert form._form.isRowVisible(form.epochs) and form._form.isRowVisible(form.lam)  # its GLocalKD's settings
    form.lam.setValue(0.5)
    train_and_wait(qtbot, window, normal="1")
    model = window.model
    assert model.name == "consensus" and set(model.components) == {"glocalkd", "wl-lesinn", "size"}
    gcn = model.components_["glocalkd"]
    assert (gcn.epochs, gcn.hidden_dim, gcn.out_dim, gcn.batch_size, gcn.lam) == (3, 16, 8, 64, 0.5)
    assert len(window.training.losses) == 3  # the loss curve follows its GLocalKD's epochs
    assert "Consensus, RDKit atom features" in window.side.summary.text()
    # the heatmap: node errors from its GLocalKD component
    qtbot.waitUntil(lambda: window.heatmap.kind == "molecule", timeout=10000)
    assert window.tabs.tabText(window.tabs.indexOf(window.heatmap)) == "Node heatmap"
    assert window.scores.has_node_scores and window.heatmap.top.count() > 0
    # the score is the combined statistic; the two terms are its GLocalKD's, and the title says so
    own = window.scores.component_scores()["glocalkd"][int(window.scores.ranking()[0])]
    assert f"combined p-values; its GLocalKD {own:.4g}: graph " in window.heatmap.title.text()
    top = int(window.scores.ranking()[0])
    np.testing.assert_array_equal(window.scores.node_errors_of(top),
                                  gcn.score(window.graphs.subset([top])).node_errors)
    # the evaluation: the consensus's AUC and each component's beside it
    from core.evaluation.metrics import roc_auc

    is_active = np.array([lab == "0" for lab in window.graphs.labels])
    text = evaluation_text(qtbot, window)
    assert text.startswith(f"ROC-AUC {roc_auc(is_active, window.scores.score):.3f}")
    for name, label in (("glocalkd", "GLocalKD"), ("wl-lesinn", "WL-LESINN"), ("size", "Graph size")):
        own = model.components_[name].score(window.graphs).score
        assert f"{label} {roc_auc(is_active, own):.3f}" in text, (label, text)
    assert "its components: GLocalKD" in text
    legend = [t.get_text() for t in window.evaluation.plot.figure.axes[1].get_legend().get_texts()]
    assert sum(t.startswith(("GLocalKD (", "WL-LESINN (", "Graph size (")) for t in legend) == 3


def test_known_anomalies_weigh_the_consensus_when_a_normal_label_is_chosen(qtbot, window, herg_path):
    form = window.form
    open_and_wait(qtbot, window, herg_path)
    assert not form.known.isEnabled() and form.known_label() is None  # all graphs trained on: none can be known
    form.normal.setCurrentIndex(form.normal.findData("1"))
    assert form.known.isEnabled() and [form.known.itemData(i) for i in range(form.known.count())] == [None, "0"]
    form.known.setCurrentIndex(form.known.findData("0"))
    assert form.known_label() == "0"
    form.detector.setCurrentIndex(form.detector.findData("glocalkd"))
    assert not form._form.isRowVisible(form.known) and form.known_label() is None  # GLocalKD has one view
    form.detector.setCurrentIndex(form.detector.findData("consensus"))
    window.form.epochs.setValue(SMALL["epochs"])
    window.form.hidden.setValue(SMALL["hidden_dim"])
    window.form.out_dim.setValue(SMALL["out_dim"])
    window.train()
    qtbot.waitUntil(lambda: _idle(window) and window.scores is not None, timeout=300000)
    model = window.model
    assert set(model.known_anomaly_auc_) == {"glocalkd", "wl-lesinn", "size", "wl-count-lesinn"}
    assert "Views weighed by known anomalies: " in window.side.progress_label.text()
    assert "A classifier learnt from them" in window.side.progress_label.text()  # the classifier view joined
    text = evaluation_text(qtbot, window)
    assert "weighed the consensus's views, which makes it more optimistic still" in text
    assert "known-anomaly classifier" in text  # its ROC-AUC beside the other views'


def test_a_file_of_known_anomalies_weighs_a_trained_consensus(qtbot, window, herg_path, tmp_path):
    open_and_wait(qtbot, window, herg_path)
    assert not window.act_weigh.isEnabled()  # no model yet
    train_and_wait(qtbot, window, normal="1", detector="glocalkd")
    assert not window.act_weigh.isEnabled()  # one view: nothing to weigh
    train_and_wait(qtbot, window, normal="1", detector="consensus")
    qtbot.waitUntil(lambda: _idle(window) and window.model.name == "consensus", timeout=300000)
    assert window.act_weigh.isEnabled()
    before, scores_before = window.model, window.scores
    actives = [m.smiles for m in window.graphs.meta if m.label == "0"][:10]
    known = tmp_path / "actives.smi"
    known.write_text("\n".join(actives) + "\n")

    window.weigh_views(str(known))
    qtbot.waitUntil(lambda: _idle(window) and window.model is not before, timeout=60000)
    assert before.known_anomaly_auc_ is None and set(window.model.known_anomaly_auc_) == set(before.views)
    text = window.side.progress_label.text()
    assert text.startswith("10 known anomalies read from actives.smi. Views weighed by known anomalies: ")
    assert "View weights (known anomalies): " in window.side.summary.text()
    assert window.scores is not scores_before and len(window.scores) == len(window.graphs)
    assert window.act_weigh.isEnabled() and window.act_train.isEnabled()


def test_a_single_detector_shows_no_component_aucs(qtbot, window, tu_folder):
    open_and_wait(qtbot, window, tu_folder)
    train_and_wait(qtbot, window, detector="size")
    text = evaluation_text(qtbot, window)
    assert window.model.name == "size" and text.startswith("ROC-AUC") and "its components" not in text


def test_sorting_and_filters(qtbot, window, herg_path):
    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window)
    m = window.model_table
    window.table.sortByColumn(4, Qt.SortOrder.AscendingOrder)
    scores = [float(m.data(m.index(r, 4))) for r in range(m.rowCount())]
    assert scores == sorted(scores)
    m.set_text_filter("ASTEMIZOLE")
    assert 1 <= m.rowCount() < 10
    assert all("astemizole" in m.data(m.index(r, 1)).lower() for r in range(m.rowCount()))
    m.set_text_filter("")
    window.filters.smarts_edit.setText("[Cl]")
    window.apply_smarts()  # matched in the background
    qtbot.waitUntil(lambda: not window.smarts.is_matching(), timeout=10000)
    assert 0 < m.rowCount() < 655
    assert all("Cl" in m.data(m.index(r, 3)) for r in range(m.rowCount()))
    window.filters.smarts_edit.setText("[[bad")
    window.apply_smarts()  # said beside the box, not in a pop-up while typing; the filter is off
    qtbot.waitUntil(lambda: not window.smarts.is_matching(), timeout=10000)
    assert window.filters.note.text() == "not a valid SMARTS" and m.rowCount() == 655


def test_flag_threshold_follows_the_percentile(qtbot, window, herg_path):
    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window, normal="1")
    window.filters.threshold.setValue(99.0)
    few = int(window.model_table.flagged().sum())
    window.filters.threshold.setValue(60.0)
    many = int(window.model_table.flagged().sum())
    assert few < many
    assert many == int((window.scores.score > np.percentile(window.model.train_scores_, 60.0)).sum())


def test_stop_ends_training_and_keeps_a_usable_model(qtbot, window, herg_path):
    start_endless_training(qtbot, window, herg_path, epochs_seen=2)
    assert window.side.stop_button.isEnabled()
    window.stop()
    qtbot.waitUntil(lambda: _idle(window) and window.scores is not None, timeout=15000)
    assert window.model.stopped_early_ and len(window.model.loss_history_) < 100000
    assert window.model_table.rowCount() == 655
    assert window.side.train_button.isEnabled()


def test_bad_file_shows_a_message_and_keeps_what_is_on_screen(qtbot, window, herg_path, tmp_path):
    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window)
    before = window.scores
    bad = tmp_path / "broken.zip"
    bad.write_bytes(b"this is not a zip archive")
    window.open_path(str(bad))
    qtbot.waitUntil(lambda: _idle(window), timeout=20000)
    assert "broken.zip" in window.feedback.last_warning
    assert window.scores is before and len(window.graphs) == 655
    assert window.model_table.rowCount() == 655


def test_rejected_rows_are_listed(qtbot, window, smiles_file):
    open_and_wait(qtbot, window, smiles_file)
    assert len(window.graphs) == 4
    assert window.side.rejects_button.isEnabled() and "(2)" in window.side.rejects_button.text()
    assert "Rejected rows: 2" in window.side.summary.text()
    assert window.side.progress_label.text() == "Loaded 4 graphs, 2 rows rejected."  # no stale "Loading…"


def test_score_another_file_and_model_round_trip(qtbot, window, herg_path, smiles_file, tmp_path):
    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window, normal="1")
    path = tmp_path / "m.pt"
    window.model.save(path)
    open_and_wait(qtbot, window, smiles_file)  # scored with the current model as soon as it is read
    qtbot.waitUntil(lambda: _idle(window) and window.scores is not None, timeout=30000)
    expected = load_detector(path, device="cpu").score(load(smiles_file)).score  # the consensus by default
    assert np.allclose(window.scores.score, expected, rtol=1e-5)
    window.load_model(str(tmp_path / "missing.pt"))
    qtbot.waitUntil(lambda: _idle(window) and bool(window.feedback.last_warning), timeout=30000)
    assert "no such model file" in window.feedback.last_warning


def test_settings_persist_between_runs(qtbot, settings, herg_path):
    first = MainWindow(settings)
    qtbot.addWidget(first)
    first.form.epochs.setValue(77)
    first.form.lr.setValue(0.003)
    first.filters.threshold.setValue(90.0)
    first.filters.flag_rule.setCurrentIndex(first.filters.flag_rule.findData("p"))
    first.filters.threshold.setValue(0.2)  # quit while flagging by a rate: the percentile is still kept
    first.close()
    second = MainWindow(settings)
    qtbot.addWidget(second)
    assert second.form.epochs.value() == 77
    assert second.form.lr.value() == pytest.approx(0.003)
    # the flag rule and both thresholds are kept: it reopens flagging by p at 0.2, the percentile kept
    assert second.filters.rule() == "p" and second.filters.threshold.value() == pytest.approx(0.2)
    assert second.filters.percentile() == 90.0 and second.state.percentile == 90.0 and second.state.alpha == 0.2


def test_a_chosen_detector_persists_and_settings_from_the_glocalkd_default_start_on_the_consensus(qtbot,
                                                                                                   settings):
    settings.setValue("train/detector", "glocalkd")  # written by every run while GLocalKD was the default
    first = MainWindow(settings)
    qtbot.addWidget(first)
    assert first.form.detector_name() == "consensus"
    first.form.detector.setCurrentIndex(first.form.detector.findData("wl-lesinn"))
    first.close()
    second = MainWindow(settings)
    qtbot.addWidget(second)
    assert second.form.detector_name() == "wl-lesinn"


def test_closing_the_window_while_training_stops_the_worker(qtbot, settings, herg_path):
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.show()
    start_endless_training(qtbot, w, herg_path, epochs_seen=1)
    threads = [t for t, *_ in w.runner._running.values()]
    w.close()
    assert threads and all(t.isFinished() for t in threads)


def test_dropping_a_file_opens_it(qtbot, window, smiles_file):
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(smiles_file))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    qtbot.waitUntil(lambda: _idle(window) and window.graphs is not None, timeout=20000)
    assert len(window.graphs) == 4
    assert str(smiles_file) in window.files.recent()


def test_unclear_columns_are_asked_for(qtbot, window, tmp_path, monkeypatch):
    table = tmp_path / "odd.csv"
    table.write_text("compound,struct,y_value\nA,CCO,1\nB,c1ccccc1,0\n")
    from app.widgets import dialogs as mw  # the column dialog lives there

    asked = {}

    def fake_exec(dialog):
        asked["header"] = [dialog.smiles.itemText(i) for i in range(dialog.smiles.count())]
        dialog.smiles.setCurrentText("struct")
        dialog.ident.setCurrentText("compound")
        dialog.label.setCurrentText("y_value")
        return mw.ColumnDialog.DialogCode.Accepted

    monkeypatch.setattr(mw.ColumnDialog, "exec", fake_exec)
    window.open_path(str(table))
    qtbot.waitUntil(lambda: _idle(window) and window.graphs is not None, timeout=20000)
    assert asked["header"] == ["compound", "struct", "y_value"]
    assert [m.id for m in window.graphs.meta] == ["A", "B"]
    assert window.graphs.label_counts() == {"0": 1, "1": 1}


def test_map_and_table_selection_stay_in_sync(qtbot, window, herg_path):
    from PySide6.QtCore import QPoint

    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window, normal="1")
    window.compute_map("predictor", "pca")
    qtbot.waitUntil(lambda: window.map_view.map is not None and _idle(window), timeout=60000)
    view = window.map_view
    assert view.map.coords.shape == (655, 2)

    # selecting a row in the table rings its point on the map
    window.table.selectRow(5)
    assert view.selected == window.model_table.graph_index(5)

    # clicking a point on the map selects its row in the table
    view.canvas.draw()
    target = int(window.scores.ranking()[-1])  # the lowest-ranked graph, far down the table
    k = int(np.nonzero(view.map.indices == target)[0][0])
    x, y = view._xy_display[k]
    ratio = view.canvas.device_pixel_ratio
    clicked = []
    view.graph_clicked.connect(clicked.append)
    qtbot.mouseClick(view.canvas, Qt.MouseButton.LeftButton,
                     pos=QPoint(int(round(x / ratio)), int(round(view.canvas.height() - y / ratio))))
    assert clicked and window.model_table.graph_index(window.table.currentIndex().row()) == clicked[0]
    assert np.hypot(*(view.map.coords[np.nonzero(view.map.indices == clicked[0])[0][0]] - view.map.coords[k])) < \
        0.05 * np.ptp(view.map.coords[:, 0])


def test_a_failure_inside_the_worker_is_reported_and_the_app_stays_usable(qtbot, window, herg_path, monkeypatch):
    open_and_wait(qtbot, window, herg_path)

    def broken_fit(self, *args, **kwargs):
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(GLocalKD, "fit", broken_fit)
    window.train()
    qtbot.waitUntil(lambda: _idle(window) and bool(window.feedback.last_warning), timeout=20000)
    assert "Out of memory" in window.feedback.last_warning
    assert window.model is None and window.model_table.rowCount() == 655
    assert window.side.train_button.isEnabled()
    monkeypatch.undo()
    train_and_wait(qtbot, window)  # and training works again afterwards
    assert window.scores is not None


def test_competing_detectors_train_rank_and_say_they_have_no_heatmap(qtbot, window, herg_path, tmp_path):
    open_and_wait(qtbot, window, herg_path)
    form = window.form
    form.detector.setCurrentIndex(form.detector.findData("wl-lesinn"))
    assert not form._form.isRowVisible(form.epochs) and not form._form.isRowVisible(form.lam)
    assert "no heatmap" in form.detector_note.text()
    form.normal.setCurrentIndex(form.normal.findData("1"))
    window.train()
    qtbot.waitUntil(lambda: _idle(window) and window.scores is not None, timeout=120000)
    assert window.model.name == "wl-lesinn" and not window.scores.has_node_scores
    assert "WL-LESINN" in window.side.summary.text()
    m = window.model_table
    shown = [float(m.data(m.index(r, 4))) for r in range(20)]
    assert shown == sorted(shown, reverse=True)
    assert window.table.isColumnHidden(COLUMNS.index("Graph term"))
    assert window.tabs.tabText(window.tabs.indexOf(window.heatmap)) == "Graph"
    assert "no per-node errors" in window.heatmap.title.text() and window.heatmap.top.count() == 0
    assert window.heatmap.top.isHidden() and window.heatmap.top_label.isHidden()  # no empty node list
    assert window.heatmap.kind == "molecule"  # the plain structure, no colours
    assert window.act_save_model.isEnabled()  # WL-LESINN has a model file
    saved = tmp_path / "wl.pt"
    window.state.model.save(saved)
    window.load_model(str(saved))
    qtbot.waitUntil(lambda: _idle(window) and window.scores is not None, timeout=60000)
    assert window.model.name == "wl-lesinn"
    window.compute_map("predictor", "pca")
    qtbot.waitUntil(lambda: _idle(window) and window.map_view.map is not None, timeout=60000)
    assert "WL kernel values" in window.map_view.map.note
    out = tmp_path / "wl.csv"
    window.export_report(str(out))
    qtbot.waitUntil(lambda: _idle(window) and out.exists(), timeout=180000)  # written in the background
    rows = list(csv.DictReader(out.open()))[:-1]  # less the end row
    assert len(rows) == 655 and rows[0]["top_nodes"] == "" and rows[0]["graph_score"] == ""

    # OCGCN trains by epochs (the loss curve fills), GLocalKD again brings the heatmap back
    form.detector.setCurrentIndex(form.detector.findData("ocgcn"))
    assert form._form.isRowVisible(form.epochs) and not form._form.isRowVisible(form.lam)
    train_and_wait(qtbot, window, normal="1", epochs=2)
    assert window.model.name == "ocgcn" and len(window.model.loss_history_) == 2
    form.detector.setCurrentIndex(form.detector.findData("glocalkd"))
    train_and_wait(qtbot, window, normal="1")
    qtbot.waitUntil(lambda: window.heatmap.kind == "molecule", timeout=10000)
    assert window.tabs.tabText(window.tabs.indexOf(window.heatmap)) == "Node heatmap"
    assert window.act_save_model.isEnabled()


def test_a_ranked_report_opens_in_its_own_window_and_is_rescored_with_the_open_model(qtbot, window, herg_path,
                                                                                    tmp_path, monkeypatch):
    import threading

    from app import tasks

    on_gui = []
    rescore_row = tasks.rescore_row

    def watched(*args, **kwargs):
        on_gui.append(threading.current_thread() is threading.main_thread())
        return rescore_row(*args, **kwargs)

    monkeypatch.setattr(tasks, "rescore_row", watched)
    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window, normal="1")
    report = tmp_path / "ranked.csv"
    from core import write_report

    write_report(report, window.graphs, window.scores)
    with report.open("a") as fh:  # a rejected row, as glocalkd screen writes them
        fh.write(",bad1,,C1CC,,,,,,,rejected: line 9: unclosed ring,,\n")
    window.open_path(str(report))
    qtbot.waitUntil(lambda: _idle(window) and bool(window.report_views), timeout=60000)
    view = window.report_views[-1]
    assert window.results_tabs.currentWidget() is view and window.results_tabs.count() == 2  # a tab beside
    assert view.model_table.rowCount() == 655 and len(view.report.rejects) == 1
    assert view.report.rejects[0].reason == "line 9: unclosed ring"
    m = view.model_table
    assert [m.data(m.index(r, 0)) for r in range(3)] == ["1", "2", "3"]
    assert np.allclose(view.report.score, np.sort(window.scores.score)[::-1], rtol=1e-5)
    # the top row is rescored with the open model, off the GUI thread: every atom coloured
    qtbot.waitUntil(lambda: "Rescored with the open model" in view.heatmap.title.text(), timeout=10000)
    assert view.heatmap.kind == "molecule"
    for row in (1, 2, 3):  # arrowed down quickly: the last row selected is the one drawn, rescored
        view.table.selectRow(row)
    third = view.model_table.graph_index(3)
    qtbot.waitUntil(lambda: "Rescored with the open model" in view.heatmap.title.text()
                    and str(view.report.ids[third]) in view.heatmap.title.text(), timeout=10000)
    assert on_gui and not any(on_gui)
    assert view.heatmap.top.count() > 0
    # another model trained: the row shown is rescored with it (the old model's errors stayed, said
    # to be the open model's)
    drawn = len(on_gui)
    train_and_wait(qtbot, window, normal="1", epochs=SMALL["epochs"] + 1)
    qtbot.waitUntil(lambda: len(on_gui) > drawn and "Rescored with the open model" in view.heatmap.title.text(),
                    timeout=30000)
    from core import row_graphs

    _graphs, now = rescore_row(window.model, row_graphs(view.report, third), None)
    assert np.allclose(view.heatmap._errors, now.node_errors_of(0))
    view.filter.setText(str(view.report.ids[5]))
    view._filter()
    assert 1 <= view.model_table.visible_count() < 655
    # without a model the structure is drawn plain and the report's top atoms are listed
    window.model = None
    view.show_row(0)
    assert "the report lists its top atoms" in view.heatmap.title.text()
    assert view.heatmap.top.count() == 5 and not view.heatmap.top.isHidden()
    window.report_tabs.close(window.results_tabs.indexOf(view))  # closing a report tab lets its rows go
    assert not window.report_views and window.results_tabs.count() == 1


def test_a_damaged_report_says_which_line(qtbot, window, tmp_path):
    from core import REPORT_COLUMNS

    bad = tmp_path / "bad_report.csv"
    bad.write_text(",".join(REPORT_COLUMNS) + "\n1,a,,CCO,0.5,0.2,0.3,3,,,ok,,\n2,b,,CCN,high,,,3,,,ok,,\n")
    qtbot.waitUntil(lambda: window.opening.ready and _idle(window), timeout=60000)
    window.open_path(str(bad))
    qtbot.waitUntil(lambda: _idle(window) and bool(window.feedback.last_warning), timeout=30000)
    assert "bad_report.csv:3:" in window.feedback.last_warning and "not a number" in window.feedback.last_warning
    assert not window.report_views


def test_flag_by_false_alarm_rate_or_false_discovery_rate_with_p_and_q_in_the_table(qtbot, window, herg_path):
    """A model trained in the app is calibrated: the table shows p and q, and the flag control
    flags p < rate or q <= rate instead of a percentile."""
    from core import benjamini_hochberg

    open_and_wait(qtbot, window, herg_path)
    train_and_wait(qtbot, window)
    st = window.state
    assert window.model.is_calibrated
    p = window.model.p_values(window.scores.score)
    m = window.model_table
    top = m.graph_index(0)
    assert m.data(m.index(0, COLUMNS.index("p-value"))) == f"{p[top]:.3g}"
    window.filters.flag_rule.setCurrentIndex(window.filters.flag_rule.findData("q"))
    assert window.filters.threshold.maximum() == 0.5
    window.filters.threshold.setValue(0.3)
    q = benjamini_hochberg(p)
    assert st.flag_rule == "q" and st.alpha == 0.3
    np.testing.assert_array_equal(st.flagged(), q <= 0.3)
    assert int(m.flagged().sum()) == int((q <= 0.3).sum())
    window.filters.flag_rule.setCurrentIndex(window.filters.flag_rule.findData("p"))
    np.testing.assert_array_equal(st.flagged(), p < 0.3)
    window.filters.flag_rule.setCurrentIndex(window.filters.flag_rule.findData("percentile"))
    assert window.filters.threshold.value() == 95.0
    np.testing.assert_array_equal(st.flagged(), window.scores.score > window.model.threshold(95.0))


def test_a_model_without_calibration_shows_and_exports_no_p_values_as_its_reports_write_none(qtbot, window,
                                                                                            herg_path, tmp_path):
    """The window gave a model trained on all its graphs p-values against its own training scores
    (too small: the training graphs fit best) while ``glocalkd score`` writes none and the
    training note says "no p-values". Now the window, its exports and the command line share
    core's one rule, and the p rule says that it flags by the percentile instead."""
    from core import score_file

    small = tmp_path / "thirty.tab"
    small.write_text("".join(herg_path.read_text().splitlines(keepends=True)[:31]))  # too few to calibrate
    open_and_wait(qtbot, window, small)
    train_and_wait(qtbot, window)
    st, m = window.state, window.model_table
    assert window.model.name == "glocalkd" and not window.model.is_calibrated
    assert st.p_values() is None and st.q_values() is None
    assert m.data(m.index(0, COLUMNS.index("p-value"))) in ("", None)
    window.filters.flag_rule.setCurrentIndex(window.filters.flag_rule.findData("p"))
    np.testing.assert_array_equal(st.flagged(), st.scores.score > window.model.threshold(st.percentile))
    assert "gives no p-values" in window.filters.count.toolTip()
    window.filters.flag_rule.setCurrentIndex(window.filters.flag_rule.findData("percentile"))
    assert window.filters.count.toolTip() == ""

    out = tmp_path / "report.csv"
    window.export_report(str(out))
    qtbot.waitUntil(lambda: _idle(window) and out.exists(), timeout=60000)
    cli = score_file(window.model, small, tmp_path / "cli.csv")
    exported = [r for r in csv.DictReader(open(out, encoding="utf-8")) if r["status"] == "ok"]  # no end row
    written = [r for r in csv.DictReader(open(cli.report, encoding="utf-8")) if r["status"] == "ok"]
    assert len(exported) == len(written) == 30
    assert {r["p_value"] for r in exported} == {r["p_value"] for r in written} == {""}
