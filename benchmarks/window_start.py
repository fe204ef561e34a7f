"""Start-up of the desktop app: seconds from the process's start until its first window is drawn.

    xvfb-run -a -s '-screen 0 1600x1000x24' python -m benchmarks.window_start [--runs 2]

Each run is a fresh interpreter that does what ``python main.py`` does up to the window (the
imports, the QApplication, building the window with empty settings, showing it) and stops once
the window has been exposed and painted. Prints one JSON line per run: seconds from the process's
start to the imports done, the window built, shown and drawn, and the load average beside them
(the machine may be shared). Use an X server (``xvfb-run``): the offscreen platform paints too, but
not as a screen does.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile


def one_run() -> dict:
    """Time this process's start of the window (run in a fresh interpreter)."""
    import time

    import psutil

    started = psutil.Process().create_time()
    from core import retain_freed_memory, wait_passively

    wait_passively()
    retain_freed_memory()
    from PySide6.QtCore import QEvent, QObject, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    from app.main_window import MainWindow

    imported = time.time() - started
    marks: dict[str, float] = {}

    class Exposed(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
            if event.type() == QEvent.Type.Expose and "exposed" not in marks and obj.isExposed():
                marks["exposed"] = time.time() - started
                QTimer.singleShot(0, drawn)  # after the expose's synchronous paint
            return False

    def drawn() -> None:
        marks["drawn"] = time.time() - started
        app.quit()

    with tempfile.TemporaryDirectory() as tmp:
        settings = QSettings(os.path.join(tmp, "settings.ini"), QSettings.Format.IniFormat)
        window = MainWindow(settings)
        built = time.time() - started
        window.winId()  # the native window, to watch its expose event
        watcher = Exposed()
        window.windowHandle().installEventFilter(watcher)
        window.show()
        shown = time.time() - started
        app.exec()
        window.runner.stop_all()
    return {"imported_s": round(imported, 3), "built_s": round(built, 3), "shown_s": round(shown, 3),
            "drawn_s": round(marks.get("drawn", float("nan")), 3), "load_average": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_run()), flush=True)
        os._exit(0)  # as the app: no seconds of Python's teardown
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-m", "benchmarks.window_start", "--one"], capture_output=True,
                             text=True, check=True)
        print(out.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
