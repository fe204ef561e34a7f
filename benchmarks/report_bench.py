"""Opening a large ranked report in the app's report window (used by bench.py), timed in a fresh
process so its peak RSS is the report's own cost."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, os, resource, sys, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, sys.argv[2])
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from core.io.ranked_report import read_report
app = QApplication([])
t = time.perf_counter(); report = read_report(sys.argv[1]); read = time.perf_counter() - t
from app.report_view import ReportWindow
t = time.perf_counter(); w = ReportWindow(report); w.show(); app.processEvents(); window = time.perf_counter() - t
t = time.perf_counter(); w.model_table.sort(1, Qt.SortOrder.AscendingOrder); app.processEvents(); sort = time.perf_counter() - t
t = time.perf_counter(); w.model_table.set_text_filter("c1ccccc1"); app.processEvents(); filt = time.perf_counter() - t
print(json.dumps({"rows": len(report), "rejects": len(report.rejects), "read_seconds": read, "window_seconds": window,
                  "sort_seconds": sort, "filter_seconds": filt, "filter_matches": w.model_table.visible_count(),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def bench_report_open(report: Path) -> dict:
    """Read ``report``, build the report window over it, sort by id and filter by text."""
    out = subprocess.run([sys.executable, "-c", _CHILD, str(report), str(ROOT)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])
