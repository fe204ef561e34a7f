"""The training data's results tab, laid out: the filter bar over the table (or its scaffold groups)
and the chemical-space map, and under them the heatmap, training loss and Evaluation tabs."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QStackedWidget, QTabWidget, QVBoxLayout, QWidget

from .evaluation import EvaluationPage
from .filter_bar import FilterBar
from .heatmap import HeatmapPanel
from .map_view import MapView
from .plots import LossPlot
from .scaffolds import ScaffoldView
from .table import ResultsModel, results_view


class ResultsArea(QSplitter):
    """The views of the training data's results, each an attribute (``filters``, ``model_table``,
    ``table``, ``scaffold_view``, ``table_stack``, ``map_view``, ``top_splitter``, ``heatmap``,
    ``loss_plot``, ``evaluation``, ``tabs``); it lays them out and nothing more.

    Args:
        last_dir: the folder the heatmap's Save dialog starts in.
    """

    def __init__(self, last_dir: Callable[[], str], parent: QWidget | None = None):
        super().__init__(Qt.Orientation.Vertical, parent)
        self.setObjectName("main_splitter")
        self.filters = FilterBar()
        self.model_table = ResultsModel(self)
        self.table = results_view(self.model_table)
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
        layout.addWidget(top, 1)

        self.heatmap = HeatmapPanel(last_dir)
        self.loss_plot = LossPlot()
        self.evaluation = EvaluationPage()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.heatmap, "Node heatmap")
        self.tabs.addTab(self.loss_plot, "Training loss")
        self.tabs.addTab(self.evaluation, "Evaluation")
        self.addWidget(results)
        self.addWidget(self.tabs)
        self.setSizes([420, 420])
