"""Make the README screenshot: open a demo, train, map, select the top-ranked row, grab the window.

    python docs/screenshot.py [--data app/demo_data/herg.tab] [--normal 1] [--epochs 40] [--out docs/screenshot.png]

Runs on any Qt platform (offscreen included); under Xvfb it shows what a user sees.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="app/demo_data/herg.tab")
    p.add_argument("--normal", default="1", help="label of the normal graphs ('' for all)")
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--detector", default="consensus", help="detector to train (the default: consensus; glocalkd, ocgcn, ...)")
    p.add_argument("--tab", type=int, default=0, help="bottom tab to show: 0 heatmap, 1 loss, 2 evaluation")
    p.add_argument("--row", type=int, default=0, help="table row to select")
    p.add_argument("--map", default="predictor", help="chemical-space map to compute ('' for none)")
    p.add_argument("--method", default="tsne", help="map method: tsne or pca")
    p.add_argument("--colour", type=int, default=0, help="map colouring: 0 score, 1 label")
    p.add_argument("--report", default="", help="after training, open this ranked report and grab its tab")
    p.add_argument("--score-file", default="", help="after training, score this file (opens a tab) and grab it")
    p.add_argument("--smarts", default="", help="SMARTS filter to type before selecting the row")
    p.add_argument("--scaffolds", action="store_true", help="group the table by scaffold")
    p.add_argument("--features", default="auto", help="node features, e.g. atom-rings")
    p.add_argument("--readouts", action="store_true", help="tick both extra score readouts (node_max, size)")
    p.add_argument("--structures", default="small", help="structure column: off, small or large")
    p.add_argument("--out", default="docs/screenshot.png")
    args = p.parse_args()

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from app.main_window import MainWindow

    settings = QSettings(str(Path(args.out).with_suffix(".ini")), QSettings.Format.IniFormat)
    settings.clear()
    window = MainWindow(settings)
    window.resize(1560, 960)
    window.show()
    window.query_bar.structures.setCurrentIndex(window.query_bar.structures.findData(args.structures))
    window.open_path(args.data)

    def when(condition, then, every=200):
        def poll():
            if condition():
                then()
            else:
                QTimer.singleShot(every, poll)
        QTimer.singleShot(every, poll)

    def train():
        if args.normal:
            index = window.form.normal.findData(args.normal)
            window.form.normal.setCurrentIndex(index)
        window.form.epochs.setValue(args.epochs)
        window.form.features.setCurrentText(args.features)
        window.form.node_max.setChecked(args.readouts)
        window.form.size_term.setChecked(args.readouts)
        window.form.detector.setCurrentIndex(window.form.detector.findData(args.detector))
        window.train()
        when(lambda: window.scores is not None and not window.runner.busy(), shoot)

    def shoot():
        if args.report or args.score_file:
            if args.report:
                window.open_path(args.report)
            else:
                window.score_file(args.score_file)
            when(lambda: bool(window.report_views) and not window.runner.busy(), shoot_report)
            return
        window.tabs.setCurrentIndex(args.tab)
        window.map_view.colour.setCurrentIndex(args.colour)
        if args.map:
            window.compute_map(args.map, args.method)
            when(lambda: window.map_view.map is not None, select)
        else:
            select()

    def select():
        if args.smarts and not window.filters.smarts_edit.text():
            window.filters.smarts_edit.setText(args.smarts)
            window.apply_smarts()  # matched in the background: select the row once it is
            when(lambda: not window.smarts.is_matching(), select)
            return
        window.table.selectRow(args.row)
        if args.scaffolds:
            window.filters.group_scaffolds.setChecked(True)
        QTimer.singleShot(1500 if args.structures == "off" else 4000, save)  # the structures arrive from their process

    def shoot_report():
        view = window.report_views[-1]
        view.table.selectRow(args.row)
        QTimer.singleShot(1500, save)

    def save(target=None):
        from PySide6.QtCore import QBuffer, QByteArray, QIODevice

        from core import atomic_output

        png = QByteArray()
        buffer = QBuffer(png)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        (target or window).grab().save(buffer, "PNG")
        with atomic_output(args.out) as fh:  # the one writer: never through a link, never half written
            fh.write(bytes(png))
        print(f"wrote {args.out}")
        window._unsaved.clear()  # the picture was the point: quit without asking to save the model
        window.close()
        Path(args.out).with_suffix(".ini").unlink(missing_ok=True)  # after close(), which saves settings
        app.quit()

    when(lambda: window.graphs is not None and not window.runner.busy(), train)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
