"""The simulated analyst, and known anomalies with the new views as reserve views, from
fold_scores.py's per-fold scores. Every formula is core's (``core.detectors.review.rank_with_marks``,
conformal p-values, Fisher's combination, view weights, ROC-AUC).

Settings, fixed before the first run:

- The consensus simulated is the *fast consensus*: graph size and WL-LESINN as components
  (weight 1 each), WL counts as the reserve view (weight 0 until anomalies weigh the views),
  each calibrated on the fold's calibration share (fold_scores.py). GLocalKD, the default
  consensus's third component, is left out: its per-fold fits take hours on a CPU.
  ``review_table(components)`` runs the same loop on other components: ``analyse.py
  review-default`` on the default consensus (GLocalKD, WL-LESINN, graph size), with the
  ``glocalkd`` view's per-fold scores (fold_scores.py, fitted on a GPU by gpu_job.sh).
- Label-free: the fast consensus's ranking of the fold's test graphs.
- Review loop: three rounds; in each, the 10 unreviewed test graphs that rank highest are
  reviewed, their labels revealed and marked (anomalous or normal), and the rest re-ranked
  (``rank_with_marks``). After 30 reviews: the ROC-AUC of the unreviewed rest, the anomalies
  among the 30 reviewed, and the share of the rest's normal graphs with p < 0.05.
- Known-anomaly path (today's ``--known-anomalies 10``): 10 anomalies of the fold's training
  part, drawn as the harness draws them (``np.random.default_rng([20223, seed, k])``), weigh
  the views; ROC-AUC on the same unreviewed rest, anomalies in its top 30.
- Label-free top 30: the anomalies among the 30 highest-ranked test graphs, label-free.
- The similarity loop (the candidate of research/README.md, fixed before its first run): the same
  three rounds, with ``rank_with_marks``'s similarity view on the WL-LESINN view's features
  (fold_scores.py); each loop's figures on its own unreviewed rest, the label-free ranking and
  the 10 known anomalies measured on that rest too.
- The classifier loop (the candidate of research/README.md, fixed before its first run): the same
  three rounds, with ``rank_with_marks``'s classifier view on the WL-LESINN view's features
  (fold_scores.py); its figures on its own unreviewed rest, the label-free ranking, the 10 known
  anomalies with and without the classifier (its positives the 10 known anomalies' WL features,
  ``wl:known:*``) measured on that rest too; the rest's normals with p < 0.05. The rule's verdict
  (research/README.md): found or rest ROC-AUC higher by more than two standard errors of the
  per-row differences, the other figure not lower by more than two.
- Reserve views: the known-anomaly path with each new view added as a second reserve view,
  ROC-AUC on the whole test set, against WL counts alone as the reserve; the rule of
  docs/consensus.md for a reserve view: a gain of at least two standard errors of the per-row
  differences, and no more fold/draw pairs losing over 0.05 against equal weights.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fold_scores import ROWS, fold_paths, kernel_columns, load_fold, row_folder

COMPONENTS = ("size", "wl-lesinn")
RESERVE = ("wl-count-lesinn",)
NEW_RESERVE = ("spectral-lesinn", "kme-lesinn", "gin-iforest")
ROUNDS, PER_ROUND, KNOWN, KNOWN_SEED = 3, 10, 10, 20223


def _rank(d: dict, marks: dict, views: tuple, extra: dict | None = None, kernel=None, components=COMPONENTS,
          classifier=None):
    from core.detectors.review import rank_with_marks

    weights = {v: float(v in components) for v in views}
    cal = {v: d[f"{v}:cal"] for v in views}
    scores = {v: d[f"{v}:test"] if extra is None else np.r_[d[f"{v}:test"], extra[v]] for v in views}
    return rank_with_marks(cal, scores, marks, weights, kernel, classifier)


def contrast_weights(d: dict, marks: dict, views: tuple) -> dict | None:
    """The contrast candidate's view weights (research/README.md): ``view_weights`` of each view's
    ROC-AUC of the marked anomalies against the marked normals, once at least MIN_KNOWN_ANOMALIES
    of each are marked; None (the current loop's weights) with fewer, or when no view ranks the
    marked anomalies above the marked normals."""
    from core.detectors.consensus import MIN_KNOWN_ANOMALIES, separation_auc, view_weights

    anomalous = np.array(sorted(i for i, a in marks.items() if a), dtype=np.int64)
    normal = np.array(sorted(i for i, a in marks.items() if not a), dtype=np.int64)
    if len(anomalous) < MIN_KNOWN_ANOMALIES or len(normal) < MIN_KNOWN_ANOMALIES:
        return None
    test = {v: np.asarray(d[f"{v}:test"], dtype=np.float64) for v in views}
    return view_weights({v: separation_auc(test[v][normal], test[v][anomalous]) for v in views})


def _rank_contrast(d: dict, marks: dict, views: tuple, components=COMPONENTS):
    """rank_with_marks with the contrast weights: the marked normals join the calibration as in
    the current loop; the marked anomalies set the weights only, so passing the weights and the
    normal marks alone is the current loop with those weights."""
    from core.detectors.review import rank_with_marks

    weights = contrast_weights(d, marks, views)
    if weights is None:
        return _rank(d, marks, views, components=components)
    normals = {i: a for i, a in marks.items() if not a}
    return rank_with_marks({v: d[f"{v}:cal"] for v in views}, {v: d[f"{v}:test"] for v in views}, normals, weights)


def _loop(d: dict, y: np.ndarray, views: tuple, kernel=None, components=COMPONENTS, classifier=None,
          contrast: bool = False):
    """The simulated analyst's three rounds: the marks, and the ranking after them."""
    def rank(marks):
        if contrast:
            return _rank_contrast(d, marks, views, components)
        return _rank(d, marks, views, kernel=kernel, components=components, classifier=classifier)

    marks: dict[int, bool] = {}
    for _ in range(ROUNDS):
        stat = rank(marks).statistic
        order = [i for i in np.argsort(-stat, kind="stable") if i not in marks][:PER_ROUND]
        marks.update({int(i): bool(y[i]) for i in order})
    return marks, rank(marks)


def _with_known(kernel, d: dict, chosen: np.ndarray):
    """The test graphs' WL features followed by the chosen known anomalies' (fold_scores.py's ``wl:known:*``)."""
    import scipy.sparse as sp

    from core.detectors.review import KernelColumns

    known = sp.csr_matrix((d["wl:known:data"], d["wl:known:indices"], d["wl:known:indptr"]),
                          shape=tuple(d["wl:known:shape"]))[chosen]
    return KernelColumns(sp.vstack([kernel.features, known]).tocsr(), np.r_[kernel.squares, d["wl:known:sq"][chosen]],
                         kernel.reference_features, kernel.reference_squares)


def _loop_figures(tag: str, y: np.ndarray, free: np.ndarray, marks: dict, final) -> tuple[np.ndarray, dict]:
    """A candidate loop's unreviewed rest and its figures on it, each key ending in ``_tag``: the
    anomalies found, the rest's ROC-AUC after the loop and label-free, its normals with p < 0.05."""
    from core.evaluation.metrics import roc_auc

    rest = np.setdiff1d(np.arange(len(y)), list(marks))
    return rest, {f"found_{tag}": int(sum(marks.values())),
                  f"auc_rest_{tag}": roc_auc(y[rest], final.statistic[rest]),
                  f"auc_rest_label_free_{tag}": roc_auc(y[rest], free[rest]),
                  f"rest_normals_p05_{tag}": float(np.mean(final.p_values[rest][~y[rest]] < 0.05))}


def fold_figures(d: dict, k: int, seed: int, components: tuple = COMPONENTS, classifier: bool = False) -> dict:
    """One fold's figures of the module docstring, with ``components`` as the consensus's components
    (``classifier``: the classifier loop's figures too)."""
    from core.evaluation.metrics import roc_auc

    y = d["y"].astype(bool)
    views = components + RESERVE
    free = _rank(d, {}, views, components=components).statistic
    marks, final = _loop(d, y, views, components=components)
    rest = np.setdiff1d(np.arange(len(y)), list(marks))
    pool = int(d["known_pool"])
    out = {"auc_label_free_all": roc_auc(y, free), "found": int(sum(marks.values())),
           "top30_label_free": int(y[np.argsort(-free, kind="stable")[:ROUNDS * PER_ROUND]].sum()),
           "auc_rest_review": roc_auc(y[rest], final.statistic[rest]), "auc_rest_label_free": roc_auc(y[rest], free[rest]),
           "rest_normals_p05": float(np.mean(final.p_values[rest][~y[rest]] < 0.05)),
           "anomalies": int(y.sum())}
    kernel = kernel_columns(d)
    rest_sim = rest_clf = None
    if kernel is not None:
        rest_sim, figures = _loop_figures("sim", y, free, *_loop(d, y, views, kernel, components))
        out |= figures
    out |= _loop_figures("con", y, free, *_loop(d, y, views, components=components, contrast=True))[1]
    if kernel is not None and classifier:
        rest_clf, figures = _loop_figures("clf", y, free, *_loop(d, y, views, components=components, classifier=kernel))
        out |= figures
    if pool >= 3:
        rng = np.random.default_rng([KNOWN_SEED, seed, k])
        chosen = np.sort(rng.choice(pool, min(KNOWN, pool), replace=False))
        n = len(y)
        new_reserve = [v for v in NEW_RESERVE if v not in components]
        for label, reserve in [("known", RESERVE), *((f"known+{v}", RESERVE + (v,)) for v in new_reserve)]:
            if not all(f"{v}:test" in d for v in reserve):
                continue
            vs = components + reserve
            stat = _rank(d, {n + j: True for j in range(len(chosen))}, vs,
                         extra={v: d[f"{v}:known"][chosen] for v in vs}, components=components).statistic[:n]
            out[f"auc_rest_{label}"] = roc_auc(y[rest], stat[rest])
            out[f"auc_all_{label}"] = roc_auc(y, stat)
            if label == "known":
                out["top30_known"] = int(y[np.argsort(-stat, kind="stable")[:ROUNDS * PER_ROUND]].sum())
                if rest_sim is not None:
                    out["auc_rest_known_sim"] = roc_auc(y[rest_sim], stat[rest_sim])
                if rest_clf is not None:
                    out["auc_rest_known_on_clf_rest"] = roc_auc(y[rest_clf], stat[rest_clf])
        if rest_clf is not None and "wl:known:data" in d:
            known_marks = {n + j: True for j in range(len(chosen))}
            known_final = _rank(d, known_marks, views, extra={v: d[f"{v}:known"][chosen] for v in views},
                                components=components, classifier=_with_known(kernel, d, chosen))
            stat = known_final.statistic[:n]
            out |= {"auc_rest_known_clf": roc_auc(y[rest_clf], stat[rest_clf]),
                    "auc_all_known_clf": roc_auc(y, stat),
                    "top30_known_clf": int(y[np.argsort(-stat, kind="stable")[:ROUNDS * PER_ROUND]].sum()),
                    "test_normals_p05_known_clf": float(np.mean(known_final.p_values[:n][~y] < 0.05)),
                    "test_normals_p05_known": float(np.mean(_rank(
                        d, known_marks, views, extra={v: d[f"{v}:known"][chosen] for v in views},
                        components=components).p_values[:n][~y] < 0.05))}
    return out


def review_table(components: tuple = COMPONENTS, classifier: bool = False) -> dict:
    """The simulated analyst's tables over the rows whose folds all have ``components`` and RESERVE
    (``classifier``: the classifier loop's table and verdict too, review_classifier.json)."""
    per_row = {}
    print(f"components: {', '.join(components)}; reserve: {', '.join(RESERVE)}")
    for row in ROWS:
        paths = fold_paths(row_folder(row))
        figures = []
        for path in paths:
            d = load_fold(path)
            if not all(f"{v}:test" in d for v in components + RESERVE):
                continue
            k = int(path.stem[4:])
            seed = k - 1 if ROWS[row][1] == "split" else 0
            figures.append(fold_figures(d, k, seed, components, classifier))
        if figures and len(figures) == len(paths):
            per_row[row] = {key: float(np.mean([f[key] for f in figures if key in f]))
                            for key in figures[0]} | {"folds": len(figures)}
    keys = ("auc_label_free_all", "auc_rest_label_free", "auc_rest_known", "auc_rest_review", "top30_label_free",
            "top30_known", "found", "rest_normals_p05")
    print("| data set (rule) [folds] | label-free ROC-AUC (all) | unreviewed rest: label-free | rest: 10 known | "
          "rest: after 30 reviews | anomalies in label-free top 30 | in top 30 with 10 known | found in 30 "
          "reviews | rest's normals p < 0.05 |")
    _table(per_row, keys)
    sim_keys = ("auc_rest_label_free_sim", "auc_rest_known_sim", "auc_rest_review", "auc_rest_sim", "top30_label_free",
                "found", "found_sim", "rest_normals_p05_sim")
    print("\nthe similarity loop (each loop on its own unreviewed rest):")
    print("| data set (rule) [folds] | its rest: label-free | its rest: 10 known | current loop: rest after 30 | "
          "similarity loop: rest after 30 | anomalies in label-free top 30 | found: current loop | "
          "found: similarity loop | its rest's normals p < 0.05 |")
    means = _table(per_row, sim_keys) | _means(per_row, keys)
    ratio = means["found"] / means["top30_label_free"] if means["top30_label_free"] else float("nan")
    ratio_sim = means["found_sim"] / means["top30_label_free"] if means.get("top30_label_free") else float("nan")
    print(f"rows: {len(per_row)}; anomalies found in 30 reviews / in the label-free top 30 (means over rows): "
          f"current loop {ratio:.2f}, similarity loop {ratio_sim:.2f}; rows with the rest below 0.5 after review: "
          f"current {sum(f['auc_rest_review'] < 0.5 for f in per_row.values())}, similarity "
          f"{sum(f.get('auc_rest_sim', 1) < 0.5 for f in per_row.values())}")
    verdict = {}
    for current, new in (("found", "found_sim"), ("auc_rest_review", "auc_rest_sim")):
        rows = [r for r, f in per_row.items() if new in f]
        diff = np.array([per_row[r][new] - per_row[r][current] for r in rows])
        if len(diff) >= 2:
            verdict[new] = {"rows": len(rows), "gain": float(diff.mean()), "se": float(diff.std(ddof=1) / np.sqrt(len(diff)))}
            print(f"{new} - {current}: {verdict[new]['gain']:+.3f} (SE {verdict[new]['se']:.3f}, {len(rows)} rows)")
    reserve = {}
    base = {r: f["auc_all_known"] for r, f in per_row.items() if "auc_all_known" in f}
    for v in NEW_RESERVE:
        new = {r: f[f"auc_all_known+{v}"] for r, f in per_row.items() if f"auc_all_known+{v}" in f}
        rows = [r for r in base if r in new]
        if len(rows) < 2:
            continue
        diff = np.array([new[r] - base[r] for r in rows])
        reserve[v] = {"rows": len(rows), "gain": float(diff.mean()), "se": float(diff.std(ddof=1) / np.sqrt(len(diff))),
                      "mean": float(np.mean([new[r] for r in rows])), "base_mean": float(np.mean([base[r] for r in rows]))}
        print(f"reserve view {v}: {len(rows)} rows, 10 known anomalies, mean {reserve[v]['mean']:.3f} against "
              f"{reserve[v]['base_mean']:.3f} (WL counts alone), gain {reserve[v]['gain']:+.3f} (SE {reserve[v]['se']:.3f})")
    result = {"components": list(components), "per_row": per_row, "means": means, "found_ratio": ratio,
              "found_ratio_similarity": ratio_sim, "similarity_against_current": verdict, "reserve": reserve}
    if classifier:
        result |= classifier_table(per_row)
    return result | contrast_table(per_row)


def contrast_table(per_row: dict) -> dict:
    """Print the contrast loop beside the current loop and the rule's verdict (research/README.md)."""
    keys = ("auc_rest_label_free_con", "auc_rest_review", "auc_rest_con", "top30_label_free", "found", "found_con",
            "rest_normals_p05_con")
    print("\nthe contrast loop (each loop on its own unreviewed rest):")
    print("| data set (rule) [folds] | its rest: label-free | current loop: rest after 30 | contrast loop: rest "
          "after 30 | anomalies in label-free top 30 | found: current loop | found: contrast loop | its rest's "
          "normals p < 0.05 |")
    means = _table(per_row, keys)
    top = means["top30_label_free"]
    ratio = means["found_con"] / top if top else float("nan")
    verdict = {}
    for current, new in (("found", "found_con"), ("auc_rest_review", "auc_rest_con")):
        diff = np.array([f[new] - f[current] for f in per_row.values()])
        verdict[new] = {"rows": len(diff), "gain": float(diff.mean()), "se": float(diff.std(ddof=1) / np.sqrt(len(diff)))}
        print(f"{new} - {current}: {verdict[new]['gain']:+.3f} (SE {verdict[new]['se']:.3f}, {len(diff)} rows)")
    found, rest = verdict["found_con"], verdict["auc_rest_con"]
    passes = bool((found["gain"] > 2 * found["se"] and rest["gain"] >= -2 * rest["se"])
                  or (rest["gain"] > 2 * rest["se"] and found["gain"] >= -2 * found["se"]))
    print(f"found / label-free top 30: contrast loop {ratio:.2f} (goal 1.3); rest {means['auc_rest_con']:.3f} "
          f"(goal 0.78); rows with the rest below 0.5: {sum(f['auc_rest_con'] < 0.5 for f in per_row.values())}; "
          f"the rule (research/README.md): {'passes' if passes else 'does not pass'}")
    return {"contrast_means": means, "found_ratio_contrast": ratio, "contrast_against_current": verdict,
            "contrast_passes": passes}


def classifier_table(per_row: dict) -> dict:
    """Print the classifier loop beside the current loop and the rule's verdict (research/README.md)."""
    keys = ("auc_rest_label_free_clf", "auc_rest_known_on_clf_rest", "auc_rest_known_clf", "auc_rest_review",
            "auc_rest_clf", "top30_label_free", "top30_known", "top30_known_clf", "found", "found_clf",
            "rest_normals_p05", "rest_normals_p05_clf")
    print("\nthe classifier loop (each loop on its own unreviewed rest):")
    print("| data set (rule) [folds] | its rest: label-free | its rest: 10 known | its rest: 10 known + classifier | "
          "current loop: rest after 30 | classifier loop: rest after 30 | anomalies in label-free top 30 | "
          "in top 30 with 10 known | with 10 known + classifier | found: current loop | found: classifier loop | "
          "current loop's rest normals p < 0.05 | classifier loop's |")
    means = _table(per_row, keys)
    extra = _means(per_row, ("auc_all_known", "auc_all_known_clf", "test_normals_p05_known",
                             "test_normals_p05_known_clf"))
    means |= extra
    if extra:
        print(f"10 known anomalies, ROC-AUC on the whole test set: {extra.get('auc_all_known', float('nan')):.3f} "
              f"without the classifier, {extra.get('auc_all_known_clf', float('nan')):.3f} with it; test normals "
              f"with p < 0.05: {extra.get('test_normals_p05_known', float('nan')):.3f} and "
              f"{extra.get('test_normals_p05_known_clf', float('nan')):.3f}")
    top = means["top30_label_free"]
    ratios = {"current": means["found"] / top if top else float("nan"),
              "classifier": means["found_clf"] / top if top else float("nan")}
    print(f"anomalies found in 30 reviews / label-free top 30: current loop {ratios['current']:.2f}, classifier loop "
          f"{ratios['classifier']:.2f} (goal 1.3); rest after 30: current {means['auc_rest_review']:.3f}, "
          f"classifier {means['auc_rest_clf']:.3f} (goal 0.78); rows with the rest below 0.5: current "
          f"{sum(f['auc_rest_review'] < 0.5 for f in per_row.values())}, classifier "
          f"{sum(f.get('auc_rest_clf', 1) < 0.5 for f in per_row.values())}")
    verdict = {}
    for current, new in (("found", "found_clf"), ("auc_rest_review", "auc_rest_clf"),
                         ("auc_rest_known_on_clf_rest", "auc_rest_known_clf")):
        rows = [r for r, f in per_row.items() if new in f and current in f]
        diff = np.array([per_row[r][new] - per_row[r][current] for r in rows])
        if len(diff) >= 2:
            verdict[new] = {"rows": len(rows), "gain": float(diff.mean()),
                            "se": float(diff.std(ddof=1) / np.sqrt(len(diff)))}
            print(f"{new} - {current}: {verdict[new]['gain']:+.3f} (SE {verdict[new]['se']:.3f}, {len(rows)} rows)")
    found, rest = verdict.get("found_clf"), verdict.get("auc_rest_clf")
    passes = None
    if found and rest:
        def up(v):
            return v["gain"] > 2 * v["se"]

        def not_down(v):
            return v["gain"] >= -2 * v["se"]

        passes = bool((up(found) and not_down(rest)) or (up(rest) and not_down(found)))
        print(f"the rule (research/README.md): {'passes' if passes else 'does not pass'}")
    return {"classifier_means": means, "found_ratio_classifier": ratios["classifier"],
            "classifier_against_current": verdict, "classifier_passes": passes}


def _means(per_row: dict, keys: tuple) -> dict:
    return {k: float(np.mean([f[k] for f in per_row.values() if k in f])) for k in keys
            if any(k in f for f in per_row.values())}


def _table(per_row: dict, keys: tuple) -> dict:
    """Print one markdown table of ``keys`` per row and their means; return the means."""
    print("|---" * (len(keys) + 1) + "|")
    for row, f in per_row.items():
        cells = [f"{f[k]:.3f}" if k in f and not k.startswith(("top", "found")) else
                 (f"{f[k]:.1f}" if k in f else "n/a") for k in keys]
        print(f"| {row} [{f['folds']}] | " + " | ".join(cells) + " |")
    means = _means(per_row, keys)
    print("| **mean** | " + " | ".join(f"{means[k]:.1f}" if k.startswith(("top", "found")) else f"{means[k]:.3f}"
                                        if k in means else "n/a" for k in keys) + " |")
    return means
