"""Evaluation harness: the paper's protocols (Ma et al., WSDM 2022, Sec. 5) on labelled data.

``cv``: k-fold stratified cross-validation (shuffled, seed 1 as the paper) over a TU collection
or a labelled molecule file; the model trains on the *normal* graphs of the training folds and
scores the whole held-out fold. ``split``: a fixed training / testing pair (the Tox21 sets);
the model trains on the training file's normal graphs and scores the testing file, repeated over
several model seeds.

Which class is anomalous is chosen by a rule: ``minority`` (the paper's text; ties go to the
label that appears first), ``first-label`` (the authors' loader: the label of the first labelled
graph in file order) or an explicit label value. The rule and the class are recorded and printed.

Every fold records ROC-AUC of the full score and of its two terms alone (the paper's ablation:
``graph_term`` = w/o L_node, ``node_term`` = w/o L_graph), average precision, FPR at 95 % TPR
and the wall time of training and of scoring. Options cover the paper's other experiments:
anomaly contamination of the training set, fraction of training data, embedding width and depth.

Nothing here imports Qt; ``evaluate`` takes ``on_progress`` / ``should_stop`` callbacks for a GUI.
"""
from __future__ import annotations

import json
import math
import os
import platform
import re
import shlex
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
from sklearn.model_selection import StratifiedKFold

from core.errors import DataError, GLocalKDError
from core.data.graphset import GraphSet, normalize_label
from core.evaluation.metrics import average_precision, fpr_at_tpr, roc_auc
from core.data.scores import READOUT_PARTS, READOUTS, combine_readouts

PROTOCOLS = ("cv", "split")
SCORE_TERMS = ("both", "graph", "node")

# The paper's Table 2 (mean ± std ROC-AUC) and the best of the seven competitors in the same table.
PAPER_TABLE2: dict[str, dict] = {
    "PROTEINS_full": {"auc": 0.785, "std": 0.034, "best_other": 0.718, "best_other_method": "OCGCN"},
    "ENZYMES": {"auc": 0.636, "std": 0.061, "best_other": 0.624, "best_other_method": "WL-LESINN"},
    "AIDS": {"auc": 0.992, "std": 0.004, "best_other": 0.955, "best_other_method": "InfoGraph-LESINN"},
    "DHFR": {"auc": 0.558, "std": 0.030, "best_other": 0.625, "best_other_method": "InfoGraph-LESINN"},
    "BZR": {"auc": 0.679, "std": 0.065, "best_other": 0.775, "best_other_method": "PK-LESINN"},
    "COX2": {"auc": 0.589, "std": 0.045, "best_other": 0.671, "best_other_method": "PK-LESINN"},
    "DD": {"auc": 0.805, "std": 0.017, "best_other": 0.833, "best_other_method": "PK-LESINN"},
    "NCI1": {"auc": 0.683, "std": 0.015, "best_other": 0.743, "best_other_method": "WL-LESINN"},
    "IMDB-BINARY": {"auc": 0.514, "std": 0.039, "best_other": 0.612, "best_other_method": "WL-LESINN"},
    "REDDIT-BINARY": {"auc": 0.782, "std": 0.016, "best_other": 0.759, "best_other_method": "OCGCN"},
    "Tox21 HSE": {"auc": 0.591, "std": 0.001, "best_other": 0.657, "best_other_method": "InfoGraph-LESINN"},
    "Tox21 MMP": {"auc": 0.676, "std": 0.001, "best_other": 0.571, "best_other_method": "InfoGraph-LESINN"},
    "Tox21 p53": {"auc": 0.639, "std": 0.002, "best_other": 0.520, "best_other_method": "InfoGraph-LESINN"},
    "Tox21 PPAR-gamma": {"auc": 0.644, "std": 0.001, "best_other": 0.541, "best_other_method": "InfoGraph-LESINN"},
    "COLLAB": {"auc": 0.525, "std": 0.014, "best_other": 0.550, "best_other_method": "PK-LESINN"},
    "hERG": {"auc": 0.704, "std": 0.049, "best_other": 0.802, "best_other_method": "WL-LESINN"},
}

# Every method of the paper's Table 2 (mean, std), keyed by data set then by our detector name.
_T2_METHODS = ("infograph-iforest", "infograph-lesinn", "wl-iforest", "wl-lesinn", "pk-iforest", "pk-lesinn",
               "ocgcn", "glocalkd")
_T2_ROWS = {
    "PROTEINS_full": ".464 .019 .336 .047 .639 .018 .712 .053 .627 .009 .572 .031 .718 .036 .785 .034",
    "ENZYMES": ".483 .027 .528 .046 .498 .029 .624 .050 .493 .013 .608 .033 .613 .087 .636 .061",
    "AIDS": ".703 .036 .955 .023 .632 .050 .584 .016 .476 .014 .421 .010 .664 .080 .992 .004",
    "DHFR": ".489 .015 .625 .028 .466 .013 .596 .056 .467 .013 .568 .054 .495 .080 .558 .030",
    "BZR": ".528 .060 .731 .071 .533 .032 .720 .032 .525 .052 .775 .063 .658 .071 .679 .065",
    "COX2": ".580 .052 .670 .079 .532 .027 .590 .056 .515 .036 .671 .039 .628 .072 .589 .045",
    "DD": ".475 .012 .310 .034 .699 .006 .638 .045 .706 .010 .833 .023 .605 .086 .805 .017",
    "NCI1": ".494 .009 .598 .035 .545 .008 .743 .015 .532 .006 .670 .012 .627 .015 .683 .015",
    "IMDB-BINARY": ".520 .028 .565 .017 .442 .032 .612 .046 .442 .035 .585 .047 .536 .148 .514 .039",
    "REDDIT-BINARY": ".457 .003 .262 .027 .450 .013 .239 .028 .450 .012 .487 .013 .759 .056 .782 .016",
    "Tox21 HSE": ".484 .026 .657 .051 .477 .000 .528 .000 .489 .003 .469 .016 .388 .041 .591 .001",
    "Tox21 MMP": ".539 .022 .571 .037 .475 .000 .307 .000 .488 .002 .322 .008 .457 .038 .676 .001",
    "Tox21 p53": ".511 .014 .520 .025 .473 .000 .390 .000 .486 .004 .329 .001 .483 .017 .639 .002",
    "Tox21 PPAR-gamma": ".521 .023 .541 .036 .510 .000 .461 .000 .499 .017 .388 .015 .431 .043 .644 .001",
    "COLLAB": ".453 .003 .319 .033 .506 .020 .536 .014 .529 .023 .550 .043 .401 .183 .525 .014",
    "hERG": ".607 .033 .701 .048 .665 .042 .802 .047 .679 .034 .798 .052 .569 .049 .704 .049",
}
PAPER_METHODS: dict[str, dict[str, tuple[float, float]]] = {
    name: {m: (float(v[2 * j]), float(v[2 * j + 1])) for j, m in enumerate(_T2_METHODS)}
    for name, v in ((name, row.split()) for name, row in _T2_ROWS.items())
}


def paper_value(dataset: str, method: str) -> tuple[float, float] | None:
    """The paper's Table 2 ROC-AUC (mean, std) of ``method`` on ``dataset``, if it has one."""
    return PAPER_METHODS.get(dataset, {}).get(method)


# The paper's per-data-set training settings (Appendix: lr 1e-4 by default, 1e-5 on ENZYMES,
# AIDS, DHFR and the Tox21 sets, 1e-2 on PROTEINS_full; batch 300, 2000 on the Tox21 sets).
_PAPER_LR = {"ENZYMES": 1e-5, "AIDS": 1e-5, "DHFR": 1e-5, "PROTEINS_full": 1e-2}


def dataset_name(path: str | Path) -> str:
    """The benchmark name of a data path: ``.../Tox21_HSE_training`` -> ``Tox21 HSE``, ``herg.tab`` -> ``hERG``."""
    name = Path(str(path).rstrip("/")).name
    for suffix in (".gz", ".zip", ".tab", ".tsv", ".csv", ".smi", ".sdf"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    m = re.fullmatch(r"Tox21_(.+?)(_training|_testing|_evaluation)?", name)
    if m:
        return f"Tox21 {m.group(1)}"
    if name.lower() == "herg":
        return "hERG"
    return name


def paper_settings(name: str) -> dict:
    """The paper's learning rate and batch size for a benchmark (``lr`` 1e-4, batch 300 when not listed)."""
    tox21 = name.startswith("Tox21")
    return {"lr": 1e-5 if tox21 else _PAPER_LR.get(name, 1e-4), "batch_size": 2000 if tox21 else 300}


# ---------------------------------------------------------------------------- results
@dataclass
class FoldResult:
    """One fold (``cv``) or one seed (``split``): sizes, metrics and wall times."""

    fold: int
    seed: int
    n_train: int
    n_train_anomalies: int
    n_test: int
    n_test_anomalies: int
    auc: float
    auc_graph: float
    auc_node: float
    ap: float
    fpr95: float
    train_seconds: float
    score_seconds: float
    final_loss: float
    epochs_run: int
    # ROC-AUC of each of GLocalKD's readout combinations (core.data.scores.READOUTS) of the same model
    auc_readouts: dict = field(default_factory=dict)


@dataclass
class EvaluationResult:
    """All folds of one evaluation, with everything needed to reproduce and compare it."""

    dataset: str
    data_path: str
    protocol: str
    method: str = "glocalkd"
    anomaly_rule: str = "minority"
    anomaly_label: str = ""
    normal_labels: list[str] = field(default_factory=list)
    params: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    test_path: str | None = None
    folds: list[FoldResult] = field(default_factory=list)
    unlabelled_skipped: int = 0
    command: str | None = None
    complete: bool = False
    wall_seconds: float = 0.0
    environment: dict = field(default_factory=dict)

    def values(self, key: str = "auc") -> np.ndarray:
        return np.array([getattr(f, key) for f in self.folds], dtype=np.float64)

    def mean(self, key: str = "auc") -> float:
        v = self.values(key)
        return float(np.nanmean(v)) if len(v) and not np.isnan(v).all() else math.nan

    def std(self, key: str = "auc") -> float:
        """Population std (ddof 0) over folds/seeds, as the authors' code reports it."""
        v = self.values(key)
        return float(np.nanstd(v)) if len(v) and not np.isnan(v).all() else math.nan

    @property
    def primary_key(self) -> str:
        return {"both": "auc", "graph": "auc_graph", "node": "auc_node"}[self.options.get("score", "both")]

    @property
    def paper(self) -> dict | None:
        return PAPER_TABLE2.get(self.dataset)

    def summary(self) -> str:
        """A few human-readable lines: rule, class, mean ± std of every metric, times."""
        lines = [f"{self.dataset}, {self.method} ({self.protocol}, {len(self.folds)} "
                 f"{'folds' if self.protocol == 'cv' else 'seeds'}{'' if self.complete else ', INCOMPLETE'}): "
                 f"anomaly rule {self.anomaly_rule!r} -> anomalous class {self.anomaly_label!r}, "
                 f"normal {', '.join(self.normal_labels)}"]
        for key, name in (("auc", "ROC-AUC"), ("auc_graph", "ROC-AUC graph term only"),
                          ("auc_node", "ROC-AUC node term only"), ("ap", "average precision"),
                          ("fpr95", "FPR at 95% TPR")):
            if len(self.folds) and np.isnan(self.values(key)).all():
                continue  # a detector without score terms
            lines.append(f"  {name}: {self.mean(key):.4f} ± {self.std(key):.4f}  "
                         f"[{', '.join(f'{v:.4f}' for v in self.values(key))}]")
        readouts = sorted({n for f in self.folds for n in f.auc_readouts})
        for name in readouts:
            v = np.array([f.auc_readouts.get(name, math.nan) for f in self.folds], dtype=np.float64)
            lines.append(f"  ROC-AUC with readout {name!r}: {np.nanmean(v):.4f} ± {np.nanstd(v):.4f}")
        paper, same = self.paper, paper_value(self.dataset, self.method)
        if same and self.method != "glocalkd":
            lines.append(f"  paper: {self.method} {same[0]:.3f} ± {same[1]:.3f}")
        if paper:
            lines.append(f"  paper: GLocalKD {paper['auc']:.3f} ± {paper['std']:.3f}; best other "
                         f"{paper['best_other']:.3f} ({paper['best_other_method']})")
        lines.append(f"  time: training {self.values('train_seconds').sum():.1f} s, scoring "
                     f"{self.values('score_seconds').sum():.1f} s, wall {self.wall_seconds:.1f} s")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["summary"] = {k: {"mean": _num(self.mean(k)), "std": _num(self.std(k))}
                        for k in ("auc", "auc_graph", "auc_node", "ap", "fpr95", "train_seconds", "score_seconds")}
        d["paper"] = self.paper
        d["folds"] = [{k: ({n: _num(a) for n, a in v.items()} if isinstance(v, dict) else _num(v))
                       for k, v in asdict(f).items()} for f in self.folds]
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> "EvaluationResult":
        d = dict(d)
        def value(v):
            if isinstance(v, dict):
                return {n: (math.nan if a is None else a) for n, a in v.items()}
            return math.nan if v is None else v

        folds = [FoldResult(**{k: value(v) for k, v in f.items()}) for f in d.pop("folds", [])]
        d.pop("summary", None)
        d.pop("paper", None)
        return cls(folds=folds, **d)


def _num(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# ---------------------------------------------------------------------------- anomaly class
def choose_anomaly_label(graphs: GraphSet, rule: str = "minority") -> str:
    """The anomalous class under ``rule``: ``minority``, ``first-label`` or a label value."""
    labels = [lab for lab in graphs.labels if lab is not None]
    if not labels:
        raise DataError("the data has no graph labels: an evaluation needs labelled graphs", graphs.source)
    first_seen: dict[str, int] = {}
    counts: dict[str, int] = {}
    for i, lab in enumerate(labels):
        first_seen.setdefault(lab, i)
        counts[lab] = counts.get(lab, 0) + 1
    if len(counts) < 2:
        raise DataError(f"the data has one graph label only ({labels[0]}): nothing to detect", graphs.source)
    if rule == "minority":
        return min(counts, key=lambda lab: (counts[lab], first_seen[lab]))
    if rule == "first-label":
        return labels[0]
    wanted = normalize_label(rule)
    if wanted not in counts:
        raise DataError(f"--anomaly {rule!r}: no graph has that label (labels: {', '.join(sorted(counts))})",
                        graphs.source)
    return wanted


# ---------------------------------------------------------------------------- evaluation
ProgressFn = Callable[[str], None]


def evaluate(data: GraphSet | str | Path, protocol: str = "cv", test: GraphSet | str | Path | None = None,
             anomaly: str = "minority", folds: int = 5, cv_seed: int = 1, seeds: Sequence[int] = (0, 1, 2, 3, 4),
             model_params: Mapping | None = None, contamination: float = 0.0, train_fraction: float = 1.0,
             score: str = "both", ensemble: int = 1, standardize: bool = False, method: str = "glocalkd",
             resume: "EvaluationResult | Sequence[EvaluationResult] | None" = None,
             only: Sequence[int] | None = None, on_progress: ProgressFn | None = None, on_epoch: Callable | None = None,
             on_fold: Callable[[EvaluationResult], None] | None = None,
             should_stop: Callable[[], bool] | None = None) -> EvaluationResult:
    """Run one protocol and return per-fold metrics with means and stds.

    ``cv`` uses ``folds``-fold stratified CV (``cv_seed``) and the model seed ``seeds[0]``;
    ``split`` needs ``test`` and repeats over every seed in ``seeds``. ``method`` names the
    detector (:mod:`core.detectors.registry`: ``glocalkd``, ``ocgcn``, ``wl-iforest``, ...) and
    ``model_params`` go to its constructor; all methods see the same folds. ``contamination`` (0-0.16 in the paper) is the share of
    anomalies in the training set (taken from the training part's anomalies); ``train_fraction``
    keeps that share of the normal training graphs. ``score`` picks the primary metric (``both``
    terms, ``graph`` term or ``node`` term; all three AUCs are always recorded). ``ensemble`` > 1
    averages the scores of that many models with independent random targets (each member's
    scores divided by its mean training score). ``standardize`` z-scores TU node attributes
    with the training graphs' mean and std. ``on_fold`` sees the partial result after each fold.
    ``resume`` is an unfinished earlier result of the same evaluation: its folds are kept and only
    the missing ones run (each fold's split and seeds do not depend on the others, so the result
    is the one an uninterrupted run gives); several partial results, e.g. from processes that ran
    different ``only`` folds side by side, are merged. ``only`` runs just those fold (or seed-run)
    numbers, counted from 1; the result stays incomplete until every fold is in.
    """
    from core.io.load import load

    if protocol not in PROTOCOLS:
        raise GLocalKDError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    if score not in SCORE_TERMS:
        raise GLocalKDError(f"score must be one of {', '.join(SCORE_TERMS)}, not {score!r}")
    if not 0.0 <= contamination < 1.0:
        raise GLocalKDError(f"contamination must be in [0, 1), not {contamination}")
    if not 0.0 < train_fraction <= 1.0:
        raise GLocalKDError(f"train fraction must be in (0, 1], not {train_fraction}")
    if ensemble < 1 or not seeds:
        raise GLocalKDError("ensemble must be at least 1 and seeds not empty")
    say = on_progress or (lambda _msg: None)
    start_wall = time.perf_counter()
    data_path = str(data) if not isinstance(data, GraphSet) else data.source
    graphs = data if isinstance(data, GraphSet) else load(data)
    test_graphs = None
    if protocol == "split":
        if test is None:
            raise GLocalKDError("the split protocol needs a testing file (--test)")
        test_graphs = test if isinstance(test, GraphSet) else load(test)
    elif test is not None:
        raise GLocalKDError("a testing file is only used by the split protocol (--protocol split)")

    labelled = [i for i, lab in enumerate(graphs.labels) if lab is not None]
    skipped = len(graphs) - len(labelled)
    graphs = graphs.subset(labelled) if skipped else graphs
    anomaly_label = choose_anomaly_label(graphs, anomaly)
    labels = np.array(graphs.labels, dtype=object)
    is_anom = labels == anomaly_label
    normal_labels = sorted(set(labels[~is_anom].tolist()))
    rule = anomaly if anomaly in ("minority", "first-label") else "explicit"
    params = {k: v for k, v in dict(model_params or {}).items()}
    from core.detectors.registry import detector_info, make_detector

    method = detector_info(method).name
    full_params = make_detector(method, **params).get_params()
    if score != "both" and not detector_info(method).has_node_scores:
        raise GLocalKDError(f"--score {score} needs a detector with two score terms (glocalkd), not {method}")
    result = EvaluationResult(
        dataset=dataset_name(data_path), data_path=data_path, protocol=protocol, method=method, anomaly_rule=rule,
        anomaly_label=str(anomaly_label), normal_labels=[str(v) for v in normal_labels], params=full_params,
        options={"folds": folds if protocol == "cv" else None, "cv_seed": cv_seed if protocol == "cv" else None,
                 "seeds": list(seeds) if protocol == "split" else [seeds[0]], "contamination": contamination,
                 "train_fraction": train_fraction, "score": score, "ensemble": ensemble,
                 "standardize": standardize, "auc_std": "population (ddof 0)"},
        test_path=None if test_graphs is None else (str(test) if not isinstance(test, GraphSet) else test.source),
        unlabelled_skipped=skipped, environment=_environment())
    say(f"{result.dataset}, {detector_info(method).label}: {len(graphs)} labelled graphs, {int(is_anom.sum())} anomalous; anomaly rule "
        f"{anomaly!r} -> anomalous class {anomaly_label!r} (normal: {', '.join(result.normal_labels)})"
        + (f"; {skipped} unlabelled graphs skipped" if skipped else ""))

    if protocol == "cv":
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=cv_seed)
        runs = [(k, seeds[0], tr, te) for k, (tr, te) in
                enumerate(splitter.split(np.zeros(len(labels)), labels.astype(str)), start=1)]
        test_set, test_anom = None, None
    else:
        t_labels = np.array([lab for lab in test_graphs.labels], dtype=object)
        keep = [i for i, lab in enumerate(t_labels) if lab is not None]
        test_set = test_graphs.subset(keep)
        test_anom = t_labels[keep] == anomaly_label
        if not test_anom.any() or test_anom.all():
            raise DataError(f"the testing file needs both anomalous ({anomaly_label}) and normal graphs",
                            test_graphs.source)
        say(f"testing file {test_graphs.source}: {len(test_set)} graphs, {int(test_anom.sum())} anomalous")
        runs = [(k, s, np.arange(len(labels)), None) for k, s in enumerate(seeds, start=1)]

    done: set[int] = set()
    earlier = 0.0
    if only is not None:
        unknown = sorted(set(only) - {k for k, *_ in runs})
        if unknown:
            raise GLocalKDError(f"no {'fold' if protocol == 'cv' else 'seed run'} {unknown[0]}: there are "
                                f"{len(runs)}, numbered from 1")
    if resume is not None and not isinstance(resume, EvaluationResult):
        resume = merge_results(resume) if len(resume) else None
    if resume is not None:
        if _settings(result) != _settings(resume):
            raise GLocalKDError("cannot resume: the earlier result was made with other settings "
                                "(data set, protocol, method, anomaly class, model parameters or options)")
        result.folds = list(resume.folds)
        done = {f.fold for f in resume.folds}
        earlier = resume.wall_seconds
        say(f"resuming: {len(done)} of {len(runs)} {'folds' if protocol == 'cv' else 'seed runs'} already done")
    for k, seed, train_idx, test_idx in runs:
        if k in done or (only is not None and k not in only):
            continue
        if should_stop is not None and should_stop():
            break
        rng = np.random.default_rng(seed + 7919 * k)
        normal_idx = train_idx[~is_anom[train_idx]]
        if train_fraction < 1.0:
            n_keep = max(1, int(round(train_fraction * len(normal_idx))))
            normal_idx = np.sort(rng.choice(normal_idx, n_keep, replace=False))
        anom_idx = np.zeros(0, dtype=int)
        if contamination > 0:
            pool = train_idx[is_anom[train_idx]]
            want = int(round(contamination / (1.0 - contamination) * len(normal_idx)))
            if want > len(pool):
                say(f"  only {len(pool)} anomalies available for {contamination:.0%} contamination; using all")
            anom_idx = np.sort(rng.choice(pool, min(want, len(pool)), replace=False))
        train_set = graphs.subset(np.concatenate([normal_idx, anom_idx]).tolist())
        if protocol == "cv":
            fold_test, fold_anom = graphs.subset(test_idx.tolist()), is_anom[test_idx]
        else:
            fold_test, fold_anom = test_set, test_anom
        if standardize:
            train_set, fold_test = _standardize(train_set, fold_test)
        say(f"{'fold' if protocol == 'cv' else 'seed run'} {k}/{len(runs)} (model seed {seed}): training on "
            f"{len(train_set)} graphs ({len(anom_idx)} anomalous), scoring {len(fold_test)} "
            f"({int(fold_anom.sum())} anomalous)")
        total, graph_t, node_t, parts = 0.0, 0.0, 0.0, {}
        train_s = score_s = 0.0
        losses, epochs_run = [], 0
        for member in range(ensemble):
            model = make_detector(method, **{**params, "seed": seed + 1000 * member})
            t0 = time.perf_counter()
            model.fit(train_set, on_epoch=on_epoch, should_stop=should_stop)
            train_s += time.perf_counter() - t0
            t0 = time.perf_counter()
            s = model.score(fold_test)
            score_s += time.perf_counter() - t0
            scale = 1.0 / max(float(np.mean(model.train_scores_)), 1e-12) if ensemble > 1 else 1.0
            total = total + s.score.astype(np.float64) * scale
            graph_t = graph_t + s.graph_term.astype(np.float64) * scale
            node_t = node_t + s.node_term.astype(np.float64) * scale
            for name, values in s.parts.items():
                parts[name] = parts.get(name, 0.0) + values.astype(np.float64) * scale
            losses.append(model.loss_history_[-1] if model.loss_history_ else math.nan)  # no epochs: NaN
            epochs_run = len(model.loss_history_)
            if model.stopped_early_:
                break
        if should_stop is not None and should_stop():
            break
        fr = FoldResult(fold=k, seed=seed, n_train=len(train_set), n_train_anomalies=len(anom_idx),
                        n_test=len(fold_test), n_test_anomalies=int(fold_anom.sum()),
                        auc=roc_auc(fold_anom, total),
                        auc_graph=roc_auc(fold_anom, graph_t) if s.has_node_scores else math.nan,
                        auc_node=roc_auc(fold_anom, node_t) if s.has_node_scores else math.nan,
                        ap=average_precision(fold_anom, total),
                        fpr95=fpr_at_tpr(fold_anom, total), train_seconds=train_s, score_seconds=score_s,
                        final_loss=float(np.mean(losses)), epochs_run=epochs_run,
                        auc_readouts=_readout_aucs(fold_anom, parts, full_params.get("lam", 1.0)))
        result.folds.append(fr)
        result.wall_seconds = earlier + time.perf_counter() - start_wall
        terms = f" (graph term {fr.auc_graph:.4f}, node term {fr.auc_node:.4f})" if s.has_node_scores else ""
        say(f"  AUC {fr.auc:.4f}{terms}, AP {fr.ap:.4f}; train {train_s:.1f} s, score {score_s:.2f} s")
        if on_fold is not None:
            on_fold(result)
    result.folds.sort(key=lambda f: f.fold)
    result.complete = len(result.folds) == len(runs)
    result.wall_seconds = earlier + time.perf_counter() - start_wall
    return result


def merge_results(results: Sequence[EvaluationResult]) -> EvaluationResult:
    """One result from partial results of the same evaluation (same data, method, anomaly class,
    parameters and options) that hold different folds, e.g. from processes run side by side.
    Wall seconds add up (the machine time spent); a fold present twice must agree."""
    if not results:
        raise GLocalKDError("nothing to merge")
    first = results[0]
    folds: dict[int, FoldResult] = {}
    for r in results:
        if _settings(r) != _settings(first):
            raise GLocalKDError("cannot merge results made with other settings "
                                "(data set, protocol, method, anomaly class, model parameters or options)")
        for f in r.folds:
            if f.fold in folds and not _same_fold(folds[f.fold], f):
                raise GLocalKDError(f"cannot merge: fold {f.fold} differs between the results")
            folds.setdefault(f.fold, f)
    merged = EvaluationResult.from_dict(first.to_dict())
    merged.folds = [folds[k] for k in sorted(folds)]
    merged.wall_seconds = float(sum(r.wall_seconds for r in results))
    merged.complete = any(r.complete for r in results)
    return merged


def _settings(r: EvaluationResult) -> tuple:
    """What must agree for two results to be parts of one evaluation. Parameters added to the
    detector since a result was written count as their defaults."""
    from core.detectors.registry import make_detector

    defaults = make_detector(r.method).get_params()
    params = {**{k: v for k, v in defaults.items() if k not in r.params}, **r.params}
    return r.dataset, r.protocol, r.method, r.anomaly_label, params, r.options


def _same_fold(a: FoldResult, b: FoldResult) -> bool:
    """Two records of one fold agree on what it measured (timings may differ)."""
    return (a.seed, a.n_train, a.n_test) == (b.seed, b.n_train, b.n_test) and (
        a.auc == b.auc or (math.isnan(a.auc) and math.isnan(b.auc)))


def _readout_aucs(anomalous: np.ndarray, parts: dict[str, np.ndarray], lam: float) -> dict[str, float]:
    """ROC-AUC of every readout combination of one trained GLocalKD (none for other detectors)."""
    if not READOUT_PARTS <= set(parts):
        return {}
    return {name: roc_auc(anomalous, combine_readouts(parts, lam, *flags)) for name, flags in READOUTS.items()}


def _standardize(train: GraphSet, test: GraphSet) -> tuple[GraphSet, GraphSet]:
    """Z-score TU node attributes with the training graphs' per-column mean and std (copies)."""
    import torch

    if not train.graphs or "node_attr" not in train.graphs[0]:
        return train, test
    attrs = torch.cat([g.node_attr.double() for g in train.graphs])
    mean, std = attrs.mean(0), attrs.std(0, unbiased=False)
    std = torch.where(std > 0, std, torch.ones_like(std))

    def apply(gs: GraphSet) -> GraphSet:
        out = gs.subset(range(len(gs)))
        new = []
        for g in out.graphs:
            g = g.clone()
            g.node_attr = ((g.node_attr.double() - mean) / std).float()
            new.append(g)
        out.graphs = new
        return out

    return apply(train), apply(test)


def _environment() -> dict:
    import torch

    from core.runtime.machine import describe_cpu

    return {"python": platform.python_version(), "torch": torch.__version__, "threads": torch.get_num_threads(),
            "machine": platform.machine(), **describe_cpu(), "cpus": os.cpu_count(), "started_utc":
            time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


# ---------------------------------------------------------------------------- writers
def write_json(result: EvaluationResult, path: str | Path) -> None:
    """Write the full result (params, options, per-fold metrics, summary, paper values) atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n")
    tmp.replace(path)


def read_json(path: str | Path) -> EvaluationResult:
    """Read a result written by :func:`write_json`."""
    return EvaluationResult.from_dict(json.loads(Path(path).read_text()))


def _pm(mean: float, std: float) -> str:
    return "n/a" if not math.isfinite(mean) else f"{mean:.3f} ± {std:.3f}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def markdown_table(results: Sequence[EvaluationResult], pending: Sequence[str] = ()) -> str:
    """A Markdown table: one row per result with ours beside the paper's value and best competitor.

    ``pending`` names data sets to list as "not run yet".
    """
    head = ("| data set | protocol | anomalous class (rule) | ours: ROC-AUC mean ± std | graph term only "
            "| node term only | paper GLocalKD | paper best other | wall time | command |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    rows = []
    for r in results:
        paper = r.paper
        p = f"{paper['auc']:.3f} ± {paper['std']:.3f}" if paper else "—"
        b = f"{paper['best_other']:.3f} ({paper['best_other_method']})" if paper else "—"
        n = len(r.folds)
        unit = "folds" if r.protocol == "cv" else "seeds"
        state = "" if r.complete else f" (INCOMPLETE: {n} {unit})"
        cmd = f"`{r.command}`" if r.command else "—"
        rows.append(f"| {r.dataset} | {r.protocol}, {n} {unit} | {r.anomaly_label} ({r.anomaly_rule}) | "
                    f"{_pm(r.mean(r.primary_key), r.std(r.primary_key))}{state} | "
                    f"{_pm(r.mean('auc_graph'), r.std('auc_graph'))} | {_pm(r.mean('auc_node'), r.std('auc_node'))} | "
                    f"{p} | {b} | {_duration(r.wall_seconds)} | {cmd} |")
    for name in pending:
        paper = PAPER_TABLE2.get(name)
        p = f"{paper['auc']:.3f} ± {paper['std']:.3f}" if paper else "—"
        b = f"{paper['best_other']:.3f} ({paper['best_other_method']})" if paper else "—"
        rows.append(f"| {name} | | | not run yet | | | {p} | {b} | | |")
    return head + "\n".join(rows) + "\n"


def write_markdown(results: EvaluationResult | Sequence[EvaluationResult], path: str | Path,
                   pending: Sequence[str] = (), title: str = "GLocalKD evaluation") -> None:
    """Write ``results`` as a Markdown file: a title, the table, and each result's settings."""
    if isinstance(results, EvaluationResult):
        results = [results]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = [f"# {title}\n", markdown_table(results, pending)]
    for r in results:
        parts.append(f"\n## {r.dataset}\n\n```\n{r.summary()}\n```\n\nModel: "
                     + ", ".join(f"{k}={v}" for k, v in r.params.items()) + "; options: "
                     + ", ".join(f"{k}={v}" for k, v in r.options.items()) + "\n")
    path.write_text("".join(parts))


# ---------------------------------------------------------------------------- command line
def _reproducing_argv(argv: Sequence[str]) -> list[str]:
    """The command line without what only says how a run was split up or resumed: the
    recorded command reproduces the whole evaluation."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--resume":
            continue
        elif a in ("--resume-from", "--only"):
            skip = True
        elif not a.startswith(("--resume-from=", "--only=")):
            out.append(a)
    return out


def run_from_args(args) -> EvaluationResult:
    """What ``glocalkd evaluate`` does with its parsed arguments (kept here so cli.py only parses)."""
    name = dataset_name(args.data)
    paper = paper_settings(name)
    lr = args.lr if args.lr is not None else paper["lr"]
    batch = args.batch_size if args.batch_size is not None else paper["batch_size"]
    from core.detectors.registry import accepted_params

    method = getattr(args, "method", "glocalkd")
    accepted = accepted_params(method)
    if "lr" in accepted and (args.lr is None or args.batch_size is None):
        print(f"{name}: using the paper's settings lr={lr:g}, batch size={batch}", file=sys.stderr)
    params = dict(epochs=args.epochs, lr=lr, batch_size=batch, hidden_dim=args.hidden, out_dim=args.out_dim,
                  num_layers=args.layers, lam=args.lam, normalize=args.normalize, features=args.features,
                  device=args.device, node_max=args.node_max, size_term=args.size_term)
    params = {k: v for k, v in params.items() if k in accepted}  # e.g. WL-iForest has no epochs
    seeds = list(range(args.seed, args.seed + args.seeds)) if args.protocol == "split" else [args.seed]
    argv = _reproducing_argv(getattr(args, "argv", None) or [])
    command = "glocalkd " + " ".join(shlex.quote(a) for a in argv) if argv else None
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    every = max(1, args.epochs // 10)

    def on_epoch(info) -> None:
        if info.epoch % every == 0 or info.epoch == info.epochs:
            log(f"    epoch {info.epoch}/{info.epochs} loss {info.loss:.5g} ({info.seconds:.2f} s)")

    def on_fold(partial: EvaluationResult) -> None:
        partial.command = command
        if args.json:
            write_json(partial, args.json)

    earlier = list(getattr(args, "resume_from", None) or [])
    if getattr(args, "resume", False) and args.json and Path(args.json).exists():
        earlier.insert(0, args.json)
    for path in earlier:
        if not Path(path).exists():
            raise GLocalKDError(f"{path}: no such result file to resume from")
    resume = [read_json(path) for path in earlier] or None
    result = evaluate(args.data, protocol=args.protocol, test=args.test, anomaly=args.anomaly, folds=args.folds,
                      cv_seed=args.cv_seed, seeds=seeds, model_params=params, contamination=args.contamination,
                      train_fraction=args.train_fraction, score=args.score, ensemble=args.ensemble,
                      standardize=args.standardize, method=method, resume=resume,
                      only=getattr(args, "only", None), on_progress=log, on_epoch=on_epoch, on_fold=on_fold)
    result.command = command
    print(result.summary())
    if args.json:
        write_json(result, args.json)
        print(f"results written to {args.json}", file=sys.stderr)
    if args.markdown:
        write_markdown(result, args.markdown)
        print(f"table written to {args.markdown}", file=sys.stderr)
    return result
