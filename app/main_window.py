"""The main window: layout and wiring only.

The state (data, model, scores, selection, flag rule) is :class:`app.state.AppState`, which says
each change by a signal that the controllers and views listen to; the actions and the rules that
enable them are the table of :mod:`app.actions`; each use case is a controller of
:mod:`app.controllers`, whose long work runs as the plain functions of :mod:`app.tasks` on
:class:`app.workers.Runner`; what the controllers report is shown by :mod:`app.feedback`; the views
are in :mod:`app.widgets`. Nothing here computes: this module lays the views out and connects
them, and each action's slot hands over to its controller.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Slot
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QMessageBox, QStackedWidget, QTabWidget

from .actions import build_actions, facts_of, install_menus, update_actions
from .controllers.export import ExportController
from .controllers.clipboard import ClipboardController
from .controllers.mapping import MapController
from .controllers.model_files import ModelFilesController
from .controllers.nearest import NearestController
from .controllers.opening import OpeningController
from .controllers.report_tabs import ReportTabs
from .controllers.results import ResultsController
from .controllers.review import ReviewController
from .controllers.screening import ScreeningController
from .controllers.sessions import SessionsController
from .controllers.similarity import SimilarityController
from .controllers.smarts import SmartsController
from .controllers.training import TrainingController
from .controllers.unsaved_work import UnsavedWorkGuard
from .export_tables import training_table
from .feedback import Feedback
from .file_memory import OPEN_FILTER, FileMemory
from .scratch import close_scratch, open_scratch
from .settings_store import SettingsStore
from .state import AppState, describe_model
from .structures import StructureImages
from .unsaved import MODEL, REVIEW, UnsavedWork
from .wheel_guard import install_wheel_guard
from .widgets import dialogs
from .widgets.dialogs import RejectsDialog
from .widgets.results_area import ResultsArea
from .widgets.side_panel import SidePanel
from .widgets.welcome import welcome_page

DEMO_DATA = Path(__file__).resolve().parent / "demo_data"  # installed with the package (pyproject package-data)
DEMOS = {
    "hERG (655 molecules, SMILES)": DEMO_DATA / "herg.tab",
    "AIDS (2,000 molecular graphs, TU)": DEMO_DATA / "AIDS.zip",
}


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
        self._unsaved = UnsavedWork()  # asked about before quitting or opening over it
        self._scratch = open_scratch()  # reports of scored files
        install_wheel_guard(QApplication.instance())  # spin and combo boxes take the wheel only when focused
        self._build_actions()
        self._build_ui()
        self.feedback = Feedback(self, self.side, lambda busy: self._update_state(busy=busy))
        self._build_controllers()
        self._wire()
        self.kept = SettingsStore(self.settings, self, {"window/splitter": self.splitter,
                                                        "window/top_splitter": self.top_splitter},
                                  self.form, self.filters, self._view_choices())
        self.kept.restore()
        self._rebuild_recent()
        self._update_state()
        self.opening.warm_up()  # torch and RDKit load behind a busy bar, once the window shows

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
        self.sessions_menu = submenus["Recent sessio&ns"]

    def _build_ui(self) -> None:
        # --- left dock: data summary and training settings
        self.side = SidePanel()
        self.form = self.side.form  # read by training, maps and settings
        dock = QDockWidget("Data and training", self)
        dock.setObjectName("side_dock")
        dock.setWidget(self.side)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable |
                         QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)

        # --- the training data's results: filters, table and map over the heatmap, loss and evaluation tabs
        self.structures = StructureImages(parent=self)  # the tables' structure pictures, drawn in a worker process
        self.splitter = ResultsArea(self.files.last_dir, self.structures)
        for name in ("filters", "query_bar", "model_table", "table", "scaffold_view", "table_stack", "map_view",
                     "top_splitter", "heatmap", "loss_plot", "evaluation", "nearest_panel", "tabs"):  # window.table, ...
            setattr(self, name, getattr(self.splitter, name))

        # the training data's results, and each scored file's ranked report beside them as a tab
        self.results_tabs = QTabWidget()
        self.results_tabs.setTabsClosable(True)
        self.results_tabs.setDocumentMode(True)
        self.results_tabs.addTab(self.splitter, "Results")
        self.results_tabs.tabBar().setTabButton(0, self.results_tabs.tabBar().ButtonPosition.RightSide, None)

        self.stack = QStackedWidget()
        demos = [(f"Open demo: {name}", lambda _=False, p=path: self.open_path(str(p))) for name, path in DEMOS.items()]
        self.stack.addWidget(welcome_page([*demos, ("Open a file or TU collection…", lambda _=False: self.open_dialog())]))
        self.stack.addWidget(self.results_tabs)
        self.setCentralWidget(self.stack)
        self.statusBar().showMessage("Open a file, drop one here, or try a demo data set.")

    def _build_controllers(self) -> None:
        attach, st = self.feedback.attach, self.state
        self.guard = UnsavedWorkGuard(self, self.runner, st, self._unsaved, self.save_model_dialog, self._export_work)
        self.opening = attach(OpeningController(self.runner, st, lambda: self.guard.confirm([MODEL, REVIEW],
                                                "opening another file"), self._ask_columns, self))
        self.training = attach(TrainingController(self.runner, st, self))
        self.report_tabs = ReportTabs(self.results_tabs, self.stack, st, self.heatmap, self._unsaved,
                                      self.guard.confirm, self.structures, self)
        self.screening = attach(ScreeningController(self.runner, st, self.files, self._scratch, self.report_tabs, self))
        self.exporter = attach(ExportController(self.runner, self.files, self.export_table, self))
        self.model_files = attach(ModelFilesController(self.runner, st, self.files, self))
        self.maps = attach(MapController(self.runner, st, self))
        self.smarts = attach(SmartsController(st, self))
        self.results = ResultsController(st, self.side, self.filters, self.model_table, self.table,
                                         self.table_stack, self.scaffold_view, self.map_view, self.heatmap,
                                         self.evaluation, self.tabs, self.smarts, self)
        self.report_views = self.report_tabs.views  # the open reports' tabs (read by tests and the screenshots)
        self.reviewing = attach(ReviewController(self.runner, st, self.results.selected_graphs, self.report_tabs, self))
        self.similarity = SimilarityController(self.model_table, self.table, self.query_bar, self)
        self.sessions = attach(SessionsController(  # File ▸ Save/Open session, Recent sessions
            self.runner, st, self.files, self.settings, self._scratch, self.form, self._view_choices(), self.results,
            self.similarity, self.report_tabs, self.reviewing, self._unsaved,
            lambda: self.guard.confirm(None, "opening a session"), self))
        self.nearest = NearestController(st, self.nearest_panel, self.structures, self)
        self.clipboard = ClipboardController(lambda: self.report_tabs.active_table(self.results.shown_table()),
                                             self.structures, self)

    def _wire(self) -> None:
        """Connect the views' requests to the controllers and the controllers' results to the views;
        the state's signals reach the views through the results controller and here."""
        st = self.state
        self.side.train_clicked.connect(self.train)
        self.side.stop_clicked.connect(self.stop)
        self.side.rejects_clicked.connect(self.show_rejects)
        self.map_view.compute_requested.connect(self.compute_map)
        self.heatmap.last_dir_used.connect(self.files.remember_dir)
        self.runner.changed.connect(self._update_state)
        self.results.shown.connect(self._update_state)
        self.report_tabs.changed.connect(self._update_state)  # Export: the active tab's rows
        self.report_tabs.training_graph_chosen.connect(self.results.select_graph)  # a report's similar molecule
        self.maps.ready.connect(self.results.map_ready)
        self.query_bar.structure_size_changed.connect(self.structures.set_size)
        self.similarity.applied.connect(self.results.update_counts)
        self.results.selected_shown.connect(self.nearest.show)
        self.model_table.modelReset.connect(self.nearest.clear)
        self.clipboard.status.connect(self.feedback.status)
        self.results.shown.connect(self.reviewing.refresh)  # new scores: the marks re-rank them
        self.reviewing.reranked.connect(self.results.show_review)
        self.reviewing.reranked.connect(self._update_state)
        st.data_changed.connect(lambda: self.form.show_data(st.graphs))  # "All graphs" first
        st.model_changed.connect(lambda model: self.loss_plot.show_losses(list(model.loss_history_)))
        st.model_changed.connect(lambda _model: self._update_state())
        self.opening.warmed_up.connect(self.form.activate)
        self.opening.loaded.connect(self._loaded)
        self.opening.report_read.connect(self._report_read)
        self.opening.session_asked.connect(self.open_session)
        self.opening.model_asked.connect(self.load_model)
        self.training.started.connect(self._training_started)
        self.training.epoch_ended.connect(self.side.advance)
        self.training.losses_changed.connect(self.loss_plot.show_losses)
        self.training.trained.connect(lambda _result, _text: self.tabs.setCurrentWidget(self.heatmap))
        self.training.trained.connect(self.guard.trained)
        self.screening.progress.connect(self.side.count_rows)
        self.screening.file_scored.connect(self.report_tabs.add_scored)
        self.screening.weighed.connect(self.guard.weighed)
        self.screening.weighed.connect(lambda text: self.feedback.warn("Views weighed", text, QMessageBox.Icon.Information))
        self.exporter.exported.connect(self.guard.exported)
        self.model_files.saved.connect(self.guard.saved)
        self.reviewing.marked.connect(self.guard.marked)
        self.sessions.saved.connect(lambda _path: self._unsaved.clear())  # a saved session holds all the work
        self.sessions.data_opened.connect(self._add_recent)
        self.screening.scored.connect(self.sessions.scored)  # a moved data file's marks, once it is scored
        self.sessions.attach_menu(self.sessions_menu)
        self.model_files.loaded.connect(lambda _model: self.screening.score_current("Scoring with the loaded model…"))

    # ================================================================ settings, start-up
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
        self.files.fill_recent_menu(self.recent_menu, self.open_path)

    # ================================================================ the actions' slots and the results they bring
    def open_dialog(self) -> None:
        path = self.files.ask_open(self, "Open", OPEN_FILTER)
        if path:
            self.open_path(path)

    def open_folder_dialog(self) -> None:
        path = self.files.ask_folder(self, "Open a TU collection folder")
        if path:
            self.open_path(path)

    def open_path(self, path: str, options: dict | None = None) -> None:
        """Open ``path`` in the background (:meth:`app.controllers.opening.OpeningController.open`)."""
        self.opening.open(path, options)

    def _ask_columns(self, path: str) -> dict | None:
        return dialogs.ask_load_options(self, path, self.feedback.warn)

    @Slot(object)
    def _loaded(self, result) -> None:
        self._add_recent(result.path)
        self.screening.score_current("Scoring with the current model…")
        self.report_tabs.show_results(result.path)

    @Slot(object)
    def _report_read(self, report) -> None:
        self._add_recent(report.source)
        self.reviewing.restore(self.sessions.report_marks(report), self.report_tabs.add(report))  # or a session's

    def train(self) -> None:
        self.training.train(self.form)

    @Slot(str, bool)
    def _training_started(self, _label: str, by_epoch: bool) -> None:
        if by_epoch:
            self.tabs.setCurrentWidget(self.loss_plot)
            self.side.count_to(self.form.epochs.value(), "epoch")  # GLocalKD's epochs, also in a consensus

    def stop(self) -> None:  # the jobs that poll Stop (Runner.stoppable), a tab's rows scored again among them
        stopping = [self.runner.stop(name) or name for name in self.runner.stoppable()]
        if self.reviewing.stop_scoring() or stopping:
            self.side.say("Stopping…")

    def open_session(self, path: str) -> None:
        """Open the session file ``path`` (asking first about unsaved work it would replace)."""
        self.sessions.open_asking(path)

    def score_file_dialog(self) -> None:
        self.screening.score_file_dialog(self, self._ask_columns)

    def score_file(self, path: str, options: dict | None = None) -> None:
        """Score ``path`` with the current model (``options``: a table's columns; else asked) into a new tab."""
        self.screening.score_file(path, options, self._ask_columns)

    def weigh_dialog(self) -> None:
        self.screening.weigh_dialog(self, self._ask_columns)

    def weigh_views(self, path: str, options: dict | None = None) -> None:
        """Weigh the consensus's views by the known anomalies in ``path``; then score the open graphs."""
        self.screening.weigh_views(path, options, self._ask_columns)

    def save_model_dialog(self) -> None:
        self.model_files.save_dialog(self)

    def save_model(self, path: str) -> None:
        """Save the model to ``path`` in the background."""
        self.model_files.save(path)

    def load_model_dialog(self) -> None:
        self.model_files.load_dialog(self, self.form.params()["device"], self.form.normal_label())

    def load_model(self, path: str) -> None:
        """Load the model in ``path`` in the background; the open graphs are scored with it."""
        self.model_files.load(path, self.form.params()["device"], self.form.normal_label())

    def export_table(self):
        """The active tab's rows to export (:class:`app.export_tables.ExportTable`); None when it has no scores."""
        if (view := self.report_tabs.active()) is not None:
            return view.export_table()
        return training_table(self.state, self.model_table.visible_graphs(), self.evaluation.anomalous_label(),
                              self.heatmap.fixed_vmax, self.model_table.ranks())

    def export_dialog(self) -> None:
        self.exporter.export_dialog(self)

    def export_report(self, path: str, visible_only: bool = False) -> None:
        """Write the active tab's rows to ``path`` (CSV, or SDF by the extension) in the background."""
        self.exporter.export_report(path, visible_only)

    def html_dialog(self) -> None:
        self.exporter.html_dialog(self)

    def export_html(self, path: str) -> None:
        self.exporter.export_html(path)

    @Slot(str, str)
    def compute_map(self, space: str, method: str) -> None:
        self.maps.compute(space, method, self.form.params()["seed"])

    def apply_smarts(self) -> None:
        """Filter the table by the SMARTS typed, now (matched in the background)."""
        self.results.apply_smarts()

    def show_rejects(self) -> None:
        g = self.state.graphs
        if g is not None and g.rejects:
            RejectsDialog(g.rejects, g.source, self).exec()

    def about(self) -> None:
        dialogs.about(self)

    # ================================================================ the state, as before
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

    @Slot()
    def _update_state(self, busy: bool | None = None) -> None:
        """Enable the actions, buttons and menus for the state now (``busy``: whether a job runs;
        None: ask the runner)."""
        busy = bool(self.runner.blocking()) if busy is None else busy  # a re-ranking by marks holds nothing up
        stoppable = bool(self.runner.stoppable())
        report = getattr(active := self.report_tabs.active(), "report", None)
        update_actions(self.actions_by_name, facts_of(self.state, busy, stoppable, report,
                                                      self.results.showing_groups(), self.screening.can_resume(active),
                                                      self.screening.resume_unavailable(active),
                                                      bool(self.report_tabs.views)))
        self.demo_menu.setEnabled(not busy)
        self.recent_menu.setEnabled(not busy and bool(self.files.recent()))
        self.sessions_menu.setEnabled(not busy and bool(self.sessions.recent()))
        self.side.train_button.setEnabled(self.act_train.isEnabled())
        self.side.stop_button.setEnabled(stoppable)
        self.side.set_rejects(len(self.state.graphs.rejects) if self.state.graphs is not None else 0)
        self.form.setEnabled(not busy)

    # ================================================================ window events, unsaved work
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # one file, or a TU collection's files; several others: none
        self.opening.open_dropped([u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()])

    def _export_work(self, key) -> None:
        """Show the tab of ``key``'s results (``MODEL``: the training data's) and export them."""
        self.results_tabs.setCurrentWidget(self.splitter if key == MODEL else key)
        self.exporter.export_dialog(self, all_rows=True)

    def closeEvent(self, event) -> None:
        """Stop what Stop stops (asked first) and wait for a fit that cannot stop, keeping what they
        did for the question about unsaved work (a model trained after it was lost unasked); close."""
        if (working := self.runner.stoppable()) and not dialogs.ask_stop_to_quit(self, working):
            return event.ignore()
        self.stop()
        self.runner.wait([*working, "train"])
        if not self.guard.confirm(None, "quitting"):
            event.ignore()
            return
        self.runner.stop_all()
        self.smarts.stop()
        self.results.stop()
        self.report_tabs.stop_jobs()
        self.structures.shutdown()
        self.kept.save()
        close_scratch(self._scratch)
        event.accept()


__all__ = ["MainWindow", "DEMOS", "describe_model"]
