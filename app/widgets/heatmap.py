"""The selected graph drawn with its nodes coloured by error, its top nodes, and the training
molecules most like it, beside the structural alerts it matches."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import (QComboBox, QFrame, QHBoxLayout, QLabel, QListWidget, QListWidgetItem,
                               QPushButton, QScrollArea, QToolButton, QToolTip, QVBoxLayout, QWidget)

from ..plain_words import HEATMAP_LEGEND
from .alerts import AlertList
from . import dialogs
from .plots import Canvas

SCALES = {"fixed": "Colours shared by all molecules", "robust": "Per molecule (robust, 90th percentile)",
          "linear": "Per molecule (linear)", "log": "Per molecule (log)"}


NEIGHBOURS_TITLE = "Similar training molecules\n(Tanimoto, score, id)"
ZOOM_STEP = 1.25  # one wheel notch or button press
MAX_ZOOM = 4.0  # the closest view: four screen pixels per drawing pixel


class HeatmapPanel(QWidget):
    """Graph ``i`` drawn with node errors; emits ``neighbour_clicked(graph index)`` when a similar
    training molecule is double-clicked.

    A molecule too large to read when fitted is drawn with bonds of ``READABLE_BOND_PX`` screen
    pixels and shown around its largest error; the mouse pans it (drag, wheel, shift+wheel) and
    zooms it (ctrl+wheel, the zoom buttons), *Fit* shows all of it. Hovering an atom says its
    index and error."""

    neighbour_clicked = Signal(int)
    last_dir_used = Signal(str)

    def __init__(self, last_dir=lambda: str(Path.home())):
        super().__init__()
        self._last_dir = last_dir
        self.plot_area = Canvas(6, 4.5, constrained=False)  # draw_heatmap places its own axes
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
        self.zoom_out = QToolButton(text="−", toolTip="Zoom out (ctrl+wheel)")
        self.zoom_in = QToolButton(text="+", toolTip="Zoom in (ctrl+wheel; drag or wheel to move)")
        self.fit = QToolButton(text="Fit", toolTip="Show the whole molecule")
        self.readable = QToolButton(text="1:1", toolTip="Readable size: the molecule's bonds at a readable length, "
                                    "around its largest error")
        self.zoom_out.clicked.connect(lambda: self.zoom(1 / ZOOM_STEP))
        self.zoom_in.clicked.connect(lambda: self.zoom(ZOOM_STEP))
        self.fit.clicked.connect(self.fit_view)
        self.readable.clicked.connect(self.readable_view)
        zoom_row = QHBoxLayout()
        for button in (self.zoom_out, self.zoom_in, self.fit, self.readable):
            zoom_row.addWidget(button)
        zoom_row.addStretch(1)
        self.top = QListWidget()
        self.top.setMaximumWidth(200)
        self.top.currentRowChanged.connect(self._focus_top_node)
        self.neighbours = QListWidget()
        self.neighbours.setMaximumWidth(200)
        self.neighbours.setToolTip("Morgan fingerprints (radius 2), Tanimoto similarity. A close neighbour with a low "
                                   "score means a small odd group; no close neighbour, a new chemotype. "
                                   "Double-click to select it.")
        self.neighbours.itemDoubleClicked.connect(lambda item: self.neighbour_clicked.emit(int(item.data(256))))
        self.neighbours_label = QLabel(NEIGHBOURS_TITLE)
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
        drawing = QVBoxLayout()  # the zoom buttons under the drawing: the side column keeps its height
        drawing.addWidget(self.plot_area, 1)
        drawing.addLayout(zoom_row)
        side.setContentsMargins(0, 0, 0, 0)
        column = QWidget()
        column.setLayout(side)
        self.side_column = QScrollArea()  # on a short screen the column scrolls; its parts never overlap
        self.side_column.setWidget(column)
        self.side_column.setWidgetResizable(True)
        self.side_column.setFrameShape(QFrame.Shape.NoFrame)
        self.side_column.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.side_column.setFixedWidth(200 + self.side_column.verticalScrollBar().sizeHint().width() + 2)
        row = QHBoxLayout()
        row.addLayout(drawing, 1)
        row.addWidget(self.side_column)
        self.legend = QLabel(HEATMAP_LEGEND)  # what the colours mean, in plain words
        self.legend.setObjectName("heatmap_legend")
        self.legend.setWordWrap(True)
        self.legend.setStyleSheet("color: palette(placeholder-text);")
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addLayout(row, 1)
        layout.addWidget(self.legend)
        self.kind = ""
        self.drawing = None  # core's HeatmapDrawing of the graph shown
        self._names: list[str] = []  # the shown graph's node names (C7, N3, ...)
        self._errors = None  # and its node errors
        self._highlight_bonds: list[int] | None = None  # a SMARTS match's own bonds
        self._drag = None  # (x, y, xlim, ylim) where a drag started
        self._fitted = True  # the view shows the whole drawing: a resize draws it again at the new size
        self._resized = QTimer(self, singleShot=True, interval=200)
        self._resized.timeout.connect(self._redraw_if_fitted)
        for name, handler in (("scroll_event", self._wheel), ("button_press_event", self._press),
                              ("button_release_event", self._release), ("motion_notify_event", self._motion),
                              ("resize_event", lambda _event: self._resized.start())):
            self.plot_area.mpl_connect(name, handler)
        self._set_zoom_enabled(False)
        self.fixed_vmax: float | None = None  # the shared scale's top: training molecules' atom errors
        self.fixed_vmax_getter = None  # or another panel's (a scored file's tab uses the training tab's)
        self._current = None
        self.set_neighbours([])

    @property
    def canvas(self):
        """The drawing's matplotlib canvas (made, with matplotlib imported, on first use)."""
        return self.plot_area.canvas

    def clear(self, message: str = "Select a row to see which nodes drive its score.") -> None:
        self.plot_area.show_message("")
        self.set_top_nodes([])
        self.set_neighbours([])
        self.alerts.clear()
        self.title.setText(message)
        self.save_button.setEnabled(False)
        self.kind = ""
        self.drawing = None
        self._current = None
        self._set_zoom_enabled(False)

    def scale_choice(self) -> tuple[str, float | None]:
        """(scale, top of scale) for core's drawing: the shared scale is linear up to ``fixed_vmax``
        (robust per molecule until a scale is known)."""
        vmax = self.fixed_vmax_getter() if self.fixed_vmax_getter is not None else self.fixed_vmax
        key = self.scale.currentData()
        if key == "fixed":
            return ("linear", vmax) if vmax is not None else ("robust", None)
        return key, None

    def show_graph(self, graphs, i: int, scores, highlight: list[int] | None = None,
                   highlight_bonds: list[int] | None = None) -> None:
        """Draw graph i with its node errors (from ``scores``); ``highlight`` marks a SMARTS match
        (its atoms; ``highlight_bonds``, its own bonds, default the bonds between its atoms)."""
        from core import node_names

        meta = graphs.meta[i]
        label = f", label {meta.label}" if meta.label is not None else ""
        name = meta.name if meta.name != meta.id else ""
        self._current = (graphs, i, scores, highlight)
        self._highlight_bonds = highlight_bonds
        self._names = node_names(graphs, i)
        self._errors = scores.node_errors_of(i) if scores.has_node_scores else None
        self._alert_atoms = ()
        key, find = _alert_source(graphs, i)
        self.alerts.show_molecule(key, _symbols(node_names(graphs, i)), find)
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
        self.drawing = draw_heatmap(self.canvas.figure, graphs, i, errors, title=self.picture_title(), scale=scale,
                                    vmax=vmax, highlight=highlight, highlight_bonds=self._highlight_bonds_shown(),
                                    min_bond_px=self._min_bond_px())
        self.kind = self.drawing.kind
        self._fitted = self.drawing.kind != "molecule" or self._view_is_whole()
        self._set_zoom_enabled(self.drawing.kind == "molecule")
        self._drawn_size = self.canvas.size().toTuple()
        self.canvas.draw_idle()

    # -- zoom, pan and hover -------------------------------------------------------------------
    def _min_bond_px(self) -> float:
        from core import READABLE_BOND_PX

        return READABLE_BOND_PX * self.canvas.devicePixelRatioF()  # figure pixels are device pixels

    def _highlight_bonds_shown(self) -> list[int] | None:
        """The SMARTS match's own bonds; a picked alert's are the bonds between its atoms."""
        return None if self._alert_atoms else self._highlight_bonds

    def _set_zoom_enabled(self, on: bool) -> None:
        for button in (self.zoom_out, self.zoom_in, self.fit, self.readable):
            button.setEnabled(on)

    def screen_bond_px(self) -> float:
        """The drawing's median bond length on screen, in logical pixels (0 when nothing is drawn)."""
        d = self.drawing
        if d is None or d.kind != "molecule":
            return 0.0
        x0, x1 = d.ax.get_xlim()
        return d.bond * d.ax.get_window_extent().width / abs(x1 - x0) / self.canvas.devicePixelRatioF()

    def _view_is_whole(self) -> bool:
        left, right, bottom, top = self.drawing.extent
        x0, x1 = self.drawing.ax.get_xlim()
        y0, y1 = self.drawing.ax.get_ylim()
        return x0 <= left + 0.5 and x1 >= right - 0.5 and y1 <= top + 0.5 and y0 >= bottom - 0.5

    def _set_view(self, cx: float, cy: float, half_w: float, half_h: float) -> None:
        """Centre the view on (cx, cy), kept over the drawing, and draw it."""
        left, right, bottom, top = self.drawing.extent
        cx = min(max(cx, left + half_w), right - half_w) if right - left > 2 * half_w else (left + right) / 2
        cy = min(max(cy, top + half_h), bottom - half_h) if bottom - top > 2 * half_h else (top + bottom) / 2
        ax = self.drawing.ax
        ax.set_xlim(cx - half_w, cx + half_w)
        ax.set_ylim(cy + half_h, cy - half_h)
        self._fitted = self._view_is_whole()
        self.canvas.draw_idle()

    def _view(self) -> tuple[float, float, float, float]:
        """(centre x, centre y, half width, half height) of the view, in drawing pixels."""
        ax = self.drawing.ax
        ax.apply_aspect()
        (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
        return (x0 + x1) / 2, (y0 + y1) / 2, abs(x1 - x0) / 2, abs(y0 - y1) / 2

    def zoom(self, factor: float, at: tuple[float, float] | None = None) -> None:
        """Zoom the molecule by ``factor`` (>1 closer) about ``at`` (drawing pixels; default the
        view's centre), between the whole molecule and four screen pixels per drawing pixel."""
        if self.drawing is None or self.drawing.kind != "molecule":
            return
        cx, cy, hw, hh = self._view()
        box = self.drawing.ax.get_window_extent()
        left, right, bottom, top = self.drawing.extent
        whole = max((right - left) / box.width, (bottom - top) / box.height)  # drawing pixels per screen pixel, fitted
        now = 2 * hw / box.width
        new = min(max(now / factor, 1 / MAX_ZOOM), max(whole, 1 / MAX_ZOOM))
        if at is None:
            at = (cx, cy)
        ratio = new / now  # keep the point under the mouse where it is
        self._set_view(at[0] + (cx - at[0]) * ratio, at[1] + (cy - at[1]) * ratio, hw * ratio, hh * ratio)

    def fit_view(self) -> None:
        """Show the whole drawing."""
        if self.drawing is None or self.drawing.kind != "molecule":
            return
        left, right, bottom, top = self.drawing.extent
        box = self.drawing.ax.get_window_extent()
        per = max((right - left) / box.width, (bottom - top) / box.height)
        self._set_view((left + right) / 2, (top + bottom) / 2, box.width * per / 2, box.height * per / 2)

    def readable_view(self) -> None:
        """Bonds at their readable length (one drawing pixel per screen pixel) around the largest error."""
        if self.drawing is None or self.drawing.kind != "molecule":
            return
        box = self.drawing.ax.get_window_extent()
        d = self.drawing
        cx, cy = d.xy[d.notes[0]] if d.notes else d.xy.mean(axis=0)
        self._set_view(float(cx), float(cy), box.width / 2, box.height / 2)

    def focus_atom(self, atom: int) -> None:
        """Move the view to ``atom`` (when the view shows only part of the molecule)."""
        d = self.drawing
        if d is None or d.kind != "molecule" or not 0 <= atom < len(d.xy) or self._fitted:
            return
        _, _, hw, hh = self._view()
        self._set_view(float(d.xy[atom][0]), float(d.xy[atom][1]), hw, hh)

    def _focus_top_node(self, row: int) -> None:
        item = self.top.item(row) if row >= 0 else None
        m = re.search(r"(\d+)\s", item.text()) if item is not None else None
        if m:
            self.focus_atom(int(m.group(1)))

    def _wheel(self, event) -> None:
        if self.drawing is None or self.drawing.kind != "molecule" or event.inaxes is not self.drawing.ax:
            return
        if "ctrl" in getattr(event, "modifiers", ()):
            self.zoom(ZOOM_STEP ** event.step, (event.xdata, event.ydata))
            return
        cx, cy, hw, hh = self._view()
        step = -0.15 * event.step
        if "shift" in getattr(event, "modifiers", ()):
            self._set_view(cx + step * 2 * hw, cy, hw, hh)
        else:
            self._set_view(cx, cy + step * 2 * hh, hw, hh)

    def _press(self, event) -> None:
        if self.drawing is not None and self.drawing.kind == "molecule" and event.button == 1 \
                and event.inaxes is self.drawing.ax:
            self._drag = (event.x, event.y, *self._view())

    def _release(self, _event) -> None:
        self._drag = None

    def _motion(self, event) -> None:
        if self._drag is not None:
            x, y, cx, cy, hw, hh = self._drag
            per = 2 * hw / self.drawing.ax.get_window_extent().width  # drawing pixels per figure pixel
            self._set_view(cx - (event.x - x) * per, cy + (event.y - y) * per, hw, hh)  # figure y grows upwards
            return
        text = self.atom_under(event.xdata, event.ydata) if event.inaxes is not None and self.drawing is not None \
            and event.inaxes is self.drawing.ax else ""
        if text:
            QToolTip.showText(QCursor.pos(), text, self.canvas)
        else:
            QToolTip.hideText()

    def atom_under(self, x: float | None, y: float | None) -> str:
        """What the hover says about the node at (x, y) in the drawing's coordinates: its name,
        error and rank ("" when no node is there)."""
        d = self.drawing
        if d is None or x is None or y is None or not len(d.xy):
            return ""
        dist = np.hypot(d.xy[:, 0] - x, d.xy[:, 1] - y)
        k = int(np.argmin(dist))
        if dist[k] > 0.4 * d.bond:
            return ""
        name = self._names[k] if k < len(self._names) else str(k)
        if self._errors is None:
            return name
        rank = int(np.sum(np.asarray(self._errors) > self._errors[k])) + 1
        return f"{name}: error {self._errors[k]:.4g} (rank {rank} of {len(self._errors)})"

    def _redraw_if_fitted(self) -> None:
        """After a resize, draw the molecule again at the new size unless the user has zoomed."""
        if self._current is not None and self._fitted and self.canvas.size().toTuple() != getattr(
                self, "_drawn_size", None):
            self.redraw()

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
        self.neighbours_label.setText(NEIGHBOURS_TITLE)
        self.neighbours_label.setVisible(bool(rows))
        self._update_stretch()

    def finding_neighbours(self) -> None:
        """Say that the similar training molecules are being found (their fingerprints built in the
        background); :meth:`set_neighbours` shows them."""
        self.neighbours.clear()
        self.neighbours.setVisible(False)
        self.neighbours_label.setText("Similar training molecules:\nfinding them…")
        self.neighbours_label.setVisible(True)
        self._update_stretch()

    def _update_stretch(self) -> None:
        empty = self.top.isHidden() and self.neighbours.isHidden() and self.alerts.isHidden()
        self._side.setStretch(6, 1 if empty else 0)

    def save_picture(self) -> None:
        inputs = [self._current[0].source] if self._current is not None else []
        path = dialogs.save_picture(self, "Save picture", "heatmap.png", self._last_dir(), inputs, self.save_to)
        if path:
            self.last_dir_used.emit(str(Path(path).parent))

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
                                        highlight=highlight, highlight_bonds=self._highlight_bonds_shown(),
                                        legend=self.picture_title()))
        elif self.drawing is not None and self.drawing.kind == "molecule" and not self._fitted:
            ax = self.drawing.ax  # the whole molecule in the picture, whatever part the view shows
            limits = ax.get_xlim(), ax.get_ylim()
            left, right, bottom, top = self.drawing.extent
            ax.set_xlim(left, right)
            ax.set_ylim(bottom, top)
            try:
                self.canvas.save_to(path)
            finally:
                ax.set_xlim(*limits[0])
                ax.set_ylim(*limits[1])
        else:
            self.canvas.save_to(path)


def _alert_source(graphs, i: int):
    """The alerts panel's key and search for graph i: its SMILES (searched by the panel), a TU
    molecule's place in its collection with ``core.graph_alerts`` (its molecule from the element
    labels), or no molecule at all ("")."""
    smiles = graphs.meta[i].smiles
    if smiles or not graphs.is_molecular:
        return smiles or "", None
    from core import graph_alerts

    return f"{graphs.source}#{i}#{graphs.meta[i].id}", lambda: graph_alerts(graphs, i)


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
