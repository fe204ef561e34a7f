"""The app's state without Qt: the open data, the trained model, its scores and what is selected.

Controllers change the state through its ``set_*`` and ``select`` methods; each change is sent
as a psygnal signal (Qt-free), to which the views' controllers connect, so no one pushes a change
to each view by hand (napari's ``ViewerModel`` habit); tests drive it without a window.
Computation lives in ``core``; this module only keeps results together and answers questions
about them (threshold, flags, evaluation).
"""
from __future__ import annotations

import html
import os

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from psygnal import Signal

from core import counted

from .review_book import ReviewBook, model_unavailable

if TYPE_CHECKING:  # core's data classes load torch: the window appears before it does
    from core import GraphSet, Scores

MODEL_SUFFIX = ".pt"

NORMAL_HELP = ("The detector learns what normal graphs look like and scores how far each graph is from them. "
               "<b>All graphs</b> (the default, as <tt>glocalkd train</tt> does) assumes anomalies are rare "
               "in the file. Pick a label to train only on the graphs known to be normal (e.g. the inactive "
               "class), which sharpens the model when labels are trustworthy.")


class SharedIndex:
    """The training molecules' fingerprint index, built once for the open data and model by the
    first job that needs it; a job of another tab asking meanwhile waits for that one (thread-safe).
    """

    def __init__(self, index=None) -> None:
        self._lock = threading.Lock()
        self._index = index

    def built(self):
        """The index if it is built (None: not yet)."""
        return self._index

    def offer(self, index) -> None:
        """Keep ``index`` if none is built and no job is building one (never waits: the GUI thread
        calls it)."""
        if self._lock.acquire(blocking=False):
            try:
                if self._index is None:
                    self._index = index
            finally:
                self._lock.release()

    def get(self, build: Callable[[], object]):
        """The index, built by ``build()`` first if no job has built it (runs in a job)."""
        with self._lock:
            if self._index is None:
                self._index = build()
            return self._index


@dataclass
class Evaluation:
    """What the evaluation tab shows for one choice of anomalous class."""

    anomaly_label: str
    scores: np.ndarray
    is_anomaly: np.ndarray
    auc: float
    fpr: np.ndarray
    tpr: np.ndarray
    reference: tuple[str, np.ndarray, np.ndarray] | None  # (name, fpr, tpr) of the graph-size baseline
    text: str
    # a consensus's components, each ranked by its own score: (label, auc, fpr, tpr)
    components: list[tuple[str, float, np.ndarray, np.ndarray]] = field(default_factory=list)


class AppState:
    """Data, model and scores of the window, and the graph selected in it.

    Signals (psygnal, emitted on the thread that makes the change: the GUI thread in the app):
        data_changed: new graphs are open (their scores and the selection are cleared).
        model_changed: the model is new (trained, loaded, or its views weighed); sends the model.
            A loaded model's scores follow with ``scores_changed``.
        scores_changed: the open graphs have new scores.
        selection_changed: another graph is selected; sends its index (None: no graph).
        flag_rule_changed: the flag rule or its threshold changed, and so the flags.
    """

    data_changed = Signal()
    model_changed = Signal(object)
    scores_changed = Signal()
    selection_changed = Signal(object)
    flag_rule_changed = Signal()

    def __init__(self) -> None:
        self.data_path = ""
        self.data_options: dict = {}  # the loader's options the data was read with (columns)
        self.data_digest = ""  # the digest of the graphs as read (core.graphs_digest), which a session keeps
        self.graphs: GraphSet | None = None
        self.schema_text = ""
        self.model = None
        self.scores: Scores | None = None
        self.size_model = None  # the graph-size baseline fitted on the same training graphs
        self.size_scores: np.ndarray | None = None
        self.trained_on_shown = 0  # how many of the shown graphs the model was trained on
        self.normal_label: str | None = None  # the training graphs' label (None: all graphs)
        self.known_label: str | None = None  # the label of the known anomalies that weighed the views
        self.percentile = 95.0
        self.flag_rule = "percentile"  # or "p" (expected false-alarm rate) or "q" (false-discovery rate)
        self.alpha = 0.05  # the rate of the p and q rules
        self.selected: int | None = None  # graph index, not a table row: it survives sorting and filters
        self._similarity = None  # (token, SharedIndex: the fingerprint index of the training molecules)
        self._token = object()  # the graphs and model the index is for
        self.properties: dict | None = None  # the chemist's properties of the graphs (core.molecular_properties)
        # the analyst's review of the open graphs: their marks (kept with the results; a session file
        # can save them), the Review of the current model and scores and its last re-ranking
        self.review_book = ReviewBook()

    # ---------------------------------------------------------------- changes
    def open_loaded(self, loaded) -> None:
        """Open a data file as read (:class:`app.tasks.Loaded`), with everything reading it gave: the
        one way the window opens data (File ▸ Open and a session), so that neither drops a part of it
        (a session's data opened without its properties: no MW or cLogP column, no property range)."""
        self.set_data(loaded.path, loaded.graphs, loaded.schema_text, loaded.properties, loaded.options, loaded.digest)

    def set_data(self, path: str, graphs: GraphSet, schema_text: str, properties: dict | None = None,
                 options: dict | None = None, digest: str = "") -> None:
        """Open ``graphs`` (read from ``path`` with the loader's ``options``) with their chemist's
        properties, if computed; sends ``data_changed``. The path is kept whole (a session saved
        from another working folder found ``herg.tab`` gone, or another file of that name)."""
        had_selection = self.selected is not None
        self.data_path = os.path.abspath(path) if path else path
        self.graphs, self.schema_text = graphs, schema_text
        self.data_options = dict(options or {})
        self.data_digest = digest  # the graphs as read (core.graphs_digest; "" when not computed)
        self.properties = properties
        self.scores = self.size_scores = None
        self.trained_on_shown = 0
        self.selected = None
        self._forget_similarity()
        self.review_book.clear()
        self.data_changed.emit()
        if had_selection:
            self.selection_changed.emit(None)

    def use_graphs(self, graphs: GraphSet | None, properties: dict | None = None) -> int:
        """The open file's graphs as the model reads them (standardised or as read): the same rows,
        less any a standardisation rejected, with their ``properties``; the selection is dropped
        when the rows change, and the review marks follow their rows (kept by index, they moved to
        the next molecules when a row was rejected).

        Returns:
            How many review marks were on rows no longer read (dropped).
        """
        if graphs is None or graphs is self.graphs:
            return 0
        dropped = 0
        if self.graphs is not None and self.review_book.marks:
            dropped = self.review_book.follow_rows(self.graphs.meta, graphs.meta)
        self.graphs, self.properties = graphs, properties
        self.selected = None
        self._forget_similarity()
        return dropped

    def set_trained(self, model, scores: Scores, n_train: int, normal_label: str | None, size_model,
                    size_scores: np.ndarray | None, known_label: str | None = None) -> None:
        """A model trained on the open graphs, with their scores; sends ``model_changed``, then
        ``scores_changed``."""
        self.model, self.scores, self.trained_on_shown = model, scores, n_train
        self.normal_label, self.known_label = normal_label, known_label
        self.size_model, self.size_scores = size_model, size_scores
        self._forget_similarity()
        self.forget_review()
        self.model_changed.emit(model)
        self.scores_changed.emit()

    def forget_model(self) -> None:
        """No model (a session's data opens without the model before it; its own model, if any,
        follows). No signal: the data's ``data_changed`` follows and updates the views."""
        self.model = self.scores = self.size_model = self.size_scores = None
        self.normal_label = self.known_label = None
        self.trained_on_shown = 0
        self._forget_similarity()
        self.forget_review()

    def set_model(self, model, normal_label: str | None = None) -> None:
        """A model loaded from a file: its scores of the open data come later (:meth:`set_scores`);
        its graph-size baseline is fitted again on the graphs of ``normal_label``. Sends
        ``model_changed``, and ``scores_changed`` when the open graphs had scores: they are gone
        (the table, the map and the evaluation showed the previous model's as current when the
        new model could not score the graphs, or its scoring was stopped)."""
        had_scores = self.scores is not None
        self.model = model
        self.normal_label = normal_label
        self.scores = self.size_scores = self.size_model = None
        self.trained_on_shown = 0
        self.known_label = None  # its known anomalies, if any, came from another file
        self._forget_similarity()
        self.forget_review()
        self.model_changed.emit(model)
        if had_scores:
            self.scores_changed.emit()

    def set_weighed(self, model, scores: Scores | None) -> None:
        """The consensus with its views weighed by known anomalies from a file, and the open graphs'
        scores under it (None: no graphs open). Sends ``model_changed`` (and ``scores_changed``)."""
        self.model, self.known_label = model, None  # the known anomalies came from a file, not a label
        self.forget_review()
        self.model_changed.emit(model)
        if scores is not None:
            self.set_scores(scores, self.size_model, self.size_scores)

    def set_scores(self, scores: Scores, size_model=None, size_scores: np.ndarray | None = None) -> None:
        """New scores of the open graphs (and of the graph-size baseline); sends ``scores_changed``."""
        self.scores = scores
        if size_model is not None:
            self.size_model = size_model
        self.size_scores = size_scores
        self.forget_review()
        self.scores_changed.emit()

    def select(self, index: int | None) -> None:
        """Select graph ``index`` (None: none); sends ``selection_changed`` (again for the same graph:
        its row was selected anew, e.g. after new scores, and its drawing follows)."""
        self.selected = index
        self.selection_changed.emit(index)

    def set_flag_rule(self, rule: str, value: float) -> None:
        """Flag by ``rule`` ("percentile", "p" or "q") at ``value`` (a percentile, or the rate of the
        p and q rules); sends ``flag_rule_changed``."""
        self.flag_rule = rule
        if rule == "percentile":
            self.percentile = value
        else:
            self.alpha = value
        self.flag_rule_changed.emit()

    def forget_review(self) -> None:
        """The model or its scores changed: the review is built again (the marks stay: they are about
        the graphs, not the model)."""
        self.review_book.forget()

    def mark(self, indices, anomalous: bool | None) -> None:
        """Mark graphs as anomalies (True) or not (False), or clear their marks (None)."""
        self.review_book.mark(indices, anomalous)

    # the review book's parts under the names the window's callers use
    @property
    def review_marks(self) -> dict[int, bool]:
        """The open graphs' marks: graph index -> True (anomaly) or False (not anomaly)."""
        return self.review_book.marks

    @property
    def review(self):
        """The :class:`core.Review` of the model and the open graphs, once built."""
        return self.review_book.review

    @property
    def reranked(self):
        """The last re-ranking by the marks, or None."""
        return self.review_book.reranked

    # ---------------------------------------------------------------- questions
    def review_unavailable(self) -> str:
        """Why the review actions are off ("" when the open graphs can be reviewed)."""
        if self.graphs is None or self.model is None or self.scores is None:
            return "Train or load a model and score the data to review its ranking"
        return model_unavailable(self.model)

    def review_rank(self) -> np.ndarray | None:
        """Each graph's rank under the review (1 = top): the reviewed graphs first, in their score
        order, then the others as the re-ranking orders them; None without marks or re-ranking."""
        if self.scores is None:
            return None
        return self.review_book.rank(self.scores.ranking())

    def review_words(self) -> dict[int, str]:
        """The marks as exports write them: graph index -> "anomaly" or "not anomaly"."""
        return self.review_book.words()

    def restore_review(self, marks: dict) -> None:
        """Put saved marks (e.g. a session file's) on the open graphs, replacing any.

        Args:
            marks: graph index (or its text, as JSON keeps it) -> True or "anomaly", False or
                "not anomaly".

        Raises:
            ValueError: an index that is no open graph's, or a mark that is none of these.
        """
        self.review_book.restore(marks, len(self.graphs) if self.graphs is not None else 0)

    def threshold(self) -> float | None:
        """The score above which graphs are flagged, by the flag rule: a percentile of the training
        scores, p < alpha, or q <= alpha. p- and q-values fall as the score rises, so each rule is a
        score threshold; the p and q rules fall back to the percentile without p-values."""
        if self.model is None or self.scores is None:
            return None
        values = {"p": self.p_values, "q": self.q_values}.get(self.flag_rule, lambda: None)()
        if values is None:
            return self.model.threshold(self.percentile)
        flagged = values < self.alpha if self.flag_rule == "p" else values <= self.alpha
        unflagged = self.scores.score[~flagged]
        return float(unflagged.max()) if len(unflagged) else float(self.scores.score.min()) - 1.0

    def flagged(self) -> np.ndarray:
        n = len(self.graphs) if self.graphs is not None else 0
        t = self.threshold()
        if t is None or self.scores is None:
            return np.zeros(n, dtype=bool)
        return self.scores.score > t

    def p_values(self) -> np.ndarray | None:
        """Each graph's p-value against the model's held-out normal graphs; None when the model
        holds none (core's rule: the same empty column as its reports)."""
        if self.scores is None or self.model is None:
            return None
        from core import model_p_values

        return model_p_values(self.model, self.scores.score)

    def q_values(self) -> np.ndarray | None:
        """Benjamini-Hochberg q-values of the p-values over every scored graph, as the reports write them."""
        p = self.p_values()
        if p is None:
            return None
        from core import report_q_values

        return report_q_values(p)

    def flag_note(self) -> str:
        """Why the flag rule flags as it does, where a user could misread it; "" otherwise.

        Under the p or q rule, a model without p-values flags by the percentile instead; under the
        q rule, when no row is flagged: why (too few calibration graphs for this many rows) and
        what to do."""
        if self.flag_rule not in ("p", "q") or self.scores is None or self.model is None:
            return ""
        if not getattr(self.model, "is_calibrated", False):
            return (f"This model gives no p-values (it was trained on all its graphs, none held out to "
                    f"calibrate): rows above percentile {self.percentile:g} of its training scores are flagged "
                    "instead.")
        if self.flag_rule != "q":
            return ""
        if self.flagged().any():
            return ""
        from core import fdr_unreached_note

        return (f"No row has q ≤ {self.alpha:g}. " +
                fdr_unreached_note(len(self.model.calibration_scores_), len(self.scores), self.alpha)
                .replace("(a larger calibration share, e.g. 'glocalkd train --calibration 0.4')",
                         "(the app holds out a fifth of the normal graphs; 'glocalkd train --calibration 0.4' "
                         "holds out more, and its model loads here)"))

    def weighable(self) -> bool:
        """Whether known anomalies can weigh the model's views (a consensus)."""
        if self.model is None:
            return False
        from core import detector_info

        return detector_info(self.model.name).weighable

    def has_smiles(self) -> bool:
        return self.graphs is not None and any(m.smiles for m in self.graphs.meta)

    def default_anomaly_label(self) -> str | None:
        """The open graphs' anomalous class (:func:`default_anomaly_label`)."""
        return default_anomaly_label(self.graphs)

    def evaluation(self, anomaly_label: str | None) -> Evaluation | None:
        """ROC and score distributions with ``anomaly_label`` as the anomalous class; None without
        two classes of labels or without scores (:func:`evaluation_of` of the state now)."""
        return evaluation_of(**self.evaluation_inputs(anomaly_label))

    def evaluation_inputs(self, anomaly_label: str | None) -> dict:
        """What :func:`evaluation_of` needs, taken from the state now (for a background job)."""
        return {"graphs": self.graphs, "scores": self.scores, "anomaly_label": anomaly_label,
                "size_scores": self.size_scores, "model_name": getattr(self.model, "name", ""),
                "trained_on_shown": self.trained_on_shown, "known_label": self.known_label}

    def training_indices(self) -> np.ndarray:
        """The graphs the model was trained on (all, or those with the normal label)."""
        if self.graphs is None:
            return np.zeros(0, dtype=np.int64)
        if self.normal_label is None:
            return np.arange(len(self.graphs))
        return np.array([k for k, lab in enumerate(self.graphs.labels) if lab == self.normal_label], dtype=np.int64)

    def training_node_errors(self) -> np.ndarray:
        """The node errors of the training graphs (all graphs' without a normal label), which anchor
        the heatmaps' shared colour scale; empty without scores."""
        s = self.scores
        if s is None or not s.has_node_scores:
            return np.zeros(0, dtype=np.float32)
        ptr = s.node_ptr
        parts = [s.node_errors[ptr[i]:ptr[i + 1]] for i in self.training_indices().tolist()]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    def similar_training_molecules(self, i: int | str, k: int = 5) -> list[tuple[int, float]]:
        """The k training molecules most like graph i, or like the SMILES ``i`` (Morgan fingerprints,
        Tanimoto), as (graph index, similarity); graph i itself is left out. The fingerprints of the
        training molecules are built on first use (the app builds them in a job:
        :meth:`similarity_inputs`, :meth:`keep_similarity_index`)."""
        inputs = self.similarity_inputs()
        if inputs is None:
            return []
        index, hits = nearest_training(inputs["graphs"], inputs["train"], inputs["index"], i, k)
        self.keep_similarity_index(inputs["token"], index)
        return hits

    def similarity_inputs(self) -> dict | None:
        """What :func:`nearest_training` needs for the state now: the graphs, the training graphs'
        indices, their fingerprint index (a :class:`SharedIndex`, built by the first job that needs
        it, whichever tab asks) and the token it belongs to; None without molecules or a model."""
        if self.graphs is None or not self.has_smiles() or self.model is None:
            return None
        if self._similarity is None or self._similarity[0] is not self._token:
            self._similarity = (self._token, SharedIndex())
        return {"graphs": self.graphs, "train": self.training_indices(), "index": self._similarity[1],
                "token": self._token}

    def keep_similarity_index(self, token: object, index) -> None:
        """Keep the fingerprint index built for ``token`` (:meth:`similarity_inputs`), unless the data,
        model or training graphs changed since."""
        if token is self._token and index is not None:
            if self._similarity is None or self._similarity[0] is not token:
                self._similarity = (token, SharedIndex(index))
            else:
                self._similarity[1].offer(index)

    def _forget_similarity(self) -> None:
        self._similarity = None
        self._token = object()  # an index built for the graphs and model before is not kept

    def summary_lines(self) -> list[str]:
        g = self.graphs
        if g is None:
            return ["No data loaded."]
        labels = g.label_counts()
        label_text = ", ".join(f"{k}: {v}" for k, v in labels.items()) if labels else "none"
        if g.labels_note():  # a measurement: hundreds of values, each listed, said nothing
            label_text = f"{counted(len(labels), 'different value')} (a measurement, not classes)"
        kind = {"tu": "TU graph collection", "smiles": "SMILES list", "table": "table of SMILES",
                "sdf": "SDF"}.get(g.format, g.format)
        lines = [f"<b>{Path(g.source).name}</b>", f"Format: {kind}",
                 f"Graphs: {len(g):,} ({counted(g.num_nodes, 'node')})",
                 f"Node features: {self.schema_text}", f"Labels: {label_text}", f"Rejected rows: {len(g.rejects):,}"]
        repeated = g.repeated_ids()
        if repeated:
            lines.append(f"Repeated IDs: {len(repeated):,} (every row is kept)")
        lines += [f"Note: {html.escape(note)}" for note in g.notes]  # what the reader changed (one-way TU edges)
        if self.model is not None:
            lines.append(f"Model: {describe_model(self.model)}")
            weighed = view_weights_text(self.model, compact=True)
            if weighed:
                lines.append(weighed)
        return lines


# -------------------------------------------------------------------- small helpers
def default_anomaly_label(graphs) -> str | None:
    """The anomalous class of labelled graphs: the minority class (core's rule, as ``glocalkd evaluate``
    uses), if there are two classes. The one rule of the Evaluation tab's default class and of every
    tab's HTML report's ROC curve (the training tab's and a scored file's).

    Args:
        graphs: a :class:`core.GraphSet`, or None.

    Returns:
        The label, or None without graphs or without two classes.
    """
    if graphs is None or len(graphs.label_counts()) < 2:
        return None
    from core import choose_anomaly_label

    return choose_anomaly_label(graphs, "minority")


def evaluation_of(graphs, scores, anomaly_label: str | None, size_scores: np.ndarray | None = None,
                  model_name: str = "", trained_on_shown: int = 0, known_label: str | None = None) -> Evaluation | None:
    """ROC and score distributions with ``anomaly_label`` as the anomalous class (runs in a job:
    the ROC-AUC and curves take a while on large files).

    Args:
        graphs: the open graphs (their labels).
        scores: their scores.
        anomaly_label: the anomalous class.
        size_scores: the graph-size baseline's scores, drawn beside the model's curve.
        model_name: the detector's registry name (the size baseline is not compared with itself).
        trained_on_shown: how many of the graphs the model was trained on (said: optimistic).
        known_label: the label of the known anomalies that weighed a consensus's views.

    Returns:
        The evaluation; None without two classes of labels or without scores.
    """
    g, s = graphs, scores
    if g is None or s is None or anomaly_label is None or len(g.label_counts()) < 2:
        return None
    from core import roc_auc, roc_points, view_label

    labels = np.array([lab if lab is not None else "" for lab in g.labels], dtype=object)
    known = labels != ""
    is_anomaly = labels[known] == anomaly_label
    known_scores = s.score[known]
    auc = roc_auc(is_anomaly, known_scores)
    fpr, tpr = roc_points(is_anomaly, known_scores)
    reference, size_text = None, ""
    if size_scores is not None and model_name != "size":
        size_scores = size_scores[known]
        size_auc = roc_auc(is_anomaly, size_scores)
        reference = (f"graph size alone ({size_auc:.3f})", *roc_points(is_anomaly, size_scores))
        size_text = f"; graph size alone: {size_auc:.3f}"
    components = []
    for name, component in s.component_scores().items():  # a consensus's views, each on its own
        c = component[known]
        components.append((view_label(name), roc_auc(is_anomaly, c), *roc_points(is_anomaly, c)))
    component_text = ("; its components: " + ", ".join(f"{label} {c_auc:.3f}" for label, c_auc, _, _ in components)
                      if components else "")
    note = (f"; includes the {trained_on_shown:,} training graphs, so it is optimistic: score a "
            "held-out file for a fair figure" if trained_on_shown else "")
    if known_label is not None and known_label == anomaly_label:
        note += (f"; the anomalies of label {anomaly_label} weighed the consensus's views, which makes it "
                 "more optimistic still")
    below = (f" (below 0.5: the detector scores label {anomaly_label} as more normal than the rest)"
             if auc < 0.5 else "")
    text = (f"ROC-AUC {auc:.3f}{below} on {int(known.sum()):,} labelled graphs "
            f"({int(is_anomaly.sum()):,} anomalous){component_text}{size_text}{note}")
    return Evaluation(anomaly_label, known_scores, is_anomaly, auc, fpr, tpr, reference, text, components)


def nearest_training(graphs, train: np.ndarray, index, query: int | str,
                     k: int = 5) -> tuple[object, list[tuple[int, float]]]:
    """The k training molecules most like ``query`` (Morgan fingerprints, Tanimoto).

    Args:
        graphs: the open graphs (molecules).
        train: the training graphs' indices.
        index: the :class:`core.SimilarityIndex` of the training molecules, a :class:`SharedIndex`
            (built here if no one has), or None to build it.
        query: a graph index of ``graphs`` (that graph is left out), or a SMILES (a molecule from
            elsewhere, such as a scored file's row: nothing is left out, so a training molecule
            itself is found with similarity 1).
        k: how many.

    Returns:
        (the index, to keep; (graph index, similarity) pairs, most similar first; empty when the
        SMILES does not parse).
    """
    from core import SimilarityIndex

    def build():
        return SimilarityIndex([graphs.meta[j].smiles for j in train.tolist()])

    index = build() if index is None else index.get(build) if isinstance(index, SharedIndex) else index
    if isinstance(query, str):
        hits = index.nearest(query, k)
    else:
        own = np.nonzero(train == query)[0]
        hits = index.nearest(graphs.meta[query].smiles, k, exclude=int(own[0]) if own.size else None)
    return index, [(int(train[j]), sim) for j, sim in hits]


def with_suffix(path: str, suffix: str = MODEL_SUFFIX) -> str:
    """``path`` with ``suffix`` added when it has none of its own, in any case (a model saved as
    ``herg_model`` becomes ``herg_model.pt``, which the Load dialog's filter then shows; ``S.PT``
    stays): the one rule of every file the app names, models, sessions and pages alike."""
    return path if path.lower().endswith(suffix.lower()) else path + suffix


# The training form's field labels, by the parameter each field sets (the form lays its rows out
# with them; error messages name the fields by them).
FIELD_LABELS = {"detector": "Detector", "normal_label": "Normal graphs", "known_label": "Known anomalies",
                "epochs": "Epochs", "lr": "Learning rate", "batch_size": "Batch size", "hidden_dim": "Hidden width",
                "out_dim": "Embedding width", "num_layers": "GCN layers", "lam": "λ (node term)", "seed": "Seed",
                "features": "Node features", "device": "Device"}
# the parameters core's errors name that are set elsewhere than in the form
OTHER_CONTROLS = {"smiles_column": "the column dialog (open or score the file again: it asks)",
                  "id_column": "the ID column choice",
                  "label_column": "the label column choice",
                  "known_anomalies": "Model ▸ Weigh views by known anomalies…",
                  "calibration": "the calibration share (a fifth of the normal graphs)"}


def control_name(param: str) -> str:
    """How the app names the control that sets ``param`` (e.g. ``the Batch size setting``)."""
    if param in FIELD_LABELS:
        return f"the {FIELD_LABELS[param]} setting"
    return OTHER_CONTROLS.get(param, param.replace("_", " "))


def app_wording(error: BaseException | str) -> str:
    """An error in the app's words: each parameter a core error names becomes the app's control
    for it. A message already worded (a string) is returned as it is."""
    if isinstance(error, str):
        return error
    params = getattr(error, "params", ())
    return error.worded({p: control_name(p) for p in params}) if params else str(error)


def marks_dropped_text(dropped: int) -> str:
    """Say that review marks were on rows a standardisation no longer reads ("" for none)."""
    return (f" {counted(dropped, 'review mark')} {'was' if dropped == 1 else 'were'} on rows the standardisation "
            "rejected: dropped." if dropped else "")


def duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def view_weights_text(model, compact: bool = False) -> str:
    """How known anomalies weighed a consensus's views ("" when none did), for the window;
    ``compact``: the weights alone, for the data summary."""
    from core import detector_info

    auc = getattr(model, "known_anomaly_auc_", None)
    if not auc:
        return ""
    weights = model.weights_now()
    order = sorted(auc, key=lambda n: -weights[n])
    if compact:
        return "View weights (known anomalies): " + ", ".join(f"{detector_info(n).label} {weights[n]:.2f}" for n in order)
    views = ", ".join(f"{detector_info(n).label} {weights[n]:.2f} (ROC-AUC {auc[n]:.3f})" for n in order)
    same = "" if model.view_weights_ else (" (no view ranks them above the normal graphs: the components weigh "
                                           "the same, as without known anomalies)")
    classifier = (" A classifier learnt from them on the WL features (the known-anomaly classifier view) joins "
                  "the weighed views." if getattr(model, "known_classifier_", None) is not None else "")
    return f"Views weighed by known anomalies: {views}{same}.{classifier}"


def describe_model(model) -> str:
    """One line on the trained detector: its name, features and epochs where it has them."""
    from core import detector_info, molecule_schema

    parts = [detector_info(model.name).label]
    schema = molecule_schema(model)  # a consensus: its GLocalKD component's
    if schema is not None:
        parts.append(schema.describe())
    if model.loss_history_:
        parts.append(f"{len(model.loss_history_)} epochs")
    readouts = [text for flag, text in (("node_max", "largest node error"), ("size_term", "size term"))
                if getattr(model, flag, False)]
    if readouts:
        parts.append("score + " + " + ".join(readouts))
    if getattr(model, "standardises", False):
        parts.append("molecules standardised")
    return ", ".join(parts)
