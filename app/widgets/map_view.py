"""The chemical-space map: graphs placed by their embeddings, coloured by score or label;
hover for details, click to select the row, selected rows highlighted."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget)

from . import dialogs
from .plots import Canvas

SPACE_LABELS = {"predictor": "Predictor space", "target": "Random target space", "difference": "Error vectors"}
METHOD_LABELS = {"tsne": "t-SNE", "pca": "PCA"}


class MapView(QWidget):
    """Scatter of a :class:`core.viz.chemical_space.SpaceMap`; emits ``graph_clicked(graph index)``."""

    graph_clicked = Signal(int)
    compute_requested = Signal(str, str)  # space, method

    def __init__(self):
        super().__init__()
        self.space = QComboBox()
        for key, text in SPACE_LABELS.items():
            self.space.addItem(text, key)
        self.method = QComboBox()
        for key, text in METHOD_LABELS.items():
            self.method.addItem(text, key)
        self.colour = QComboBox()
        self.colour.addItems(["Colour by score rank", "Colour by label"])
        self.colour.setToolTip("Score rank: each point coloured by its score's percentile among the graphs, so a few "
                               "outliers do not squeeze everyone else into one colour")
        self.colour.currentIndexChanged.connect(self.redraw)
        self.compute_button = QPushButton("Compute map")
        self.compute_button.clicked.connect(
            lambda: self.compute_requested.emit(self.space.currentData(), self.method.currentData()))
        self.save_button = QPushButton("Save picture…")
        self.save_button.clicked.connect(self.save_picture)
        self.note = QLabel("Train a model, then compute the map of its graph embeddings.")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #555;")
        self.plot_area = Canvas(5, 4.5, message="No map yet")
        for combo in (self.space, self.method, self.colour):  # narrow beside the table when space is short
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(12)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for row_widgets in ((self.space, self.method, self.compute_button), (self.colour, self.save_button)):
            controls = QHBoxLayout()  # two short rows: the map may be narrow beside the table
            for w in row_widgets:
                controls.addWidget(w)
            controls.addStretch(1)
            layout.addLayout(controls)
        layout.addWidget(self.note)
        layout.addWidget(self.plot_area, 1)
        self.map = None
        self.graphs = None
        self.scores = None
        self.flagged = None
        self.selected: int | None = None
        self._annotation = None
        self._xy_display = None
        self.plot_area.mpl_connect("motion_notify_event", self._hover)
        self.plot_area.mpl_connect("button_press_event", self._click)
        self.plot_area.mpl_connect("draw_event", lambda _e: self._cache_positions())
        self.set_map(None, None, None, None)

    # ---------------------------------------------------------------- content
    def set_spaces_enabled(self, enabled: bool) -> None:
        """GLocalKD has three embedding spaces; other detectors have one representation."""
        self.space.setEnabled(enabled)
        if not enabled:
            self.space.setCurrentIndex(0)

    def set_map(self, space_map, graphs, scores, flagged) -> None:
        self.map, self.graphs, self.scores, self.flagged = space_map, graphs, scores, flagged
        self.selected = None
        self.save_button.setEnabled(space_map is not None)
        if space_map is not None:
            self.note.setText(space_map.note + ". Hover for details; click a point to select its row.")
        self.redraw()

    def set_flagged(self, flagged) -> None:
        self.flagged = flagged
        self.redraw()

    def clear(self, message: str) -> None:
        self.set_map(None, None, None, None)
        self.note.setText(message)

    def highlight(self, graph_index: int | None) -> None:
        """Ring the point of the graph selected in the table (if it is on the map)."""
        self.selected = graph_index
        self.redraw()

    @property
    def canvas(self):
        """The map's matplotlib canvas (made, with matplotlib imported, on first use)."""
        return self.plot_area.canvas

    def redraw(self) -> None:
        self._annotation = None
        if self.map is None:
            self.plot_area.show_message("No map yet")
            return
        from matplotlib.colors import Normalize

        fig = self.canvas.figure
        fig.clear()
        ax = fig.add_subplot()
        self.ax = ax
        xy, idx = self.map.coords, self.map.indices
        flagged = self.flagged[idx] if self.flagged is not None else np.zeros(len(idx), dtype=bool)
        edge = np.where(flagged, "black", "none")
        sizes = np.where(flagged, 28, 12)
        if self.colour.currentIndex() == 0 and self.scores is not None:
            values = score_percentiles(self.scores.score[idx])
            order = np.argsort(values, kind="stable")  # high scores drawn last, on top
            points = ax.scatter(xy[order, 0], xy[order, 1], c=values[order], cmap="viridis",
                                norm=Normalize(0.0, 100.0), s=sizes[order], edgecolors=edge[order], linewidths=0.7)
            bar = fig.colorbar(points, ax=ax, label="score percentile")  # short: the map may be short
            bar.set_ticks([0, 50, 100], labels=["0", "50", "100\nmost\nanomalous"])
        else:
            labels = np.array([self.graphs.meta[i].label or "none" for i in idx], dtype=object)
            for k, label in enumerate(sorted(set(labels))):
                mask = labels == label
                ax.scatter(xy[mask, 0], xy[mask, 1], s=sizes[mask], color=f"C{k}", edgecolors=edge[mask],
                           linewidths=0.7, label=f"label {label}")
            ax.legend(fontsize=8, markerscale=1.5)
        if self.selected is not None:
            hit = np.nonzero(idx == self.selected)[0]
            if hit.size:
                p = xy[hit[0]]
                ax.scatter([p[0]], [p[1]], s=220, facecolors="none", edgecolors="#e74c3c", linewidths=2.2)
        ax.set_xticks([])
        ax.set_yticks([])
        space = SPACE_LABELS[self.map.space] if self.space.isEnabled() else "Detector's representation"
        ax.set_title(f"{space} · {METHOD_LABELS[self.map.method]}", fontsize=10)
        self.canvas.draw_idle()

    # ---------------------------------------------------------------- interaction
    def _cache_positions(self) -> None:
        if self.map is not None and hasattr(self, "ax"):
            self._xy_display = self.ax.transData.transform(self.map.coords)

    def nearest(self, x_pixels: float, y_pixels: float, radius: float = 8.0) -> int | None:
        """The graph index of the point nearest to a display position, within ``radius`` pixels."""
        if self.map is None or self._xy_display is None:
            return None
        d = np.hypot(self._xy_display[:, 0] - x_pixels, self._xy_display[:, 1] - y_pixels)
        k = int(np.argmin(d))
        return int(self.map.indices[k]) if d[k] <= radius else None

    def _hover(self, event) -> None:
        if event.inaxes is None or self.map is None:
            return
        i = self.nearest(event.x, event.y)
        if self._annotation is not None:
            self._annotation.remove()
            self._annotation = None
        if i is not None:
            meta = self.graphs.meta[i]
            text = meta.id if meta.name in ("", meta.id) else f"{meta.id} · {meta.name}"
            if meta.smiles:
                text += "\n" + (meta.smiles if len(meta.smiles) < 60 else meta.smiles[:57] + "...")
            if self.scores is not None:
                text += f"\nscore {self.scores.score[i]:.4g}"
            k = int(np.nonzero(self.map.indices == i)[0][0])
            # the label opens towards the middle of the plot, so it is not cut off at an edge
            fx, fy = self.ax.transAxes.inverted().transform(self._xy_display[k])
            right, up = fx < 0.55, fy < 0.6
            self._annotation = self.ax.annotate(
                text, self.map.coords[k], xytext=(10 if right else -10, 10 if up else -10), textcoords="offset points",
                ha="left" if right else "right", va="bottom" if up else "top", fontsize=8, annotation_clip=False,
                bbox=dict(boxstyle="round", fc="#ffffe0", alpha=0.95), zorder=10)
            self._annotation.set_in_layout(False)  # the axes keep their size: points stay under the pointer
        self.canvas.draw_idle()

    def _click(self, event) -> None:
        if event.inaxes is None or self.map is None:
            return
        i = self.nearest(event.x, event.y)
        if i is not None:
            self.graph_clicked.emit(i)

    def save_picture(self) -> None:
        inputs = [self.graphs.source] if self.graphs is not None else []
        dialogs.save_picture(self, "Save map", "map.png", "", inputs, self.canvas.save_to)


def score_percentiles(scores: np.ndarray) -> np.ndarray:
    """Each score's percentile among ``scores`` (0 lowest, 100 highest; ties share the lower one)."""
    n = len(scores)
    if n < 2:
        return np.full(n, 100.0)
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.arange(n)
    sorted_scores = scores[order]
    first = np.searchsorted(sorted_scores, scores, side="left")  # ties: the first of their run
    return 100.0 * first / (n - 1)
