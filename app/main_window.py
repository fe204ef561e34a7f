"""The main window: menus, panels and wiring. Computation happens in core, in worker threads."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QComboBox, QDockWidget, QDoubleSpinBox, QFileDialog, QGroupBox, QHBoxLayout,
                               QLabel, QLineEdit, QMainWindow, QMessageBox, QProgressBar, QPushButton,
                               QScrollArea, QSplitter, QStackedWidget, QTabWidget, QToolButton, QVBoxLayout,
                               QWidget)

from core import (FeatureSchema, GLocalKD, GLocalKDError, GraphSet, Scores, detector_info, is_report, is_table,
                  load, make_detector, roc_auc, table_columns)

from .dialogs import ColumnDialog, RejectsDialog
from .map_view import MapView
from .plots import EvaluationPlot, HeatmapPanel, LossPlot
from .settings_form import TrainSettings
from .table_model import COLUMNS, ResultsModel, results_view
from .workers import Runner, Task

RESOURCES = Path(__file__).resolve().parents[1] / "resources"
DEMOS = {
    "hERG (655 molecules, SMILES)": RESOURCES / "herg.tab",
    "AIDS (2,000 molecular graphs, TU)": RESOURCES / "AIDS.zip",
}
MAX_RECENT = 8
FILE_FILTER = ("Graph data (*.smi *.smiles *.csv *.tsv *.tab *.txt *.sdf *.gz *.zip);;"
               "SMILES (*.smi *.smiles);;Tables (*.csv *.tsv *.tab *.txt *.gz);;SDF (*.sdf *.sdf.gz);;"
               "TU collection (*.zip);;All files (*)")


class MainWindow(QMainWindow):
    """Open data, train GLocalKD in the background, read the ranked table and per-node heatmaps."""

    def __init__(self, settings: QSettings | None = None):
        super().__init__()
        self.settings = settings or QSettings("GLocalKD Studio", "GLocalKD Studio")
        self.setWindowTitle("GLocalKD Studio")
        self.setAcceptDrops(True)
        self.runner = Runner(self)
        self.runner.changed.connect(self._update_state)
        self.graphs: GraphSet | None = None
        self.scores: Scores | None = None
        self.model = None  # the trained detector: GLocalKD or a competitor (core.detectors.registry)
        self.data_path: str = ""
        self._train_started = 0.0
        self._trained_on_shown = 0  # how many of the shown graphs the model was trained on
        # the graph-size baseline fitted on the same training graphs, and its scores of the shown
        # graphs: the evaluation tab shows its AUC beside the detector's, as a sanity reference
        self.size_model = None
        self.size_scores = None
        self._losses: list[float] = []
        self.report_windows: list = []  # ranked reports opened beside the main window
        self._build_actions()
        self._build_ui()
        self._restore()
        self._update_state()

    # ================================================================ construction
    def _build_actions(self) -> None:
        def action(text, slot, shortcut=None, tip=""):
            a = QAction(text, self)
            a.triggered.connect(slot)
            if shortcut:
                a.setShortcut(shortcut)
            a.setStatusTip(tip or text)
            return a

        self.act_open = action("&Open…", self.open_dialog, QKeySequence.StandardKey.Open,
                               "Open a SMILES, CSV/TSV, SDF file or a TU collection (.zip)")
        self.act_open_folder = action("Open TU &folder…", self.open_folder_dialog)
        self.act_train = action("&Train", self.train, "Ctrl+T", "Train GLocalKD on the normal graphs")
        self.act_stop = action("&Stop", self.stop, "Esc", "Stop training (the model trained so far is kept)")
        self.act_score_file = action("Score &another file…", self.score_file_dialog, "Ctrl+Shift+O",
                                     "Score another file with the trained model")
        self.act_export = action("&Export report…", self.export_dialog, QKeySequence.StandardKey.Save,
                                 "Export the ranked CSV report")
        self.act_save_model = action("Save &model…", self.save_model_dialog, "Ctrl+Shift+S")
        self.act_load_model = action("&Load model…", self.load_model_dialog, "Ctrl+L")
        self.act_quit = action("&Quit", self.close, QKeySequence.StandardKey.Quit)

        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.act_open)
        file_menu.addAction(self.act_open_folder)
        self.demo_menu = file_menu.addMenu("Open &demo data")
        for name, path in DEMOS.items():
            self.demo_menu.addAction(name, lambda p=path: self.open_path(str(p)))
        self.recent_menu = file_menu.addMenu("Open &recent")
        file_menu.addSeparator()
        file_menu.addAction(self.act_score_file)
        file_menu.addAction(self.act_export)
        file_menu.addSeparator()
        file_menu.addAction(self.act_load_model)
        file_menu.addAction(self.act_save_model)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        model_menu = bar.addMenu("&Model")
        model_menu.addAction(self.act_train)
        model_menu.addAction(self.act_stop)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction("&About", self.about)

        tools = self.addToolBar("Main")
        tools.setObjectName("main_toolbar")
        tools.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for a in (self.act_open, self.act_train, self.act_stop, self.act_score_file, self.act_export,
                  self.act_load_model, self.act_save_model):
            tools.addAction(a)

    def _build_ui(self) -> None:
        # --- left dock: data summary and training settings
        self.summary = QLabel("No data loaded.")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.rejects_button = QPushButton("Show rejected rows…")
        self.rejects_button.clicked.connect(self.show_rejects)
        data_box = QGroupBox("Data")
        data_layout = QVBoxLayout(data_box)
        data_layout.addWidget(self.summary)
        data_layout.addWidget(self.rejects_button)

        self.form = TrainSettings()
        self.form.set_device_note(_device_note())
        self.train_button = QPushButton("Train")
        self.train_button.clicked.connect(self.train)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        self.progress = QProgressBar()
        self.progress.setFormat("")
        self.progress_label = QLabel("")
        self.progress_label.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(self.train_button)
        buttons.addWidget(self.stop_button)
        train_box = QGroupBox("Training")
        train_layout = QVBoxLayout(train_box)
        train_layout.addWidget(self.form)
        train_layout.addLayout(buttons)
        train_layout.addWidget(self.progress)
        train_layout.addWidget(self.progress_label)

        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.addWidget(data_box)
        side_layout.addWidget(train_box)
        side_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidget(side)
        scroll.setWidgetResizable(True)
        dock = QDockWidget("Data and training", self)
        dock.setObjectName("side_dock")
        dock.setWidget(scroll)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable |
                         QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)

        # --- results: filter bar and table
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter by id, name, SMILES or label…")
        self.filter_edit.setClearButtonEnabled(True)
        self._filter_timer = QTimer(self, singleShot=True, interval=250)
        self._filter_timer.timeout.connect(lambda: self.model_table.set_text_filter(self.filter_edit.text()))
        self.filter_edit.textChanged.connect(self._filter_timer.start)
        self.smarts_edit = QLineEdit()
        self.smarts_edit.setPlaceholderText("SMARTS substructure, e.g. c1ccccc1N")
        self.smarts_edit.setClearButtonEnabled(True)
        self.smarts_edit.returnPressed.connect(self.apply_smarts)
        self.smarts_edit.textChanged.connect(lambda t: t.strip() or self.model_table.set_smarts_mask(None))
        self.percentile = QDoubleSpinBox()
        self.percentile.setRange(50.0, 100.0)
        self.percentile.setDecimals(1)
        self.percentile.setSingleStep(0.5)
        self.percentile.setValue(95.0)
        self.percentile.setSuffix(" th pct.")
        self.percentile.setToolTip("Flag graphs scoring above this percentile of the training graphs' scores")
        self.percentile.valueChanged.connect(self._threshold_changed)
        self.count_label = QLabel("")
        bar = QHBoxLayout()
        bar.addWidget(self.filter_edit, 2)
        bar.addWidget(self.smarts_edit, 2)
        bar.addWidget(QLabel("Flag above"))
        bar.addWidget(self.percentile)
        bar.addWidget(self.count_label, 1)

        self.model_table = ResultsModel(self)
        self.table = results_view(self.model_table)
        self.table.selectionModel().currentRowChanged.connect(self._row_selected)
        self.model_table.modelReset.connect(self._update_counts)


        # --- the chemical-space map, beside the table
        self.map_view = MapView()
        self.map_view.compute_requested.connect(self.compute_map)
        self.map_view.graph_clicked.connect(self.select_graph)
        self._map_cache: dict = {}
        top = QSplitter(Qt.Orientation.Horizontal)
        top.setObjectName("top_splitter")
        top.addWidget(self.table)
        top.addWidget(self.map_view)
        top.setSizes([760, 440])
        self.top_splitter = top
        results = QWidget()  # the filter bar spans the table and the map
        results_layout = QVBoxLayout(results)
        results_layout.setContentsMargins(0, 0, 0, 0)
        results_layout.addLayout(bar)
        results_layout.addWidget(top, 1)

        # --- bottom tabs: heatmap, loss, evaluation
        self.heatmap = HeatmapPanel()
        self.loss_plot = LossPlot()
        self.eval_plot = EvaluationPlot()
        self.anomaly_class = QComboBox()
        self.anomaly_class.currentIndexChanged.connect(self._update_evaluation)
        self.auc_label = QLabel("")
        self.auc_label.setWordWrap(True)  # a long note must wrap, not widen the window and squeeze the form
        eval_page = QWidget()
        eval_layout = QVBoxLayout(eval_page)
        eval_top = QHBoxLayout()
        eval_top.addWidget(QLabel("Anomalous class:"))
        eval_top.addWidget(self.anomaly_class)
        eval_top.addWidget(self.auc_label, 1)
        eval_layout.addLayout(eval_top)
        eval_layout.addWidget(self.eval_plot, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.heatmap, "Node heatmap")
        self.tabs.addTab(self.loss_plot, "Training loss")
        self.tabs.addTab(eval_page, "Evaluation")

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setObjectName("main_splitter")
        splitter.addWidget(results)
        splitter.addWidget(self.tabs)
        splitter.setSizes([420, 420])
        self.splitter = splitter

        self.stack = QStackedWidget()
        self.stack.addWidget(self._welcome_page())
        self.stack.addWidget(splitter)
        self.setCentralWidget(self.stack)
        self.statusBar().showMessage("Open a file, drop one here, or try a demo data set.")

    def _welcome_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addStretch(1)
        title = QLabel("<h2>GLocalKD Studio</h2><p>Graph-level anomaly detection by glocal knowledge "
                       "distillation. Open a compound set (SMILES, CSV/TSV, SDF) or a TU graph collection, "
                       "train on the normal graphs, and read a ranked list whose heatmaps show which atoms "
                       "drive each score.</p><p>Drop a file here, open one, or start with a demo:</p>")
        title.setWordWrap(True)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(title)
        for name, path in DEMOS.items():
            button = QToolButton()
            button.setText(f"Open demo: {name}")
            button.setMinimumWidth(360)
            button.clicked.connect(lambda _=False, p=path: self.open_path(str(p)))
            row = QHBoxLayout()
            row.addStretch(1)
            row.addWidget(button)
            row.addStretch(1)
            layout.addLayout(row)
        open_button = QToolButton()
        open_button.setText("Open a file or TU collection…")
        open_button.clicked.connect(self.open_dialog)
        open_button.setMinimumWidth(360)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(open_button)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)
        return page

    # ================================================================ settings
    def _restore(self) -> None:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1500, 950)
        state = self.settings.value("window/state")
        if state is not None:
            self.restoreState(state)
        for key, widget in (("window/splitter", self.splitter), ("window/top_splitter", self.top_splitter)):
            sizes = self.settings.value(key)
            if sizes is not None:
                widget.restoreState(sizes)
        self.form.set_params({k: self.settings.value(f"train/{k}") for k in self.form.params()
                              if self.settings.value(f"train/{k}") is not None})
        try:
            self.percentile.setValue(float(self.settings.value("view/percentile", 95.0)))
        except (TypeError, ValueError):
            pass
        self._rebuild_recent()

    def _save_settings(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/splitter", self.splitter.saveState())
        self.settings.setValue("window/top_splitter", self.top_splitter.saveState())
        for key, value in self.form.params().items():
            self.settings.setValue(f"train/{key}", value)
        self.settings.setValue("view/percentile", self.percentile.value())
        self.settings.sync()

    def _recent(self) -> list[str]:
        value = self.settings.value("files/recent", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _add_recent(self, path: str) -> None:
        recent = [path] + [p for p in self._recent() if p != path]
        self.settings.setValue("files/recent", recent[:MAX_RECENT])
        self.settings.setValue("files/last_dir", str(Path(path).parent))
        self._rebuild_recent()

    def _rebuild_recent(self) -> None:
        self.recent_menu.clear()
        recent = self._recent()
        for path in recent:
            self.recent_menu.addAction(path, lambda p=path: self.open_path(p))
        self.recent_menu.setEnabled(bool(recent))

    def _last_dir(self) -> str:
        return str(self.settings.value("files/last_dir", str(Path.home())))

    # ================================================================ opening data
    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open graph data", self._last_dir(), FILE_FILTER)
        if path:
            self.open_path(path)

    def open_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a TU collection folder", self._last_dir())
        if path:
            self.open_path(path)

    def open_path(self, path: str, options: dict | None = None) -> None:
        """Load ``path`` in the background; asks for columns when a table's SMILES column is not obvious."""
        if self.runner.busy():
            self._warn("Busy", "Wait for the current work to finish (or press Stop) before opening a file.")
            return
        if options is None and is_report(path):  # a ranked report (e.g. a screening result): its own window
            self.open_report(path)
            return
        if options is None and is_table(path):
            try:
                cols = table_columns(path)
            except GLocalKDError as exc:
                self._warn("Cannot open file", str(exc))
                return
            if cols.smiles is None:
                dialog = ColumnDialog(cols.header, cols.smiles, cols.id, cols.label, Path(path).name, self)
                if dialog.exec() != ColumnDialog.DialogCode.Accepted:
                    return
                options = dialog.options()
        options = options or {}
        self.statusBar().showMessage(f"Loading {path}…")
        self._busy(f"Loading {Path(path).name}…")

        def work(task: Task):
            graphs = load(path, **options)
            schema = FeatureSchema.fit(graphs, "auto").describe() if len(graphs) else "none (no graphs)"
            return path, graphs, schema

        self.runner.start("load", work, self._loaded, self._failed)

    def open_report(self, path: str) -> None:
        """Read a ranked CSV report in the background and show it in a report window."""
        from core import read_report

        self._busy(f"Reading report {Path(path).name}…")

        def work(task: Task):
            return read_report(path, on_progress=task.report)

        self.runner.start("load", work, self._report_loaded, self._failed, self._report_progress)

    @Slot(object)
    def _report_progress(self, rows: int) -> None:
        self.progress_label.setText(f"Reading report: {rows:,} rows…")

    @Slot(object)
    def _report_loaded(self, report) -> None:
        from .report_view import ReportWindow

        self._idle()
        self._add_recent(report.source)
        window = ReportWindow(report, lambda: self.model, self)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # a closed report frees its rows
        self.report_windows.append(window)
        window.destroyed.connect(lambda _=None, w=window: self.report_windows.remove(w)
                                 if w in self.report_windows else None)
        window.show()
        self.progress_label.setText(f"Opened report {Path(report.source).name}: {len(report):,} rows.")

    @Slot(object)
    def _loaded(self, result) -> None:
        path, graphs, schema = result
        self._idle()
        self.data_path = path
        self.graphs = graphs
        self.scores = None
        self.size_scores = None
        self._trained_on_shown = 0
        self._add_recent(path)
        counts = graphs.label_counts()
        majority = max(counts, key=counts.get) if counts else None
        self.form.set_labels(list(counts), preferred=majority)
        self._schema_text = schema
        rejected = f", {len(graphs.rejects):,} rows rejected" if graphs.rejects else ""
        self.progress_label.setText(f"Loaded {len(graphs):,} graphs{rejected}.")  # not "Loading…" any more
        if self.model is not None and len(graphs):
            self._score_current("Scoring with the current model…")
        self._show_data()
        self.stack.setCurrentIndex(1)
        self.statusBar().showMessage(f"Loaded {len(graphs)} graphs from {path}"
                                     + (f"; {len(graphs.rejects)} rows rejected" if graphs.rejects else ""), 8000)
        if len(graphs) == 0:
            self._warn("Nothing to score", f"{path}: no row could be read as a graph. "
                       "Show rejected rows to see why.")

    def _show_data(self) -> None:
        g = self.graphs
        self.model_table.set_data(g, self.scores, self._threshold())
        no_smiles = not any(m.smiles for m in g.meta)
        self.table.setColumnHidden(COLUMNS.index("SMILES"), no_smiles)
        self.smarts_edit.setEnabled(not no_smiles)
        self.heatmap.clear()
        self._map_cache = {}
        self.map_view.clear("Compute the map to see where the graphs sit in the model's embedding space."
                            if self.model is not None else "Train or load a model to map its graph embeddings.")
        self._update_summary()
        self._update_evaluation_classes()
        self._update_state()
        if self.scores is not None and self.model_table.rowCount():
            self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
            self.table.selectRow(0)

    def _update_summary(self) -> None:
        g = self.graphs
        if g is None:
            self.summary.setText("No data loaded.")
            return
        labels = g.label_counts()
        label_text = ", ".join(f"{k}: {v}" for k, v in labels.items()) if labels else "none"
        kind = {"tu": "TU graph collection", "smiles": "SMILES list", "table": "table of SMILES",
                "sdf": "SDF"}.get(g.format, g.format)
        lines = [f"<b>{Path(g.source).name}</b>", f"Format: {kind}",
                 f"Graphs: {len(g):,} ({g.num_nodes:,} nodes)",
                 f"Node features: {getattr(self, '_schema_text', '')}", f"Labels: {label_text}",
                 f"Rejected rows: {len(g.rejects):,}"]
        if self.model is not None:
            lines.append(f"Model: {_describe_model(self.model)}")
        self.summary.setText("<br>".join(lines))

    # ================================================================ training
    def train(self) -> None:
        if self.graphs is None or len(self.graphs) == 0:
            self._warn("No data", "Open a data file first.")
            return
        if self.runner.busy():
            return
        info = detector_info(self.form.detector_name())
        params = self.form.detector_params()
        normal = self.form.normal_label()
        graphs = self.graphs
        self._losses = []
        self.loss_plot.show_losses([])
        self._train_started = time.perf_counter()
        if info.trains_by_epoch:
            self.tabs.setCurrentWidget(self.loss_plot)
            self.progress.setRange(0, params["epochs"])
            self.progress.setValue(0)
            self.progress.setFormat("epoch %v / %m")
            self._busy(f"Training {info.label}…", indeterminate=False)
        else:  # a kernel and a shallow detector: one step, no epochs to count
            self._busy(f"Fitting {info.label}…")
        self.stop_button.setEnabled(info.trains_by_epoch)
        self.act_stop.setEnabled(info.trains_by_epoch)

        def work(task: Task):
            train = graphs if normal is None else graphs.with_label(normal)
            if len(train) == 0:
                raise GLocalKDError(f"no graphs have label {normal}")
            model = make_detector(info.name, **params).fit(train, on_epoch=task.report, should_stop=task.stopped)
            if task.abandoned():  # the window is closing: no one will look at the scores
                return None
            size = make_detector("size").fit(train)
            return model, model.score(graphs), len(train), size, size.score(graphs).score

        self.runner.start("train", work, self._trained, self._failed, self._epoch)

    @Slot(object)
    def _epoch(self, info) -> None:
        self._losses.append(info.loss)
        self.progress.setValue(info.epoch)
        elapsed = time.perf_counter() - self._train_started
        eta = elapsed / info.epoch * (info.epochs - info.epoch)
        self.progress_label.setText(f"Epoch {info.epoch}/{info.epochs} · loss {info.loss:.4g} · "
                                    f"{info.seconds:.2f} s/epoch · ETA {_duration(eta)}")
        self.loss_plot.show_losses(self._losses)

    @Slot(object)
    def _trained(self, result) -> None:
        if result is None:
            return
        model, scores, n_train, self.size_model, self.size_scores = result
        self._idle()
        self.model = model
        self.scores = scores
        self._trained_on_shown = n_train
        epochs = len(model.loss_history_)
        note = f" (stopped after {epochs} epochs)" if model.stopped_early_ else ""
        self._show_detector(model)
        self.progress_label.setText(f"Trained on {n_train:,} graphs in "
                                    f"{_duration(time.perf_counter() - self._train_started)}{note}.")
        self.loss_plot.show_losses(list(model.loss_history_))
        self._show_data()
        self.tabs.setCurrentWidget(self.heatmap)
        self.statusBar().showMessage(f"Trained{note}; {len(scores):,} graphs scored.", 8000)

    def stop(self) -> None:
        if self.runner.busy("train"):
            self.runner.stop("train")
            self.progress_label.setText("Stopping…")

    # ================================================================ scoring another file, models
    def score_file_dialog(self) -> None:
        if self.model is None:
            self._warn("No model", "Train a model or load one first.")
            return
        path, _ = QFileDialog.getOpenFileName(self, "Score another file", self._last_dir(), FILE_FILTER)
        if path:
            self.open_path(path)  # a loaded file is scored with the current model as soon as it is read

    def _score_current(self, message: str) -> None:
        model, size, graphs = self.model, self.size_model, self.graphs
        self._busy(message)
        self.runner.start("score", lambda task: (model.score(graphs), size.score(graphs).score if size else None),
                          self._scored, self._failed)

    @Slot(object)
    def _scored(self, result) -> None:
        self._idle()
        self.scores, self.size_scores = result
        scores = self.scores
        self._show_data()
        self.statusBar().showMessage(f"{len(scores):,} graphs scored.", 8000)

    def save_model_dialog(self) -> None:
        if self.model is None:
            self._warn("No model", "Train a model first.")
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save model", str(Path(self._last_dir()) / "model.glocalkd.pt"),
                                              "GLocalKD model (*.pt)")
        if path:
            try:
                self.model.save(path)
            except (GLocalKDError, OSError) as exc:
                self._warn("Cannot save model", str(exc))
                return
            self.statusBar().showMessage(f"Model saved to {path}", 8000)

    def load_model_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load model", self._last_dir(), "GLocalKD model (*.pt);;All files (*)")
        if path:
            self.load_model(path)

    def load_model(self, path: str) -> None:
        try:
            model = GLocalKD.load(path, device=self.form.params()["device"])
        except GLocalKDError as exc:
            self._warn("Cannot load model", str(exc))
            return
        self.model = model
        self.size_model = self.size_scores = None  # a model file does not keep its training graphs' sizes
        self._show_detector(model)
        self.loss_plot.show_losses(list(model.loss_history_))
        self.statusBar().showMessage(f"Model loaded from {path}", 8000)
        if self.graphs is not None and len(self.graphs):
            self._score_current("Scoring with the loaded model…")
        self._update_summary()
        self._update_state()

    # ================================================================ export
    def export_dialog(self) -> None:
        if self.graphs is None or self.scores is None:
            self._warn("Nothing to export", "Train or load a model and score a data set first.")
            return
        default = Path(self._last_dir()) / f"{Path(self.graphs.source).stem or 'graphs'}_report.csv"
        path, _ = QFileDialog.getSaveFileName(self, "Export ranked report", str(default), "CSV (*.csv)")
        if path:
            self.export_report(path)

    def export_report(self, path: str) -> None:
        from core import write_report

        try:
            rows = write_report(path, self.graphs, self.scores)
        except (GLocalKDError, OSError, ValueError) as exc:
            self._warn("Cannot export report", str(exc))
            return
        self.statusBar().showMessage(f"{rows:,} rows written to {path}", 8000)

    # ================================================================ table, filters, detail
    def apply_smarts(self) -> None:
        text = self.smarts_edit.text().strip()
        if not text or self.graphs is None:
            self.model_table.set_smarts_mask(None)
            return
        from core import smarts_matches

        try:
            mask = smarts_matches([m.smiles for m in self.graphs.meta], text)
        except GLocalKDError as exc:
            self._warn("SMARTS filter", str(exc))
            return
        if not any(m.smiles for m in self.graphs.meta):
            self.statusBar().showMessage("These graphs have no SMILES: the SMARTS filter needs molecules.", 8000)
        self.model_table.set_smarts_mask(mask)

    def _threshold(self) -> float | None:
        if self.model is None or self.scores is None:
            return None
        return self.model.threshold(self.percentile.value())

    def _threshold_changed(self) -> None:
        self.model_table.set_threshold(self._threshold())
        if self.map_view.map is not None:
            self.map_view.set_flagged(self.model_table.flagged())
        self._update_counts()
        self._update_evaluation()

    def _update_counts(self) -> None:
        if self.graphs is None:
            self.count_label.setText("")
            return
        text = f"{self.model_table.visible_count():,} of {len(self.graphs):,} shown"
        if self.scores is not None and self._threshold() is not None:
            text += f" · {int(self.model_table.flagged().sum()):,} flagged"
        self.count_label.setText(text)

    @Slot()
    def _row_selected(self, current, _previous=None) -> None:
        if not current.isValid() or self.graphs is None:
            return
        i = self.model_table.graph_index(current.row())
        self.map_view.highlight(i)
        if self.scores is None:
            self.heatmap.clear("Train or load a model to see node errors for this graph.")
            return
        try:
            self.heatmap.show_graph(self.graphs, i, self.scores)
        except Exception as exc:  # a drawing failure must not take the table down
            self.heatmap.clear(f"Could not draw this graph: {exc}")

    def _show_detector(self, model) -> None:
        """Adapt the views to the detector: score-term columns, map spaces and heatmaps need node scores."""
        terms = model.has_node_scores
        for column in ("Graph term", "Node term"):
            self.table.setColumnHidden(COLUMNS.index(column), not terms)
        self.map_view.set_spaces_enabled(terms)
        self.tabs.setTabText(self.tabs.indexOf(self.heatmap), "Node heatmap" if terms else "Graph")

    # ================================================================ chemical-space map
    @Slot(str, str)
    def compute_map(self, space: str, method: str) -> None:
        if self.model is None or self.graphs is None or self.scores is None:
            self._warn("No map yet", "Train or load a model and score a data set first.")
            return
        key = (space, method)
        if key in self._map_cache:
            self._map_ready(self._map_cache[key])
            return
        if self.runner.busy():
            return
        from core import space_map

        model, graphs, seed = self.model, self.graphs, self.form.params()["seed"]
        self._busy(f"Computing the {space} map ({method})…")
        self.runner.start("map", lambda task: (key, space_map(model, graphs, space, method, seed=seed)),
                          self._map_computed, self._failed)

    @Slot(object)
    def _map_computed(self, result) -> None:
        key, space_map = result
        self._idle()
        self.progress_label.setText("Map ready.")
        self._map_cache[key] = space_map
        self._map_ready(space_map)

    def _map_ready(self, space_map) -> None:
        self.map_view.set_map(space_map, self.graphs, self.scores, self.model_table.flagged())
        current = self.table.currentIndex()
        if current.isValid():
            self.map_view.highlight(self.model_table.graph_index(current.row()))

    @Slot(int)
    def select_graph(self, graph_index: int) -> None:
        """Select a graph's row in the table (clicked on the map), clearing filters that hide it."""
        row = self.model_table.row_of(graph_index)
        if row is None:
            self.filter_edit.clear()
            self.smarts_edit.clear()
            self.model_table.set_text_filter("")
            self.model_table.set_smarts_mask(None)
            row = self.model_table.row_of(graph_index)
        if row is not None:
            self.table.selectRow(row)
            self.table.scrollTo(self.model_table.index(row, 0))

    # ================================================================ evaluation
    def _update_evaluation_classes(self) -> None:
        self.anomaly_class.blockSignals(True)
        self.anomaly_class.clear()
        counts = self.graphs.label_counts() if self.graphs is not None else {}
        normal = self.form.normal_label()
        for label in counts:
            self.anomaly_class.addItem(f"label {label}", label)
        others = [lab for lab in counts if lab != normal]
        if others:
            minority = min(others, key=lambda lab: counts[lab])
            self.anomaly_class.setCurrentIndex(list(counts).index(minority))
        self.anomaly_class.blockSignals(False)
        self._update_evaluation()

    def _update_evaluation(self) -> None:
        g, s = self.graphs, self.scores
        chosen = self.anomaly_class.currentData()
        if g is None or s is None or chosen is None or len(g.label_counts()) < 2:
            self.auc_label.setText("")
            self.eval_plot.show_nothing("Labels with at least two classes, and scores, are needed for the "
                                        "ROC curve and the class distributions.")
            return
        from sklearn.metrics import roc_curve

        labels = np.array([lab if lab is not None else "" for lab in g.labels], dtype=object)
        known = labels != ""
        is_anomaly = labels[known] == chosen
        scores = s.score[known]
        auc = roc_auc(is_anomaly, scores)
        fpr, tpr, _ = roc_curve(is_anomaly, scores)
        reference, size_text = None, ""
        if self.size_scores is not None and getattr(self.model, "name", "") != "size":
            size_scores = self.size_scores[known]
            size_auc = roc_auc(is_anomaly, size_scores)
            size_fpr, size_tpr, _ = roc_curve(is_anomaly, size_scores)
            reference = (f"graph size alone ({size_auc:.3f})", size_fpr, size_tpr)
            size_text = f"; graph size alone: {size_auc:.3f}"
        note = (f"; includes the {self._trained_on_shown:,} training graphs, so it is optimistic: score a "
                "held-out file for a fair figure" if self._trained_on_shown else "")
        self.auc_label.setText(f"ROC-AUC {auc:.3f} on {int(known.sum()):,} labelled graphs "
                               f"({int(is_anomaly.sum()):,} anomalous){size_text}{note}")
        self.auc_label.setToolTip("Graph size alone: the AUC of scoring each graph by how unusual its node and "
                                  "edge counts are against the training graphs. A detector that does not beat it "
                                  "has learned little beyond size." if reference else "")
        self.eval_plot.show(scores, is_anomaly, auc, fpr, tpr, f"label {chosen}", self._threshold(), reference)

    # ================================================================ state, messages
    def _busy(self, text: str, indeterminate: bool = True) -> None:
        self.progress_label.setText(text)
        if indeterminate:
            self.progress.setRange(0, 0)  # a busy bar while loading or scoring
        self._update_state(busy=True)

    def _idle(self) -> None:
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.progress.setFormat("")
        self._update_state(busy=False)

    @Slot()
    def _update_state(self, busy: bool | None = None) -> None:
        busy = self.runner.busy() if busy is None else busy
        training = self.runner.busy("train")
        has_data = self.graphs is not None and len(self.graphs) > 0
        self.act_open.setEnabled(not busy)
        self.act_open_folder.setEnabled(not busy)
        self.demo_menu.setEnabled(not busy)
        self.recent_menu.setEnabled(not busy and bool(self._recent()))
        self.act_train.setEnabled(has_data and not busy)
        self.train_button.setEnabled(has_data and not busy)
        self.act_stop.setEnabled(training)
        self.stop_button.setEnabled(training)
        self.act_score_file.setEnabled(self.model is not None and not busy)
        self.act_export.setEnabled(self.scores is not None and not busy)
        savable = self.model is not None and hasattr(self.model, "save")
        self.act_save_model.setEnabled(savable and not busy)
        self.act_save_model.setToolTip("Save the trained model" if savable or self.model is None else
                                       "Model files hold GLocalKD models; this detector retrains in the time "
                                       "a file would take to load")
        self.act_load_model.setEnabled(not busy)
        self.rejects_button.setEnabled(self.graphs is not None and bool(self.graphs.rejects))
        self.rejects_button.setText(f"Show rejected rows ({len(self.graphs.rejects):,})…"
                                    if self.graphs is not None and self.graphs.rejects else "No rejected rows")
        self.form.setEnabled(not busy)

    @Slot(str)
    def _failed(self, message: str) -> None:
        """Any failure in a worker: say so; the data and results on screen stay as they were."""
        self._idle()
        self.progress_label.setText("")
        self._warn("Something went wrong", message)
        self.statusBar().showMessage("Failed: " + message.splitlines()[0], 10000)

    def _warn(self, title: str, message: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("warning_box")
        box.open()  # window-modal without blocking the event loop (tests and workers keep running)
        self._last_warning = message

    def show_rejects(self) -> None:
        if self.graphs is not None and self.graphs.rejects:
            RejectsDialog(self.graphs.rejects, self.graphs.source, self).exec()

    def about(self) -> None:
        QMessageBox.about(self, "About GLocalKD Studio",
                          "<b>GLocalKD Studio</b><br>Graph-level anomaly detection by glocal knowledge "
                          "distillation (Ma, Pang, Chen, van den Hengel, WSDM 2022).")

    # ================================================================ window events
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            self.open_path(urls[0])

    def closeEvent(self, event) -> None:
        """Stop background work cleanly, remember the layout and settings, then close."""
        self.runner.stop_all()
        self._save_settings()
        event.accept()


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def _device_note() -> str:
    import torch

    if torch.cuda.is_available():
        return f"torch sees GPU: {torch.cuda.get_device_name(0)}"
    return "torch sees no GPU: training runs on the CPU"


def _describe_model(model) -> str:
    """One line on the trained detector: its name, features and epochs where it has them."""
    parts = [detector_info(model.name).label]
    schema = getattr(model, "schema_", None)
    if schema is not None:
        parts.append(schema.describe())
    if model.loss_history_:
        parts.append(f"{len(model.loss_history_)} epochs")
    readouts = [text for flag, text in (("node_max", "largest node error"), ("size_term", "size term"))
                if getattr(model, flag, False)]
    if readouts:
        parts.append("score + " + " + ".join(readouts))
    return ", ".join(parts)
