"""The choices a user makes in the window's views (flag rule, map space and method, map colours,
heatmap colour scale...), kept in QSettings so that a relaunch opens as the user left it.

One mechanism for every choice: the window names its choice widgets once, under a settings key,
and these two functions save and restore whatever they hold."""
from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QAbstractButton, QComboBox, QDoubleSpinBox, QSpinBox, QWidget


def save_choices(settings: QSettings, choices: dict[str, QWidget]) -> None:
    """Store each widget's current choice under its key.

    Args:
        settings: where the app keeps its settings.
        choices: settings key -> a QComboBox (its item's data, else its text), a spin box (its value)
            or a checkable button (checked or not).
    """
    for key, widget in choices.items():
        if isinstance(widget, QComboBox):
            data = widget.currentData()
            settings.setValue(key, data if data is not None else widget.currentText())
        elif isinstance(widget, (QSpinBox, QDoubleSpinBox)):
            settings.setValue(key, widget.value())
        elif isinstance(widget, QAbstractButton):
            settings.setValue(key, widget.isChecked())
        else:
            raise TypeError(f"{key}: cannot keep the choice of a {type(widget).__name__}")


def restore_choices(settings: QSettings, choices: dict[str, QWidget]) -> None:
    """Put back each stored choice (in the order of ``choices``); unknown or stale values are ignored."""
    for key, widget in choices.items():
        value = settings.value(key)
        if value is None:
            continue
        try:
            if isinstance(widget, QComboBox):
                index = widget.findData(value)
                index = index if index >= 0 else widget.findText(str(value))
                if index >= 0:
                    widget.setCurrentIndex(index)
            elif isinstance(widget, QSpinBox):
                widget.setValue(int(value))
            elif isinstance(widget, QDoubleSpinBox):
                widget.setValue(float(value))
            elif isinstance(widget, QAbstractButton):
                widget.setChecked(str(value).lower() in ("true", "1"))
        except (TypeError, ValueError):
            continue
