"""Spin boxes and combo boxes take the mouse wheel only when they have the focus.

Scrolling a panel must never change a setting under the pointer on the way (λ from 1.00 to 0.50,
silently). One event filter, installed on the application, guards every spin box and combo box
of every window, present and future: an unfocused one passes the wheel to the scroll area around
it, which scrolls."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QApplication, QComboBox, QWidget

GUARDED = (QAbstractSpinBox, QComboBox)


class WheelGuard(QObject):
    """The application's event filter: a wheel over an unfocused spin or combo box scrolls instead."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Polish and isinstance(obj, GUARDED):
            obj.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # a wheel no longer gives them the focus
        elif event.type() == QEvent.Type.Wheel and isinstance(obj, GUARDED) and not obj.hasFocus():
            area = _scroll_area(obj)
            if area is not None:
                QApplication.sendEvent(area.viewport(), event)
            return True  # the value stays
        return False


def _scroll_area(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent


def install_wheel_guard(app: QApplication) -> WheelGuard:
    """Install the guard on ``app`` once; returns it (the same one on a second call)."""
    guard = app.findChild(WheelGuard)
    if guard is None:
        guard = WheelGuard(app)
        app.installEventFilter(guard)
    return guard
