"""Rebuild docs/results.md from the JSON files in docs/results/ (run from the project root).

Paper-settings runs are ``docs/results/<NAME>.json``; candidate "product defaults" runs are
``docs/results/candidates/<NAME>__<tag>.json``. Data sets without a JSON are "not run yet".
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.evaluate import PAPER_TABLE2, EvaluationResult, read_json  # noqa: E402

ORDER = ["AIDS", "BZR", "DHFR", "ENZYMES", "hERG", "IMDB-BINARY", "PROTEINS_full", "NCI1", "Tox21_HSE",
         "Tox21_p53", "REDDIT-BINARY"]
RESULTS = Path("docs/results")


def pm(r: EvaluationResult, key: str = "auc") -> str:
    return f"{r.mean(key):.3f} ± {r.std(key):.3f}"


def duration(s: float) -> str:
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.1f} min" if s < 5400 else f"{s / 3600:.1f} h"


def main() -> None:
    header = Path(RESULTS / "header.md").read_text() if (RESULTS / "header.md").exists() else ""
    rows = ["| data set | protocol | anomalous class (rule) | ours: ROC-AUC mean ± std | graph term only | "
            "node term only | paper GLocalKD | paper best other | wall time (this machine) | command |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for name in ORDER:
        key = name.replace("_", " ") if name.startswith("Tox21") else name
        paper = PAPER_TABLE2.get(key)
        p = f"{paper['auc']:.3f} ± {paper['std']:.3f}" if paper else "—"
        b = f"{paper['best_other']:.3f} ({paper['best_other_method']})" if paper else "—"
        path = RESULTS / f"{name}.json"
        if not path.exists():
            rows.append(f"| {key} | | | not run yet | | | {p} | {b} | | |")
        # the main run, then variants such as NAME__first-label.json (another anomaly rule)
        for path in [path] * path.exists() + sorted(RESULTS.glob(f"{name}__*.json")):
            r = read_json(path)
            unit = "folds" if r.protocol == "cv" else "seeds"
            state = "" if r.complete else f" (unfinished: {len(r.folds)} {unit} done)"
            rows.append(f"| {key} | {r.protocol}, {len(r.folds)} {unit} | {r.anomaly_label} ({r.anomaly_rule}) | "
                        f"**{pm(r)}**{state} | {pm(r, 'auc_graph')} | {pm(r, 'auc_node')} | {p} | {b} | "
                        f"{duration(r.wall_seconds)} | `{r.command}` |")
    cand_rows = []
    cands = sorted((RESULTS / "candidates").glob("*.json")) if (RESULTS / "candidates").exists() else []
    if cands:
        cand_rows = ["| data set | candidate | ours: ROC-AUC mean ± std | paper-settings run | paper GLocalKD | "
                     "wall time | command |", "|---|---|---|---|---|---|---|"]
        for path in cands:
            r = read_json(path)
            name, tag = path.stem.split("__", 1)
            base = RESULTS / f"{name}.json"
            b = pm(read_json(base)) if base.exists() else "not run yet"
            paper = r.paper
            p = f"{paper['auc']:.3f}" if paper else "—"
            state = "" if r.complete else f" (incomplete: {len(r.folds)})"
            cand_rows.append(f"| {r.dataset} | {tag} | **{pm(r)}**{state} | {b} | {p} | {duration(r.wall_seconds)} | "
                             f"`{r.command}` |")
    footer = Path(RESULTS / "footer.md").read_text() if (RESULTS / "footer.md").exists() else ""
    text = header + "\n".join(rows) + "\n"
    if cand_rows:
        text += "\n## Candidate product defaults (measured with the same harness)\n\n" + "\n".join(cand_rows) + "\n"
    text += footer
    Path("docs/results.md").write_text(text)
    print("docs/results.md written")


if __name__ == "__main__":
    main()
