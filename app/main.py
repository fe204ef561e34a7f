"""Entry point: show a window at once, then load the heavy libraries (torch, RDKit) behind it."""
from __future__ import annotations

import argparse
import sys

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox

from core import wait_passively  # core's package import does not load torch


def main(argv: list[str] | None = None) -> int:
    wait_passively()  # before torch loads its OpenMP runtime (in build(), below)
    args = argparse.ArgumentParser(prog="glocalkd-studio", description="GLocalKD Studio desktop app")
    args.add_argument("file", nargs="?", help="data file or TU folder to open")
    args.add_argument("--demo", action="store_true", help="open the bundled hERG demo data set")
    opts = args.parse_args(sys.argv[1:] if argv is None else argv)

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("GLocalKD Studio")
    app.setOrganizationName("GLocalKD Studio")
    splash = QLabel("Starting GLocalKD Studio…")
    splash.setAlignment(Qt.AlignmentFlag.AlignCenter)
    splash.setWindowFlags(Qt.WindowType.SplashScreen)
    splash.resize(360, 120)
    splash.show()
    app.processEvents()
    holder = {}

    def build() -> None:
        from .main_window import DEMOS, MainWindow  # imports torch, torch-geometric and RDKit
        from .qt_check import emit_bug_message
        from core import retain_freed_memory

        retain_freed_memory()  # far fewer page faults in training: see core/allocator.py
        window = MainWindow()
        window.show()
        splash.close()
        problem = emit_bug_message()
        if problem:
            print(f"glocalkd-studio: warning: {problem}", file=sys.stderr)
            QMessageBox.warning(window, "Qt library problem", problem)
        holder["window"] = window
        if opts.file:
            window.open_path(opts.file)
        elif opts.demo:
            window.open_path(str(next(iter(DEMOS.values()))))

    QTimer.singleShot(0, build)
    return app.exec()
