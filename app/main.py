"""Entry point: the window appears at once; torch, RDKit and the data load behind a progress bar."""
from __future__ import annotations

import argparse
import gc
import os
import sys

from PySide6.QtWidgets import QApplication, QMessageBox

from core import retain_freed_memory, wait_passively  # core's package import does not load torch


def keep_loaded_objects(_note: str = "") -> None:
    """Keep every object alive now (torch's, RDKit's, Qt's: about 300,000) out of Python's cyclic
    garbage collector, once torch and RDKit have loaded: a full collection walked them all, which
    stopped the window for about 0.2 s each time one ran (while scrolling, say). Objects made later
    are collected as usual."""
    gc.freeze()


def paint_on_the_gui_thread() -> None:
    """Keep Qt's painting on the GUI thread. Qt fills gradients (the scroll bars' among them) on a
    pool of helper threads and waits for them; on a 2-core machine that is training or scoring,
    those threads wait for a core, and so did the window: dragging the results table's scroll bar
    painted 30 % slower at the median with the pool than without it, with another job running.
    Set before the first paint; a value the user set is kept."""
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def open_at_start(window, file: str | None, demo: bool) -> None:
    """Open what the command line names, as File > Open opens it (data, a ranked report, a session
    or a model file), or the hERG demo; it opens as soon as torch has loaded.

    Args:
        window: the main window.
        file: the path given on the command line (None: none).
        demo: ``--demo`` was given (used only without ``file``).
    """
    from .main_window import DEMOS

    if file:
        window.open_path(file)
    elif demo:
        window.open_path(str(next(iter(DEMOS.values()))))


def main(argv: list[str] | None = None) -> int:
    paint_on_the_gui_thread()
    wait_passively()  # before torch loads its OpenMP runtime (app.tasks.warm_up, in a worker thread)
    retain_freed_memory()  # far fewer page faults in training (core.runtime.allocator)
    args = argparse.ArgumentParser(prog="glocalkd-studio", description="GLocalKD Studio desktop app")
    args.add_argument("file", nargs="?", help="a data file or TU folder, a ranked report, a session or a model file "
                      "to open")
    args.add_argument("--demo", action="store_true", help="open the bundled hERG demo data set")
    opts = args.parse_args(sys.argv[1:] if argv is None else argv)

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("GLocalKD Studio")
    app.setOrganizationName("GLocalKD Studio")
    from .main_window import MainWindow  # Qt and matplotlib only: torch loads in the window's warm-up job
    from .qt_check import emit_bug_message

    window = MainWindow()
    window.opening.warmed_up.connect(keep_loaded_objects)
    window.show()
    problem = emit_bug_message()
    if problem:
        print(f"glocalkd-studio: warning: {problem}", file=sys.stderr)
        QMessageBox.warning(window, "Qt library problem", problem)
    open_at_start(window, opts.file, opts.demo)
    code = app.exec()
    # The window has saved its settings, stopped its threads and removed its scratch files (closeEvent).
    # Python's own teardown of torch's modules takes seconds (3.6 s measured): skip it, so Quit is at once.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
