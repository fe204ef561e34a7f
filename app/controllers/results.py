"""The results views kept in step with the state: the table and its filters, the scaffold
groups, the map's highlight, the heatmap of the selected graph and the Evaluation tab."""
from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QStackedWidget, QTableView, QTabWidget

from ..state import AppState
from ..widgets.evaluation import EvaluationPage
from ..widgets.filter_bar import FilterBar
from ..widgets.heatmap import HeatmapPanel
from ..widgets.map_view import MapView
from ..widgets.scaffolds import ScaffoldView
from ..widgets.side_panel import SidePanel
from ..widgets.table import COLUMNS, PROPERTY_HEADINGS, ResultsModel
from .mapping import MapController


class ResultsController(QObject):
    """Moves the state's data, scores, flags and selection into the results views, and the views'
    requests (filters, selection, grouping, the evaluated class) into the state.

    Signals:
        shown: new data or scores are in the views (the window updates its actions).
        selected_shown: a selected graph is drawn, with its similar training molecules
            ((graph index, similarity), most similar first).
    """

    shown = Signal()
    selected_shown = Signal(int, list)

    def __init__(self, state: AppState, side: SidePanel, filters: FilterBar, model_table: ResultsModel,
                 table: QTableView, table_stack: QStackedWidget, scaffold_view: ScaffoldView, map_view: MapView,
                 heatmap: HeatmapPanel, evaluation: EvaluationPage, tabs: QTabWidget, maps: MapController,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.state, self.side, self.filters, self.maps = state, side, filters, maps
        self.model_table, self.table, self.table_stack, self.scaffold_view = model_table, table, table_stack, scaffold_view
        self.map_view, self.heatmap, self.evaluation, self.tabs = map_view, heatmap, evaluation, tabs
        filters.text_changed.connect(self.apply_text_filter)  # both filters apply as you type, after a pause
        filters.smarts_changed.connect(self.apply_smarts)
        filters.flag_changed.connect(self._flag_changed)
        filters.grouping_toggled.connect(self._group_toggled)
        filters.flagged_only_toggled.connect(self.apply_flagged_only)
        filters.ranges_changed.connect(self.apply_ranges)
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
        self.model_table.set_data(g, st.scores, st.threshold())
        self.model_table.set_p_values(st.p_values() if st.scores is not None else None,
                                      st.q_values() if st.scores is not None else None)
        self.model_table.set_properties(st.properties)
        for heading in PROPERTY_HEADINGS:  # graphs without SMILES (a TU collection) have none
            self.table.setColumnHidden(COLUMNS.index(heading), not st.properties)
        self.table.setColumnHidden(COLUMNS.index("SMILES"), not st.has_smiles())
        self.table.setColumnHidden(COLUMNS.index("Name"), not any(m.name and m.name != m.id for m in g.meta))
        self.filters.set_available(smiles=st.has_smiles(), scores=st.scores is not None)
        self.heatmap.clear()
        self.heatmap.fixed_vmax = None
        if st.scores is not None and st.scores.has_node_scores:
            from core import fixed_error_scale

            self.heatmap.fixed_vmax = fixed_error_scale(st.training_node_errors())
        self.maps.forget()
        self.map_view.clear("Compute the map to see where the graphs sit in the model's embedding space."
                            if st.model is not None else "Train or load a model to map its graph embeddings.")
        self.update_summary()
        self._update_evaluation_classes()
        self.shown.emit()
        self._reapply_filters()
        if st.scores is not None and self.model_table.rowCount():
            self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
            self.table.selectRow(0)
        else:  # before scoring: file order, and no sort arrow on the empty Rank column
            self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
            self.model_table.sort(-1)
        if self.filters.is_grouped():
            self._group_toggled(True)

    def update_summary(self) -> None:
        self.side.set_summary(self.state.summary_lines())

    @Slot()
    def apply_text_filter(self) -> None:
        self.model_table.set_text_filter(self.filters.text())
        self.update_counts()

    @Slot()
    def apply_smarts(self) -> None:
        from core import GLocalKDError, smarts_matches

        text = self.filters.smarts()
        self.filters.clear_note()
        if not text or self.state.graphs is None:
            self.model_table.set_smarts_mask(None)
        else:
            try:
                mask = smarts_matches([m.smiles for m in self.state.graphs.meta], text)
            except GLocalKDError:
                self.filters.say_smarts_invalid(text)
                self.model_table.set_smarts_mask(None)
                self.update_counts()
                return
            self.model_table.set_smarts_mask(mask)
        self.update_counts()
        self._show_selected()  # the match is highlighted in the drawing

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

    @Slot(str, float)
    def _flag_changed(self, rule: str, value: float) -> None:
        st = self.state
        st.flag_rule = rule
        if rule == "percentile":
            st.percentile = value
        else:
            st.alpha = value
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
        if st.threshold() is not None:
            text += f" · {int(st.flagged().sum()):,} flagged"
        self.filters.set_count(text)
        note = st.fdr_note()
        if note:  # nothing flagged must not look like nothing anomalous
            self.side.say(note)
            self.filters.count.setToolTip(note)

    @Slot()
    def _row_selected(self, current, _previous=None) -> None:
        if not current.isValid() or self.state.graphs is None:
            return
        self.state.selected = self.model_table.graph_index(current.row())
        self._show_selected()

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
            self.state.selected = None
            self.table.selectionModel().clear()
            self.table.scrollToTop()  # the rows the filters show, from the first
            self.map_view.highlight(None)
            self.heatmap.clear("The selected molecule is hidden by the filters. Select a row.")
            return
        current = self.table.currentIndex()
        if not current.isValid() or current.row() != row:
            self.table.selectRow(row)
        self.table.scrollTo(self.model_table.index(row, 0))

    def _show_selected(self) -> None:
        st, i = self.state, self.state.selected
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
        similar = st.similar_training_molecules(i)
        self.heatmap.set_neighbours([(j, st.graphs.meta[j].id, sim, float(st.scores.score[j])) for j, sim in similar])
        self.selected_shown.emit(i, similar)

    def show_detector(self, model) -> None:
        """Adapt the views to the detector: score-term columns, map spaces and heatmaps need node scores."""
        terms = model.has_node_scores
        for column in ("Graph term", "Node term"):
            self.table.setColumnHidden(COLUMNS.index(column), not terms)
        self.map_view.set_spaces_enabled(terms)
        self.tabs.setTabText(self.tabs.indexOf(self.heatmap), "Node heatmap" if terms else "Graph")

    @Slot(bool)
    def _group_toggled(self, on: bool) -> None:
        st = self.state
        if on and st.scores is not None and st.has_smiles():
            self.scaffold_view.set_rows(st.graphs, st.scores, self.model_table.visible_graphs(), st.flagged())
            self.table_stack.setCurrentWidget(self.scaffold_view)
        else:
            self.table_stack.setCurrentWidget(self.table)

    @Slot(str)
    def _scaffold_chosen(self, scaffold_smiles: str) -> None:
        """A scaffold group was opened: show its molecules in the table (a SMARTS filter on it)."""
        self.filters.ungroup()
        if scaffold_smiles:
            self.filters.show_substructure(scaffold_smiles)

    @Slot(object)
    def map_ready(self, space_map) -> None:
        self.map_view.set_map(space_map, self.state.graphs, self.state.scores, self.state.flagged())
        if self.state.selected is not None:
            self.map_view.highlight(self.state.selected)

    @Slot(int)
    def select_graph(self, graph_index: int) -> None:
        """Select a graph's row in the table (clicked on the map), clearing filters that hide it."""
        self.filters.ungroup()
        row = self.model_table.row_of(graph_index)
        if row is None:
            self.filters.clear_filters()
            self.model_table.set_text_filter("")
            self.model_table.set_smarts_mask(None)
            self.update_counts()
            row = self.model_table.row_of(graph_index)
        if row is not None:
            self.table.selectRow(row)
            self.table.scrollTo(self.model_table.index(row, 0))

    def _update_evaluation_classes(self) -> None:
        counts = self.state.graphs.label_counts() if self.state.graphs is not None else {}
        self.evaluation.set_classes(counts, self.state.default_anomaly_label())
        self._update_evaluation()

    def _update_evaluation(self) -> None:
        self.evaluation.show_evaluation(self.state.evaluation(self.evaluation.anomalous_label()),
                                        self.state.threshold())
