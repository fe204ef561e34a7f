"""The selected graph drawn with its nodes coloured by error, its top nodes, and the training
molecules most like it, beside the structural alerts it matches."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QFileDialog, QHBoxLayout, QLabel, QListWidget, QListWidgetItem,
                               QPushButton, QVBoxLayout, QWidget)

from ..plain_words import HEATMAP_LEGEND
from .alerts import AlertList
from .plots import Canvas

SCALES = {"fixed": "Colours shared by all molecules", "robust": "Per molecule (robust, 90th percentile)",
          "linear": "Per molecule (linear)", "log": "Per molecule (log)"}


class HeatmapPanel(QWidget):
    """Graph ``i`` drawn with node errors; emits ``neighbour_clicked(graph index)`` when a similar
    training molecule is double-clicked."""

    neighbour_clicked = Signal(int)
    last_dir_used = Signal(str)

    def __init__(self, last_dir=lambda: str(Path.home())):
        super().__init__()
        self._last_dir = last_dir
        self.canvas = Canvas(6, 4.5, constrained=False)  # draw_heatmap places its own axes
        self.title = QLabel("Select a row to see which nodes drive its score.")
        self.title.setWordWrap(True)
        self.scale = QComboBox()
        self.scale.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.scale.setMinimumContentsLength(12)  # the drawing keeps the width
        for key, text in SCALES.items():
            self.scale.addItem(text, key)
        self.scale.setToolTip("Shared (the default): one colour scale for every molecule, from 0 to the 99th "
                              "percentile of the training molecules' atom errors, so a colour means the same error "
                              "on every molecule and a low-scoring molecule stays pale. Per molecule: each molecule's "
                              "own scale (robust stops at its 90th percentile), which shows the pattern inside one "
                              "molecule but makes every molecule look equally red.")
        self.scale.currentIndexChanged.connect(self.redraw)
        self.top = QListWidget()
        self.top.setMaximumWidth(200)
        self.neighbours = QListWidget()
        self.neighbours.setMaximumWidth(200)
        self.neighbours.setToolTip("Morgan fingerprints (radius 2), Tanimoto similarity. A close neighbour with a low "
                                   "score means a small odd group; no close neighbour, a new chemotype. "
                                   "Double-click to select it.")
        self.neighbours.itemDoubleClicked.connect(lambda item: self.neighbour_clicked.emit(int(item.data(256))))
        self.neighbours_label = QLabel("Similar training molecules\n(Tanimoto, score, id)")
        self.save_button = QPushButton("Save picture…")
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self.save_picture)
        self.top_label = QLabel("Top nodes (error)")
        self.alerts = AlertList()
        self.alerts.picked.connect(self._show_alert)
        self._alert_atoms: tuple[int, ...] = ()  # the picked alert's atoms, highlighted instead of a SMARTS match
        for rows in (self.top, self.alerts.list, self.neighbours):
            rows.setMinimumHeight(3 * rows.fontMetrics().height())  # three rows: the side column fits a short screen
        self.alerts.list.setMaximumHeight(6 * self.alerts.list.fontMetrics().height())  # the top nodes keep the room
        side = self._side = QVBoxLayout()
        side.addWidget(self.scale)
        side.addWidget(self.top_label)
        side.addWidget(self.top, 1)
        side.addWidget(self.alerts)
        side.addWidget(self.neighbours_label)
        side.addWidget(self.neighbours, 1)
        side.addStretch(0)  # takes the lists' place when they are hidden, so the button stays at the bottom
        side.addWidget(self.save_button)
        row = QHBoxLayout()
        row.addWidget(self.canvas, 1)
        row.addLayout(side)
        self.legend = QLabel(HEATMAP_LEGEND)  # what the colours mean, in plain words
        self.legend.setObjectName("heatmap_legend")
        self.legend.setWordWrap(True)
        self.legend.setStyleSheet("color: palette(placeholder-text);")
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addLayout(row, 1)
        layout.addWidget(self.legend)
        self.kind = ""
        self.fixed_vmax: float | None = None  # the shared scale's top: training molecules' atom errors
        self.fixed_vmax_getter = None  # or another panel's (a scored file's tab uses the training tab's)
        self._current = None
        self.set_neighbours([])

    def clear(self, message: str = "Select a row to see which nodes drive its score.") -> None:
        self.canvas.figure.clear()
        self.canvas.draw_idle()
        self.set_top_nodes([])
        self.set_neighbours([])
        self.alerts.clear()
        self.title.setText(message)
        self.save_button.setEnabled(False)
        self.kind = ""
        self._current = None

    def scale_choice(self) -> tuple[str, float | None]:
        """(scale, top of scale) for core's drawing: the shared scale is linear up to ``fixed_vmax``
        (robust per molecule until a scale is known)."""
        vmax = self.fixed_vmax_getter() if self.fixed_vmax_getter is not None else self.fixed_vmax
        key = self.scale.currentData()
        if key == "fixed":
            return ("linear", vmax) if vmax is not None else ("robust", None)
        return key, None

    def show_graph(self, graphs, i: int, scores, highlight: list[int] | None = None) -> None:
        """Draw graph i with its node errors (from ``scores``); ``highlight`` marks a SMARTS match."""
        from core import node_names

        meta = graphs.meta[i]
        label = f", label {meta.label}" if meta.label is not None else ""
        name = meta.name if meta.name != meta.id else ""
        self._current = (graphs, i, scores, highlight)
        self._alert_atoms = ()
        self.alerts.show_molecule(meta.smiles or "", _symbols(node_names(graphs, i)))
        self.redraw()
        if not scores.has_node_scores:  # OCGCN and the kernel methods score whole graphs only
            self.set_top_nodes([])
            self.title.setText(f"<b>{meta.id}</b> {name} — score {scores.score[i]:.4g}{label}<br><tt>{meta.smiles}"
                               "</tt><br><i>This detector scores whole graphs and has no per-node errors; train "
                               "GLocalKD to see which nodes drive a score.</i>")
        else:
            self.title.setText(f"<b>{meta.id}</b> {name} — score {scores.score[i]:.4g} ({_terms(scores, i)})"
                               f"{label}<br><tt>{meta.smiles}</tt>")
            names = node_names(graphs, i)
            self.set_top_nodes([(names[j], err) for j, err in scores.top_nodes(i, 15)])
        self.save_button.setEnabled(True)

    def picture_title(self) -> str:
        if self._current is None:
            return ""
        graphs, i, scores, _ = self._current
        meta = graphs.meta[i]
        name = f" · {meta.name}" if meta.name and meta.name != meta.id else ""
        return f"{meta.id}{name} · score {scores.score[i]:.4g}"

    def redraw(self) -> None:
        if self._current is None:
            return
        from core import draw_heatmap

        graphs, i, scores, _ = self._current
        highlight = self.highlighted_atoms()
        errors = scores.node_errors_of(i) if scores.has_node_scores else None
        scale, vmax = self.scale_choice()
        self.scale.setEnabled(errors is not None)
        self.kind = draw_heatmap(self.canvas.figure, graphs, i, errors, title=self.picture_title(), scale=scale,
                                 vmax=vmax, highlight=highlight)
        self.canvas.draw_idle()

    def set_top_nodes(self, nodes: list[tuple[str, float]]) -> None:
        """List the nodes with the largest errors; the list is hidden when there are none (a
        detector without node scores)."""
        self.top.clear()
        for name, error in nodes:
            self.top.addItem(f"{name}   {error:.4g}")
        self.alerts.set_top_atoms([int(m.group(1)) for name, _ in nodes if (m := re.search(r"(\d+)$", name))])
        self.top_label.setVisible(bool(nodes))
        self.top.setVisible(bool(nodes))
        self._update_stretch()

    def highlighted_atoms(self) -> list[int] | None:
        """The atoms marked in the drawing: the picked alert's, else the SMARTS match (None: none)."""
        if self._alert_atoms:
            return list(self._alert_atoms)
        return self._current[3] if self._current is not None else None

    def _show_alert(self, atoms: tuple) -> None:
        if tuple(atoms) != self._alert_atoms:
            self._alert_atoms = tuple(atoms)
            self.redraw()

    def set_neighbours(self, rows: list[tuple[int, str, float, float | None]]) -> None:
        """Similar training molecules as (graph index, id, similarity, score); hidden when empty."""
        self.neighbours.clear()
        for index, ident, sim, score in rows:
            text = f"{sim:.2f}  " + (f"{score:<8.3g}" if score is not None else "") + f" {ident}"
            item = QListWidgetItem(text)
            item.setData(256, index)  # Qt.UserRole
            self.neighbours.addItem(item)
        self.neighbours.setVisible(bool(rows))
        self.neighbours_label.setVisible(bool(rows))
        self._update_stretch()

    def _update_stretch(self) -> None:
        empty = self.top.isHidden() and self.neighbours.isHidden() and self.alerts.isHidden()
        self._side.setStretch(6, 1 if empty else 0)

    def save_picture(self) -> None:
        default = str(Path(self._last_dir()) / "heatmap.png")
        path, _ = QFileDialog.getSaveFileName(self, "Save picture", default, "PNG image (*.png);;SVG image (*.svg)")
        if path:
            self.last_dir_used.emit(str(Path(path).parent))
            self.save_to(path)

    def save_to(self, path: str) -> None:
        """Save the drawing with its id and score in the picture (as PNG, or SVG by extension)."""
        if path.lower().endswith(".svg") and self.kind == "molecule":
            from core import atomic_output, graph_molecule, molecule_image

            graphs, i, scores, _ = self._current
            highlight = self.highlighted_atoms()
            errors = scores.node_errors_of(i) if scores.has_node_scores else None
            scale, vmax = self.scale_choice()
            with atomic_output(path) as fh:  # RDKit's own vector drawing, not a raster inside an SVG
                fh.write(molecule_image(graph_molecule(graphs, i), errors, svg=True, scale=scale, vmax=vmax,
                                        highlight=highlight, legend=self.picture_title()))
        else:
            self.canvas.save_to(path)


def _symbols(names: list[str]) -> list[str]:
    """Element symbols from node names (``C3`` -> ``C``)."""
    return [name.rstrip("0123456789") for name in names]


def _terms(scores, i: int) -> str:
    """'graph G + node N', each split into its readouts when the score uses the extra ones."""
    from core import READOUT_PARTS

    graph, node = f"graph {scores.graph_term[i]:.4g}", f"node {scores.node_term[i]:.4g}"
    parts = scores.parts
    if READOUT_PARTS <= set(parts):
        if not np.isclose(scores.graph_term[i], parts["graph"][i]):  # the size term is in
            graph += f" [max-pool {parts['graph'][i]:.4g} + size {parts['size'][i]:.4g}]"
        if not np.isclose(scores.node_term[i], parts["node_mean"][i]):  # the largest node error is in
            node += f" [mean {parts['node_mean'][i]:.4g} + largest {parts['node_max'][i]:.4g}]"
    own = scores.component_scores().get("glocalkd")
    if own is not None:  # a consensus: the score combines p-values; the terms are its GLocalKD's
        return f"combined p-values; its GLocalKD {own[i]:.4g}: {graph} + {node}"
    return f"{graph} + {node}"
