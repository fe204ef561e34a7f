"""The Evaluation tab: which class is anomalous, the ROC-AUC in words, and the plots. The window
computes the evaluation (``app.tasks.evaluate``, in the background); this page only chooses the class and shows it."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from .plots import EvaluationPlot

NO_EVALUATION = ("Labels with at least two classes, and scores, are needed for the ROC curve and the class "
                 "distributions.")
REFERENCE_TIP = ("Graph size alone: the AUC of scoring each graph by how unusual its node and edge counts are "
                 "against the training graphs. A detector that does not beat it has learned little beyond size.")


class EvaluationPage(QWidget):
    """Anomalous-class chooser, ROC-AUC text and the class distributions with the ROC curve."""

    class_changed = Signal(object)  # the label chosen as the anomalous class (None when there is none)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = EvaluationPlot()
        self.anomaly_class = QComboBox()
        self.anomaly_class.currentIndexChanged.connect(lambda _: self.class_changed.emit(self.anomalous_label()))
        self.auc_label = QLabel("")
        self.auc_label.setWordWrap(True)  # a long note must wrap, not widen the window and squeeze the form
        top = QHBoxLayout()
        top.addWidget(QLabel("Anomalous class:"))
        top.addWidget(self.anomaly_class)
        top.addWidget(self.auc_label, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)

    def anomalous_label(self):
        return self.anomaly_class.currentData()

    def set_classes(self, counts: dict, default) -> None:
        """Offer each label (with its count) as the anomalous class, ``default`` chosen; no signal."""
        self.anomaly_class.blockSignals(True)
        self.anomaly_class.clear()
        for label, n in counts.items():
            self.anomaly_class.addItem(f"label {label} ({n:,})", label)
        if default is not None:
            self.anomaly_class.setCurrentIndex(self.anomaly_class.findData(default))
        self.anomaly_class.blockSignals(False)

    def computing(self) -> None:
        """Say that the evaluation is being computed (in the background); the plots stay until it is."""
        self.auc_label.setText("Computing the ROC-AUC and the curves…")

    def show_evaluation(self, ev, threshold) -> None:
        """Show an ``AppState.evaluation`` result, or say what is missing when it is None."""
        if ev is None:
            self.auc_label.setText("")
            self.plot.show_nothing(NO_EVALUATION)
            return
        self.auc_label.setText(ev.text)
        self.auc_label.setToolTip(REFERENCE_TIP if ev.reference else "")
        self.plot.show_evaluation(ev, threshold)
