"""What an evaluation returns (per-fold metrics, means, reproduction details), how partial runs
merge, and the JSON and Markdown writers."""
from __future__ import annotations

import json
import math
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from collections.abc import Mapping, Sequence

import numpy as np

from core.runtime.files import atomic_output
from core.errors import DataError, GLocalKDError
from core.data.scores import WEIGHED_VIEWS_PART
from core.evaluation.paper import PAPER_TABLE2, paper_value

@dataclass
class FoldResult:
    """One fold (``cv``) or one seed (``split``): sizes, metrics and wall times.

    ``auc``, ``ap`` and ``fpr95`` are of the evaluation's primary score (its ``score`` option:
    both terms, or one term alone); ``auc_both``, ``auc_graph`` and ``auc_node`` are the AUCs of
    each, whichever is primary.
    """

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
    # share of the test part's normal graphs with p < 0.05, for a detector with p-values (calibration: about 0.05)
    normals_flagged: float = math.nan
    # ROC-AUC of the full score (both terms); ``auc`` is this one when both terms are the primary score
    auc_both: float = math.nan


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
    rows_rejected: int = 0  # rows of the data (and testing) files that were not read as graphs
    data_digest: str | None = None  # the graphs evaluated (core.data.graph_identity.graphs_digest); None: older
    command: str | None = None
    complete: bool = False
    wall_seconds: float = 0.0
    environment: dict = field(default_factory=dict)
    # why the method cannot read this data at all (e.g. ECFP on graphs that are not molecules): no folds, "n/a"
    not_applicable: str | None = None

    def values(self, key: str = "auc") -> np.ndarray:
        """One metric of every fold, in fold order.

        Args:
            key: a :class:`FoldResult` field (default ``auc``; ``auc_graph``, ``auc_node``, ``ap``,
                ``fpr95``, ``train_seconds``, ...).

        Returns:
            float64 values, one per fold (NaN where the fold had none).
        """
        return np.array([getattr(f, key) for f in self.folds], dtype=np.float64)

    def mean(self, key: str = "auc") -> float:
        """The mean of one metric over folds/seeds, NaN ignored.

        Args:
            key: a :class:`FoldResult` field (default ``auc``; ``auc_graph``, ``auc_node``, ``ap``,
                ``fpr95``, ``train_seconds``, ...).

        Returns:
            The mean; NaN when there are no folds or every value is NaN.
        """
        v = self.values(key)
        return float(np.nanmean(v)) if len(v) and not np.isnan(v).all() else math.nan

    def std(self, key: str = "auc") -> float:
        """The population std (ddof 0) of one metric over folds/seeds, as the authors' code reports it.

        Args:
            key: a :class:`FoldResult` field (default ``auc``; ``auc_graph``, ``auc_node``, ``ap``,
                ``fpr95``, ``train_seconds``, ...).

        Returns:
            The std, NaN ignored; NaN when there are no folds or every value is NaN.
        """
        v = self.values(key)
        return float(np.nanstd(v)) if len(v) and not np.isnan(v).all() else math.nan

    @property
    def primary_score(self) -> str:
        """The score the ``score`` option made primary (``both``, ``graph`` or ``node``): each fold's
        ``auc``, ``ap`` and ``fpr95`` are of it."""
        return self.options.get("score", "both")

    @property
    def _of_primary(self) -> str:
        """`` (graph term only)`` after a metric of one term alone; "" for both terms."""
        return "" if self.primary_score == "both" else f" ({self.primary_score} term only)"

    @property
    def paper(self) -> dict | None:
        """The paper's Table 2 entry for this data set (GLocalKD and the best other), or None."""
        return PAPER_TABLE2.get(self.dataset)

    def summary(self) -> str:
        """Summarise the result for people, as ``glocalkd evaluate`` prints it.

        Returns:
            A few lines: rule, class, mean ± std of every metric (and per fold), each readout's
            and component's AUC, the paper's values, times; "n/a" and why for a method that cannot
            read the data.
        """
        lines = [f"{self.dataset}, {self.method} ({self.protocol}, {len(self.folds)} "
                 f"{'folds' if self.protocol == 'cv' else 'seeds'}{'' if self.complete else ', INCOMPLETE'}): "
                 f"anomaly rule {self.anomaly_rule!r} -> anomalous class {self.anomaly_label!r}, "
                 f"normal {', '.join(self.normal_labels)}"]
        if self.not_applicable:
            return "\n".join([*lines, f"  ROC-AUC: n/a ({self.not_applicable})"])
        of = self._of_primary
        rows = (("auc", f"ROC-AUC{of}"), ("auc_both", "ROC-AUC both terms"), ("auc_graph", "ROC-AUC graph term only"),
                ("auc_node", "ROC-AUC node term only"), ("ap", f"average precision{of}"), ("fpr95", f"FPR at 95% TPR{of}"))
        for key, name in rows:
            if key != "auc" and key == {"both": "auc_both", "graph": "auc_graph", "node": "auc_node"}[
                    self.primary_score]:
                continue  # the headline line already
            if len(self.folds) and np.isnan(self.values(key)).all():
                continue  # a detector without score terms
            lines.append(f"  {name}: {self.mean(key):.4f} ± {self.std(key):.4f}  "
                         f"[{', '.join(f'{v:.4f}' for v in self.values(key))}]")
        readouts = sorted({n for f in self.folds for n in f.auc_readouts})
        for name in readouts:
            v = np.array([f.auc_readouts.get(name, math.nan) for f in self.folds], dtype=np.float64)
            what = (f"with component {name.split(':', 1)[1]}" if name.startswith("component:")
                    else "with the views weighed equally" if name == "equal-weights"
                    else "with the weighed views, without the classifier view" if name == WEIGHED_VIEWS_PART
                    else f"with readout {name!r}")
            lines.append(f"  ROC-AUC {what}: {np.nanmean(v):.4f} ± {np.nanstd(v):.4f}")
        flagged = self.values("normals_flagged") if self.folds else np.zeros(0)
        if len(flagged) and np.isfinite(flagged).any():
            lines.append(f"  held-out normal graphs with p < 0.05: {100 * np.nanmean(flagged):.1f} % "
                         f"[{', '.join(f'{100 * v:.1f}' for v in flagged)}]")
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
        """The result as JSON-ready values (what ``--json`` writes).

        Returns:
            The fields by name, non-finite numbers as None, plus ``summary`` (mean and std of each
            metric; ``auc``, ``ap`` and ``fpr95`` of the primary score) and ``paper`` (:attr:`paper`).
        """
        d = asdict(self)
        d["summary"] = {k: {"mean": _num(self.mean(k)), "std": _num(self.std(k))}
                        for k in ("auc", "auc_both", "auc_graph", "auc_node", "ap", "fpr95", "train_seconds",
                                  "score_seconds")}
        d["paper"] = self.paper
        d["folds"] = [{k: ({n: _num(a) for n, a in v.items()} if isinstance(v, dict) else _num(v))
                       for k, v in asdict(f).items()} for f in self.folds]
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> EvaluationResult:
        """Read back a result from a :meth:`to_dict` mapping.

        Every value is checked (:func:`check_result_dict`), so a damaged or edited file is
        refused, never merged.

        Args:
            d: the mapping (``json.loads`` of a ``--json`` file); None metrics become NaN.

        Returns:
            The result.

        Raises:
            ValueError: a value is missing or not what it must be.
        """
        d = dict(check_result_dict(d))
        def value(v):
            if isinstance(v, dict):
                return {n: (math.nan if a is None else a) for n, a in v.items()}
            return math.nan if v is None else v

        # a fold written before auc_both was recorded measured both terms (check_result_dict): its auc is that one
        folds = [FoldResult(**{k: value(v) for k, v in {"auc_both": f["auc"], **f}.items()}) for f in d.pop("folds", [])]
        d.pop("summary", None)
        d.pop("paper", None)
        return cls(folds=folds, **d)


# The checks of a result file's values: what each field must hold (None is a metric that had no value).
_RATES = ("auc", "auc_both", "auc_graph", "auc_node", "ap", "fpr95")  # from 0 to 1, or None (auc_both: or absent)
_COUNTS = ("fold", "seed", "n_train", "n_train_anomalies", "n_test", "n_test_anomalies", "epochs_run")
_SECONDS = ("train_seconds", "score_seconds")


def check_result_dict(d: Mapping) -> Mapping:
    """Check every value of a result mapping read from a file; return it.

    Args:
        d: the mapping :meth:`EvaluationResult.to_dict` wrote (``json.loads`` of a ``--json`` file).

    Returns:
        ``d`` itself.

    Raises:
        ValueError: naming the first field that is missing or not what it must be (a rate outside
            0 to 1, a text where a number belongs, a count that is not a whole number ...).
    """
    if not isinstance(d, Mapping):
        raise ValueError("not a JSON object")
    for key in ("dataset", "data_path", "protocol"):
        if not isinstance(d.get(key), str):
            raise ValueError(f"{key} must be a text, not {_shown(d.get(key))}")
    if d["protocol"] not in ("cv", "split"):
        raise ValueError(f"protocol must be cv or split, not {_shown(d['protocol'])}")
    for key in ("method", "anomaly_rule", "anomaly_label"):
        if key in d and not isinstance(d[key], str):
            raise ValueError(f"{key} must be a text, not {_shown(d[key])}")
    for key in ("test_path", "command"):
        if d.get(key) is not None and not isinstance(d[key], str):
            raise ValueError(f"{key} must be a text or null, not {_shown(d[key])}")
    for key in ("params", "options", "environment"):
        if key in d and not isinstance(d[key], Mapping):
            raise ValueError(f"{key} must be an object, not {_shown(d[key])}")
    if "normal_labels" in d and not (isinstance(d["normal_labels"], list)
                                     and all(isinstance(v, str) for v in d["normal_labels"])):
        raise ValueError(f"normal_labels must be a list of texts, not {_shown(d['normal_labels'])}")
    if d.get("data_digest") is not None and not (isinstance(d["data_digest"], str)
                                                 and d["data_digest"].startswith("sha256:")):
        raise ValueError(f"data_digest must be a digest (sha256:...), not {_shown(d['data_digest'])}")
    if "complete" in d and not isinstance(d["complete"], bool):
        raise ValueError(f"complete must be true or false, not {_shown(d['complete'])}")
    for key in ("unlabelled_skipped", "rows_rejected"):
        if key in d:
            _count(key, d[key])
    if "wall_seconds" in d:
        _seconds("wall_seconds", d["wall_seconds"])
    folds = d.get("folds", [])
    if not isinstance(folds, list):
        raise ValueError(f"folds must be a list, not {_shown(folds)}")
    for k, fold in enumerate(folds, start=1):
        if not isinstance(fold, Mapping):
            raise ValueError(f"fold entry {k} must be an object, not {_shown(fold)}")
        where = f"fold entry {k}: "
        try:
            for key in _COUNTS:
                _count(key, fold.get(key))
            for key in _RATES:
                _rate(key, fold.get(key), missing=key not in fold and key != "auc_both")
            if "auc_both" not in fold and (d.get("options") or {}).get("score", "both") != "both":
                raise ValueError(f"written before --score {d['options']['score']} decided the AUC, AP and FPR at "
                                 "95% TPR (they were of both terms): run the evaluation again")
            for key in _SECONDS:
                _seconds(key, fold.get(key))
            loss = fold.get("final_loss")
            if loss is not None and not _finite_number(loss):
                raise ValueError(f"final_loss must be a finite number or null, not {_shown(loss)}")
            readouts = fold.get("auc_readouts", {})
            if not isinstance(readouts, Mapping):
                raise ValueError(f"auc_readouts must be an object, not {_shown(readouts)}")
            for name, value in readouts.items():
                _rate(f"auc_readouts.{name}", value)
            for part, whole in (("n_train_anomalies", "n_train"), ("n_test_anomalies", "n_test")):
                if fold[part] > fold[whole]:
                    raise ValueError(f"{part} ({fold[part]}) is more than {whole} ({fold[whole]})")
            runs = _runs(d)
            if not 1 <= fold["fold"] <= (runs or fold["fold"]):
                raise ValueError(f"fold must be a number from 1 to {runs or 'the number of folds'}, not {fold['fold']}")
        except ValueError as exc:
            raise ValueError(where + str(exc)) from None
    return d


def _runs(d: Mapping) -> int | None:
    """How many folds (cv) or seed runs (split) the result's options say, when they say it."""
    options = d.get("options") or {}
    runs = options.get("folds") if d["protocol"] == "cv" else len(options.get("seeds") or []) or None
    return runs if isinstance(runs, int) and not isinstance(runs, bool) and runs > 0 else None


def _finite_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _rate(key: str, v, missing: bool = False) -> None:
    if missing:
        raise ValueError(f"{key} is missing")
    if v is not None and not (_finite_number(v) and 0.0 <= v <= 1.0):
        raise ValueError(f"{key} must be a number from 0 to 1 (or null), not {_shown(v)}")


def _count(key: str, v) -> None:
    if not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
        raise ValueError(f"{key} must be a whole number of 0 or more, not {_shown(v)}")


def _seconds(key: str, v) -> None:
    if not (_finite_number(v) and v >= 0):
        raise ValueError(f"{key} must be a number of seconds of 0 or more, not {_shown(v)}")


def _shown(v) -> str:
    text = json.dumps(v) if not isinstance(v, float) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _num(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def merge_results(results: Sequence[EvaluationResult]) -> EvaluationResult:
    """Merge partial results of one evaluation that hold different folds, e.g. from processes run side by side.

    Args:
        results: the partial results; they must agree on data, protocol, method, anomaly class,
            parameters and options (:func:`settings_key`).

    Returns:
        One result with every fold once, in fold order; wall seconds add up (the machine time
        spent); complete when any part says so.

    Raises:
        GLocalKDError: there is nothing to merge, the settings differ, or a fold present twice
            differs (:func:`same_fold`).
    """
    if not results:
        raise GLocalKDError("nothing to merge")
    first = results[0]
    folds: dict[int, FoldResult] = {}
    for r in results:
        if not same_settings(r, first):
            raise GLocalKDError("cannot merge results made with other settings "
                                "(data set, protocol, method, anomaly class, model parameters or options)")
        if not same_data(r, first):
            raise GLocalKDError(f"cannot merge results made on other data ({r.data_path} and {first.data_path} "
                                "hold other graphs, or other testing files)")
        for f in r.folds:
            if f.fold in folds and not same_fold(folds[f.fold], f):
                raise GLocalKDError(f"cannot merge: fold {f.fold} differs between the results")
            folds.setdefault(f.fold, f)
    merged = EvaluationResult.from_dict(first.to_dict())
    merged.folds = [folds[k] for k in sorted(folds)]
    merged.wall_seconds = float(sum(r.wall_seconds for r in results))
    merged.complete = any(r.complete for r in results)
    return merged


OPTION_DEFAULTS = {"known_anomalies": 0}  # options younger than some result files


# Parameters younger than some result files whose default changed what was measured: a result
# without one was made with this value (a consensus without reserve views weighed three views).
PARAMS_BEFORE = {"consensus": {"reserve_views": []}}


def same_data(a: EvaluationResult, b: EvaluationResult) -> bool:
    """Whether two results evaluated the same graphs (their data and testing files as read; the
    name of a data set alone let folds of another file, or of another testing file, mix in).

    Args:
        a: one result.
        b: the other.

    Returns:
        False when both record a digest of their graphs and the digests differ (a result written
        before digests were recorded is taken at its data set's name).
    """
    return a.data_digest is None or b.data_digest is None or a.data_digest == b.data_digest


def same_settings(a: EvaluationResult, b: EvaluationResult) -> bool:
    """Whether two results are parts of one evaluation by their settings (:func:`settings_key`).
    Where both record a digest of their graphs, the digest says which data it was
    (:func:`same_data`), not the data set's name: results written when the name was the folder's
    (``aids_copy``) resume under the collection's own (``AIDS``).

    Args:
        a: one result.
        b: the other.

    Returns:
        True when the settings agree (the names too, unless both record digests).
    """
    digests = a.data_digest is not None and b.data_digest is not None
    key_a, key_b = settings_key(a), settings_key(b)
    return (digests or key_a[0] == key_b[0]) and key_a[1:] == key_b[1:]


def settings_key(r: EvaluationResult) -> tuple:
    """What must agree for two results to be parts of one evaluation.

    Parameters and options added since a result was written count as their defaults, or as
    :data:`PARAMS_BEFORE` says.

    Args:
        r: the result.

    Returns:
        (data set, protocol, method, anomaly label, full model parameters, options), to compare
        with ``==``.
    """
    from core.detectors.registry import make_detector

    defaults = {**make_detector(r.method).get_params(), **PARAMS_BEFORE.get(r.method, {})}
    params = {**{k: v for k, v in defaults.items() if k not in r.params}, **r.params}
    return r.dataset, r.protocol, r.method, r.anomaly_label, params, {**OPTION_DEFAULTS, **r.options}


def same_fold(a: FoldResult, b: FoldResult) -> bool:
    """Whether two records of one fold agree on what it measured (timings may differ).

    Args:
        a: one record.
        b: the other.

    Returns:
        True when seed, sizes and AUC are equal (two NaN AUCs are equal).
    """
    return (a.seed, a.n_train, a.n_test) == (b.seed, b.n_train, b.n_test) and (
        a.auc == b.auc or (math.isnan(a.auc) and math.isnan(b.auc)))


def environment() -> dict:
    """Describe the machine an evaluation runs on, for the result file.

    Returns:
        Python and torch versions, torch's threads, the CPU (:func:`core.runtime.machine.describe_cpu`),
        the CPU count and the start time in UTC.
    """
    import torch

    from core.runtime.machine import describe_cpu

    return {"python": platform.python_version(), "torch": torch.__version__, "threads": torch.get_num_threads(),
            "machine": platform.machine(), **describe_cpu(), "cpus": os.cpu_count(), "started_utc":
            time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}



RESULT_SUFFIXES = {"json": (".json",), "markdown": (".md", ".markdown")}


def results_name_problem(path: str | Path, kind: str) -> str | None:
    """Say what is wrong with the name of an evaluation's results file, if anything: the rule of
    :func:`write_json` and :func:`write_markdown`, and so of ``--json`` and ``--markdown``
    (``--json model.pt`` replaced a model file with JSON).

    Args:
        path: the file to write.
        kind: ``"json"`` or ``"markdown"``.

    Returns:
        The reason, worded to follow the file's name, or None for a name that fits.
    """
    allowed = RESULT_SUFFIXES[kind]
    suffix = Path(path).suffix.lower()
    if suffix in allowed:
        return None
    said = "JSON" if kind == "json" else "Markdown"
    return f"the results are written as {said}, not {suffix or 'a file without a suffix'}; name it {allowed[0]}"


def _check_results_name(path: str | Path, kind: str) -> None:
    problem = results_name_problem(path, kind)
    if problem is not None:
        raise GLocalKDError(f"{path}: {problem}")


def write_json(result: EvaluationResult, path: str | Path) -> None:
    """Write the full result (params, options, per-fold metrics, summary, paper values) as JSON, atomically.

    Args:
        result: the result.
        path: the JSON file to write (its folder is made when missing; named .json).

    Raises:
        GLocalKDError: the name promises another format (:func:`results_name_problem`).
    """
    _check_results_name(path, "json")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n"
    with atomic_output(path, "w", encoding="utf-8") as fh:  # a unique O_EXCL temp file, never a link followed
        fh.write(text)


def read_json(path: str | Path) -> EvaluationResult:
    """Read a result written by :func:`write_json`, checking every value.

    Args:
        path: the JSON file.

    Returns:
        The result.

    Raises:
        DataError: the file cannot be read, is not a result file, or holds a value it cannot
            hold (an AUC of 7, a text for a number).
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"not a result file written by 'glocalkd evaluate --json' ({type(exc).__name__}: "
                        f"{str(exc)[:200]})", path) from None
    except OSError as exc:
        raise DataError(f"cannot read the result file: {exc.strerror or exc}", path) from None
    try:
        return EvaluationResult.from_dict(data)
    except ValueError as exc:
        raise DataError(f"not a valid result file of 'glocalkd evaluate --json': {str(exc)[:200]}", path) from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"not a result file written by 'glocalkd evaluate --json' ({type(exc).__name__}: "
                        f"{str(exc)[:200]})", path) from None


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

    Args:
        results: the results, one row each.
        pending: data sets to list as "not run yet", with the paper's values.

    Returns:
        The table, header included, ending with a line break.
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
                    f"{_pm(r.mean('auc'), r.std('auc'))}{r._of_primary}{state} | "
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
    """Write results as a Markdown file, atomically: a title, the table, and each result's summary and settings.

    Args:
        results: one result or several.
        path: the Markdown file to write (its folder is made when missing; named .md).
        pending: data sets to list as "not run yet" (:func:`markdown_table`).
        title: the first heading.

    Raises:
        GLocalKDError: the name promises another format (:func:`results_name_problem`).
    """
    _check_results_name(path, "markdown")
    if isinstance(results, EvaluationResult):
        results = [results]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = [f"# {title}\n", markdown_table(results, pending)]
    for r in results:
        parts.append(f"\n## {r.dataset}\n\n```\n{r.summary()}\n```\n\nModel: "
                     + ", ".join(f"{k}={v}" for k, v in r.params.items()) + "; options: "
                     + ", ".join(f"{k}={v}" for k, v in r.options.items()) + "\n")
    with atomic_output(path, "w", encoding="utf-8") as fh:
        fh.write("".join(parts))
