"""Matplotlib views embedded in Qt: live loss curve, score distributions and ROC."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from PySide6.QtWidgets import QSizePolicy


class Canvas(FigureCanvasQTAgg):
    def __init__(self, width: float = 5, height: float = 3.5, constrained: bool = True):
        super().__init__(Figure(figsize=(width, height), layout="constrained" if constrained else None))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(200, 160)

    def save_to(self, path: str, dpi: int = 150) -> None:
        """Write the figure to ``path`` in the format its suffix names (PNG by default), atomically."""
        from core import atomic_output

        suffix = Path(path).suffix.lower().lstrip(".")
        with atomic_output(path) as fh:
            self.figure.savefig(fh, format=suffix if suffix in self.get_supported_filetypes() else "png", dpi=dpi)


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
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs 1, 2, 3: never 1.2 or 1.4
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

    def show_evaluation(self, ev, threshold: float | None) -> None:
        """Histograms of the scores by class and the ROC curve of an :class:`app.state.Evaluation`;
        its ``reference`` (name, fpr, tpr) is another ranking's ROC curve drawn beside it (the
        graph-size baseline)."""
        scores, is_anomaly, auc, fpr, tpr = ev.scores, ev.is_anomaly, ev.auc, ev.fpr, ev.tpr
        anomaly_name, reference = f"label {ev.anomaly_label}", ev.reference
        self.reference_shown = reference is not None
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
        colours = ("#2e86c1", "#27ae60", "#8e44ad", "#d68910")
        for k, (name, c_auc, c_fpr, c_tpr) in enumerate(ev.components):  # a consensus's views, thin
            roc.plot(c_fpr, c_tpr, color=colours[k % len(colours)], linewidth=0.8, alpha=0.8,
                     label=f"{name} ({c_auc:.3f})")
        if reference is not None:
            name, ref_fpr, ref_tpr = reference
            roc.plot(ref_fpr, ref_tpr, color="#7f8c8d", linestyle="--", linewidth=1, label=name)
        if reference is not None or ev.components:
            roc.legend(fontsize=7, loc="lower right")
        roc.plot([0, 1], [0, 1], color="#999999", linestyle=":")
        roc.set_xlabel("false-positive rate")
        roc.set_ylabel("true-positive rate")
        roc.set_title(f"ROC-AUC {auc:.3f}", fontsize=10)
        roc.set_aspect("equal")
        self.draw_idle()
