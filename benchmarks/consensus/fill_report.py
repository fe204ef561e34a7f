"""Fill REPORT.template.md with the tables of results.json and timing_hERG.json -> REPORT.md."""
import io, json, contextlib, sys
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import report_tables
from combine import times_table, ROWS

buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    report_tables.main(str(HERE / "results.json"))
text = buf.getvalue()
auc_table, cal_table = text.split("\n\n", 1)
t = json.loads((HERE / "timing_hERG.json").read_text())
screen = ["| component | ms per molecule (scoring only) | fit on 288 molecules |", "|---|---|---|"]
for c, v in t["components"].items():
    screen.append(f"| {c} | {v['ms_per_graph']:.3f} | {v['fit_seconds']:.1f} s |")
screen.append(f"| conformal p-values + Fisher + ACAT of the 4 | {t['combination_ms_per_graph']:.4f} | — |")
tot = sum(v["ms_per_graph"] for v in t["components"].values())
screen.append(f"| **all four + combination** | **{tot + t['combination_ms_per_graph']:.3f}** | |")
tmpl = (HERE / "REPORT.template.md").read_text()
rec = (HERE / "RECOMMENDATION.md").read_text()
out = (tmpl.replace("{{TABLES}}", "## ROC-AUC per row (mean ± population std over the folds / seeds run)\n\n"
                    "Selected candidates; every candidate (about 100) is in `results.md`, ranked by mean.\n\n" + auc_table)
          .replace("{{CALTABLE}}", cal_table)
          .replace("{{TIMES}}", times_table([r for r in ROWS if (HERE / 'dumps' / r).exists()]).split("\n", 2)[2])
          .replace("{{SCREEN}}", "\n".join(screen))
          .replace("{{RECOMMENDATION}}", rec))
d = json.loads((HERE / "results.json").read_text())
cand = d["summary"]["candidates"]
def calmean(name):
    import numpy as np
    v = [np.mean(r["calib"][name]) for r in d["per_row"].values() if name in r["calib"]]
    return f"{np.mean(v):.3f}"
T, F = cand["T-stouffer/conf/S4"], cand["fisher/conf/S4"]
subs = {"T_MEAN": f"{T['mean']:.3f}", "T_WD": T["within_dump"], "T_WT": T["within_table"], "T_B": T["below_half"],
        "F_MEAN": f"{F['mean']:.3f}", "F_WD": F["within_dump"], "F_WT": F["within_table"], "F_B": F["below_half"],
        "G_MEAN": f"{cand['glocalkd']['mean']:.3f}", "S_MEAN": f"{cand['size']['mean']:.3f}",
        "W_MEAN": f"{cand['wl-lesinn']['mean']:.3f}", "P_MEAN": f"{cand['pk-lesinn']['mean']:.3f}",
        "MI_MEAN": f"{cand['muse-if-cal']['mean']:.3f}", "ML_MEAN": f"{cand['muse-lw-cal']['mean']:.3f}",
        "F_RECAL": calmean("fisher/conf/S4 recal"), "F_RAW": calmean("fisher/conf/S4"),
        "EXPECTED": calmean("expected (conformal, n_cal)"),
        "COST": f"{tot + t['combination_ms_per_graph']:.2f}", "G_COST": f"{t['components']['glocalkd']['ms_per_graph']:.2f}"}
for k, v in subs.items():
    out = out.replace("{{" + k + "}}", str(v))
assert "{{" not in out, out[out.index("{{"):out.index("{{") + 40]
(HERE / "REPORT.md").write_text(out)
print("written", HERE / "REPORT.md")
