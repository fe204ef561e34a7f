"""Tables of the ranking study, from the harness's JSON files and fold_scores.py's per-fold scores.

Usage (repository root)::

    PYTHONPATH=. python research/ranking/analyse.py views     # each new view and ECFP alone, against the default
    PYTHONPATH=. python research/ranking/analyse.py combine   # each view added to the fast consensus (size, WL-LESINN)
    PYTHONPATH=. python research/ranking/analyse.py review    # the simulated analyst (review_simulation.py)
    PYTHONPATH=. python research/ranking/analyse.py review review_similarity  # the same, into another JSON file
        # (review and review-default also print the classifier loop and its verdict, written to
        # review_classifier.json / review-default_classifier.json beside)
    PYTHONPATH=. python research/ranking/analyse.py calibration  # held-out normals with p < 0.05, per view
    PYTHONPATH=. python research/ranking/analyse.py default   # with the glocalkd view: the default consensus
        # (GLocalKD, WL-LESINN, size) from fold scores against the harness's, and each view added to it
    PYTHONPATH=. python research/ranking/analyse.py review-default      # the simulated analyst on the default
    PYTHONPATH=. python research/ranking/analyse.py review-default-kme  # ... and on the default + KME
    PYTHONPATH=. python research/ranking/analyse.py two-views  # WL counts and KME both added (research/README.md)
    PYTHONPATH=. python research/ranking/analyse.py two-views-fast  # the same on the fast consensus
    PYTHONPATH=. python research/ranking/analyse.py distance  # the distance-profile view (research/README.md)
    PYTHONPATH=. python research/ranking/analyse.py graphlets  # the graphlet view (research/README.md)

Every formula comes from core: conformal p-values, Fisher's combination, view weights, ROC-AUC.
The adoption rule is docs/consensus.md's, applied as written: a gain over the default of more
than two standard errors of the per-row differences over the 14 rows, no row below 0.5 that the
default does not already have, and a graph's score independent of its batch.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fold_scores import ROWS, fold_paths, load_fold, row_folder

METHODS = ROOT / "docs" / "results" / "methods"
CANDIDATES = ROOT / "docs" / "results" / "consensus" / "candidates.json"
DEFAULT = "fisher/conf/S3"  # the default consensus (GLocalKD, graph size, WL-LESINN) in the study's per-fold AUCs
DEFAULT_VIEWS = ("glocalkd", "wl-lesinn", "size")  # core.detectors.consensus.DEFAULT_COMPONENTS
NEW = ("gin-iforest", "kme-lesinn", "spectral-lesinn", "ecfp-nn")


def row_file(row: str, method: str) -> Path:
    name, _, rule = row.partition(":")
    return METHODS / f"{name}__{method}{'__first-label' if rule else ''}.json"


def harness(row: str, method: str) -> tuple[str, float | None, float | None, int]:
    """('ok' | 'n/a' | 'not measured' | 'incomplete', mean, std, folds) of a harness JSON."""
    path = row_file(row, method)
    if not path.exists():
        return "not measured", None, None, 0
    d = json.loads(path.read_text())
    if d.get("not_applicable"):
        return "n/a", None, None, 0
    aucs = [f["auc"] for f in d["folds"]]
    if not aucs:
        return "not measured", None, None, 0
    return ("ok" if d["complete"] else "incomplete"), float(np.mean(aucs)), float(np.std(aucs)), len(aucs)


def default_auc(row: str) -> float:
    per_row = json.loads(CANDIDATES.read_text())["per_row"][row.replace(":", "__")]
    return float(np.mean(per_row["auc"][DEFAULT]))


def rule_verdict(new: dict[str, float], base: dict[str, float]) -> dict:
    """Gain, standard error of the per-row differences, rows below 0.5, over the rows both have."""
    rows = [r for r in base if r in new]
    diff = np.array([new[r] - base[r] for r in rows])
    se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else float("nan")
    below_new = [r for r in rows if new[r] < 0.5 and base[r] >= 0.5]
    gain = float(diff.mean()) if len(diff) else float("nan")
    return {"rows": len(rows), "mean": float(np.mean([new[r] for r in rows])) if rows else float("nan"),
            "base_mean": float(np.mean([base[r] for r in rows])) if rows else float("nan"),
            "gain": gain, "se": se, "below_half": sum(new[r] < 0.5 for r in rows), "new_below_half": below_new,
            "passes": bool(len(rows) == 14 and gain > 2 * se and not below_new)}


def views_table() -> dict:
    out = {}
    print("| data set (rule) | default consensus | " + " | ".join(NEW) + " |")
    print("|---|---" + "|---" * len(NEW) + "|")
    cells = {m: {} for m in NEW}
    for row in ROWS:
        line = [row, f"{default_auc(row):.3f}"]
        for m in NEW:
            state, mean, std, n = harness(row, m)
            if mean is not None:
                cells[m][row] = mean
                line.append(f"{mean:.3f} ± {std:.3f}" + ("" if state == "ok" else f" ({n} folds)"))
            else:
                line.append(state)
        print("| " + " | ".join(line) + " |")
    base = {r: default_auc(r) for r in ROWS}
    for m in NEW:
        out[m] = {"per_row": cells[m], "against_default": rule_verdict(cells[m], base)}
        v = out[m]["against_default"]
        print(f"{m}: {v['rows']} rows, mean {v['mean']:.3f} (default on them {v['base_mean']:.3f}), gain "
              f"{v['gain']:+.3f} (SE {v['se']:.3f}), rows below 0.5: {v['below_half']}, passes: {v['passes']}")
    return out


def fisher(p_columns: list[np.ndarray]) -> np.ndarray:
    from core.detectors.consensus import combine_p_values

    return combine_p_values(np.column_stack(p_columns), "fisher")


def combine_table(base_views=("size", "wl-lesinn"), extra=("spectral-lesinn", "kme-lesinn", "gin-iforest")) -> dict:
    from core.detectors.conformal import conformal_p_values
    from core.evaluation.metrics import roc_auc

    per_row: dict[str, dict[str, float]] = {}
    for row in ROWS:
        folds = fold_paths(row_folder(row))
        if not folds:
            continue
        aucs: dict[str, list[float]] = {}
        for path in folds:
            d = load_fold(path)
            views = {*base_views, *(part for v in extra for part in v.split("+"))}
            p = {v: conformal_p_values(d[f"{v}:cal"], d[f"{v}:test"]) for v in views if f"{v}:test" in d}
            if not all(v in p for v in base_views):
                continue
            aucs.setdefault("base", []).append(roc_auc(d["y"], fisher([p[v] for v in base_views])))
            for v in extra:  # "a+b": both views added
                parts = v.split("+")
                # a view that cannot read these graphs (not molecules) is left out: there the candidate is the base
                if all(part in p or f"{part}:not_applicable" in d for part in parts):
                    added = [p[part] for part in parts if part in p]
                    aucs.setdefault(v, []).append(roc_auc(d["y"], fisher([*(p[b] for b in base_views), *added])))
        per_row[row] = {k: float(np.mean(v)) for k, v in aucs.items() if len(v) == len(folds)}
    out = {}
    base = {r: v["base"] for r, v in per_row.items() if "base" in v}
    print(f"Consensus of {', '.join(base_views)}: {len(base)} rows, mean "
          f"{np.mean(list(base.values())):.3f}, rows below 0.5: {sum(v < 0.5 for v in base.values())}")
    for v in extra:
        new = {r: d[v] for r, d in per_row.items() if v in d}
        if not new:
            print(f"  + {v}: no fold scores")
            continue
        out[v] = rule_verdict(new, base)
        o = out[v]
        print(f"  + {v}: {o['rows']} rows, mean {o['mean']:.3f} against {o['base_mean']:.3f}, gain {o['gain']:+.3f} "
              f"(SE {o['se']:.3f}), rows below 0.5: {o['below_half']} (new: {o['new_below_half']}), "
              f"passes: {o['passes']}")
    print(f"| data set (rule) | {' + '.join(base_views)} | " + " | ".join(f"+ {v}" for v in extra) + " |")
    print("|---|---" + "|---" * len(extra) + "|")
    for row, d in per_row.items():
        print(f"| {row} | {d.get('base', float('nan')):.3f} | " +
              " | ".join(f"{d[v]:.3f}" if v in d else "not measured" for v in extra) + " |")
    return {"per_row": per_row, "verdicts": out, "base_views": list(base_views)}


def calibration_table(views=("size", "wl-lesinn", "wl-count-lesinn", "spectral-lesinn", "kme-lesinn", "ecfp-nn",
                             "gin-iforest", "glocalkd")) -> dict:
    """Per view, the share of the test folds' normal graphs with p < 0.05 against the fold's
    calibration graphs (fold_scores.py), averaged over the folds of each row, then over the rows."""
    from core.detectors.conformal import conformal_p_values

    per_row: dict[str, dict[str, float]] = {}
    for row in ROWS:
        folder = row_folder(row)
        for path in fold_paths(folder):
            d = load_fold(path)
            normal = d["y"] == 0
            for v in views:
                if f"{v}:test" in d:
                    share = float(np.mean(conformal_p_values(d[f"{v}:cal"], d[f"{v}:test"][normal]) < 0.05))
                    per_row.setdefault(row, {}).setdefault(v, []).append(share)
    out = {v: {r: float(np.mean(s[v])) for r, s in per_row.items() if v in s} for v in views}
    for v, rows in out.items():
        if rows:
            print(f"{v}: {len(rows)} rows, held-out normals with p < 0.05: mean {np.mean(list(rows.values())):.3f}, "
                  f"per row {min(rows.values()):.3f}-{max(rows.values()):.3f}")
    return out


def alone_table(view: str) -> dict:
    """A view alone from its fold scores: per row the mean ROC-AUC over the folds, and the share of
    the test folds' normal graphs with p < 0.05 against the fold's calibration graphs."""
    from core.detectors.conformal import conformal_p_values
    from core.evaluation.metrics import roc_auc

    per_row = {}
    for row in ROWS:
        folds = [load_fold(p) for p in fold_paths(row_folder(row))]
        folds = [d for d in folds if f"{view}:test" in d]
        if folds:
            aucs = [roc_auc(d["y"], d[f"{view}:test"]) for d in folds]
            flagged = [float(np.mean(conformal_p_values(d[f"{view}:cal"], d[f"{view}:test"][d["y"] == 0]) < 0.05))
                       for d in folds]
            per_row[row] = {"auc": float(np.mean(aucs)), "std": float(np.std(aucs)), "flagged": float(np.mean(flagged))}
    aucs = [r["auc"] for r in per_row.values()]
    out = {"per_row": per_row, "mean": float(np.mean(aucs)), "below_half": sum(a < 0.5 for a in aucs),
           "flagged": float(np.mean([r["flagged"] for r in per_row.values()]))}
    print(f"{view} alone: {len(aucs)} rows, mean {out['mean']:.3f}, rows below 0.5: {out['below_half']}, "
          f"held-out normals with p < 0.05: {out['flagged']:.3f}")
    for row, r in per_row.items():
        print(f"| {row} | {r['auc']:.3f} ± {r['std']:.3f} | {r['flagged']:.3f} |")
    return out


def default_table(extra=("kme-lesinn", "spectral-lesinn", "gin-iforest")) -> dict:
    """With the glocalkd view (fold_scores.py): the default consensus combined from fold scores,
    row by row against the harness's figures (candidates.json), and each view added to it, with
    the adoption rule's verdict against the default combined the same way."""
    from core.evaluation.metrics import roc_auc

    epochs, seconds, alone = set(), {}, {}
    for row in ROWS:
        for path in fold_paths(row_folder(row)):
            d = load_fold(path)
            if "glocalkd:test" in d:
                epochs.add(int(d["glocalkd:epochs"]))
                seconds.setdefault(row, []).append(float(d["glocalkd:seconds"]))
                alone.setdefault(row, []).append(roc_auc(d["y"], d["glocalkd:test"]))
    print(f"GLocalKD's epochs in the fold files: {sorted(epochs)}" + ("" if epochs <= {150} else
                                                                     "  (NOT the default 150: a try-out)"))
    result = combine_table(DEFAULT_VIEWS, extra)
    base = {r: d["base"] for r, d in result["per_row"].items() if "base" in d}
    print("\n| data set (rule) | default from fold scores | harness's default | difference | GLocalKD alone | "
          "GLocalKD fits (s, all folds) |")
    print("|---|---|---|---|---|---|")
    sanity = {}
    for row, auc in base.items():
        harness_auc = default_auc(row)
        sanity[row] = {"fold_scores": auc, "harness": harness_auc, "glocalkd_alone": float(np.mean(alone[row])),
                       "fit_seconds": float(np.sum(seconds[row]))}
        print(f"| {row} | {auc:.3f} | {harness_auc:.3f} | {auc - harness_auc:+.3f} | {np.mean(alone[row]):.3f} | "
              f"{np.sum(seconds[row]):.0f} |")
    if sanity:
        diff = np.array([v["fold_scores"] - v["harness"] for v in sanity.values()])
        print(f"{len(sanity)} rows: mean {np.mean([v['fold_scores'] for v in sanity.values()]):.3f} against the "
              f"harness's {np.mean([v['harness'] for v in sanity.values()]):.3f}; mean |difference| "
              f"{np.abs(diff).mean():.3f}, largest {diff[np.argmax(np.abs(diff))]:+.3f}")
    return result | {"sanity": sanity, "glocalkd_epochs": sorted(epochs)}


def properties_table(view: str = "property-lesinn") -> dict:
    """The property-space view's rule (research/README.md): the default with it as a fourth view
    over the 14 rows (the default itself where the graphs are not molecules), and over the
    molecule rows alone, reported beside the view alone and the fast consensus with it."""
    result = default_table((view,))
    molecule_rows = [r for r in ROWS if any(f"{view}:test" in load_fold(p) for p in fold_paths(row_folder(r)))]
    per_row = result["per_row"]
    new = {r: per_row[r][view] for r in molecule_rows if view in per_row.get(r, {})}
    base = {r: per_row[r]["base"] for r in new}
    diff = np.array([new[r] - base[r] for r in new])
    molecules = {"rows": list(new), "mean": float(np.mean(list(new.values()))),
                 "base_mean": float(np.mean(list(base.values()))), "gain": float(diff.mean()),
                 "se": float(diff.std(ddof=1) / np.sqrt(len(diff)))}
    print(f"molecule rows ({', '.join(new)}): {molecules['mean']:.3f} against {molecules['base_mean']:.3f}, gain "
          f"{molecules['gain']:+.3f} (SE {molecules['se']:.3f})")
    return result | {"molecule_rows": molecules, "alone": alone_table(view),
                     "fast": combine_table(("size", "wl-lesinn"), (view,))}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    what = argv[0] if argv else "views"
    two = ("wl-count-lesinn", "kme-lesinn", "wl-count-lesinn+kme-lesinn")  # the two-view candidate and its halves
    result = {"views": views_table, "combine": combine_table, "calibration": calibration_table,
              "default": default_table, "two-views": lambda: default_table(two),
              "rare": lambda: default_table(("rare-substructure",)) | {
                  "alone": alone_table("rare-substructure"),
                  "fast": combine_table(("size", "wl-lesinn"), ("rare-substructure",))},
              "distance": lambda: default_table(("distance-lesinn",)) | {
                  "alone": alone_table("distance-lesinn"),
                  "fast": combine_table(("size", "wl-lesinn"), ("distance-lesinn",))},
              "graphlets": lambda: default_table(("graphlet-lesinn",)) | {
                  "alone": alone_table("graphlet-lesinn"),
                  "fast": combine_table(("size", "wl-lesinn"), ("graphlet-lesinn",))},
              "properties": lambda: properties_table(),
              "two-views-fast": lambda: combine_table(("size", "wl-lesinn"), two)}.get(what)
    if what.startswith("review-default"):
        from review_simulation import review_table

        components = DEFAULT_VIEWS + (("kme-lesinn",) if what.endswith("-kme") else ())
        result = lambda: review_table(components, classifier=what == "review-default")  # noqa: E731
    elif what == "review-contrast":  # the contrast loop on the default consensus (research/README.md)
        from review_simulation import review_table

        result = lambda: review_table(DEFAULT_VIEWS)  # noqa: E731
    elif result is None:
        from review_simulation import review_table
        result = lambda: review_table(classifier=True)  # noqa: E731
    out = result()
    if "classifier_means" in out:  # the classifier loop's figures in a file of their own
        name = "review_classifier" if what == "review" else f"{what}_classifier"
        keys = ("classifier_means", "found_ratio_classifier", "classifier_against_current", "classifier_passes")
        clf = {"components": out["components"], "per_row": out["per_row"]} | {k: out.pop(k) for k in keys}
        out["per_row"] = {row: {k: v for k, v in f.items() if "clf" not in k} for row, f in out["per_row"].items()}
        (ROOT / "docs" / "results" / "ranking" / f"{name}.json").write_text(
            json.dumps(clf, indent=1, default=float) + "\n")
    stem = argv[1] if len(argv) > 1 else what  # e.g. "review review_similarity": another file name
    target = ROOT / "docs" / "results" / "ranking" / f"{stem}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(out, indent=1, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
