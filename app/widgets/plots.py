"""Matplotlib views embedded in Qt: live loss curve, score distributions and ROC.

Matplotlib is imported, and a figure made, only when a view first draws one (its import and the
first draw of empty figures took about a second before the window could show): until then a
view shows its message as a plain label, and so does an empty view later.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QStackedWidget


def figure_canvas(width: float = 5, height: float = 3.5, constrained: bool = True):
    """A matplotlib canvas for Qt (``FigureCanvasQTAgg``) of a new figure, able to save itself
    (``save_to``), importing matplotlib on first use."""
    from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
    from matplotlib.figure import Figure

    canvas = FigureCanvasQTAgg(Figure(figsize=(width, height), layout="constrained" if constrained else None))
    canvas.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
    canvas.setMinimumSize(200, 110)
    canvas.save_to = lambda path, dpi=150: save_figure(canvas, path, dpi)
    return canvas


def save_figure(canvas, path: str, dpi: int = 150) -> None:
    """Write ``canvas``'s figure to ``path`` in the format its suffix names (PNG by default), atomically."""
    from core import atomic_output

    suffix = Path(path).suffix.lower().lstrip(".")
    with atomic_output(path) as fh:
        canvas.figure.savefig(fh, format=suffix if suffix in canvas.get_supported_filetypes() else "png", dpi=dpi)


class Canvas(QStackedWidget):
    """A place for a matplotlib figure, made on first use: ``canvas`` (the ``FigureCanvasQTAgg``)
    and ``figure`` make it and show it; :meth:`show_message` shows a plain label instead.

    Args:
        width, height: the figure's size in inches.
        constrained: matplotlib's constrained layout.
        message: what shows until a figure is drawn.
    """

    def __init__(self, width: float = 5, height: float = 3.5, constrained: bool = True, message: str = ""):
        super().__init__()
        self._size = (width, height, constrained)
        self._canvas = None
        self._handlers: list[tuple[str, object]] = []  # mpl_connect's, made with the canvas
        self.placeholder = QLabel(message)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setStyleSheet("color: #777777; background: white;")
        self.placeholder.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.addWidget(self.placeholder)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(200, 110)

    def made(self) -> bool:
        """Whether the matplotlib canvas exists (a figure has been drawn)."""
        return self._canvas is not None

    @property
    def canvas(self):
        """The matplotlib canvas, made (matplotlib imported) on first use and shown."""
        if self._canvas is None:
            self._canvas = figure_canvas(*self._size)
            for name, handler in self._handlers:
                self._canvas.mpl_connect(name, handler)
            self.addWidget(self._canvas)
            self._canvas.resize(self.size())
        if self.currentWidget() is not self._canvas:
            self.setCurrentWidget(self._canvas)
        return self._canvas

    @property
    def figure(self):
        return self.canvas.figure

    def mpl_connect(self, name: str, handler) -> None:
        """Connect a matplotlib event handler (now, or when the canvas is made)."""
        self._handlers.append((name, handler))
        if self._canvas is not None:
            self._canvas.mpl_connect(name, handler)

    def draw_idle(self) -> None:
        """Redraw the figure and show it (in place of a message shown since it was last drawn)."""
        if self._canvas is not None:
            self.canvas.draw_idle()

    def show_message(self, text: str) -> None:
        """Show ``text`` in place of the figure (no matplotlib needed)."""
        self.placeholder.setText(text)
        self.setCurrentWidget(self.placeholder)

    def save_to(self, path: str, dpi: int = 150) -> None:
        """Write the figure to ``path`` in the format its suffix names (PNG by default), atomically."""
        save_figure(self.canvas, path, dpi)


NO_LOSSES = "Train a model to see its loss curve"


class LossPlot(Canvas):
    """Training loss per epoch, redrawn as epochs finish."""

    def __init__(self):
        super().__init__(message=NO_LOSSES)
        self.ax = None

    def show_losses(self, losses: list[float]) -> None:
        if not losses:
            self.show_message(NO_LOSSES)
            return
        from matplotlib.ticker import MaxNLocator

        if self.ax is None:
            self.ax = self.figure.add_subplot()
        ax = self.ax
        ax.clear()
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs 1, 2, 3: never 1.2 or 1.4
        ax.set_ylabel("training loss")
        ax.grid(alpha=0.3)
        ax.plot(np.arange(1, len(losses) + 1), losses, color="#c0392b", marker="." if len(losses) < 60 else None)
        if min(losses) > 0 and max(losses) / min(losses) > 20:
            ax.set_yscale("log")
        self.draw_idle()


class EvaluationPlot(Canvas):
    """Score distributions by class and the ROC curve, when labels are known."""

    def __init__(self):
        super().__init__(7, 3.2, message="Labels and scores are needed for the ROC curve and class distributions")
        self.reference_shown = False

    def show_nothing(self, message: str) -> None:
        self.show_message(message)

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
