"""The window's left dock: the data that is open (its summary and rejected rows) and how to train
on it (the settings form, Train and Stop, a progress bar and a line that says what is going on).
Its buttons say by signals what the user asked for; the window decides what happens."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QGroupBox, QHBoxLayout, QLabel, QProgressBar, QPushButton, QScrollArea, QVBoxLayout,
                               QWidget)

from .settings_form import TrainSettings


class SidePanel(QScrollArea):
    """Data summary, rejected rows, training settings, Train and Stop, progress."""

    train_clicked = Signal()
    stop_clicked = Signal()
    rejects_clicked = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.summary = QLabel("No data loaded.")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.rejects_button = QPushButton("Show rejected rows…")
        self.rejects_button.clicked.connect(self.rejects_clicked)
        data_box = QGroupBox("Data")
        data_layout = QVBoxLayout(data_box)
        data_layout.addWidget(self.summary)
        data_layout.addWidget(self.rejects_button)

        self.form = TrainSettings()
        self.train_button = QPushButton("Train")
        self.train_button.clicked.connect(self.train_clicked)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop_clicked)
        self.progress = QProgressBar()
        self.progress.setFormat("")
        self.progress_label = QLabel("")
        self.progress_label.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(self.train_button)
        buttons.addWidget(self.stop_button)
        train_box = QGroupBox("Training")
        train_layout = QVBoxLayout(train_box)
        train_layout.addLayout(buttons)  # above the settings: progress and ETA stay in sight while training
        train_layout.addWidget(self.progress)
        train_layout.addWidget(self.progress_label)
        train_layout.addWidget(self.form)

        content = QWidget()
        layout = QVBoxLayout(content)
        layout.addWidget(data_box)
        layout.addWidget(train_box)
        layout.addStretch(1)
        self.setWidget(content)
        self.setWidgetResizable(True)
        # lines wrap, but the buttons and settings boxes do not: a dock narrower than them (a 1024-pixel
        # screen) scrolls sideways too; with no scroll bar it cut off Stop and the detector box
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)

    def say(self, text: str) -> None:
        """The line under the progress bar: what is going on, or what just happened."""
        self.progress_label.setText(text)

    def set_summary(self, lines: list[str]) -> None:
        self.summary.setText("<br>".join(lines))

    def set_rejects(self, count: int) -> None:
        self.rejects_button.setEnabled(count > 0)
        self.rejects_button.setText(f"Show rejected rows ({count:,})…" if count else "No rejected rows")

    def count_to(self, maximum: int, unit: str) -> None:
        """A bar that counts ``unit`` up to ``maximum`` (e.g. epochs, rows), from 0."""
        self.progress.setRange(0, maximum)
        self.progress.setValue(0)
        self.progress.setFormat("%p%" if unit == "epoch" else f"%v / %m {unit}")  # the line below counts epochs

    def count_rows(self, rows: int, total: int) -> None:
        """Rows done of ``total``, on a bar that counts rows."""
        if self.progress.maximum() != total:
            self.count_to(total, "rows")
        self.advance(rows)

    def advance(self, value: int) -> None:
        self.progress.setValue(min(value, self.progress.maximum()))

    def busy_bar(self) -> None:
        """A bar that only says "working" (loading, scoring, fitting in one step)."""
        self.progress.setRange(0, 0)
        self.progress.setFormat("")

    def done_bar(self) -> None:
        """An empty bar: nothing is running."""
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("")
