"""The window's parts that hold one rule each: the actions table and the settings store."""
from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolBar

from app.actions import ACTIONS, MENUS, Facts, update_actions
from app.main_window import MainWindow
from app.settings_store import SETTINGS_VERSION, VERSION_KEY, migrate


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def test_every_action_of_the_menus_and_toolbar_is_a_row_of_the_table(qtbot, settings):
    """An action added by hand, outside the table, would escape the enablement rules."""
    w = MainWindow(settings)
    qtbot.addWidget(w)
    table = set(w.actions_by_name.values())
    submenus = {item[1:] for items in MENUS.values() for item in items if item.startswith("@")}
    for top in w.menuBar().actions():
        for action in top.menu().actions():
            if action.isSeparator() or action.menu() is not None:
                assert action.isSeparator() or action.text() in submenus
                continue
            assert action in table, action.text()
    for bar in w.findChildren(QToolBar):
        assert all(a in table for a in bar.actions() if not a.isSeparator())
    assert {spec.name for spec in ACTIONS} == set(w.actions_by_name)
    w.runner.stop_all()


def test_each_action_is_enabled_by_its_rule_alone(qtbot):
    actions = {spec.name: QAction(spec.text) for spec in ACTIONS}
    idle = Facts(busy=False, has_data=True, has_model=True, stoppable=False, weighable=True, has_rows=True,
                 savable=True, reviewable=True)
    update_actions(actions, idle)
    assert {n for n, a in actions.items() if not a.isEnabled()} == {"stop"}
    update_actions(actions, dataclasses.replace(idle, busy=True, stoppable=True))
    assert {n for n, a in actions.items() if a.isEnabled()} == {"stop", "quit", "about", "copy", "copy_image"}
    update_actions(actions, dataclasses.replace(idle, has_model=False, savable=False, weighable=False,
                                                has_rows=False, has_data=False, reviewable=False))
    assert {n for n, a in actions.items() if a.isEnabled()} == {"open", "open_folder", "load_model", "open_session",
                                                                "quit", "about"}
    update_actions(actions, dataclasses.replace(idle, has_model=False, savable=False, weighable=False,
                                                has_rows=False, reviewable=False))  # data open: a session to save
    assert actions["save_session"].isEnabled()


def test_settings_of_version_1_are_migrated_once(settings):
    settings.setValue("train/detector", "glocalkd")  # version 1: no version key
    settings.setValue("train/epochs", 7)
    migrate(settings)
    assert settings.value("train/detector") is None and settings.value("train/epochs") in (7, "7")
    assert int(settings.value(VERSION_KEY)) == SETTINGS_VERSION
    settings.setValue("train/detector", "kept")  # a current version is not migrated again
    migrate(settings)
    assert settings.value("train/detector") == "kept"
