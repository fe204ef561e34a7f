"""The training data's results tab, laid out: the filter bar over the table (or its scaffold groups)
and the chemical-space map, and under them the heatmap, training loss and Evaluation tabs."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QStackedWidget, QTabWidget, QVBoxLayout, QWidget

from ..structures import STRUCTURE_SIZE_NAMES, StructureImages, show_structures
from .evaluation import EvaluationPage
from .filter_bar import FilterBar
from .heatmap import HeatmapPanel
from .map_view import MapView
from .nearest import NearestPanel
from .plots import LossPlot
from .query_bar import QueryBar
from .scaffolds import ScaffoldView
from .table import ResultsModel, legend_label, results_view


class ResultsArea(QSplitter):
    """The views of the training data's results, each an attribute (``filters``, ``query_bar``,
    ``model_table``, ``table``, ``scaffold_view``, ``table_stack``, ``map_view``, ``top_splitter``,
    ``heatmap``, ``loss_plot``, ``evaluation``, ``nearest_panel``, ``tabs``); it lays them out and
    nothing more.

    Args:
        last_dir: the folder the heatmap's Save dialog starts in.
        structures: draws the table's structure pictures.
    """

    def __init__(self, last_dir: Callable[[], str], structures: StructureImages, parent: QWidget | None = None):
        super().__init__(Qt.Orientation.Vertical, parent)
        self.setObjectName("main_splitter")
        self.filters = FilterBar()
        self.query_bar = QueryBar(STRUCTURE_SIZE_NAMES)  # similarity to a query; the structures' size
        self.model_table = ResultsModel(self)
        self.table = results_view(self.model_table)
        show_structures(self.table, structures)
        self.table.setSelectionMode(self.table.SelectionMode.ExtendedSelection)  # several rows can be marked
        self.scaffold_view = ScaffoldView()
        self.table_stack = QStackedWidget()
        self.table_stack.addWidget(self.table)
        self.table_stack.addWidget(self.scaffold_view)
        self.map_view = MapView()
        top = QSplitter(Qt.Orientation.Horizontal)
        top.setObjectName("top_splitter")
        top.addWidget(self.table_stack)
        top.addWidget(self.map_view)
        top.setStretchFactor(0, 3)  # the table (score, p and q) first; the map grows less
        top.setStretchFactor(1, 1)
        top.setSizes([1000, 400])
        self.top_splitter = top
        results = QWidget()  # the filter bar spans the table and the map
        layout = QVBoxLayout(results)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.filters)
        layout.addWidget(self.query_bar)
        layout.addWidget(top, 1)
        layout.addWidget(legend_label())  # score, p, q and the flag in plain words

        self.heatmap = HeatmapPanel(last_dir)
        self.loss_plot = LossPlot()
        self.evaluation = EvaluationPage()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.heatmap, "Node heatmap")
        self.tabs.addTab(self.loss_plot, "Training loss")
        self.tabs.addTab(self.evaluation, "Evaluation")
        self.nearest_panel = NearestPanel()
        self.tabs.addTab(self.nearest_panel, "Nearest training molecule")
        self.addWidget(results)
        self.addWidget(self.tabs)
        self.setSizes([420, 420])
