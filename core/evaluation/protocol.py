"""Evaluation harness: the paper's protocols (Ma et al., WSDM 2022, Sec. 5) on labelled data.

``cv``: k-fold stratified cross-validation (shuffled, seed 1 as the paper) over a TU collection
or a labelled molecule file; the model trains on the *normal* graphs of the training folds and
scores the whole held-out fold. ``split``: a fixed training / testing pair (the Tox21 sets);
the model trains on the training file's normal graphs and scores the testing file, repeated over
several model seeds.

Which class is anomalous is chosen by a rule: ``minority`` (the paper's text; ties go to the
label that appears first), ``first-label`` (the authors' loader: the label of the first labelled
graph in file order) or an explicit label value. The rule and the class are recorded and printed.

Every fold records ROC-AUC, average precision and FPR at 95 % TPR of the primary score (``score``:
both terms, or one term alone), the ROC-AUC of the full score and of its two terms alone (the
paper's ablation: ``graph_term`` = w/o L_node, ``node_term`` = w/o L_graph), and the wall time of
training and of scoring. Options cover the paper's other experiments:
anomaly contamination of the training set, fraction of training data, embedding width and depth.

Nothing here imports Qt; ``evaluate`` takes ``on_progress`` / ``should_stop`` callbacks for a GUI.
"""
from __future__ import annotations

import math
import time
from pathlib import Path
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from sklearn.model_selection import StratifiedKFold

from core.errors import (DataError, GLocalKDError, NotApplicableError, ParameterError, SchemaMismatchError,
                         one_line)
from core.wording import counted
from core.data.scaling import usable_spread
from core.detectors.base import SEED, is_seed
from core.detectors.conformal import model_p_values
from core.data.graphset import GraphSet, normalize_label
from core.data.label_coding import check_label_coding, label_coding
from core.detectors.registry import DEFAULT_DETECTOR
from core.evaluation.paper import benchmark_name, with_paper_settings
from core.evaluation.results import (EvaluationResult, FoldResult, environment, merge_results, same_data,
                                     same_settings)
from core.data.graph_identity import graphs_digest
from core.evaluation.metrics import average_precision, fpr_at_tpr, roc_auc
from core.data.scores import READOUT_PARTS, READOUTS, WEIGHED_VIEWS_PART, combine_readouts

PROTOCOLS = ("cv", "split")
SCORE_TERMS = ("both", "graph", "node")
FLAG_LEVEL = 0.05  # the p-value under which a fold's held-out normal graphs count as flagged (calibration)
EQUAL_WEIGHTS = "equal-weights"  # readout: the consensus before known anomalies weighed its views
KNOWN_SEED = 20223  # seeds the draw of known anomalies from a fold's training part

# ---------------------------------------------------------------------------- anomaly class
def choose_anomaly_label(graphs: GraphSet, rule: str = "minority") -> str:
    """Choose the anomalous class of a labelled data set by a rule.

    Args:
        graphs: the data; unlabelled graphs are ignored.
        rule: ``minority`` (the paper's text; ties go to the label seen first), ``first-label``
            (the authors' loader: the first labelled graph's label) or a label value.

    Returns:
        The anomalous label, normalised (:func:`normalize_label`).

    Raises:
        DataError: the data has no labels or only one, or no graph has the label named.
    """
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
             score: str = "both", ensemble: int = 1, zscore_attributes: bool = False, standardise: bool = False,
             method: str = DEFAULT_DETECTOR,
             known_anomalies: int = 0, resume: EvaluationResult | Sequence[EvaluationResult] | None = None,
             only: Sequence[int] | None = None, on_progress: ProgressFn | None = None, on_epoch: Callable | None = None,
             on_fold: Callable[[EvaluationResult], None] | None = None,
             should_stop: Callable[[], bool] | None = None,
             columns: Mapping[str, str | None] | None = None) -> EvaluationResult:
    """Run one evaluation protocol on labelled data and return per-fold metrics with means and stds.

    All methods see the same folds (:func:`fold_runs`). Unlabelled graphs are skipped.

    Args:
        data: the labelled data set, a GraphSet or a path :func:`core.io.load.load` reads.
        protocol: ``cv``: ``folds``-fold stratified CV (``cv_seed``) with the model seed
            ``seeds[0]``; ``split``: train on ``data``, test on ``test``, once per seed in ``seeds``.
        test: the testing data of ``split`` (must be None for ``cv``).
        anomaly: the rule choosing the anomalous class (:func:`choose_anomaly_label`).
        folds: the number of cross-validation folds.
        cv_seed: the seed of the fold split (1, as the paper).
        seeds: the model seeds.
        model_params: constructor parameters of the detector (None: its defaults); the settings
            of another detector are ignored, and said (:func:`core.training.plan.unused_settings`).
        contamination: the share of anomalies in the training set (0-0.16 in the paper), taken
            from the training part's anomalies; from 0 to below 1.
        train_fraction: the share of the normal training graphs kept, above 0 up to 1.
        score: the primary score: ``both`` terms, ``graph`` term or ``node`` term; it gives each
            fold's ``auc``, ``ap`` and ``fpr95`` (the AUCs of all three are always recorded, as
            ``auc_both``, ``auc_graph`` and ``auc_node``; not ``both`` needs a detector with two
            score terms).
        ensemble: above 1, average the scores of that many models with independent random
            targets (each member's scores divided by its mean training score).
        zscore_attributes: z-score TU node attributes with the training graphs' mean and std
            (recorded as the option ``standardize``, its name in results written before).
        standardise: standardise each molecule as it is read (``glocalkd train --standardise``:
            largest fragment, neutralised, canonical tautomer); files only.
        columns: a table's ``smiles_column``, ``id_column`` and ``label_column`` (None: found by
            name), for the data and the testing file alike.
        method: the detector's registry name (:mod:`core.detectors.registry`: ``glocalkd``,
            ``ocgcn``, ``wl-iforest``, ...; default: the product's, the consensus). A detector
            with a learning rate and a batch size (GLocalKD, OCGCN) takes the paper's for the data
            set where ``model_params`` does not give them (:func:`with_paper_settings`): the one
            choice of the API, ``glocalkd evaluate`` and a cluster's evaluation.
        known_anomalies: above 0 (the consensus only), draw that many anomalies from each fold's
            training part (never from its test part, never trained on) and weigh the consensus's
            views by them (:meth:`core.detectors.consensus.Consensus.weigh_views`); the fold
            records the equal-weight consensus's AUC too, as ``auc_readouts["equal-weights"]``.
        resume: an unfinished earlier result of the same evaluation, or several (e.g. from
            processes that ran different ``only`` folds side by side, merged): their folds are
            kept and only the missing ones run. Each fold's split and seeds do not depend on the
            others, so the result is the one an uninterrupted run gives.
        only: run just these fold (or seed-run) numbers, counted from 1; the result stays
            incomplete until every fold is in (None: all).
        on_progress: called with a line of progress text.
        on_epoch: passed to each fold's training (:func:`core.training.train_model`).
        on_fold: sees the partial result after each fold.
        should_stop: polled before, during (by the training) and after each fold; True stops
            with the folds done (the fold it stopped in is not kept).

    Returns:
        The result: settings, per-fold metrics (ROC-AUC of the score and of each term, AP, FPR
        at 95 % TPR, seconds), ``complete`` when every fold ran; a detector that cannot read the
        data gives a result with ``not_applicable`` set and no folds.

    Raises:
        GLocalKDError: an option is out of range, the ``resume`` results were made with other
            settings, or an ``only`` number does not exist.
        DataError: the data cannot be read, has fewer than two classes, or too few graphs of a
            class for the folds.
        SchemaMismatchError: the testing file's node labels mean something else than the data's
            (:func:`core.data.label_coding.check_label_coding`), found before any training.
    """
    from core.detectors.registry import accepted_params, detector_info, make_detector
    from core.io.load import load
    from core.training.plan import GLOCALKD, OWN_FIELDS, split_settings, unused_settings, unused_settings_note

    _check_options(protocol, test, score, contamination, train_fraction, ensemble, seeds, folds, cv_seed)
    if known_anomalies < 0:
        raise ParameterError(f"{{known_anomalies}} must be a count of 0 or more, not {known_anomalies}",
                             "known_anomalies")
    if known_anomalies and not detector_info(method).weighable:
        raise ParameterError(f"{{known_anomalies}}: known anomalies weigh the consensus's views; {method} has a "
                             "single view (choose the consensus with {method})", "known_anomalies", "method")
    from core.training import check_settings

    check_settings(member_spec(method, model_params or {}, seeds[0] if seeds else 0))  # before the data is read
    say = on_progress or (lambda _msg: None)
    start_wall = time.perf_counter()
    data_path = str(data) if not isinstance(data, GraphSet) else data.source
    if standardise and (isinstance(data, GraphSet) or isinstance(test, GraphSet)):
        raise ParameterError("{standardise} standardises molecules as they are read: give the data as files",
                             "standardise")
    read = {k: v for k, v in (columns or {}).items() if v is not None}
    if read and (isinstance(data, GraphSet) or isinstance(test, GraphSet)):
        raise ParameterError("{columns} name the columns of files being read: give the data as files", "columns")
    graphs = data if isinstance(data, GraphSet) else load(data, standardise=standardise, **read)
    test_graphs = None if test is None else test if isinstance(test, GraphSet) else load(
        test, standardise=standardise, **read)
    if test_graphs is not None and test_graphs.kind != graphs.kind:  # found before any training, not after it
        raise DataError(f"the testing file holds {test_graphs.kind_words} and the data {graphs.kind_words}: a "
                        "model trained on one cannot score the other",
                        test_graphs.source)
    if test_graphs is not None:  # node labels that mean something else: refused by the scoring after seed run 1
        try:
            check_label_coding(label_coding(graphs), label_coding(test_graphs))
        except SchemaMismatchError as exc:
            raise SchemaMismatchError(f"{test_graphs.source}: a model trained on the data cannot score the testing "
                                      f"file: {exc}") from None

    digest = graphs_digest(graphs, test_graphs)  # the data as read: a resume on other data is refused
    rejected = 0
    for read in (graphs, test_graphs):  # every row scored or said: a rejected row was dropped without a word
        for note in read.notes if read is not None else ():  # what the reader changed (one-way TU edges)
            say(f"{read.source}: note: {note}")
        if read is not None and read.rejects:
            rejected += len(read.rejects)
            first = "; ".join(f"line {r.line}: {one_line(r.reason)}" for r in read.rejects[:3])
            say(f"{read.source}: {counted(len(read.rejects), 'row')} rejected, not evaluated ({first}"
                + (", ...)" if len(read.rejects) > 3 else ")"))
    labelled = [i for i, lab in enumerate(graphs.labels) if lab is not None]
    skipped = len(graphs) - len(labelled)
    graphs = graphs.subset(labelled) if skipped else graphs
    anomaly_label = choose_anomaly_label(graphs, anomaly)
    labels = np.array(graphs.labels, dtype=object)
    is_anom = labels == anomaly_label
    method = detector_info(method).name
    name = benchmark_name(graphs)  # the collection's own name, not its folder's
    params, paper = with_paper_settings(method, model_params or {}, name)
    if paper:  # only the values not given are the paper's
        values = ", ".join(f"{k.replace('_', ' ')}={v:g}" for k, v in paper.items())
        say(f"{name}: using the paper's {values}")
    ignored = unused_settings(method, params)
    if ignored:  # the settings of another detector, as training's rule 5 ignores them: said, never dropped unsaid
        say(f"{name}: {unused_settings_note(method, ignored)}")
    accepted = accepted_params(method)  # the spec's own fields (device, ...) only where the detector takes them
    params = {k: v for k, v in params.items() if k not in ignored and (k not in OWN_FIELDS or k in accepted)}
    params, routed = split_settings(method, params)  # a consensus's GLocalKD settings go to its view, as in training
    if routed:
        given = dict(params.get("component_params") or {})
        params["component_params"] = {**given, GLOCALKD: {**routed, **given.get(GLOCALKD, {})}}
    full_params = make_detector(method, **params).get_params()
    if score != "both" and not detector_info(method).has_node_scores:
        raise GLocalKDError(f"--score {score} needs a detector with two score terms (glocalkd), not {method}")
    result = EvaluationResult(
        dataset=name, data_path=data_path, protocol=protocol, method=method,
        anomaly_rule=anomaly if anomaly in ("minority", "first-label") else "explicit",
        anomaly_label=str(anomaly_label), normal_labels=[str(v) for v in sorted(set(labels[~is_anom].tolist()))],
        params=full_params,
        options={"folds": folds if protocol == "cv" else None, "cv_seed": cv_seed if protocol == "cv" else None,
                 "seeds": list(seeds) if protocol == "split" else [seeds[0]], "contamination": contamination,
                 "train_fraction": train_fraction, "score": score, "ensemble": ensemble,
                 "standardize": zscore_attributes, "known_anomalies": known_anomalies, "auc_std": "population (ddof 0)",
                 **({"standardise": True} if standardise else {})},  # (absent when off: results before it resume)
        test_path=None if test_graphs is None else (str(test) if not isinstance(test, GraphSet) else test.source),
        unlabelled_skipped=skipped, rows_rejected=rejected, data_digest=digest, environment=environment())
    say(f"{result.dataset}, {detector_info(method).label}: {len(graphs)} labelled graphs, {int(is_anom.sum())} "
        f"anomalous; anomaly rule {anomaly!r} -> anomalous class {anomaly_label!r} (normal: "
        f"{', '.join(result.normal_labels)})" + (f"; {skipped} unlabelled graphs skipped" if skipped else ""))

    runs, test_set, test_anom = fold_runs(protocol, labels, folds, cv_seed, seeds, test_graphs, anomaly_label, say,
                                           result.dataset)
    done, earlier = _resume(result, resume, runs, only, protocol, say)
    for k, seed, train_idx, test_idx in runs:
        if k in done or (only is not None and k not in only):
            continue
        if should_stop is not None and should_stop():
            break
        train_set, n_anomalies, known = _training_set(graphs, is_anom, train_idx,
                                                      np.random.default_rng(seed + 7919 * k), train_fraction,
                                                      contamination, known_anomalies,
                                                      np.random.default_rng([KNOWN_SEED, seed, k]), say)
        if protocol == "cv":
            fold_test, fold_anom = graphs.subset(test_idx.tolist()), is_anom[test_idx]
        else:
            fold_test, fold_anom = test_set, test_anom
        if zscore_attributes:
            train_set, fold_test = _standardize(train_set, fold_test)
        say(f"{'fold' if protocol == 'cv' else 'seed run'} {k}/{len(runs)} (model seed {seed}): training on "
            f"{len(train_set)} graphs ({n_anomalies} anomalous), scoring {len(fold_test)} "
            f"({int(fold_anom.sum())} anomalous)" + (f"; {len(known)} known anomalies" if known is not None else ""))
        try:
            fr = _run_fold(k, seed, train_set, n_anomalies, fold_test, fold_anom, method, params, ensemble,
                           full_params.get("lam", 1.0), on_epoch, should_stop, known, score)
        except NotApplicableError as exc:  # the detector cannot read this kind of data: no fold can run
            say(f"  n/a: {exc}")
            result.not_applicable, result.folds, result.complete = str(exc), [], True
            result.wall_seconds = time.perf_counter() - start_wall
            return result
        if should_stop is not None and should_stop():
            break
        result.folds.append(fr)
        result.wall_seconds = earlier + time.perf_counter() - start_wall
        say(f"  {fold_line(fr, score)}; train {fr.train_seconds:.1f} s, score {fr.score_seconds:.2f} s")
        if on_fold is not None:
            on_fold(result)
    result.folds.sort(key=lambda f: f.fold)
    result.complete = len(result.folds) == len(runs)
    result.wall_seconds = earlier + time.perf_counter() - start_wall
    return result


def _check_options(protocol: str, test, score: str, contamination: float, train_fraction: float, ensemble: int,
                   seeds: Sequence[int], folds: int, cv_seed: int = 1) -> None:
    """One clear error for any option out of range, before anything is loaded (naming the option)."""
    if protocol not in PROTOCOLS:
        raise ParameterError(f"{{protocol}} must be one of {', '.join(PROTOCOLS)}, not {protocol!r}", "protocol")
    if protocol == "split" and test is None:
        raise ParameterError("the split protocol needs a testing file ({test})", "test")
    if protocol != "split" and test is not None:
        raise ParameterError("a testing file ({test}) is only used by the split protocol ({protocol} split)",
                             "test", "protocol")
    if protocol == "cv" and folds < 2:
        raise ParameterError(f"{{folds}} must be at least 2 for cross-validation, not {folds}", "folds")
    if score not in SCORE_TERMS:
        raise ParameterError(f"{{score}} must be one of {', '.join(SCORE_TERMS)}, not {score!r}", "score")
    if not 0.0 <= contamination < 1.0:
        raise ParameterError(f"{{contamination}} must be in [0, 1), not {contamination}", "contamination")
    if not 0.0 < train_fraction <= 1.0:
        raise ParameterError(f"{{train_fraction}} must be in (0, 1], not {train_fraction}", "train_fraction")
    if ensemble < 1:
        raise ParameterError(f"{{ensemble}} must be at least 1, not {ensemble}", "ensemble")
    if not seeds:
        raise ParameterError("{seeds}: at least one model seed is needed", "seeds")
    bad = next((seed for seed in seeds if not is_seed(seed)), None)
    if bad is not None:
        raise ParameterError(f"the model seeds ({{seed}}, {{seeds}}) must each be {SEED}, not {bad!r}", "seed", "seeds")
    if not is_seed(cv_seed):
        raise ParameterError(f"{{cv_seed}} must be {SEED}, not {cv_seed!r}", "cv_seed")


def fold_runs(protocol: str, labels: np.ndarray, folds: int, cv_seed: int, seeds: Sequence[int],
              test_graphs: GraphSet | None, anomaly_label: str, say: ProgressFn, dataset: str = ""):
    """The folds every evaluation uses, public so that studies score their views on the very same ones.

    Args:
        protocol: ``cv`` or ``split``.
        labels: the label of each graph of the data (no None), shape (graphs,).
        folds: the number of cross-validation folds (``cv``).
        cv_seed: the seed of the stratified, shuffled split (``cv``).
        seeds: the model seeds: ``cv`` uses the first for every fold, ``split`` makes one run each.
        test_graphs: the testing data (``split``; None for ``cv``).
        anomaly_label: the anomalous class, to flag the testing graphs (``split``).
        say: called with a line of progress text.
        dataset: the data set's name, for error messages.

    Returns:
        (the runs as ``(number from 1, model seed, training indices, test indices)`` tuples
        (``split``: every index trains, the test indices are None); the labelled testing graphs
        and their anomaly flags for ``split``, (None, None) for ``cv``, which tests on each
        fold's own part).

    Raises:
        DataError: a class has fewer graphs than ``folds`` (``cv``), or the testing data lacks
            anomalous or normal graphs, or has a label the training data has not (``split``).
    """
    if protocol == "cv":
        values, sizes = np.unique(labels.astype(str), return_counts=True)
        if folds < 2 or sizes.min() < folds:
            small = str(values[int(sizes.argmin())])
            raise DataError(f"{folds}-fold cross-validation needs at least {max(folds, 2)} graphs of each class; "
                            f"class {small!r} has {int(sizes.min())} (use fewer folds)", dataset)
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=cv_seed)
        runs = [(k, seeds[0], tr, te) for k, (tr, te) in
                enumerate(splitter.split(np.zeros(len(labels)), labels.astype(str)), start=1)]
        return runs, None, None
    t_labels = np.array(list(test_graphs.labels), dtype=object)
    keep = [i for i, lab in enumerate(t_labels) if lab is not None]
    known = {str(lab) for lab in labels.tolist()}
    unknown = [i for i in keep if str(t_labels[i]) not in known]  # as the labels of the training graphs, text
    if unknown:  # neither normal nor anomalous: counted as normal without a word
        absent = sorted({str(t_labels[i]) for i in unknown})
        first = test_graphs.meta[unknown[0]]
        raise DataError(f"{counted(len(unknown), 'testing graph')} labelled {', '.join(absent)} (the first: "
                        f"{first.name or first.id}), which no training graph is: their class is neither normal "
                        f"nor anomalous (training labels: {', '.join(sorted(known))}); give a testing file with "
                        "the training data's labels", test_graphs.source, line=first.line)
    test_set = test_graphs.subset(keep)
    test_anom = t_labels[keep] == anomaly_label
    if not test_anom.any() or test_anom.all():
        raise DataError(f"the testing file needs both anomalous ({anomaly_label}) and normal graphs",
                        test_graphs.source)
    say(f"testing file {test_graphs.source}: {len(test_set)} graphs, {int(test_anom.sum())} anomalous")
    return [(k, s, np.arange(len(labels)), None) for k, s in enumerate(seeds, start=1)], test_set, test_anom


def _resume(result: EvaluationResult, resume, runs: list, only: Sequence[int] | None, protocol: str,
            say: ProgressFn) -> tuple[set[int], float]:
    """Check ``only`` against the runs and take the folds of an earlier partial result into
    ``result``; returns the fold numbers already done and the wall seconds they took."""
    if only is not None:
        unknown = sorted(set(only) - {k for k, *_ in runs})
        if unknown:
            raise GLocalKDError(f"no {'fold' if protocol == 'cv' else 'seed run'} {unknown[0]}: there are "
                                f"{len(runs)}, numbered from 1")
    if resume is not None and not isinstance(resume, EvaluationResult):
        resume = merge_results(resume) if len(resume) else None
    if resume is None:
        return set(), 0.0
    if not same_settings(result, resume):
        raise GLocalKDError("cannot resume: the earlier result was made with other settings "
                            "(data set, protocol, method, anomaly class, model parameters or options)")
    if not same_data(result, resume):
        raise GLocalKDError(f"cannot resume: the earlier result was made on other data than {result.data_path}"
                            + (f" and {result.test_path}" if result.test_path else "")
                            + " (its graphs, or its testing file's, differ)")
    result.folds = list(resume.folds)
    done = {f.fold for f in resume.folds}
    say(f"resuming: {len(done)} of {len(runs)} {'folds' if protocol == 'cv' else 'seed runs'} already done")
    return done, resume.wall_seconds


def _training_set(graphs: GraphSet, is_anom: np.ndarray, train_idx: np.ndarray, rng: np.random.Generator,
                  train_fraction: float, contamination: float, known_anomalies: int, known_rng: np.random.Generator,
                  say: ProgressFn) -> tuple[GraphSet, int, GraphSet | None]:
    """The graphs a fold trains on: its normal graphs (``train_fraction`` of them), plus anomalies
    from its training part up to ``contamination``; how many of those anomalies there are; and
    ``known_anomalies`` other anomalies of the training part that are no copy of a graph trained
    on, drawn with ``known_rng`` (a generator of their own, so that the other draws do not change
    with the count; None when 0)."""
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
    known = None
    if known_anomalies:
        from core.data.graph_identity import graph_key

        pool = np.setdiff1d(train_idx[is_anom[train_idx]], anom_idx)
        # never a copy of a graph trained on (the product's rule: weigh_known_anomalies leaves them out)
        trained = {graph_key(graphs.graphs[i]) for i in np.concatenate([normal_idx, anom_idx]).tolist()}
        pool = np.array([i for i in pool.tolist() if graph_key(graphs.graphs[i]) not in trained], dtype=np.int64)
        if len(pool) < known_anomalies:
            say(f"  only {len(pool)} anomalies in the training part to serve as {known_anomalies} known anomalies; "
                "using all")
        known = graphs.subset(np.sort(known_rng.choice(pool, min(known_anomalies, len(pool)), replace=False)).tolist())
    return graphs.subset(np.concatenate([normal_idx, anom_idx]).tolist()), len(anom_idx), known


def member_spec(method: str, params: Mapping, seed: int):
    """The training spec of one ensemble member under the paper's protocol: a single detector
    trains on every graph (no calibration share); a detector that calibrates itself holds out its
    ``calibration`` share (its default unless ``params`` sets one).

    Args:
        method: the detector's registry name.
        params: its settings, ``calibration`` and ``device`` among them when given.
        seed: the member's seed.

    Returns:
        The :class:`core.training.TrainSpec`.
    """
    from core.detectors.conformal import DEFAULT_CALIBRATION_FRACTION
    from core.detectors.registry import detector_info
    from core.training import TrainSpec

    settings = dict(params)
    calibration = settings.pop("calibration", DEFAULT_CALIBRATION_FRACTION)
    device = settings.pop("device", "auto")
    settings.pop("seed", None)
    calibration = calibration if detector_info(method).calibrates_itself else 0.0
    return TrainSpec(detector=method, params=settings, calibration=calibration, seed=seed, device=device)


def _run_fold(k: int, seed: int, train_set: GraphSet, n_anomalies: int, test: GraphSet, anomalous: np.ndarray,
              method: str, params: dict, ensemble: int, lam: float, on_epoch: Callable | None,
              should_stop: Callable[[], bool] | None, known: GraphSet | None = None, score: str = "both") -> FoldResult:
    """Train ``ensemble`` detectors on ``train_set``, score ``test`` and measure. An ensemble's
    members have independent seeds; each member's scores are divided by its mean training score.
    The ``score`` term (both, graph or node) gives the fold's AUC, AP and FPR at 95 % TPR.
    Training follows the product's rules (:func:`core.training.train_model`), with the paper's
    protocol: a single detector trains on every graph (no calibration share); a detector that
    calibrates itself holds out its ``calibration`` share (its default unless ``params`` sets one)."""
    from core.training import train_model, weigh_known_anomalies

    total, graph_t, node_t, parts = 0.0, 0.0, 0.0, {}
    train_s = score_s = 0.0
    losses, epochs_run, flagged = [], 0, math.nan
    for member in range(ensemble):
        spec = member_spec(method, params, seed + 1000 * member)
        t0 = time.perf_counter()
        model = train_model(train_set, spec, on_epoch=on_epoch, should_stop=should_stop).model
        train_s += time.perf_counter() - t0
        if known is not None:  # the same model with equal weights, then weighed
            equal_scale = 1.0 / max(float(np.mean(model.train_scores_)), 1e-12) if ensemble > 1 else 1.0
            equal = model.score(test).score.astype(np.float64) * equal_scale
            parts[EQUAL_WEIGHTS] = parts.get(EQUAL_WEIGHTS, 0.0) + equal
            weigh_known_anomalies(model, known)
        t0 = time.perf_counter()
        s = model.score(test)
        score_s += time.perf_counter() - t0
        scale = 1.0 / max(float(np.mean(model.train_scores_)), 1e-12) if ensemble > 1 else 1.0
        total = total + s.score.astype(np.float64) * scale
        graph_t = graph_t + s.graph_term.astype(np.float64) * scale
        node_t = node_t + s.node_term.astype(np.float64) * scale
        for name, values in s.parts.items():
            parts[name] = parts.get(name, 0.0) + values.astype(np.float64) * scale
        p = model_p_values(model, s.score) if ensemble == 1 else None
        if p is not None:  # held-out normal graphs its p-values flag at 5 %
            flagged = float(np.mean(p[~anomalous] < FLAG_LEVEL)) if (~anomalous).any() else math.nan
        losses.append(model.loss_history_[-1] if model.loss_history_ else math.nan)  # no epochs: NaN
        epochs_run = len(model.loss_history_)
        if model.stopped_early_:
            break
    primary = {"both": total, "graph": graph_t, "node": node_t}[score]
    return FoldResult(fold=k, seed=seed, n_train=len(train_set), n_train_anomalies=n_anomalies,
                      n_test=len(test), n_test_anomalies=int(anomalous.sum()),
                      auc=roc_auc(anomalous, primary), auc_both=roc_auc(anomalous, total),
                      auc_graph=roc_auc(anomalous, graph_t) if s.has_node_scores else math.nan,
                      auc_node=roc_auc(anomalous, node_t) if s.has_node_scores else math.nan,
                      ap=average_precision(anomalous, primary),
                      fpr95=fpr_at_tpr(anomalous, primary), train_seconds=train_s, score_seconds=score_s,
                      final_loss=float(np.mean(losses)), epochs_run=epochs_run,
                      auc_readouts=_readout_aucs(anomalous, parts, lam), normals_flagged=flagged)


def fold_line(fold: FoldResult, score: str = "both") -> str:
    """One fold's metrics in words, as the progress lines of a local or a cluster run say them.

    Args:
        fold: the fold.
        score: the primary score (``both``, ``graph`` or ``node``), which its AUC and AP are of.

    Returns:
        ``AUC 0.8123 (graph term 0.8, node term 0.7), AP 0.6``, the primary score named when one
        term alone.
    """
    what = "" if score == "both" else f" of the {score} term"
    terms = (f" (both terms {fold.auc_both:.4f}, graph term {fold.auc_graph:.4f}, node term {fold.auc_node:.4f})"
             if math.isfinite(fold.auc_graph) else "")
    return f"AUC{what} {fold.auc:.4f}{terms}, AP {fold.ap:.4f}"


def _readout_aucs(anomalous: np.ndarray, parts: dict[str, np.ndarray], lam: float) -> dict[str, float]:
    """ROC-AUC of every readout combination of one trained GLocalKD, and of each component of a
    consensus (``component:NAME``, ``equal-weights`` when known anomalies weighed its views, and
    ``weighed-views`` when they also trained its classifier view); none for other detectors."""
    aucs = {name: roc_auc(anomalous, values) for name, values in parts.items()
            if name.startswith("component:") or name in (EQUAL_WEIGHTS, WEIGHED_VIEWS_PART)}
    if READOUT_PARTS <= set(parts):
        aucs.update({name: roc_auc(anomalous, combine_readouts(parts, lam, *flags))
                     for name, flags in READOUTS.items()})
    return aucs


def _standardize(train: GraphSet, test: GraphSet) -> tuple[GraphSet, GraphSet]:
    """Z-score TU node attributes with the training graphs' per-column mean and std (copies)."""
    import torch

    if not train.graphs or "node_attr" not in train.graphs[0]:
        return train, test
    attrs = torch.cat([g.node_attr.double() for g in train.graphs])
    mean, std = attrs.mean(0), attrs.std(0, unbiased=False)
    std = torch.from_numpy(usable_spread(std.numpy(), mean.numpy()))

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


