"""The window's parts that hold one rule each: the actions table and the settings store."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolBar

from app.actions import ACTIONS, MENUS, Facts, update_actions
from app.main_window import MainWindow
from app.settings_store import SETTINGS_VERSION, VERSION_KEY, migrate


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
    assert {n for n, a in actions.items() if not a.isEnabled()} == {"stop", "resume_scoring"}
    update_actions(actions, dataclasses.replace(idle, resumable=True))  # a stopped scoring's tab
    assert actions["resume_scoring"].isEnabled()
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


@pytest.mark.parametrize("screen", [(1366, 768), (1280, 800), (1920, 1080)])  # a common laptop, too
def test_the_first_window_fits_the_screens_available_area(qtbot, settings, monkeypatch, screen):
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QScreen

    from app.settings_store import DEFAULT_SIZE

    available = QRect(0, 30, screen[0], screen[1] - 30)  # a task bar along the top
    monkeypatch.setattr(QScreen, "availableGeometry", lambda _screen: available)
    w = MainWindow(settings)
    qtbot.addWidget(w)
    assert available.contains(w.geometry())
    assert w.width() <= available.width() - 16 and w.height() <= available.height() - 48  # room for the frame
    assert w.width() >= w.minimumSizeHint().width() and w.height() >= w.minimumSizeHint().height()
    if screen[0] >= DEFAULT_SIZE[0] + 16 and screen[1] >= DEFAULT_SIZE[1] + 80:
        assert (w.width(), w.height()) == DEFAULT_SIZE  # a large screen: the default size, centred
        assert abs(w.geometry().center().x() - available.center().x()) <= 1
    w.runner.stop_all()


FIRST_AND_SECOND_START = """
import json, sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.main_window import MainWindow
sizes = []
for start in range(2):
    w = MainWindow(QSettings(sys.argv[1], QSettings.Format.IniFormat))
    w.show()
    app.processEvents()
    sizes.append([w.width(), w.height()])
    if start == 0:
        w.resize(w.minimumSizeHint().width() + 13, w.minimumSizeHint().height() + 7)  # the user's size
        sizes.append([w.width(), w.height()])
    w.close()
print(json.dumps({"sizes": sizes, "available": list(app.primaryScreen().availableGeometry().getRect())}), flush=True)
import os
os._exit(0)  # as the app ends: the closed windows' warm-up jobs are not waited for
"""


def test_on_a_1280x800_screen_the_first_window_fits_and_the_next_start_keeps_the_users_size(tmp_path):
    """A real screen of 1280x800 (the offscreen platform's configured screen, in a process of its own)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": 1280, "height": 800,
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}"}
    out = subprocess.run([sys.executable, "-c", FIRST_AND_SECOND_START, str(tmp_path / "settings.ini")], env=env,
                         cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    first, chosen, second = result["sizes"]
    assert result["available"] == [0, 0, 1280, 800]
    assert first[0] <= 1280 - 16 and first[1] <= 800 - 48  # the first start fits, with room for the frame
    assert second == chosen  # the next start keeps the size the user left


AFTER_WARM_UP = """
import gc, json, os, sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
start = time.perf_counter()

def check():
    if gc.get_freeze_count() or time.perf_counter() - start > 90:
        print(json.dumps({"frozen": gc.get_freeze_count(), "torch": "torch" in sys.modules,
                          "pool": os.environ.get("QT_NO_GUI_THREADPOOL")}), flush=True)
        app.quit()
    else:
        QTimer.singleShot(100, check)

QTimer.singleShot(100, check)
from app.main import main
main([])
"""


def test_once_torch_has_loaded_the_app_keeps_its_objects_out_of_the_garbage_collector(tmp_path):
    """The app as started by its entry point: after the warm-up, the objects of torch, RDKit and Qt
    are frozen, so a full collection no longer walks them."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path)}  # settings of its own
    out = subprocess.run([sys.executable, "-c", AFTER_WARM_UP], env=env, cwd=Path(__file__).resolve().parents[2],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["torch"] and result["frozen"] > 100_000
    assert result["pool"] == "1"  # the app paints on its GUI thread only (next test)


GRADIENT_FILL = """
import os, sys
if sys.argv[1] == "app":
    from app.main import paint_on_the_gui_thread
    paint_on_the_gui_thread()
from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter
from PySide6.QtWidgets import QApplication
app = QApplication([])
image = QImage(2000, 2000, QImage.Format.Format_ARGB32_Premultiplied)
gradient = QLinearGradient(0, 0, 2000, 0)
gradient.setColorAt(0, QColor("red"))
gradient.setColorAt(1, QColor("blue"))
painter = QPainter(image)
for _ in range(5):
    painter.fillRect(0, 0, 2000, 2000, gradient)
painter.end()
print(len(os.listdir(f"/proc/{os.getpid()}/task")))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc (Linux)")
@pytest.mark.parametrize("setting", ["qt", "app"])
def test_the_app_keeps_qt_from_painting_on_helper_threads(setting):
    """Qt fills a large gradient on helper threads of its own (it waits for them, and on a busy
    2-core machine they wait for a core); as the app sets it up, the GUI thread paints alone."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "QT_NO_GUI_THREADPOOL"} | {"QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", GRADIENT_FILL, setting], env=env, capture_output=True, text=True,
                         timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    threads = int(out.stdout.strip().splitlines()[-1])
    assert threads == 1 if setting == "app" else threads > 1


def test_a_small_window_keeps_the_side_panels_buttons_and_boxes_within_reach(qtbot, window):
    """At 1024 x 600 the dock was narrower than its content, which could not scroll sideways: Stop and
    the detector box were cut off on the right, out of reach. The window still fits the screen."""
    window.resize(1024, 600)
    qtbot.waitUntil(lambda: window.width() <= 1024, timeout=5000)
    qtbot.wait(100)
    side = window.side
    bar = side.horizontalScrollBar()
    assert side.viewport().width() < side.widget().minimumSizeHint().width() and bar.isVisible()
    for widget in (side.stop_button, side.form.detector):
        side.ensureWidgetVisible(widget)
        right = widget.mapTo(side.viewport(), widget.rect().topRight()).x()
        assert 0 <= right < side.viewport().width(), widget
