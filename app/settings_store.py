"""What the app keeps across relaunches, in one place: the window's layout, the training settings,
the flag thresholds and the views' choices, under versioned keys.

Version history:
    1: the detector under ``train/detector`` (written while GLocalKD was the default).
    2: the detector under ``train/detector_choice``, so that settings of version 1 start on the
       consensus, the default since, once; the old key is dropped when read.
"""
from __future__ import annotations

from PySide6.QtCore import QRect, QSettings
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow, QSplitter, QWidget

from .view_choices import restore_choices, save_choices
from .widgets.filter_bar import FilterBar
from .widgets.settings_form import TrainSettings

SETTINGS_VERSION = 2
VERSION_KEY = "settings/version"
DETECTOR_KEY = "train/detector_choice"
OBSOLETE_KEYS = ("train/detector",)  # version 1's detector, chosen when GLocalKD was the default
DEFAULT_SIZE = (1500, 950)  # the first window's size where the screen has room for it
FRAME_ROOM = (16, 48)  # what the window manager's frame and title bar may take around the window, in pixels


def first_geometry(available: QRect, size: tuple[int, int] = DEFAULT_SIZE) -> QRect:
    """Where the first window goes: ``size``, or less where the screen's available area (less
    room for the frame) is smaller, centred in that area.

    Args:
        available: the screen's available geometry (``QScreen.availableGeometry``: without the
            task bars and docks).
        size: the size wanted.

    Returns:
        The window's geometry (its inside, without the frame).
    """
    width = max(1, min(size[0], available.width() - FRAME_ROOM[0]))
    height = max(1, min(size[1], available.height() - FRAME_ROOM[1]))
    rect = QRect(0, 0, width, height)
    rect.moveCenter(available.center())
    rect.moveTop(max(available.top() + FRAME_ROOM[1] - FRAME_ROOM[0] // 2, rect.top()))  # the title bar on screen
    return rect


def migrate(settings: QSettings) -> None:
    """Bring settings written by an older version to :data:`SETTINGS_VERSION`.

    Args:
        settings: the app's settings; changed in place.
    """
    try:
        version = int(settings.value(VERSION_KEY, 1))
    except (TypeError, ValueError):
        version = 1
    if version < 2:
        for key in OBSOLETE_KEYS:
            settings.remove(key)
    settings.setValue(VERSION_KEY, SETTINGS_VERSION)


class SettingsStore:
    """Restores and saves the window's kept settings.

    Args:
        settings: where they are kept.
        window: the main window (its geometry and dock layout).
        splitters: the window's splitters, by settings key.
        form: the training settings.
        filters: the filter bar (flag percentile and rate, numeric ranges).
        choices: the views' choice widgets, by settings key (see :mod:`app.view_choices`).
    """

    def __init__(self, settings: QSettings, window: QMainWindow, splitters: dict[str, QSplitter],
                 form: TrainSettings, filters: FilterBar, choices: dict[str, QWidget]):
        self.settings = settings
        self.window = window
        self.splitters = splitters
        self.form = form
        self.filters = filters
        self.choices = choices

    def restore(self) -> None:
        """Put every kept setting back; missing or stale values leave the defaults."""
        s = self.settings
        migrate(s)
        geometry = s.value("window/geometry")
        if geometry is None or not self.window.restoreGeometry(geometry):  # the first start: fit the screen
            screen = self.window.screen() or QGuiApplication.primaryScreen()
            if screen is None:
                self.window.resize(*DEFAULT_SIZE)
            else:
                self.window.setGeometry(first_geometry(screen.availableGeometry()))
        state = s.value("window/state")
        if state is not None:
            self.window.restoreState(state)
        for key, widget in self.splitters.items():
            sizes = s.value(key)
            if sizes is not None:
                widget.restoreState(sizes)
        saved = {k: s.value(f"train/{k}") for k in self.form.params() if k != "detector"}
        saved["detector"] = s.value(DETECTOR_KEY)
        self.form.set_params({k: v for k, v in saved.items() if v is not None})
        for key, setter in (("view/percentile", self.filters.set_percentile), ("view/flag_rate", self.filters.set_rate)):
            try:
                value = s.value(key)
                if value is not None:
                    setter(float(value))
            except (TypeError, ValueError):
                pass
        restore_choices(s, self.choices)
        ranges = s.value("view/ranges")
        if ranges:
            self.filters.range_filter.from_text(str(ranges))

    def save(self) -> None:
        """Write every kept setting."""
        s = self.settings
        s.setValue(VERSION_KEY, SETTINGS_VERSION)
        s.setValue("window/geometry", self.window.saveGeometry())
        s.setValue("window/state", self.window.saveState())
        for key, widget in self.splitters.items():
            s.setValue(key, widget.saveState())
        for key, value in self.form.params().items():
            s.setValue(DETECTOR_KEY if key == "detector" else f"train/{key}", value)
        s.setValue("view/percentile", self.filters.percentile())
        s.setValue("view/flag_rate", self.filters.rate())
        save_choices(s, self.choices)
        s.setValue("view/ranges", self.filters.range_filter.to_text())
        s.sync()
