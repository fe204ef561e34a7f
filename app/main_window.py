"""The main window: layout and wiring only.

The state (data, model, scores, selection) is :class:`app.state.AppState`; background jobs
are the plain functions of :mod:`app.tasks`, run by :class:`app.workers.Runner`; the views
are in :mod:`app.widgets`. Nothing here computes: slots move results from jobs into the
state and from the state into the widgets.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Slot
from PySide6.QtWidgets import (QApplication, QDockWidget, QMainWindow, QMessageBox, QSplitter,
                               QStackedWidget, QTabWidget, QVBoxLayout, QWidget)

from . import tasks
from .controllers.clipboard import ClipboardController
from .controllers.export import ExportController
from .controllers.mapping import MapController
from .controllers.model_files import ModelFilesController
from .controllers.nearest import NearestController
from .controllers.opening import OpeningController
from .controllers.results import ResultsController
from .controllers.review import ReviewController
from .controllers.screening import ScreeningController
from .controllers.sessions import SessionsController
from .controllers.similarity import SimilarityController
from .controllers.training import TrainingController
from .actions import Facts, build_actions, install_menus, update_actions
from .file_memory import FileMemory
from .settings_store import SettingsStore
from .state import AppState, describe_model
from .structures import STRUCTURE_SIZE_NAMES, StructureImages, show_structures
from .unsaved import MODEL, UnsavedWork
from .wheel_guard import install_wheel_guard
from .widgets import dialogs
from .widgets.dialogs import RejectsDialog
from .widgets.evaluation import EvaluationPage
from .widgets.filter_bar import FilterBar
from .widgets.heatmap import HeatmapPanel
from .widgets.map_view import MapView
from .widgets.nearest import NearestPanel
from .widgets.plots import LossPlot
from .widgets.query_bar import QueryBar
from .widgets.report_view import ReportView
from .widgets.side_panel import SidePanel
from .widgets.welcome import welcome_page
from .widgets.table import ResultsModel, legend_label, results_view

DEMO_DATA = Path(__file__).resolve().parent / "demo_data"  # installed with the package (pyproject package-data)
DEMOS = {
    "hERG (655 molecules, SMILES)": DEMO_DATA / "herg.tab",
    "AIDS (2,000 molecular graphs, TU)": DEMO_DATA / "AIDS.zip",
}
FILE_FILTER = ("Graph data (*.smi *.smiles *.csv *.tsv *.tab *.txt *.sdf *.gz *.zip);;"
               "SMILES (*.smi *.smiles);;Tables (*.csv *.tsv *.tab *.txt *.gz);;SDF (*.sdf *.sdf.gz);;"
               "TU collection (*.zip);;All files (*)")
MODEL_FILTER = "GLocalKD model (*.pt)"


class MainWindow(QMainWindow):
    """Open data, train GLocalKD in the background, read the ranked table and per-node heatmaps."""

    def __init__(self, settings: QSettings | None = None):
        super().__init__()
        from .workers import Runner

        self.settings = settings or QSettings("GLocalKD Studio", "GLocalKD Studio")
        self.files = FileMemory(self.settings, not_recent=DEMO_DATA)
        self.setWindowTitle("GLocalKD Studio")
        self.setAcceptDrops(True)
        self.state = AppState()
        self.runner = Runner(self)
        self.runner.changed.connect(self._update_state)
        self.runner.changed.connect(self._open_pending)
        self._ready = False  # torch and RDKit loaded (tasks.warm_up)
        self._pending_open: tuple[str, dict | None] | None = None
        self.report_views: list[ReportView] = []  # ranked reports open as tabs beside the results
        self._unsaved = UnsavedWork()  # asked about before quitting or opening over it
        self._scratch = tempfile.mkdtemp(prefix="glocalkd-studio-")  # reports of scored files
        install_wheel_guard(QApplication.instance())  # spin and combo boxes take the wheel only when focused
        self._build_actions()
        self._build_ui()
        self.opening = self._attach(OpeningController(self.runner, self.state, self))
        self.opening.loaded.connect(self._loaded)
        self.opening.report_read.connect(self._report_loaded)
        self.training = self._attach(TrainingController(self.runner, self.state, self))
        self.training.started.connect(self._training_started)
        self.training.epoch_ended.connect(self.side.advance)
        self.training.losses_changed.connect(self.loss_plot.show_losses)
        self.training.trained.connect(self._trained)
        self.exporter = self._attach(ExportController(self.runner, self.files, self.export_table, self))
        self.exporter.exported.connect(self._exported)
        self.screening = self._attach(ScreeningController(self.runner, self.state, self._scratch, self))
        self.screening.scored.connect(self._scored)
        self.screening.progress.connect(self._screen_progress)
        self.screening.file_scored.connect(self._file_scored)
        self.screening.weighed.connect(self._weighed)
        self.maps = self._attach(MapController(self.runner, self.state, self))
        self.results = ResultsController(self.state, self.side, self.filters, self.model_table, self.table,
                                         self.table_stack, self.scaffold_view, self.map_view, self.heatmap,
                                         self.evaluation, self.tabs, self.maps, self)
        self.results.shown.connect(self._update_state)
        self.similarity = SimilarityController(self.model_table, self.table, self.query_bar, self)
        self.similarity.applied.connect(self.results.update_counts)
        self.nearest = NearestController(self.state, self.nearest_panel, self.structures, self)
        self.results.selected_shown.connect(self.nearest.show)
        self.model_table.modelReset.connect(self.nearest.clear)
        self.clipboard = ClipboardController(self._active_table, self.structures, self)
        self.clipboard.status.connect(lambda text, ms: self.statusBar().showMessage(text, ms))
        self.maps.ready.connect(self.results.map_ready)
        self.model_files = self._attach(ModelFilesController(self.state, self))
        self.model_files.saved.connect(lambda _path: self._unsaved.done(MODEL))
        self.model_files.loaded.connect(self._model_loaded)
        self.reviewing = self._attach(ReviewController(self.runner, self.state, self))
        self.reviewing.reranked.connect(self._review_shown)
        self.results.shown.connect(self.reviewing.refresh)  # new scores: the marks re-rank them
        self.sessions = self._attach(SessionsController(self, self))  # File ▸ Save/Open session, Recent sessions
        self.sessions.saved.connect(lambda _path: self._unsaved.clear())  # a saved session holds all the work
        self.sessions.attach_menu(self.sessions_menu)
        self.kept = SettingsStore(self.settings, self, {"window/splitter": self.splitter,
                                                        "window/top_splitter": self.top_splitter},
                                  self.form, self.filters, self._view_choices())
        self.kept.restore()
        self._rebuild_recent()
        self._update_state()
        self._busy("Loading torch and RDKit…")
        self._warm_timer = QTimer(self, singleShot=True, interval=250)  # after the window has been drawn:
        self._warm_timer.timeout.connect(self._warm_up)  # loading torch's libraries holds Python's lock
        self._warm_timer.start()

    def _attach(self, controller):
        """Connect a controller's reports (:class:`app.controllers.Controller`) to the side panel,
        the status bar and message boxes."""
        controller.busy.connect(self._busy)
        controller.idle.connect(self._idle)
        controller.said.connect(self.side.say)
        controller.status.connect(lambda text, ms: self.statusBar().showMessage(text, ms))
        controller.warning.connect(self._warn)
        controller.failed.connect(self._failed)
        return controller

    @Slot()
    def _warm_up(self) -> None:
        self.runner.start("warmup", tasks.warm_up, self._warmed_up, self._failed)

    # ---------------------------------------------------------------- the state, as before
    @property
    def graphs(self):
        return self.state.graphs

    @property
    def scores(self):
        return self.state.scores

    @property
    def model(self):
        return self.state.model

    @model.setter
    def model(self, value) -> None:
        self.state.model = value

    # ================================================================ construction
    def _build_actions(self) -> None:
        self.actions_by_name = build_actions(self)
        for name, action in self.actions_by_name.items():  # window.act_train, ... (read by tests and slots)
            setattr(self, f"act_{name}", action)
        submenus = install_menus(self, self.actions_by_name)
        self.demo_menu = submenus["Open &demo data"]
        for name, path in DEMOS.items():
            self.demo_menu.addAction(name, lambda p=path: self.open_path(str(p)))
        self.recent_menu = submenus["Open &recent"]
        self.sessions_menu = submenus["Recent sess&ions"]

    def _build_ui(self) -> None:
        # --- left dock: data summary and training settings
        self.side = SidePanel()
        self.side.train_clicked.connect(self.train)
        self.side.stop_clicked.connect(self.stop)
        self.side.rejects_clicked.connect(self.show_rejects)
        self.form = self.side.form  # read by training, maps and settings
        dock = QDockWidget("Data and training", self)
        dock.setObjectName("side_dock")
        dock.setWidget(self.side)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable |
                         QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)

        # --- results: filter bar (both filters apply as you type, after a short pause) and table
        self.filters = FilterBar()
        self.structures = StructureImages(parent=self)  # the tables' structure pictures, drawn in a worker process
        self.query_bar = QueryBar(STRUCTURE_SIZE_NAMES)  # similarity to a query; the structures' size
        self.query_bar.structure_size_changed.connect(self.structures.set_size)

        self.model_table = ResultsModel(self)
        self.table = results_view(self.model_table)
        show_structures(self.table, self.structures)
        self.table.setSelectionMode(self.table.SelectionMode.ExtendedSelection)  # several rows can be marked
        from .widgets.scaffolds import ScaffoldView

        self.scaffold_view = ScaffoldView()
        self.table_stack = QStackedWidget()
        self.table_stack.addWidget(self.table)
        self.table_stack.addWidget(self.scaffold_view)

        # --- the chemical-space map, beside the table
        self.map_view = MapView()
        self.map_view.compute_requested.connect(self.compute_map)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.setObjectName("top_splitter")
        top.addWidget(self.table_stack)
        top.addWidget(self.map_view)
        top.setStretchFactor(0, 3)  # the table (score, p and q) first; the map grows less
        top.setStretchFactor(1, 1)
        top.setSizes([1000, 400])
        self.top_splitter = top
        results = QWidget()  # the filter bar spans the table and the map
        results_layout = QVBoxLayout(results)
        results_layout.setContentsMargins(0, 0, 0, 0)
        results_layout.addWidget(self.filters)
        results_layout.addWidget(self.query_bar)
        results_layout.addWidget(top, 1)
        results_layout.addWidget(legend_label())  # score, p, q and the flag in plain words

        # --- bottom tabs: heatmap, loss, evaluation
        self.heatmap = HeatmapPanel(self.files.last_dir)
        self.heatmap.last_dir_used.connect(self.files.remember_dir)
        self.loss_plot = LossPlot()
        self.evaluation = EvaluationPage()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.heatmap, "Node heatmap")
        self.tabs.addTab(self.loss_plot, "Training loss")
        self.tabs.addTab(self.evaluation, "Evaluation")
        self.nearest_panel = NearestPanel()
        self.tabs.addTab(self.nearest_panel, "Nearest training molecule")

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setObjectName("main_splitter")
        splitter.addWidget(results)
        splitter.addWidget(self.tabs)
        splitter.setSizes([420, 420])
        self.splitter = splitter

        # the training data's results, and each scored file's ranked report beside them as a tab
        self.results_tabs = QTabWidget()
        self.results_tabs.setTabsClosable(True)
        self.results_tabs.setDocumentMode(True)
        self.results_tabs.addTab(splitter, "Results")
        self.results_tabs.tabBar().setTabButton(0, self.results_tabs.tabBar().ButtonPosition.RightSide, None)
        self.results_tabs.tabCloseRequested.connect(self._close_tab)
        self.results_tabs.currentChanged.connect(lambda _index: self._update_state())  # Export: the active tab's rows

        self.stack = QStackedWidget()
        demos = [(f"Open demo: {name}", lambda _=False, p=path: self.open_path(str(p))) for name, path in DEMOS.items()]
        self.stack.addWidget(welcome_page([*demos, ("Open a file or TU collection…", lambda _=False: self.open_dialog())]))
        self.stack.addWidget(self.results_tabs)
        self.setCentralWidget(self.stack)
        self.statusBar().showMessage("Open a file, drop one here, or try a demo data set.")

    # ================================================================ settings
    def _view_choices(self) -> dict:
        """Every choice the views offer, by settings key (kept across relaunches; the training
        settings are kept by the form's own keys)."""
        return {"view/flag_rule": self.filters.flag_rule, "view/map_space": self.map_view.space,
                "view/map_method": self.map_view.method, "view/map_colour": self.map_view.colour,
                "view/heatmap_scale": self.heatmap.scale, "view/flagged_only": self.filters.flagged_only,
                "view/structure_size": self.query_bar.structures}

    def _add_recent(self, path: str) -> None:
        if self.files.add_recent(path):
            self._rebuild_recent()

    def _rebuild_recent(self) -> None:
        self.recent_menu.clear()
        recent = self.files.recent()
        for path in recent:
            self.recent_menu.addAction(path, lambda p=path: self.open_path(p))
        self.recent_menu.setEnabled(bool(recent))

    # ================================================================ start-up
    @Slot(object)
    def _warmed_up(self, device_note: str) -> None:
        self._ready = True
        self.form.activate()
        self.form.set_device_note(device_note)
        self._idle()
        self.side.say("Ready." if self._pending_open is None else "")

    @Slot()
    def _open_pending(self) -> None:
        """Open the file asked for while torch was loading, once the warm-up job has ended."""
        if self._ready and self._pending_open is not None and not self.runner.busy():
            path, options = self._pending_open
            self._pending_open = None
            self.open_path(path, options)

    # ================================================================ opening data
    def open_dialog(self) -> None:
        path = self.files.ask_open(self, "Open graph data", FILE_FILTER)
        if path:
            self.open_path(path)

    def open_folder_dialog(self) -> None:
        path = self.files.ask_folder(self, "Open a TU collection folder")
        if path:
            self.open_path(path)

    def open_path(self, path: str, options: dict | None = None) -> None:
        """Load ``path`` in the background; asks for columns when a table's SMILES column is not obvious."""
        if not self._ready:  # torch is still loading: open the file once it has
            self._pending_open = (path, options)
            self.side.say(f"Loading torch and RDKit, then {Path(path).name}…")
            return
        if self.runner.busy():
            self._warn("Busy", "Wait for the current work to finish (or press Stop) before opening a file.")
            return
        from core import is_report

        if options is None and is_report(path):  # a ranked report (e.g. a screening result): its own tab
            self.open_report(path)
            return
        if not self._confirm_unsaved([MODEL], "opening another file"):
            return
        if options is None:
            options = self._ask_columns(path)
            if options is None:
                return
        self.opening.load(path, options)

    def _ask_columns(self, path: str) -> dict | None:
        return dialogs.ask_load_options(self, path, self._warn)

    def open_report(self, path: str) -> None:
        """Read a ranked CSV report in the background and show it in a tab beside the results."""
        self.opening.read_report(path)

    @Slot(object)
    def _report_loaded(self, report) -> None:
        self._add_recent(report.source)
        self._add_report_tab(report, "")
        self.side.say(f"Opened report {Path(report.source).name}: {len(report):,} rows.")

    def _add_report_tab(self, report, note: str) -> ReportView:
        view = ReportView(report, lambda: self.state.model, note, images=self.structures)
        view.heatmap.fixed_vmax_getter = lambda: self.heatmap.fixed_vmax  # colours as on the training tab
        self.report_views.append(view)
        self.results_tabs.addTab(view, view.title)
        self.results_tabs.setCurrentWidget(view)
        self.results_tabs.setTabToolTip(self.results_tabs.indexOf(view), report.source)
        self.stack.setCurrentIndex(1)
        return view

    @Slot(int)
    def _close_tab(self, index: int) -> None:
        view = self.results_tabs.widget(index)
        if isinstance(view, ReportView):  # a closed report frees its rows
            if not self._confirm_unsaved([view], "closing its tab"):
                return
            self._unsaved.done(view)
            self.results_tabs.removeTab(index)
            self.report_views.remove(view)
            view.deleteLater()

    @Slot(object)
    def _loaded(self, result: tasks.Loaded) -> None:
        graphs = result.graphs
        self._add_recent(result.path)
        self.form.set_labels(graphs.label_counts())  # "All graphs" first, as glocalkd train has
        rejected = f", {len(graphs.rejects):,} rows rejected" if graphs.rejects else ""
        self.side.say(f"Loaded {len(graphs):,} graphs{rejected}.")  # not "Loading…" any more
        if self.state.model is not None and len(graphs):
            self.screening.score_current("Scoring with the current model…")
        self.results.show_data()
        self.stack.setCurrentIndex(1)
        self.results_tabs.setCurrentIndex(0)
        self.results_tabs.setTabText(0, Path(result.path).name or "Results")
        self.statusBar().showMessage(f"Loaded {len(graphs)} graphs from {result.path}"
                                     + (f"; {len(graphs.rejects)} rows rejected" if graphs.rejects else ""), 8000)
        if len(graphs) == 0:
            self._warn("Nothing to score", f"{result.path}: no row could be read as a graph. "
                       "Show rejected rows to see why.")

    # ================================================================ training
    def train(self) -> None:
        self.training.train(self.form)

    @Slot(str, bool)
    def _training_started(self, label: str, by_epoch: bool) -> None:
        if by_epoch:
            self.tabs.setCurrentWidget(self.loss_plot)
            self.side.count_to(self.form.epochs.value(), "epoch")  # GLocalKD's epochs, also in a consensus
            self._busy(f"Training {label}…", indeterminate=False)
        else:  # a kernel and a shallow detector: one step, no epochs to count
            self._busy(f"Fitting {label}…")
        self.side.stop_button.setEnabled(by_epoch)
        self.act_stop.setEnabled(by_epoch)

    @Slot(object, str)
    def _trained(self, result: tasks.Trained, text: str) -> None:
        model = result.model
        self.results.show_detector(model)
        self.loss_plot.show_losses(list(model.loss_history_))
        self._unsaved.add(MODEL, f"the {describe_model(model)} model trained on {Path(self.state.data_path).name}"
                          " and its scores")
        self.results.show_data()
        self.tabs.setCurrentWidget(self.heatmap)
        self.statusBar().showMessage(text, 12000)

    def stop(self) -> None:
        for name in ("train", "score_file"):
            if self.runner.busy(name):
                self.runner.stop(name)
                self.side.say("Stopping…")

    # ================================================================ scoring, models
    @Slot()
    def _scored(self) -> None:
        self.results.show_data()

    def score_file_dialog(self) -> None:
        if self.state.model is None:
            self._warn("No model", "Train a model or load one first.")
            return
        path = self.files.ask_open(self, "Score another file", FILE_FILTER)
        if path:
            self.score_file(path)

    def score_file(self, path: str) -> None:
        """Score ``path`` with the current model; its ranked report opens in a new tab beside the results."""
        self.screening.score_file(path)

    @Slot(int, int)
    def _screen_progress(self, rows: int, total: int) -> None:
        if self.side.progress.maximum() != total:
            self.side.count_to(total, "rows")
        self.side.advance(rows)

    @Slot(object, str, str, str)
    def _file_scored(self, report, name: str, stopped: str, text: str) -> None:
        view = self._add_report_tab(report, f"{name} scored with the current model{stopped}. ")
        self._unsaved.add(view, f"the results of {name} (scored), not exported")
        self.results_tabs.setTabText(self.results_tabs.indexOf(view), f"{name} (scored)")
        self.side.say(text)

    def _weighable(self) -> bool:
        from core import detector_info

        return self.state.model is not None and detector_info(self.state.model.name).weighable

    def weigh_dialog(self) -> None:
        if not self._weighable():
            self._warn("No consensus", "Known anomalies weigh the views of a consensus: train the consensus "
                       "(the recommended detector) or load one first.")
            return
        path = self.files.ask_open(self, "Known anomalies: graphs known to be anomalous", FILE_FILTER)
        if path:
            self.weigh_views(path)

    def weigh_views(self, path: str, options: dict | None = None) -> None:
        """Weigh the consensus's views by the known anomalies in ``path``; then score the open graphs."""
        self.screening.weigh_views(path, options, self._ask_columns)

    @Slot(str)
    def _weighed(self, text: str) -> None:
        self.results.show_detector(self.state.model)
        self._unsaved.add(MODEL, "the consensus with its views weighed by known anomalies")
        self.results.show_data()
        self.side.say(text)
        self.statusBar().showMessage(text.split(". ")[0] + ".", 15000)
        self._warn("Views weighed", text, QMessageBox.Icon.Information)  # whole, not cut by the status bar

    def save_model_dialog(self) -> None:
        if self.state.model is None:
            self._warn("No model", "Train a model first.")
            return
        stem = Path(self.state.data_path).stem or "model"
        path, _ = self.files.ask_save(self, "Save model", f"{stem}_model.pt", MODEL_FILTER)
        if path:
            self.save_model(path)

    def save_model(self, path: str) -> str | None:
        return self.model_files.save(path)

    def load_model_dialog(self) -> None:
        path = self.files.ask_open(self, "Load model", f"{MODEL_FILTER};;All files (*)")
        if path:
            self.load_model(path)

    def load_model(self, path: str) -> None:
        self.model_files.load(path, self.form.params()["device"], self.form.normal_label())

    @Slot(object)
    def _model_loaded(self, model) -> None:
        self.results.show_detector(model)
        self.loss_plot.show_losses(list(model.loss_history_))
        if self.state.graphs is not None and len(self.state.graphs):
            self.screening.score_current("Scoring with the loaded model…")
        self.results.update_summary()
        self._update_state()

    # ================================================================ review
    def mark_anomaly(self) -> None:
        self.reviewing.mark(self._selected_graphs(), True)

    def mark_normal(self) -> None:
        self.reviewing.mark(self._selected_graphs(), False)

    def clear_mark(self) -> None:
        self.reviewing.mark(self._selected_graphs(), None)

    def _selected_graphs(self) -> list[int]:
        """The graphs of the training tab's selected rows (the selected graph when no row is)."""
        rows = self.table.selectionModel().selectedRows()
        chosen = sorted({self.model_table.graph_index(ix.row()) for ix in rows})
        return chosen or ([] if self.state.selected is None else [self.state.selected])

    @Slot()
    def _review_shown(self) -> None:
        from .widgets.table import COLUMNS

        st = self.state
        self.model_table.set_review(st.review_marks, st.review_rank())
        self.table.setColumnHidden(COLUMNS.index("Review"), bool(st.review_unavailable()) and not st.review_marks)
        self._update_state()

    # ================================================================ sessions
    def save_session_dialog(self) -> None:
        from .session_file import FILTER, SUFFIX

        stem = Path(self.state.data_path).stem or "session"
        path, _ = self.files.ask_save(self, "Save session", stem + SUFFIX, FILTER)
        if path:
            self.sessions.save(path)

    def open_session_dialog(self) -> None:
        from .session_file import FILTER

        path = self.files.ask_open(self, "Open session", f"{FILTER};;All files (*)")
        if path:
            self.open_session(path)

    def open_session(self, path: str) -> None:
        """Open the session file ``path`` (asking first about unsaved work it would replace)."""
        if self._confirm_unsaved(None, "opening a session"):
            self.sessions.open(path)

    # ================================================================ export
    def export_table(self):
        """The active tab's rows to export (:class:`app.export_tables.ExportTable`); None when it has no scores."""
        view = self.results_tabs.currentWidget()
        if isinstance(view, ReportView):
            return view.export_table()
        st = self.state
        if st.graphs is None or st.scores is None:
            return None
        from .export_tables import graphs_table

        html = {"model": st.model, "anomaly_label": self.evaluation.anomalous_label(), "threshold": st.threshold(),
                "vmax": self.heatmap.fixed_vmax}
        return graphs_table(Path(st.graphs.source).stem or "graphs", st.graphs, st.scores,
                            self.model_table.visible_graphs(), st.flagged(), st.p_values(), st.has_smiles(), html,
                            properties=st.properties, review=st.review_words())

    def export_dialog(self) -> None:
        self.exporter.export_dialog(self)

    def export_report(self, path: str, visible_only: bool = False) -> None:
        self.exporter.export_report(path, visible_only)

    def html_dialog(self) -> None:
        self.exporter.html_dialog(self)

    def export_html(self, path: str) -> None:
        self.exporter.export_html(path)

    @Slot(str, int)
    def _exported(self, _path: str, _rows: int) -> None:
        view = self.results_tabs.currentWidget()
        model = self.state.model
        if isinstance(view, ReportView) or model is None or not model.can_save:  # no model file: results are the work
            self._unsaved.done(view if isinstance(view, ReportView) else MODEL)

    # ================================================================ copying
    def _active_table(self):
        """The active tab's (table, model)."""
        view = self.results_tabs.currentWidget()
        if isinstance(view, ReportView):
            return view.table, view.model_table
        return self.table, self.model_table

    def copy_rows(self) -> None:
        self.clipboard.copy_rows()

    def copy_image(self) -> None:
        self.clipboard.copy_image()

    # ================================================================ chemical-space map
    @Slot(str, str)
    def compute_map(self, space: str, method: str) -> None:
        self.maps.compute(space, method, self.form.params()["seed"])

    def _show_data(self) -> None:
        self.results.show_data()

    def apply_smarts(self) -> None:
        self.results.apply_smarts()

    # ================================================================ state, messages
    def _busy(self, text: str, indeterminate: bool = True) -> None:
        self.side.say(text)
        if indeterminate:
            self.side.busy_bar()  # while loading or scoring
        self._update_state(busy=True)

    def _idle(self) -> None:
        self.side.done_bar()
        self._update_state(busy=False)

    @Slot()
    def _update_state(self, busy: bool | None = None) -> None:
        busy = any(name != "review" for name in self.runner.running()) if busy is None else busy  # marks: at once
        st = self.state
        on_report = isinstance(self.results_tabs.currentWidget(), ReportView)
        review_note = ("Marks re-rank the training tab's graphs; a scored file's rows cannot be reviewed yet"
                       if on_report else st.review_unavailable())
        facts = Facts(busy=busy, has_data=st.graphs is not None and len(st.graphs) > 0, has_model=st.model is not None,
                      stoppable=self.runner.busy("train") or self.runner.busy("score_file"),
                      weighable=self._weighable(), savable=st.model is not None and st.model.can_save,
                      has_rows=st.scores is not None or on_report,
                      reviewable=not busy and not review_note, review_note=review_note)
        update_actions(self.actions_by_name, facts)
        self.demo_menu.setEnabled(not busy)
        self.recent_menu.setEnabled(not busy and bool(self.files.recent()))
        self.sessions_menu.setEnabled(not busy and bool(self.sessions.recent()) if hasattr(self, "sessions") else False)
        self.side.train_button.setEnabled(self.act_train.isEnabled())
        self.side.stop_button.setEnabled(facts.stoppable)
        self.side.set_rejects(len(st.graphs.rejects) if st.graphs is not None else 0)
        self.form.setEnabled(not busy)

    @Slot(str)
    def _failed(self, message: str) -> None:
        """Any failure in a worker, in the app's words (the worker words it): the data and results on
        screen stay."""
        self._idle()
        self.side.say("")
        if not self._ready:  # the warm-up failed: torch or RDKit cannot load; the form says what it can
            self._ready = True
            self.form.activate()
        self._warn("Something went wrong", message)
        self.statusBar().showMessage("Failed: " + message.splitlines()[0], 10000)

    def _warn(self, title: str, message: str, icon=QMessageBox.Icon.Warning) -> None:
        box = QMessageBox(icon, title, message, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("warning_box")
        box.open()  # window-modal without blocking the event loop (tests and workers keep running)
        if icon == QMessageBox.Icon.Warning:
            self._last_warning = message

    def show_rejects(self) -> None:
        g = self.state.graphs
        if g is not None and g.rejects:
            RejectsDialog(g.rejects, g.source, self).exec()

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

    def _confirm_unsaved(self, keys: list | None, doing: str) -> bool:
        """Before ``doing`` over unsaved work (of ``keys``; None: all): Save, Discard or Cancel.
        True when the work may go on."""
        pending = self._unsaved.pending(keys)
        return not pending or self._unsaved.settle(keys, dialogs.ask_unsaved(self, pending, doing), self._save_work)

    def _save_work(self, key) -> None:
        """Save the model to a file, or export results that have none (a scored file's, or a model's without a file)."""
        if key == MODEL and self.state.model is not None and self.state.model.can_save:
            self.save_model_dialog()
        else:
            self.results_tabs.setCurrentWidget(self.splitter if key == MODEL else key)
            self.export_dialog()

    def closeEvent(self, event) -> None:
        """Ask about unsaved work, stop background work, remember the layout and settings, then close."""
        if not self._confirm_unsaved(None, "quitting"):
            event.ignore()
            return
        self.runner.stop_all()
        self.structures.shutdown()
        self.kept.save()
        shutil.rmtree(self._scratch, ignore_errors=True)
        event.accept()


__all__ = ["MainWindow", "DEMOS", "describe_model"]
