"""The page shown before any data is open: what the app does, the demos and an Open button."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

INTRO = ("<h2>GLocalKD Studio</h2><p>Graph-level anomaly detection by glocal knowledge "
         "distillation. Open a compound set (SMILES, CSV/TSV, SDF) or a TU graph collection, "
         "train on the normal graphs, and read a ranked list whose heatmaps show which atoms "
         "drive each score.</p><p>Drop a file here, open one, or start with a demo:</p>")


def welcome_page(buttons: list[tuple[str, Callable[..., None]]]) -> QWidget:
    """The welcome page.

    Args:
        buttons: (text, slot) of each button, top to bottom.

    Returns:
        The page.
    """
    page = QWidget()
    layout = QVBoxLayout(page)
    layout.addStretch(1)
    title = QLabel(INTRO)
    title.setWordWrap(True)
    title.setAlignment(Qt.AlignmentFlag.AlignCenter)
    layout.addWidget(title)
    for text, slot in buttons:
        button = QToolButton()
        button.setText(text)
        button.setMinimumWidth(360)
        button.clicked.connect(slot)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(button)
        row.addStretch(1)
        layout.addLayout(row)
    layout.addStretch(2)
    return page
