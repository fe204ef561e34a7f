"""The results views kept in step with the state: the table and its filters, the scaffold
groups, the map's highlight, the heatmap of the selected graph and the Evaluation tab. The
selected graph's similar training molecules, the scaffolds and the evaluation are computed by
jobs (:mod:`app.tasks`), the newest request replacing an older one."""
from __future__ import annotations

import functools

import numpy as np

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QStackedWidget, QTableView, QTabWidget

from .. import tasks
from ..state import AppState
from ..widgets.evaluation import EvaluationPage
from ..widgets.filter_bar import FilterBar
from ..widgets.heatmap import HeatmapPanel
from ..widgets.map_view import MapView
from ..widgets.scaffolds import ScaffoldView
from ..widgets.side_panel import SidePanel
from ..widgets.table import COLUMNS, ResultsModel, show_data_columns, sort_values
from ..workers import LatestJob
from .smarts import SmartsController


class ResultsController(QObject):
    """Keeps the results views in step with the state (it listens to the state's signals: new data,
    model, scores, selection, flag rule) and moves the views' requests (filters, selection,
    grouping, flag rule, the evaluated class) into the state. The SMARTS filter is matched in the
    background by ``smarts``.

    Signals:
        shown: new data or scores are in the views (the window updates its actions).
        selected_shown: a selected graph is drawn, with its similar training molecules
            ((graph index, similarity), most similar first).
    """

    shown = Signal()
    selected_shown = Signal(int, list)

    def __init__(self, state: AppState, side: SidePanel, filters: FilterBar, model_table: ResultsModel,
                 table: QTableView, table_stack: QStackedWidget, scaffold_view: ScaffoldView, map_view: MapView,
                 heatmap: HeatmapPanel, evaluation: EvaluationPage, tabs: QTabWidget, smarts: SmartsController,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.state, self.side, self.filters, self.smarts = state, side, filters, smarts
        self.model_table, self.table, self.table_stack, self.scaffold_view = model_table, table, table_stack, scaffold_view
        self.map_view, self.heatmap, self.evaluation, self.tabs = map_view, heatmap, evaluation, tabs
        self._select_first = False  # select the top row once the SMARTS filter of new scores is applied
        self.neighbour_jobs = LatestJob("neighbours", self)  # the selected graph's similar training molecules
        self.scaffold_jobs = LatestJob("scaffolds", self)
        self.evaluation_jobs = LatestJob("evaluation", self)
        self._scaffolds: tuple | None = None  # (graphs, each graph's scaffold SMILES)
        self._group_open: str | None = None  # the scaffold whose group the table shows (None: no group)
        self._group_wanted: str | None = None  # a group to open once its scaffolds are found (a session's)
        self._restored_group: str | None = None  # the group a session's filters hold (set_filter_values)
        state.data_changed.connect(self.show_data)
        state.scores_changed.connect(self.show_data)
        state.model_changed.connect(self._model_changed)
        state.selection_changed.connect(self._show_selected)
        state.flag_rule_changed.connect(self._flags_changed)
        filters.text_changed.connect(self.apply_text_filter)  # both filters apply as you type, after a pause
        filters.smarts_changed.connect(self.apply_smarts)
        filters.flag_changed.connect(state.set_flag_rule)
        filters.grouping_toggled.connect(self._group_toggled)
        filters.flagged_only_toggled.connect(self.apply_flagged_only)
        filters.ranges_changed.connect(self.apply_ranges)
        smarts.matching.connect(lambda _pattern: filters.set_count("Matching the SMARTS filter…"))
        smarts.matched.connect(self._smarts_matched)
        smarts.invalid.connect(self._smarts_invalid)
        table.selectionModel().currentRowChanged.connect(self._row_selected)
        model_table.modelReset.connect(self.update_counts)
        model_table.layoutChanged.connect(self._follow_selection)
        scaffold_view.scaffold_chosen.connect(self._scaffold_chosen)
        map_view.graph_clicked.connect(self.select_graph)
        heatmap.neighbour_clicked.connect(self.select_graph)
        evaluation.class_changed.connect(self._update_evaluation)

    def show_data(self) -> None:
        """Put the state's data and scores into the table, map, heatmap and evaluation."""
        st = self.state
        g = st.graphs
        self._leave_group()
        self.model_table.set_data(g, st.scores, st.threshold())
        self.model_table.set_p_values(st.p_values() if st.scores is not None else None,
                                      st.q_values() if st.scores is not None else None)
        self.model_table.set_properties(st.properties)
        show_data_columns(self.table, self.model_table)  # no empty Name, SMILES, Label or properties (as a report tab)
        self.filters.set_available(smiles=st.has_smiles(), scores=st.scores is not None)
        self.heatmap.clear()
        self.heatmap.fixed_vmax = None
        if st.scores is not None and st.scores.has_node_scores:
            from core import fixed_error_scale

            self.heatmap.fixed_vmax = fixed_error_scale(st.training_node_errors())
        self.map_view.clear("Compute the map to see where the graphs sit in the model's embedding space."
                            if st.model is not None else "Train or load a model to map its graph embeddings.")
        self.update_summary()
        self._update_evaluation_classes()
        self.shown.emit()
        self._reapply_filters()
        if st.scores is not None and self.model_table.rowCount():
            self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
            self.table.selectRow(0)
            self._select_first = self.smarts.is_matching()  # the top row of those the filter shows
        else:  # before scoring: file order, and no sort arrow on the empty Rank column
            self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
            self.model_table.sort(-1)
        if self.filters.is_grouped():
            self._group_toggled(True)

    def update_summary(self) -> None:
        self.side.set_summary(self.state.summary_lines())

    def _model_changed(self, model) -> None:
        self.show_detector(model)
        self.update_summary()

    @Slot()
    def apply_text_filter(self) -> None:
        self.model_table.set_text_filter(self.filters.text())
        self.update_counts()

    @Slot()
    def apply_smarts(self) -> None:
        """Filter by the SMARTS typed, matched in the background (the table follows when it is)."""
        self.filters.clear_note()
        group = self._group_open if self._group_open is not None else self._group_wanted
        if group is not None and self.filters.smarts() != group:
            self._leave_group()  # the substructure typed replaces the group opened, or about to be
        self.smarts.match(self.filters.smarts())

    @Slot(object)
    def _smarts_matched(self, mask) -> None:
        self.model_table.set_smarts_mask(mask)
        self.update_counts()
        if self._select_first and self.model_table.rowCount():
            self.table.selectRow(0)
        self._select_first = False
        self._show_selected(self.state.selected)  # the match is highlighted in the drawing

    @Slot(str)
    def _smarts_invalid(self, pattern: str) -> None:
        self.filters.say_smarts_invalid(pattern)
        self._smarts_matched(None)

    def _reapply_filters(self) -> None:
        if self.filters.text().strip():
            self.apply_text_filter()
        if self.filters.smarts():
            self.apply_smarts()
        self.apply_flagged_only()
        self.apply_ranges()

    @Slot()
    def apply_flagged_only(self) -> None:
        """Show only the flagged rows while *Flagged only* is ticked (all rows before scoring)."""
        st = self.state
        on = self.filters.is_flagged_only() and st.graphs is not None and st.threshold() is not None
        self.model_table.set_mask("flagged", st.flagged() if on else None)
        self.update_counts()

    @Slot()
    def apply_ranges(self) -> None:
        """Show only the rows within every numeric range set (a column without values is not filtered)."""
        self.model_table.set_mask("ranges", self.model_table.ranges_mask(self.filters.ranges()))
        self.update_counts()

    def _flags_changed(self) -> None:
        st = self.state
        self.model_table.set_threshold(st.threshold())
        if self.filters.is_flagged_only():
            self.apply_flagged_only()
        if self.map_view.map is not None:
            self.map_view.set_flagged(st.flagged())
        self.update_counts()
        self._update_evaluation()

    def update_counts(self) -> None:
        st = self.state
        if st.graphs is None:
            self.filters.set_count("")
            return
        text = f"{self.model_table.visible_count():,} of {len(st.graphs):,} shown"
        if self._group_open is not None:
            text += f" · the group of {self._group_open or 'acyclic molecules'}"
        elif self._group_wanted is not None:
            text += f" · opening the group of {self._group_wanted or 'acyclic molecules'}…"
        if st.threshold() is not None:
            text += f" · {int(st.flagged().sum()):,} flagged"
        self.filters.set_count(text)
        self._refresh_groups()  # the groups follow the filters and the flag rule, as the table does
        note = st.flag_note()
        self.filters.count.setToolTip(note)  # a note of a rule no longer chosen is not kept
        if note:  # a fallen-back rule, or nothing flagged, must not be misread
            self.side.say(note)

    @Slot()
    def _row_selected(self, current, _previous=None) -> None:
        if not current.isValid() or self.state.graphs is None:
            return
        self.state.select(self.model_table.graph_index(current.row()))

    @Slot()
    def _follow_selection(self) -> None:
        """After sorting or filtering: the selection stays on its molecule (the model moved it), or,
        when the filters hide that molecule, nothing is selected and the heatmap says why."""
        i = self.state.selected
        if i is None:
            self.table.scrollToTop()
            return
        row = self.model_table.row_of(i)
        if row is None:
            self.state.select(None)
            self.table.selectionModel().clear()
            self.table.scrollToTop()  # the rows the filters show, from the first
            self.map_view.highlight(None)
            self.heatmap.clear("The selected molecule is hidden by the filters. Select a row.")
            return
        current = self.table.currentIndex()
        if not current.isValid() or current.row() != row:
            self.table.selectRow(row)
        self.table.scrollTo(self.model_table.index(row, 0))

    def _show_selected(self, i: int | None) -> None:
        st = self.state
        if i is None or st.graphs is None:
            return
        self.map_view.highlight(i)
        if st.scores is None:
            self.heatmap.clear("Train or load a model to see node errors for this graph.")
            return
        smarts = self.filters.valid_smarts()
        try:
            highlight = bonds = None
            if smarts:
                from core import graph_molecule, smarts_match

                atoms, bonds = smarts_match(graph_molecule(st.graphs, i), smarts)
                highlight = atoms or None
            self.heatmap.show_graph(st.graphs, i, st.scores, highlight, bonds)
        except Exception as exc:  # a drawing failure must not take the table down
            self.heatmap.clear(f"Could not draw this graph: {exc}")
            return
        self._find_neighbours(i)

    def _find_neighbours(self, i: int) -> None:
        """Find graph ``i``'s similar training molecules in the background (its fingerprints built on
        the first selection), then list them and emit ``selected_shown``."""
        inputs = self.state.similarity_inputs()
        if inputs is None:
            self.neighbour_jobs.cancel()
            self._neighbours_found(tasks.Neighbours(i, [], None, None))
            return
        if inputs["index"].built() is None:
            self.heatmap.finding_neighbours()
        job = functools.partial(tasks.similar_training, inputs["graphs"], inputs["train"], inputs["index"],
                                inputs["token"], i)
        self.neighbour_jobs.request(job, self._neighbours_found, self._neighbours_failed, self._keep_index)

    def _keep_index(self, result: tasks.Neighbours) -> None:
        self.state.keep_similarity_index(result.token, result.index)

    def _neighbours_found(self, result: tasks.Neighbours) -> None:
        st = self.state
        self._keep_index(result)
        if st.selected != result.query or st.graphs is None or st.scores is None:
            return  # another graph, or none, is selected now (its own request follows, if any)
        now = st.similarity_inputs()
        if result.token is not None and (now is None or now["token"] is not result.token):
            return  # found for data or a model that changed since
        self.heatmap.set_neighbours([(j, st.graphs.meta[j].id, sim, float(st.scores.score[j]))
                                     for j, sim in result.similar])
        self.selected_shown.emit(result.query, result.similar)

    def _neighbours_failed(self, message: str) -> None:
        self.heatmap.set_neighbours([])
        self.heatmap.neighbours_label.setText(f"Similar training molecules: {message}")
        self.heatmap.neighbours_label.setVisible(True)

    def selected_graphs(self) -> list[int]:
        """The graphs of the training tab's selected rows (the selected graph when no row is)."""
        rows = self.table.selectionModel().selectedRows()
        chosen = sorted({self.model_table.graph_index(ix.row()) for ix in rows})
        return chosen or ([] if self.state.selected is None else [self.state.selected])

    @Slot()
    def show_review(self) -> None:
        """The review marks and their re-ranking in the table (its Review column hidden while the
        ranking cannot be reviewed and nothing is marked)."""
        st = self.state
        self.model_table.set_review(st.review_marks, st.review_rank())
        self.table.setColumnHidden(COLUMNS.index("Review"), bool(st.review_unavailable()) and not st.review_marks)
        self._refresh_groups()  # the groups follow the review's ranks too

    def show_detector(self, model) -> None:
        """Adapt the views to the detector: score-term columns, map spaces and heatmaps need node scores."""
        terms = model.has_node_scores
        for column in ("Graph term", "Node term"):
            self.table.setColumnHidden(COLUMNS.index(column), not terms)
        self.map_view.set_spaces_enabled(terms)
        self.tabs.setTabText(self.tabs.indexOf(self.heatmap), "Node heatmap" if terms else "Graph")

    def _refresh_groups(self) -> None:
        """Show the groups again while they are shown and their scaffolds are the open graphs'."""
        if self.showing_groups() and self._scaffolds is not None and self._scaffolds[0] is self.state.graphs:
            self._show_groups()

    def showing_groups(self) -> bool:
        """Whether the training tab shows scaffold groups instead of its rows."""
        return self.table_stack.currentWidget() is self.scaffold_view

    def shown_table(self) -> tuple:
        """What the training tab shows, for Copy: (its table, its model), or (the scaffold groups'
        table, their view) while it shows those (a copy of the rows behind them copied rows not in sight)."""
        return (self.scaffold_view.table, self.scaffold_view) if self.showing_groups() else (self.table, self.model_table)

    @Slot(bool)
    def _group_toggled(self, on: bool) -> None:
        """Show the visible rows grouped by scaffold (the scaffolds found in the background, once per
        data), or the table; ``shown`` says so (the review actions mark rows of the table only)."""
        if on:
            self._leave_group()
            self.update_counts()
        self._show_grouping(on)
        self.shown.emit()

    def _show_grouping(self, on: bool) -> None:
        st = self.state
        if not (on and st.scores is not None and st.has_smiles()):
            self.scaffold_jobs.cancel()
            self.table_stack.setCurrentWidget(self.table)
            return
        self.table_stack.setCurrentWidget(self.scaffold_view)
        if self._scaffolds is not None and self._scaffolds[0] is st.graphs:
            self._show_groups()
            return
        self.scaffold_view.finding()
        graphs = st.graphs
        self.scaffold_jobs.request(functools.partial(tasks.scaffold_smiles, graphs),
                                   lambda found: self._scaffolds_found(graphs, found), self.scaffold_view.say)

    def _scaffolds_found(self, graphs, scaffold_of: list[str] | None) -> None:
        if scaffold_of is None:
            return  # stopped
        self._scaffolds = (graphs, scaffold_of)
        if graphs is not self.state.graphs or self.state.scores is None:
            return
        if self._group_wanted is not None and not self.filters.is_grouped():
            self._scaffold_chosen(self._group_wanted)
        elif self.filters.is_grouped():
            self._show_groups()

    def open_group(self, scaffold_smiles: str) -> None:
        """Open the group of ``scaffold_smiles`` ("" for the acyclic molecules) as a double-click on
        it does (:meth:`_scaffold_chosen`), once the open graphs' scaffolds are found (a session's
        group: it came back as a substructure filter, 562 rows for benzene's group of 32)."""
        st = self.state
        if st.graphs is None or st.scores is None or not st.has_smiles():
            return
        if self._scaffolds is not None and self._scaffolds[0] is st.graphs:
            self._scaffold_chosen(scaffold_smiles)
            return
        self._group_wanted = scaffold_smiles
        self.update_counts()  # "opening the group of …" until it is
        graphs = st.graphs
        self.scaffold_jobs.request(functools.partial(tasks.scaffold_smiles, graphs),
                                   lambda found: self._scaffolds_found(graphs, found), self._group_failed)

    def _group_failed(self, message: str) -> None:
        self._group_wanted = None
        self.scaffold_view.say(message)
        self.side.say(f"The scaffold group could not be opened again: {message}")
        self.update_counts()

    def _show_groups(self) -> None:
        st = self.state
        self.scaffold_view.set_rows(st.graphs, st.scores, self.model_table.visible_graphs(), st.flagged(),
                                    self._scaffolds[1], self.model_table.ranks())

    @Slot(str)
    def _scaffold_chosen(self, scaffold_smiles: str) -> None:
        """A scaffold group was opened: the table shows its molecules, those whose scaffold it is (a
        substructure filter on it showed every molecule containing it: 562 rows for benzene's group
        of 32); its SMILES goes in the substructure box, where it is highlighted, and typing there
        (or grouping again) leaves the group."""
        self.filters.ungroup()
        self._group_wanted = None
        if self._scaffolds is None or self._scaffolds[0] is not self.state.graphs:
            return
        self._group_open = scaffold_smiles
        self.model_table.set_mask("scaffold", np.array([s == scaffold_smiles for s in self._scaffolds[1]]))
        if scaffold_smiles:
            self.filters.show_substructure(scaffold_smiles)
        self.update_counts()

    def _leave_group(self) -> None:
        self._group_wanted = None  # a group still to open is left as well
        if self._group_open is not None:
            self._group_open = None
            self.model_table.set_mask("scaffold", None)

    @Slot(object)
    def map_ready(self, space_map) -> None:
        self.map_view.set_map(space_map, self.state.graphs, self.state.scores, self.state.flagged())
        if self.state.selected is not None:
            self.map_view.highlight(self.state.selected)

    @Slot(int)
    def select_graph(self, graph_index: int) -> None:
        """Select a graph's row in the table (clicked on the map), clearing filters that hide it: the
        text and substructure filters, an open scaffold group, *Flagged only* and the ranges (a
        click on a point they hid did nothing, without a word); a similarity minimum is said."""
        self.filters.ungroup()
        row = self.model_table.row_of(graph_index)
        if row is None:
            self.filters.clear_filters()
            self.model_table.set_text_filter("")
            self.model_table.set_smarts_mask(None)
            self._leave_group()
            self.filters.flagged_only.setChecked(False)
            self.filters.range_filter.clear()
            self.model_table.set_mask("flagged", None)
            self.model_table.set_mask("ranges", None)
            self.update_counts()
            row = self.model_table.row_of(graph_index)
            if row is None:
                self.side.say("The molecule clicked is hidden by the similarity filter: set its minimum to 0 "
                              "to see it.")
        if row is not None:
            self.table.selectRow(row)
            self.table.scrollTo(self.model_table.index(row, 0))

    def _update_evaluation_classes(self) -> None:
        counts = self.state.graphs.label_counts() if self.state.graphs is not None else {}
        self.evaluation.set_classes(counts, self.state.default_anomaly_label())
        self._update_evaluation()

    def _update_evaluation(self) -> None:
        """Compute the Evaluation tab's figures in the background (the newest request wins), then draw them."""
        st = self.state
        label = self.evaluation.anomalous_label()
        threshold = st.threshold()
        if st.graphs is None or st.scores is None or label is None:
            self.evaluation_jobs.cancel()
            self.evaluation.show_evaluation(None, threshold)
            return
        self.evaluation.computing()
        self.evaluation_jobs.request(functools.partial(tasks.evaluate, st.evaluation_inputs(label)),
                                     lambda ev: self.evaluation.show_evaluation(ev, threshold),
                                     self.evaluation.auc_label.setText)

    # ---------------------------------------------------------------- a session's view of the results
    def filter_values(self) -> dict:
        """The filters, the flag rule's thresholds and the sort, as JSON values (a session keeps them);
        ``group`` is the scaffold whose group is open ("" the acyclic molecules', None none)."""
        f = self.filters
        group = self._group_open if self._group_open is not None else self._group_wanted
        return {"text": f.text(), "smarts": f.smarts_edit.text(), "percentile": f.percentile(), "rate": f.rate(),
                "grouped": f.is_grouped(), "group": group, "flagged_only": f.is_flagged_only(),
                "ranges": {k: list(v) for k, v in f.ranges().items()}, "sort": sort_values(self.table)}

    def set_filter_values(self, values: dict) -> None:
        """Put back :meth:`filter_values` (all but the grouping, :meth:`set_grouped`); the table
        follows with :meth:`show_restored`, which opens the scaffold group again."""
        f = self.filters
        group = values.get("group")
        self._restored_group = group if isinstance(group, str) else None
        for key, setter in (("percentile", f.set_percentile), ("rate", f.set_rate)):
            if isinstance(values.get(key), (int, float)):
                setter(float(values[key]))
        f.flagged_only.setChecked(bool(values.get("flagged_only")))
        if isinstance(values.get("ranges"), dict):
            f.range_filter.set_ranges({k: tuple(v) for k, v in values["ranges"].items()
                                       if isinstance(v, list) and len(v) == 2})
        f.text_edit.setText(values.get("text", ""))
        f.smarts_edit.setText(values.get("smarts", ""))

    def show_restored(self) -> None:
        """Show the state's data and scores with the filters set (:meth:`set_filter_values`), the
        scaffold group they hold opened again."""
        group, self._restored_group = self._restored_group, None
        if self.state.graphs is not None:
            self.show_data()
            self.apply_text_filter()
            self.apply_smarts()
            if group is not None:
                self.open_group(group)
        self.update_summary()

    def set_grouped(self, grouped: bool) -> None:
        self.filters.group_scaffolds.setChecked(grouped)

    def select_saved(self, index: int, graph_id: str) -> None:
        """Select the graph saved as (``index``, ``graph_id``): at its index while the ID there matches,
        else found by its ID; nothing when it is gone."""
        if self.state.graphs is None:
            return
        ids = [m.id for m in self.state.graphs.meta]
        i = index if 0 <= index < len(ids) and ids[index] == graph_id else (ids.index(graph_id) if graph_id in ids
                                                                           else None)
        if i is not None:
            self.select_graph(i)

    def bottom_tab(self) -> int:
        """The tab shown under the table (heatmap, loss, Evaluation, nearest molecule)."""
        return self.tabs.currentIndex()

    def set_bottom_tab(self, index: int) -> None:
        if 0 <= index < self.tabs.count():
            self.tabs.setCurrentIndex(index)

    def stop(self) -> None:
        """Drop the requests and wait for the running jobs (the window is closing)."""
        for jobs in (self.neighbour_jobs, self.scaffold_jobs, self.evaluation_jobs):
            jobs.stop_all()
