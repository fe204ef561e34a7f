"""Background jobs as plain module-level functions (Orange's ``run(data, learner, state)`` habit).

Each job takes its inputs and a parameter named ``job`` (the runner passes it by keyword, so a
job's own parameters with defaults stay at their defaults), an object with three methods: ``report(value)``
(progress), ``stopped()`` (Stop was pressed) and ``abandoned()`` (the window is closing). The
window runs them in a worker thread (:mod:`app.workers`); tests call them directly with a
:class:`Job`. None of them touches Qt or a widget.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

import numpy as np

from core import counted


class Job:
    """The job handle without Qt: collects progress reports, and can be stopped."""

    def __init__(self, on_progress: Callable[[Any], None] | None = None):
        self.reports: list = []
        self._on_progress = on_progress
        self._stop = threading.Event()
        self._abandon = threading.Event()

    def report(self, value: Any) -> None:
        self.reports.append(value)
        if self._on_progress is not None:
            self._on_progress(value)

    def stop(self) -> None:
        self._stop.set()

    def abandon(self) -> None:
        self._abandon.set()
        self._stop.set()

    def stopped(self) -> bool:
        return self._stop.is_set()

    def abandoned(self) -> bool:
        return self._abandon.is_set()


# -------------------------------------------------------------------- start-up
def warm_up(job) -> str:
    """Import torch, torch-geometric, RDKit and matplotlib (seconds, once) so the window can appear first;
    returns a note on the device torch sees."""
    import torch

    import core

    core.GraphSet, core.GLocalKD  # noqa: B018  (the imports that take the time)
    import rdkit.Chem  # noqa: F401
    import matplotlib.backends.backend_agg  # noqa: F401  (the plots' figures: not imported before the window shows)
    import matplotlib.figure  # noqa: F401

    if torch.cuda.is_available():
        return f"torch sees GPU: {torch.cuda.get_device_name(0)}"
    return "torch sees no GPU: training runs on the CPU"


# -------------------------------------------------------------------- data
@dataclass
class Loaded:
    path: str
    graphs: Any
    schema_text: str
    options: dict | None = None  # the loader's options (columns), kept by sessions
    properties: dict | None = None  # the chemist's properties (core.molecular_properties); None: not molecules
    digest: str = ""  # the graphs as read (core.graphs_digest): a session knows its data by it


def graph_properties(graphs) -> dict | None:
    """The chemist's properties of graphs that are molecules (SMILES, or a TU collection whose
    labels name elements), else None."""
    from core import molecular_properties

    if not len(graphs) or not graphs.is_molecular:
        return None
    return molecular_properties(graphs)


def load_data(path: str, options: dict, job) -> Loaded:
    """Read a data file into a GraphSet, describe the node features it will get, and compute the
    chemist's properties of its molecules (about 1 ms a molecule). ``job.report`` receives the rows
    of a molecule file read so far; Stop ends the reading (:class:`core.Stopped`)."""
    from core import FeatureSchema, graphs_digest, load

    graphs = load(path, **options, should_stop=job.stopped, on_progress=job.report)
    schema = FeatureSchema.fit(graphs, "auto").describe() if len(graphs) else "none (no graphs)"
    return Loaded(path, graphs, schema, dict(options), graph_properties(graphs), graphs_digest(graphs))


# rows of a report without properties for which the app computes them from its SMILES (about
# 0.25 ms a row, parsing most of it: 50,000 rows in 12 s on one core)
REPORT_PROPERTIES_LIMIT = 200_000


def read_report(path: str, job):
    """Read a ranked CSV report (e.g. a screening result); a report written without the chemist's
    properties gets them from its SMILES when it has at most REPORT_PROPERTIES_LIMIT rows."""
    from core import read_report as read

    report = read(path, on_progress=job.report, should_stop=job.stopped)
    add_report_properties(report)
    return report


def add_report_properties(report) -> None:
    """Compute a report's missing properties from the SMILES each row was scored as (its standardised
    form, where the model standardised: a salt's weight was the salt's), at most REPORT_PROPERTIES_LIMIT rows."""
    from core import molecular_properties

    if not report.properties and 0 < len(report) <= REPORT_PROPERTIES_LIMIT and any(report.smiles):
        report.properties = molecular_properties([report.scored_smiles(i) or None for i in range(len(report))])


# -------------------------------------------------------------------- models
@dataclass
class Trained:
    model: Any
    scores: Any
    n_train: int
    normal_label: str | None
    size_model: Any
    size_scores: np.ndarray | None
    known_label: str | None = None  # the label of the known anomalies that weighed a consensus's views
    graphs: Any = None  # the graphs trained on and scored (standardised when the form asked for it)
    properties: dict | None = None  # their properties when preparing them changed the graphs (else None)
    n_calibration: int = 0  # of the n_train normal graphs, those held out to calibrate p-values
    calibration_note: str = ""  # how they were drawn ("whole scaffolds" for molecules; core.TrainedModel)
    notes: list = field(default_factory=list)  # the choices the rules made, in words (core.plan_notes)


@dataclass
class NotTrained:
    """A training that Stop ended before its first epoch: no model was made, so the window keeps its own."""

    reason: str


def prepared(graphs, standardise: bool):
    """``graphs`` as a model that standardises (or not) reads them (:func:`core.prepare_molecules`);
    graphs that are not molecules are never standardised."""
    if graphs is None or graphs.kind != "molecule":
        return graphs
    from core import prepare_molecules

    return prepare_molecules(graphs, standardise)


def train(graphs, detector: str, params: dict, normal_label: str | None, job,
          known_label: str | None = None, standardise: bool = False) -> Trained | NotTrained | None:
    """Train ``detector`` as every front end does (:func:`core.train_model`: on the graphs of
    ``normal_label``, or on every graph but the known anomalies of ``known_label``, a share held out
    to calibrate p-values), score every graph, and fit the graph-size baseline on the same normal
    graphs. ``params`` are the form's settings (``seed`` and ``device`` among them). ``job.report``
    receives each EpochInfo. With ``standardise`` the molecules are standardised first (the model
    keeps the choice). Returns None when the window is closing (nobody will read the result), and
    :class:`NotTrained` when Stop ended it before its first epoch (nothing was learnt)."""
    from core import DEFAULT_DETECTOR, Stopped, TrainSpec, plan_notes, score_graphs, train_model

    given = graphs
    graphs = prepared(graphs, standardise)
    settings = dict(params)
    seed, device = settings.pop("seed", 0), settings.pop("device", "auto")
    # the default named in the form is the plan's default, as `glocalkd train` without --detector: too
    # few graphs to calibrate it train GLocalKD on every graph (a consensus fitted 1 of 20 graphs)
    spec = TrainSpec(detector=None if detector == DEFAULT_DETECTOR else detector, params=settings,
                     normal_label=normal_label, known_label=known_label, seed=seed, device=device)
    try:
        trained = train_model(graphs, spec, on_epoch=job.report, should_stop=job.stopped)
    except Stopped as stopped:  # before the first epoch ended: nothing learnt, the window's model stays
        return None if job.abandoned() else NotTrained(str(stopped))
    if job.abandoned():
        return None
    model, normal = trained.model, trained.plan.normal
    size = train_model(normal, TrainSpec(detector="size", calibration=0.0)).model
    # Stop ended the training and keeps its model, so its graphs are scored; closing the window ends it
    scores = score_graphs(model, graphs, should_stop=job.abandoned)
    return Trained(model, scores, len(normal), normal_label, size, size.score(graphs).score,
                   known_label, graphs, graph_properties(graphs) if graphs is not given else None,
                   trained.n_calibration, trained.calibration_note,
                   plan_notes(trained.plan, spec.calibration, "no calibration share"))


@dataclass
class Weighed:
    model: Any  # a copy of the consensus, its views weighed
    scores: Any  # the open graphs' scores under it (None when no graphs are open)
    path: str  # the file of known anomalies
    n_known: int
    n_rejected: int  # rows of that file that could not be read as graphs
    graphs: Any = None  # the open graphs as scored (standardised when the model standardises)
    n_seen: int = 0  # graphs of that file the model was trained or calibrated on as normal: left out
    notes: list = field(default_factory=list)  # what the reader changed in that file (GraphSet.notes)


def weigh(model, path: str, options: dict, graphs, job) -> Weighed:
    """Weigh a trained consensus's views by the graphs of ``path`` (known anomalies, in any format
    :func:`core.load` reads; never trained on), as ``glocalkd weigh`` does, and score ``graphs``
    with the result. The weights go to a copy, so the window's model stays as it was should this
    fail."""
    import copy

    from core import load, score_graphs, weigh_known_anomalies

    standardise = bool(getattr(model, "standardises", False))  # read as the model reads its molecules
    known = load(path, **options, standardise=standardise,  # a file with no readable row, or too few, raises naming it
                 should_stop=job.stopped)
    weighed = copy.deepcopy(model)
    read = known
    # refuses the open data file and a file of two labels; leaves out graphs the model was trained on
    known = weigh_known_anomalies(weighed, known, data=graphs)
    graphs = prepared(graphs, standardise)
    scores = score_graphs(weighed, graphs, should_stop=job.stopped) if graphs is not None and len(graphs) else None
    return Weighed(weighed, scores, path, len(known), len(read.rejects), graphs, len(read) - len(known),
                   list(read.notes))


def score(model, graphs, normal_label: str | None, size_model, job):
    """Score ``graphs`` with ``model``; the graph-size baseline too (fitted here on the normal graphs
    of ``graphs`` when there is none, e.g. after a model was loaded from a file). The molecules are
    read as the model reads them: standardised when it was trained on standardised molecules.
    ``job.report`` receives the number of graphs scored so far; Stop ends the scoring between chunks
    (:class:`core.Stopped`). Returns (scores, size_model, size scores, the graphs scored, their
    properties when preparing them changed the graphs, else None)."""
    from core import TrainSpec, score_graphs, train_model

    given = graphs
    graphs = prepared(graphs, bool(getattr(model, "standardises", False)))
    if size_model is None:
        train_set = graphs if normal_label is None else graphs.with_label(normal_label)
        if len(train_set):
            size_model = train_model(train_set, TrainSpec(detector="size", calibration=0.0)).model
    # the model first: graphs it cannot read are refused naming their file (the size baseline, fitted
    # on the same graphs, refuses the same ones)
    scores = score_graphs(model, graphs, should_stop=job.stopped, on_progress=lambda done, total: job.report(done))
    size_scores = score_graphs(size_model, graphs).score if size_model is not None else None
    properties = graph_properties(graphs) if graphs is not given else None
    return scores, size_model, size_scores, graphs, properties


def rescore_row(model, graphs, job):
    """Score the one graph of ``graphs`` atom by atom with ``model``, read as the model reads it
    (standardised when it was trained so), for a report tab's drawing. Returns (the graphs scored,
    their scores)."""
    graphs = prepared(graphs, bool(getattr(model, "standardises", False)))
    return graphs, model.score(graphs)


def load_model(path: str, device: str, job):
    """Read the model file ``path`` onto ``device`` (:func:`core.load_detector`).

    Args:
        path: the model file.
        device: "auto", "cpu" or "cuda".
        job: the job handle (unused: one step).

    Returns:
        The detector.
    """
    from core import load_detector

    return load_detector(path, device=device)


def save_model(model, path: str, job) -> str:
    """Write ``model`` to ``path`` (:func:`core.save_detector`: atomically, with a digest).

    Args:
        model: a detector that can be saved.
        path: the file to write.
        job: the job handle (unused: one step).

    Returns:
        The path written.
    """
    from core import save_detector

    try:
        save_detector(model, path)
    except OSError as exc:
        raise _cannot_write(path, exc) from exc
    return path


def _cannot_write(path: str, exc: OSError):
    """An OSError while writing ``path``, as a one-line message that names the file (the wording of
    every job's file errors, :class:`app.workers.Task`)."""
    from core import GLocalKDError

    return GLocalKDError(f"{path}: {exc.strerror or exc}")


# -------------------------------------------------------------------- filtering
SMARTS_CHUNK = 1000  # molecules matched between two looks at Stop (about a second on a busy machine)


@dataclass
class SmartsMatch:
    """The SMARTS filter's result: ``mask`` (which graphs match) is None when the pattern is not
    valid SMARTS (``valid`` False) or the match was stopped for a newer pattern (``stopped``)."""

    mask: np.ndarray | None
    valid: bool = True
    stopped: bool = False


def match_smarts(smiles: list[str], pattern: str, job) -> SmartsMatch:
    """Which molecules contain the SMARTS ``pattern`` (:func:`core.smarts_matches`), matched in
    chunks with a look at ``job.stopped()`` between them.

    Args:
        smiles: one SMILES per graph ("" for a graph without one: it never matches).
        pattern: the SMARTS typed in the filter.
        job: the job handle: stopping it ends the match early.

    Returns:
        The mask over ``smiles``, or why there is none.
    """
    from core import GLocalKDError, smarts_matches

    parts = []
    try:
        for start in range(0, max(len(smiles), 1), SMARTS_CHUNK):
            if job.stopped():
                return SmartsMatch(None, stopped=True)
            parts.append(smarts_matches(smiles[start:start + SMARTS_CHUNK], pattern))
    except GLocalKDError:  # the pattern does not parse: said beside the box, not as a failure
        return SmartsMatch(None, valid=False)
    return SmartsMatch(np.concatenate(parts)[:len(smiles)])


def compute_map(model, graphs, space: str, method: str, seed: int, job):
    from core import space_map

    return (space, method), space_map(model, graphs, space, method, seed=seed)


# -------------------------------------------------------------------- scoring another file
@dataclass
class ScreenProgress:
    """Where a screening run is: rows read and scored, of about ``total`` rows, at ``rate`` rows/s."""

    rows: int
    scored: int
    total: int | None
    seconds: float
    unit: str = "molecules"  # "graphs" for a file scored whole (a TU collection): no rows are read
    before: int = 0  # a resumed run's rows read by the stopped run (counted in ``rows``, not in the rate)

    @property
    def rate(self) -> float:
        return (self.rows - self.before) / self.seconds if self.seconds > 0 else 0.0

    @property
    def eta(self) -> float | None:
        if not self.total or self.rate <= 0:
            return None
        return max(0.0, (self.total - self.rows) / self.rate)

    def text(self) -> str:
        from .state import duration

        if self.unit != "molecules":
            return f"Scored {self.scored:,} {self.unit} · {self.rate:,.0f} {self.unit}/s"
        read = f"{self.rows:,} of ~{counted(self.total, 'row')}" if self.total else counted(self.rows, "row")
        eta = f" · ETA {duration(self.eta)}" if self.eta is not None else ""
        return f"Scored {counted(self.scored, 'molecule')} ({read} read) · {self.rate:,.0f} rows/s{eta}"


def count_rows(path: str) -> int | None:
    """About how many data rows a text file holds (lines minus a header); None for other inputs."""
    from core import DataError, count_line_ends

    p = Path(path)
    if not p.is_file() or ".sdf" in p.name.lower():  # an SDF file holds records, not lines
        return None
    try:
        lines = count_line_ends(p)  # compressed or not by its content, as core reads it
    except DataError:  # a damaged file: the scoring that follows says so, naming it
        return None
    return max(0, lines - 1)


def app_workers() -> int:
    """Parsing processes for the app's scoring: two at most, so that the window stays responsive,
    and no more than the CPUs this process may use (:func:`core.usable_cpus`: affinity, cgroup quota)."""
    from core import usable_cpus

    return min(2, usable_cpus())


def screen_file(model, path: str, report_path: str, job, workers: int | None = None, options: dict | None = None,
                resume: int | None = None):
    """Score a file with ``model`` into a ranked report and read the report back.

    The command line's ``glocalkd score`` entry (:func:`core.score_file`): molecule files stream
    through core's pipeline (chunks, worker processes, bounded memory, the chemist's properties
    computed by the workers: about 12 % of the time) with ``job.report(ScreenProgress)`` after
    each chunk and Stop between chunks; other files (TU collections, or a model not trained on
    molecules) are loaded and scored whole. The model's standardising and p-values hold either
    way. A consensus with Fisher's rule writes each view's raw score too (the ``view:`` columns),
    from which the tab's review re-ranks without scoring again (:func:`rerank`). ``options``: the
    loader's (a table's ``smiles_column``, ``id_column``, ``label_column``); ``resume``: ``report_path``
    is a stopped run's report of that many rows, continued (core's resume).
    Returns (RankedReport, ScreenSummary or None); the report is None when Stop came before any row
    was scored (then nothing was written)."""
    from core import is_streamed, read_report as read, score_file

    from .review_book import model_unavailable

    start = time.perf_counter()
    streamed = is_streamed(model, path)
    total = count_rows(path) if streamed and Path(path).is_file() else None

    def progress(rows: int, scored: int) -> None:
        job.report(ScreenProgress(rows, scored, total, time.perf_counter() - start,
                                  "molecules" if streamed else "graphs", resume or 0))

    scored = score_file(model, path, report_path, properties=True, view_scores=not model_unavailable(model),
                        on_progress=progress, should_stop=job.stopped, workers=workers or app_workers(),
                        **({"resume": True} if resume is not None else {}), **(options or {}))
    summary = scored.summary
    if summary is not None and not summary.written:  # stopped before the first row: no report
        return None, summary
    report = read(report_path)
    report.scored_input = {"path": str(path), "options": dict(options or {})}  # what Resume reads on from
    report.notes = list(scored.graphs.notes) if scored.graphs is not None else []  # what the reader changed
    add_report_properties(report)
    return report, summary


def rerank(review, model, graphs, marks: dict[int, bool], job=None, report=None):
    """Re-rank the graphs under an analyst's marks (:class:`core.Review`: no training). The one
    place the app builds a review: for the training tab's graphs and for a scored file's rows.

    A scored file's review starts from the views' scores its report holds when the open model
    wrote them (:func:`app.review_book.reads_view_scores`: no row is parsed or scored); otherwise
    the report's rows are scored again once, as a file is scored (:func:`core.report_view_scores`:
    the screening pipeline, its parsing workers scoring the molecule views).

    Args:
        review: the :class:`core.Review` of ``model`` and ``graphs`` from an earlier call, or None
            (made here: from the report's view scores, or from the views' scores of the report's
            rows scored again, or each of the consensus's views scores ``graphs`` once).
        model: the fitted consensus.
        graphs: the scored graphs the marks index (the training tab's), or None for a report's rows.
        marks: graph index -> True (anomaly) or False (not anomaly).
        job: the job handle: scoring a report's rows again reports :class:`ScreenProgress` and
            stops on Stop.
        report: a ranked report whose rows the marks index (row i is graph i), when ``graphs`` is None.

    Returns:
        ``(review, reranked, marks, graphs)``: the review to pass next time, its re-ranking, the
        marks used and ``graphs`` as given.
    """
    from core import Review, apply_marks, report_view_scores

    from .review_book import reads_view_scores

    if review is None and graphs is None:
        if reads_view_scores(model, report):
            scores = report.view_scores
        else:
            start = time.perf_counter()

            def progress(rows: int, scored: int) -> None:
                job.report(ScreenProgress(rows, scored, len(report), time.perf_counter() - start))

            scores = report_view_scores(model, report, workers=app_workers(),
                                        on_progress=progress if job is not None else None,
                                        should_stop=job.stopped if job is not None else None)
        review = Review.from_view_scores(model, scores)
    if review is None:
        review = Review(model, graphs)
    apply_marks(review, marks)
    return review, review.rerank(), dict(marks), graphs


# -------------------------------------------------------------------- export
EXPORT_COLUMNS_EXTRA = ("flagged",)


def molecule_columns(properties: dict | None,
                     alerts_of: Callable[[int], str]) -> tuple[list[str], Callable[[int], list[str]]]:
    """The CSV export's columns after the report's for molecules: the chemist's properties and
    ``alerts`` (row i's text: ``alerts_of(i)``), and ``cells(i)`` giving row i's. No columns
    without ``properties`` (graphs that are not molecules)."""
    from core import PROPERTY_COLUMNS, property_text

    if not properties:
        return [], lambda i: []

    def cells(i: int) -> list[str]:
        return [*(property_text(name, float(properties[name][i])) for name in PROPERTY_COLUMNS), alerts_of(i)]

    return [*PROPERTY_COLUMNS, "alerts"], cells


def export_csv(path: str, graphs, scores, rows: np.ndarray | None, flagged: np.ndarray,
               p_values: np.ndarray | None = None, job=None, review: dict[int, str] | None = None,
               properties: dict | None = None, rank: np.ndarray | None = None,
               should_stop: Callable[[], bool] | None = None, model=None) -> int:
    """Write the ranked report of ``rows`` (graph indices; None: all rows, and the rejected rows at
    the end) with a ``flagged`` column (1 above the flag threshold). Ranks are the ranks among all
    graphs, ``rank``'s when given (the table's, e.g. a review's), and rows follow them; ``p_values``
    (one per graph) fill ``p_value`` and their q-values ``q_value``, as the table shows them;
    ``review`` (graph index -> "anomaly" or "not anomaly"), when it holds marks, fills a ``review``
    column. Molecules with ``properties`` (:func:`core.molecular_properties`) get them and their
    structural alerts (``alerts``, searched here: about 10-20 ms a molecule) before ``flagged``.
    ``should_stop``: polled before each row; True raises :class:`core.Stopped` and nothing is
    written. ``model``: the detector that scored the rows, which the end row of an export of every
    row names. Written by core's one report writer (:func:`core.report_output`); returns the number
    of data rows."""
    from core import REPORT_COLUMNS, alerts_text, graph_alerts, raise_if_stopped, ranking_of, report_output, \
        report_rows

    keep = None if rows is None else set(int(i) for i in rows)
    ranking = ranking_of(scores, rank)
    names, cells = molecule_columns(properties, lambda i: alerts_text(graph_alerts(graphs, i)))
    extra = (*EXPORT_COLUMNS_EXTRA, "review") if review else EXPORT_COLUMNS_EXTRA
    standardised = ("standardised_smiles",) if graphs.standardised else ()  # what was scored
    base = len(REPORT_COLUMNS)
    # a ranked report's columns in its order (properties, alerts, standardised_smiles), then the
    # app's (core.io.report.APP_COLUMNS): the file opens again as a ranked report, marks and all
    # only every row is the model's report: a part of it names no model, so no merge takes it for whole
    with report_output(path, [*REPORT_COLUMNS, *names, *standardised, *extra], model if rows is None else None) as out:
        for k, row in enumerate(report_rows(graphs, scores, p_values=p_values, extras=standardised, rank=rank)):
            raise_if_stopped(should_stop, path)
            if k < len(ranking):
                i = int(ranking[k])
                if keep is not None and i not in keep:
                    continue
                row = [*row[:base], *cells(i), *row[base:], "1" if flagged[i] else "0",
                       *([review.get(i, "")] if review else [])]
            elif keep is not None:
                continue  # rejected rows belong to "all rows"
            else:
                row = [*row[:base], *[""] * len(names), *row[base:], *[""] * len(extra)]
            out.row(row)
    return out.rows


def export_sdf(path: str, graphs, scores, rows: np.ndarray | None, flagged: np.ndarray,
               p_values: np.ndarray | None, job=None, review: dict[int, str] | None = None,
               rank: np.ndarray | None = None, should_stop: Callable[[], bool] | None = None) -> int:
    """Write the ranked molecules of ``rows`` (None: all) as SDF with score, p- and q-value, rank
    (``rank``'s when given: the table's), flag, top atoms, structural alerts and the chemist's
    properties as SD properties, and ``review`` when it holds marks; ``should_stop`` as for
    :func:`export_csv`."""
    from core import write_sdf

    return write_sdf(path, graphs, scores, rows, flagged=flagged, p_values=p_values, review=review or None,
                     rank=rank, should_stop=should_stop)


def export_html(path: str, graphs, scores, model, anomaly_label: str | None, threshold: float | None,
                p_values: np.ndarray | None, top_n: int = 25, vmax: float | None = None, job=None,
                review: dict[int, str] | None = None, rank: np.ndarray | None = None) -> int:
    """Write the one-file HTML report (data, model settings, top molecules' heatmaps, histogram, ROC);
    ``vmax``: the heatmaps' shared colour scale (the window's), else core's over all graphs;
    ``review``: the analyst's marks (graph index -> "anomaly" or "not anomaly"); ``rank``: each
    graph's rank as the table shows it (None: the scores')."""
    from core import html_report

    from .state import describe_model

    settings = {"detector": describe_model(model), **model.get_params()}
    return html_report(path, graphs, scores, settings, top_n=top_n, anomaly_label=anomaly_label, threshold=threshold,
                       p_values=p_values, vmax=vmax, review=review or None, rank=rank)


def export_table_html(table, path: str, job=None) -> int:
    """Write a tab's one-file HTML report (:class:`app.export_tables.ExportTable`), never over a
    file its rows came from.

    Args:
        table: the active tab's rows and their writers.
        path: the HTML file to write.
        job: the job handle.

    Returns:
        The number of molecules drawn.
    """
    table.check_output(path)
    return table.write_html(path, job)


def export_rows(table, path: str, visible_only: bool, job) -> int | None:
    """Write a tab's rows (:class:`app.export_tables.ExportTable`) as SDF when ``path`` ends in
    ``.sdf``, else as a CSV report.

    Args:
        table: the active tab's rows and their writers.
        path: the file to write.
        visible_only: only the rows the tab's filters show (else all, and the rejected rows).
        job: the job handle: Stop (or the window closing) stops the writing between rows.

    Returns:
        The number of rows written.

    Raises:
        Stopped: Stop was pressed; nothing was written and no file is left half-written (the job
            ends with None: :class:`app.workers.Task`).
    """
    from core import GLocalKDError

    write = table.write_sdf if path.lower().endswith(".sdf") else table.write_csv
    try:
        table.check_output(path)
        return write(path, table.visible if visible_only else None, job.stopped)
    except OSError as exc:
        raise _cannot_write(path, exc) from exc
    except ValueError as exc:  # e.g. a molecule RDKit cannot write
        raise GLocalKDError(f"{path}: {exc}") from exc


def export_report_csv(path: str, report, rows: np.ndarray | None, job=None,
                      review: dict[int, str] | None = None, rank: np.ndarray | None = None,
                      should_stop: Callable[[], bool] | None = None) -> int:
    """Write the rows ``rows`` (row indices of a ranked report, e.g. a scored file's; None: all,
    its rejected rows at the end, and a row that says where a stopped run stopped reading) as a
    ranked report, in rank order, with the chemist's properties and the structural alerts when the
    report has properties (alerts searched here unless the report holds them), its views' scores
    (``view:`` columns) when it has them, and a ``review`` column when ``review`` (row -> "anomaly"
    or "not anomaly") holds marks; ``rank``: each row's rank as the table shows it (None: the
    report's order), which the rows follow; ``should_stop`` as for :func:`export_csv`. Written by
    core's one report writer (:func:`core.report_output`), its end row naming the model that scored
    the report when it writes every row of an intact report (its view scores then review it again
    without scoring); returns the number of data rows."""
    from core import REPORT_COLUMNS, alerts_text, checked_rank, not_read_status, raise_if_stopped, report_output, \
        structural_alerts, view_columns

    rank = checked_rank(len(report), rank)
    chosen = np.arange(len(report)) if rows is None else np.asarray(rows, dtype=np.int64)
    chosen = chosen[np.argsort(rank[chosen], kind="stable")]

    def number(value) -> str:
        return f"{float(value):.6g}" if np.isfinite(value) else ""

    def report_alerts(i: int) -> str:  # the report's own column, else searched now in the SMILES it scored
        if report.alerts is not None:
            return str(report.alerts[i])
        return alerts_text(structural_alerts(report.scored_smiles(i))) if report.smiles[i] else ""

    names, cells = molecule_columns(report.properties, report_alerts)
    views, view_cells = view_columns(report.view_scores)  # dropped, a reopened export had to be scored again
    # what was scored, as the training tab's export and the report itself keep it (read back, it is the
    # molecule the top atoms number)
    standardised = ["standardised_smiles"] if report.standardised_smiles is not None else []
    marked = ["review"] if review else []
    header = [*REPORT_COLUMNS, *names, *views, *standardised, *marked]
    # the model is named for every row of a report as its model wrote it: a part of it, or a report edited
    # since (not intact), exported with its name, was merged as whole and its view scores trusted for review
    vouched = report.model_fingerprint if rows is None and report.intact else ""
    # every row exported: the report's cut (--top: a merge then needs its summary) and a stopped run's
    # reading checks go with it (without them a resume took another file's rows for the stopped run's)
    end = report.end if rows is None else None
    with report_output(path, header, vouched, stopped_after=report.stopped_after,
                       cut_from=end.cut_from if end else None, read_as=end.read_as if end else "",
                       rows_read=end.rows_read if end else "") as out:
        for i in chosen.tolist():
            raise_if_stopped(should_stop, path)
            out.row([str(rank[i]), report.ids[i], report.names[i], report.smiles[i], number(report.score[i]),
                     number(report.graph_score[i]), number(report.node_score[i]), str(int(report.num_nodes[i])),
                     report.labels[i], report.top_nodes[i], "ok", number(report.p_value[i]),
                     number(report.q_value[i]), *cells(i), *view_cells(i),
                     *([str(report.standardised_smiles[i])] if standardised else []),
                     *([review.get(i, "")] if review else [])])
        if rows is None:
            blank = [""] * (len(header) - len(REPORT_COLUMNS))
            for reject in report.rejects:
                out.row(["", reject.id, "", reject.text, "", "", "", "", "", "", reject.status, "", "", *blank])
            if report.stopped_after is not None:  # the rows never read are listed too, as one row that says so
                out.note(["", "", "", "", "", "", "", "", "", "", not_read_status(report.stopped_after), "", "",
                          *blank])
    return out.rows


def export_report_sdf(path: str, report, rows: np.ndarray | None, job=None,
                      review: dict[int, str] | None = None, rank: np.ndarray | None = None,
                      should_stop: Callable[[], bool] | None = None) -> int:
    """Write the molecules of a ranked report's ``rows`` (None: all) as SDF with its columns as
    SD properties, ``review`` (row -> "anomaly" or "not anomaly") as the ``review`` property
    when it holds marks, and ``rank`` (the table's, None: the report's) as ``rank``; ``should_stop``
    as for :func:`export_csv`; returns the number of molecules written."""
    from core import write_report_sdf

    return write_report_sdf(path, report, rows, review=review or None, rank=rank, should_stop=should_stop)


def export_report_html(path: str, report, model, top_n: int = 25, job=None,
                       review: dict[int, str] | None = None, rank: np.ndarray | None = None,
                       vmax: float | None = None, source: str = "") -> int:
    """Write the one-file HTML report of a ranked report's rows (a scored file's tab): its
    molecules are the tab's rows as they were read (:func:`core.report_graphs`, as every other use
    of a tab's molecules; the file was read again, and a file deleted, edited or replaced since
    failed or gave another file's molecules), their heatmaps drawn with ``model`` when it scores
    atoms (the model that wrote the report), else plain; ``review``: the analyst's marks (row ->
    "anomaly" or "not anomaly"); ``rank``: each row's rank as the table shows it (None: the
    report's order); ``vmax``: the heatmaps' colour scale (the training tab's shared one, as the
    tab draws them; None: core's over these molecules). Heatmaps and scores are the model's that
    wrote the report; with another model open (trained since), the report's scores, drawn plain.
    ``source``: the file the rows were scored from, which the page names (a scored file's report is
    a scratch file; the page named it, and said "0 rows rejected" whatever the report's rejects).
    A TU collection's rows (no SMILES) are drawn from the file they were scored from when the tab
    knows it (:func:`scored_graphs`), else listed without drawings (:func:`report_rows`). Rows
    labelled with two classes or more get the ROC curve, the anomalous class chosen as the training
    tab's (:func:`app.state.default_anomaly_label`).
    Returns the number of molecules drawn."""
    import dataclasses

    from core import Reject, Scores, html_report

    from .review_book import scored_by
    from .state import default_anomaly_label, describe_model

    graphs = tab_graphs(report)
    real = graphs is not None  # else a TU collection's rows, its file not at hand: listed and ranked, not drawn
    graphs = dataclasses.replace(graphs if real else report_rows(report), source=source or report.source,
                                 rejects=[Reject(None, r.id, r.reason, r.text) for r in report.rejects])
    same_model = scored_by(report, model)
    if same_model and model.has_node_scores and real:  # the heatmaps of the model that wrote the report
        scores = model.score(graphs)
    else:  # another model's (trained since) would print its scores beside the report's ranks
        ptr = np.concatenate([[0], np.cumsum([int(g.num_nodes) for g in graphs.graphs])])
        scores = Scores.graph_only(report.score, ptr)
    p_values = report.p_value if np.isfinite(report.p_value).any() else None
    settings = {"detector": describe_model(model)} if same_model else {"report": Path(report.source).name}
    return html_report(path, graphs, scores, settings, top_n=top_n, p_values=p_values, review=review or None,
                       rank=rank, vmax=vmax, anomaly_label=default_anomaly_label(graphs))


_SCORED_GRAPHS: dict[int, object] = {}  # id(report) -> its rows' graphs, read once per tab (the file can be large)


def tab_graphs(report):
    """A report tab's rows as graphs, graph i being row i: the one rule of the row panel and the
    HTML report. Rows with SMILES are the molecules scored (:func:`core.report_graphs`); a TU
    collection's rows, the graphs of the file they were scored from (:func:`scored_graphs`, read
    once per report): the panel refused them ("empty SMILES", naming a scratch file) while the HTML
    report drew them. None when neither is at hand.

    Raises:
        DataError: a row's SMILES cannot be parsed.
    """
    import weakref

    from core import report_graphs

    if not len(report) or any(report.smiles):
        return report_graphs(report)
    key = id(report)
    if key not in _SCORED_GRAPHS:
        _SCORED_GRAPHS[key] = scored_graphs(report)
        weakref.finalize(report, _SCORED_GRAPHS.pop, key, None)
    return _SCORED_GRAPHS[key]


def tab_row(report, i: int, job=None):
    """Row ``i`` of a report tab as a one-graph set (:func:`tab_graphs`), for the row panel.

    Raises:
        DataError: the row cannot be drawn: its SMILES does not parse, or a graph collection's row
            whose file is no longer at hand (said without the report's scratch path).
    """
    from core import DataError, row_graphs

    if any(report.smiles):
        return row_graphs(report, i)
    graphs = tab_graphs(report)
    if graphs is None:
        raise DataError(f"row {i + 1} ({report.ids[i]}) is a graph of a collection, drawn from the file it was "
                        "scored from, which is not at hand (moved, changed, or the report was opened from disk)")
    return graphs.subset([i])


def scored_graphs(report):
    """A ranked report's rows as the graphs they were scored from, when its rows hold no SMILES (a
    TU collection's) and the window knows the file (``report.scored_input``): that file read again,
    each row's graph found by its id and checked by its node count; None when the file is not there,
    does not read, or is no longer the one scored."""
    from core import GLocalKDError, load

    scored = getattr(report, "scored_input", None)
    if not scored or not Path(scored["path"]).exists():
        return None
    try:
        graphs = load(scored["path"], **scored["options"])
    except (GLocalKDError, OSError):
        return None
    where = {meta.id: k for k, meta in enumerate(graphs.meta)}
    rows = [where.get(str(i)) for i in report.ids]
    if None in rows or any(int(graphs.graphs[k].num_nodes) != int(n) for k, n in zip(rows, report.num_nodes)):
        return None
    return graphs.subset(rows)


def report_rows(report):
    """A ranked report's rows as the report holds them, for a page that lists them: each row's id,
    name, label and node count, with no structure (nothing to draw or score)."""
    import torch
    from torch_geometric.data import Data

    from core import GraphMeta, GraphSet

    graphs = [Data(edge_index=torch.zeros((2, 0), dtype=torch.long), num_nodes=int(n)) for n in report.num_nodes]
    metas = [GraphMeta(id=str(i), name=str(name), label=str(label) or None)
             for i, name, label in zip(report.ids, report.names, report.labels)]
    return GraphSet(graphs, metas, source=report.source, format="report", kind="graph")


# -------------------------------------------------------------------- similarity to a query
@dataclass
class Similarity:
    """A query's result: the similarities (None when the query is not a SMILES, said in ``error``)
    and the fingerprint index to pass again for the next query on the same rows."""

    query: str
    similarities: np.ndarray | None
    index: Any
    error: str = ""


def query_similarity(smiles, query: str, index, job) -> Similarity:
    """The Tanimoto similarity (ECFP4) of every molecule of ``smiles`` to ``query``.

    Args:
        smiles: the table's SMILES, by graph index.
        query: the query SMILES.
        index: a :class:`core.SimilarityIndex` of ``smiles`` built before, or None to build it.
        job: the job handle (unused: one pass).

    Returns:
        The similarities, or the reason the query is not a valid SMILES.
    """
    from core import DataError, SimilarityIndex

    if index is None:
        index = SimilarityIndex([str(s) for s in smiles])
    try:
        return Similarity(query, index.similarities(query), index)
    except DataError as exc:
        return Similarity(query, None, index, str(exc))


# -------------------------------------------------------------------- the selection's and the views' work
@dataclass
class Neighbours:
    """The training molecules most like one query (a graph index of the open graphs, or a SMILES),
    and the fingerprint index they were found in (kept for the next selection)."""

    query: int | str
    similar: list[tuple[int, float]]
    index: Any
    token: object


def similar_training(graphs, train: np.ndarray, index, token: object, query: int | str, job,
                     k: int = 5) -> Neighbours:
    """The ``k`` training molecules most like ``query`` (:func:`app.state.nearest_training`);
    the fingerprints of the training molecules are built first when no one has built them.

    Args:
        graphs: the open graphs.
        train: the training graphs' indices.
        index: their fingerprint index (:class:`app.state.SharedIndex`, or one built before), or None.
        token: the state's token for the index (:meth:`app.state.AppState.similarity_inputs`).
        query: the selected graph's index, or a SMILES (a scored file's row).
        job: the job handle (unused: one pass).
        k: how many.

    Returns:
        The neighbours and the index.
    """
    from .state import nearest_training

    index, similar = nearest_training(graphs, train, index, query, k)
    return Neighbours(query, similar, index, token)


SCAFFOLD_CHUNK = 2000  # molecules between looks at Stop


def scaffold_smiles(graphs, job) -> list[str] | None:
    """The Bemis-Murcko scaffold of every open molecule (:func:`core.scaffolds`), in chunks.

    Args:
        graphs: the open graphs.
        job: the job handle: Stop ends it between chunks.

    Returns:
        One scaffold SMILES per graph (``""`` acyclic); None when stopped.
    """
    from core import scaffolds

    smiles = [m.smiles for m in graphs.meta]
    out: list[str] = []
    for start in range(0, len(smiles), SCAFFOLD_CHUNK):
        if job.stopped():
            return None
        out.extend(scaffolds(smiles[start:start + SCAFFOLD_CHUNK]))
    return out


def evaluate(inputs: dict, job):
    """The Evaluation tab's figures (:func:`app.state.evaluation_of` of ``inputs``, from
    :meth:`app.state.AppState.evaluation_inputs`); ``job`` is unused (one pass)."""
    from .state import evaluation_of

    return evaluation_of(**inputs)
