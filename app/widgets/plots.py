"""Matplotlib views embedded in Qt: live loss curve, score distributions and ROC, node heatmap."""
from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QListWidget, QPushButton, QSizePolicy,
                               QVBoxLayout, QWidget)


class Canvas(FigureCanvasQTAgg):
    def __init__(self, width: float = 5, height: float = 3.5, constrained: bool = True):
        super().__init__(Figure(figsize=(width, height), layout="constrained" if constrained else None))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(200, 160)


class LossPlot(Canvas):
    """Training loss per epoch, redrawn as epochs finish."""

    def __init__(self):
        super().__init__()
        self.ax = self.figure.add_subplot()
        self.show_losses([])

    def show_losses(self, losses: list[float]) -> None:
        ax = self.ax
        ax.clear()
        ax.set_xlabel("epoch")
        ax.set_ylabel("training loss")
        ax.grid(alpha=0.3)
        if losses:
            ax.plot(np.arange(1, len(losses) + 1), losses, color="#c0392b", marker="." if len(losses) < 60 else None)
            if min(losses) > 0 and max(losses) / min(losses) > 20:
                ax.set_yscale("log")
        else:
            ax.text(0.5, 0.5, "Train a model to see its loss curve", ha="center", va="center",
                    transform=ax.transAxes, color="#777777")
        self.draw_idle()


class EvaluationPlot(Canvas):
    """Score distributions by class and the ROC curve, when labels are known."""

    def __init__(self):
        super().__init__(7, 3.2)
        self.show_nothing("Labels and scores are needed for the ROC curve and class distributions")

    def show_nothing(self, message: str) -> None:
        self.figure.clear()
        ax = self.figure.add_subplot()
        ax.set_axis_off()
        ax.text(0.5, 0.5, message, ha="center", va="center", color="#777777", wrap=True)
        self.draw_idle()

    def show(self, scores: np.ndarray, is_anomaly: np.ndarray, auc: float, fpr: np.ndarray, tpr: np.ndarray,
             anomaly_name: str, threshold: float | None,
             reference: tuple[str, np.ndarray, np.ndarray] | None = None) -> None:
        """Histograms of the scores by class and the ROC curve; ``reference`` (name, fpr, tpr) is
        another ranking's ROC curve drawn beside it (the graph-size baseline)."""
        self.figure.clear()
        hist, roc = self.figure.subplots(1, 2)
        positive = scores[scores > 0]
        log = positive.size == scores.size and scores.size > 1 and positive.max() > 100 * np.median(positive)
        if log:  # heavy-tailed scores: log-spaced bins on a log axis keep both classes readable
            bins = np.geomspace(positive.min(), positive.max(), 41)
            hist.set_xscale("log")
        else:
            bins = np.histogram_bin_edges(scores, bins=40)
        hist.hist(scores[~is_anomaly], bins=bins, alpha=0.6, label="normal", color="#2e86c1")
        hist.hist(scores[is_anomaly], bins=bins, alpha=0.6, label=f"anomalous ({anomaly_name})", color="#c0392b")
        if threshold is not None:
            hist.axvline(threshold, color="black", linestyle="--", linewidth=1, label="flag threshold")
        hist.set_xlabel("anomaly score")
        hist.set_ylabel("graphs")
        hist.legend(fontsize=8)
        roc.plot(fpr, tpr, color="#c0392b", label="this detector")
        if reference is not None:
            name, ref_fpr, ref_tpr = reference
            roc.plot(ref_fpr, ref_tpr, color="#7f8c8d", linestyle="--", linewidth=1, label=name)
            roc.legend(fontsize=7, loc="lower right")
        roc.plot([0, 1], [0, 1], color="#999999", linestyle=":")
        roc.set_xlabel("false-positive rate")
        roc.set_ylabel("true-positive rate")
        roc.set_title(f"ROC-AUC {auc:.3f}", fontsize=10)
        roc.set_aspect("equal")
        self.draw_idle()


class HeatmapPanel(QWidget):
    """The selected graph drawn with its nodes coloured by error, and its top nodes listed."""

    def __init__(self):
        super().__init__()
        self.canvas = Canvas(6, 4.5, constrained=False)  # draw_heatmap places its own axes
        self.title = QLabel("Select a row to see which nodes drive its score.")
        self.title.setWordWrap(True)
        self.top = QListWidget()
        self.top.setMaximumWidth(190)
        self.save_button = QPushButton("Save picture…")
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self.save_picture)
        self.top_label = QLabel("Top nodes (error)")
        side = self._side = QVBoxLayout()
        side.addWidget(self.top_label)
        side.addWidget(self.top, 1)
        side.addStretch(0)  # takes the list's place when it is hidden, so the button stays at the bottom
        side.addWidget(self.save_button)
        row = QHBoxLayout()
        row.addWidget(self.canvas, 1)
        row.addLayout(side)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addLayout(row, 1)
        self.kind = ""

    def clear(self, message: str = "Select a row to see which nodes drive its score.") -> None:
        self.canvas.figure.clear()
        self.canvas.draw_idle()
        self.top.clear()
        self.title.setText(message)
        self.save_button.setEnabled(False)
        self.kind = ""

    def show_graph(self, graphs, i: int, scores) -> None:
        from core import node_names
        from core import draw_heatmap

        meta = graphs.meta[i]
        label = f", label {meta.label}" if meta.label is not None else ""
        if not scores.has_node_scores:  # OCGCN and the kernel methods score whole graphs only
            self.kind = draw_heatmap(self.canvas.figure, graphs, i, None)
            self._current = (graphs, i, None)
            self.canvas.draw_idle()
            self.set_top_nodes([])
            self.save_button.setEnabled(True)
            self.title.setText(f"<b>{meta.id}</b> {meta.name if meta.name != meta.id else ''} — score "
                               f"{scores.score[i]:.4g}{label}<br><tt>{meta.smiles}</tt><br><i>This detector "
                               "scores whole graphs and has no per-node errors; train GLocalKD to see which "
                               "nodes drive a score.</i>")
            return
        errors = scores.node_errors_of(i)
        self.kind = draw_heatmap(self.canvas.figure, graphs, i, errors)
        self._current = (graphs, i, errors)
        self.canvas.draw_idle()
        self.title.setText(f"<b>{meta.id}</b> {meta.name if meta.name != meta.id else ''} — score "
                           f"{scores.score[i]:.4g} ({_terms(scores, i)}){label}<br><tt>{meta.smiles}</tt>")
        names = node_names(graphs, i)
        self.set_top_nodes([(names[j], err) for j, err in scores.top_nodes(i, 15)])
        self.save_button.setEnabled(True)

    def set_top_nodes(self, nodes: list[tuple[str, float]]) -> None:
        """List the nodes with the largest errors; the list is hidden when there are none (a
        detector without node scores)."""
        self.top.clear()
        for name, error in nodes:
            self.top.addItem(f"{name}   {error:.4g}")
        self.top_label.setVisible(bool(nodes))
        self.top.setVisible(bool(nodes))
        self._side.setStretch(2, 0 if nodes else 1)

    def save_picture(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save picture", "heatmap.png", "PNG image (*.png);;SVG image (*.svg)")
        if not path:
            return
        if path.lower().endswith(".svg") and self.kind == "molecule":
            from core import graph_molecule, molecule_image

            graphs, i, errors = self._current
            with open(path, "wb") as fh:  # RDKit's own vector drawing, not a raster inside an SVG
                fh.write(molecule_image(graph_molecule(graphs, i), errors, svg=True))
        else:
            self.canvas.figure.savefig(path, dpi=150)


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
    return f"{graph} + {node}"
