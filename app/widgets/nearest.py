"""The selected molecule beside its nearest training molecule, their common substructure marked."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

LEGEND = ("<span style='background:#8ccc8c'>&nbsp;green&nbsp;</span> atoms and bonds of the largest substructure "
          "the two share (RDKit FMCS); <span style='background:#fa9e59'>&nbsp;orange&nbsp;</span> atoms only one "
          "of them has.")
WAITING = "Select a row: its nearest training molecule (ECFP4 Tanimoto) is drawn beside it once a model is trained."


class NearestPanel(QWidget):
    """A caption (ids, scores, similarity) over one picture of the two molecules."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.caption = QLabel(WAITING)
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        self.picture = QLabel()
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.picture.setMinimumSize(200, 120)
        self._image = QImage()
        layout = QVBoxLayout(self)
        layout.addWidget(self.caption)
        layout.addWidget(self.picture, 1)

    def clear(self, message: str = WAITING) -> None:
        self._image = QImage()
        self.picture.clear()
        self.caption.setText(message)

    def show_pair(self, png: bytes, caption: str) -> None:
        """Show the picture (PNG bytes) under ``caption`` (rich text)."""
        self._image = QImage.fromData(png, "PNG")
        self.caption.setText(f"{caption}<br>{LEGEND}")
        self._fit()

    def has_picture(self) -> bool:
        return not self._image.isNull()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        if self._image.isNull():
            return
        size = self.picture.size()
        pixmap = QPixmap.fromImage(self._image)
        if pixmap.width() > size.width() or pixmap.height() > size.height():
            pixmap = pixmap.scaled(size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)
        self.picture.setPixmap(pixmap)
