"""One tab's review, without Qt: the analyst's marks on its rows, the :class:`core.Review` built
for them under the open model (kept, so that later marks re-rank at once) and its last
re-ranking. The training tab's graphs have one (:class:`app.state.AppState` holds it) and so has
each scored file's tab (:class:`app.widgets.report_view.ReportView`); the Review menu's
controller (:class:`app.controllers.review.ReviewController`) fills the one of the active tab."""
from __future__ import annotations

import weakref

import numpy as np

from core import counted

# a report tab's review scores every row again with each view of the open model (as a file is
# scored: 200,000 MOSES rows in about 62 s on 2 cores), unless the report holds the views' scores from
# that model (:func:`reads_view_scores`): then no row limit applies
MAX_REPORT_ROWS = 200_000
MARK_WORDS = {"anomaly": True, "not anomaly": False}
_FINGERPRINTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> its fingerprint, computed once


def model_fingerprint(model) -> str:
    """The open model's fingerprint (:meth:`core.Detector.fingerprint`), computed once per model.

    Args:
        model: a fitted detector.

    Returns:
        Its 16 hexadecimal digits ("" when it has none).
    """
    return next(iter(model_fingerprints(model)), "")


def model_fingerprints(model) -> tuple[str, ...]:
    """The fingerprints a report the open model wrote may name (:meth:`core.Detector.fingerprints`:
    an earlier version's too), computed once per model.

    Args:
        model: a fitted detector.

    Returns:
        The current fingerprint first (none when it has none).
    """
    try:
        known = _FINGERPRINTS.get(model)
    except TypeError:  # not hashable: computed each time
        known = None
    if known is None:
        try:
            known = tuple(model.fingerprints())
        except Exception:  # noqa: BLE001 (a detector that cannot say: its reports never match)
            known = ()
        try:
            _FINGERPRINTS[model] = known
        except TypeError:
            pass
    return known


def scored_by(report, model) -> bool:
    """Whether ``model`` scored the report's rows, by the fingerprint its end row names.

    Args:
        report: a ranked report (its ``model_fingerprint``; "" when it names none).
        model: the open detector (None: none).

    Returns:
        True when the report names one of the model's fingerprints.
    """
    fingerprint = getattr(report, "model_fingerprint", "")
    return bool(fingerprint) and model is not None and fingerprint in model_fingerprints(model)


def reads_view_scores(model, report) -> bool:
    """Whether a scored file's review can start from the views' scores its report holds.

    Args:
        model: the open detector (None: none).
        report: the tab's ranked report.

    Returns:
        True when the report has a ``view:`` column for every view of ``model`` (a consensus with
        Fisher's rule), was scored by this very model (same fingerprint) and is as it wrote it (its
        end row's digest matches), so that no row is scored again; False when the review must
        score the rows with each view.
    """
    scores = getattr(report, "view_scores", None)
    if not scores or model is None or model_unavailable(model):
        return False
    views = model.reported_views() if hasattr(model, "reported_views") else ()
    if sorted(scores) != sorted(views) or any(np.isnan(v).any() for v in scores.values()):
        return False
    # an edited report (its end row's digest no longer matches) may hold edited scores: scored again
    return getattr(report, "intact", False) and scored_by(report, model)


def model_unavailable(model) -> str:
    """Why ``model`` cannot re-rank by marks ("" when it can: a consensus with Fisher's rule).

    Args:
        model: the open detector.

    Returns:
        The reason in the app's words, or "".
    """
    if getattr(model, "name", "") != "consensus" or getattr(model, "rule", "fisher") != "fisher":
        return ("Only the consensus (the recommended detector) learns from marks: it re-weighs its views "
                "without training again. Train the consensus to review.")
    return ""


def report_unavailable(model, report) -> str:
    """Why a scored file's tab cannot be reviewed ("" when it can).

    Args:
        model: the window's open detector (None: none).
        report: the tab's ranked report.

    Returns:
        What is missing, in the app's words, or "". A report that holds the open model's views'
        scores (:func:`reads_view_scores`) needs neither SMILES nor to stay under MAX_REPORT_ROWS.
    """
    missing = []
    if model is None:
        missing.append("train or load the consensus (its views re-rank the rows)")
    elif model_unavailable(model):
        missing.append("the open model is not the consensus: only its views re-rank by marks")
    no_smiles, too_long = not (len(report) and any(report.smiles)), len(report) > MAX_REPORT_ROWS
    if not missing and (no_smiles or too_long) and reads_view_scores(model, report):
        return ""  # the report holds this model's views' scores: nothing is scored again, no row limit
    if no_smiles:
        missing.append("the report has no SMILES to score its rows again")
    if too_long:
        missing.append(f"it has {counted(len(report), 'row')}, over the {MAX_REPORT_ROWS:,} a review scores "
                       "again (a file scored in the app with the open consensus has no such limit: its report "
                       "keeps the views' scores)")
    return ("This tab cannot be reviewed: " + "; ".join(missing) + ".") if missing else ""


class ReviewBook:
    """A tab's review bookkeeping.

    Attributes:
        marks: row (graph index) -> True (anomaly) or False (not anomaly); they belong to the rows,
            so a new model keeps them.
        review: the :class:`core.Review` of the open model and these rows (built off the GUI thread),
            or None until built or after the model changed.
        reranked: its last re-ranking (:class:`core.Reranked`), or None.
    """

    def __init__(self) -> None:
        self.marks: dict[int, bool] = {}
        self.review = None
        self.reranked = None

    def mark(self, indices, anomalous: bool | None) -> None:
        """Mark rows as anomalies (True) or not (False), or clear their marks (None).

        Args:
            indices: row (graph) indices.
            anomalous: the mark.
        """
        for i in indices:
            if anomalous is None:
                self.marks.pop(int(i), None)
            else:
                self.marks[int(i)] = bool(anomalous)

    def follow_rows(self, before, after) -> int:
        """The same file's rows read again (standardised, or no longer): each mark moves to its
        row's new index, found by input line and ID; a mark on a row no longer read is dropped.

        Args:
            before: the rows' metadata (:class:`core.GraphMeta`) the marks are on.
            after: the metadata of the rows now open.

        Returns:
            How many marks were dropped.
        """
        where: dict[tuple, int] = {}
        for j, meta in enumerate(after):
            where.setdefault((meta.line, meta.id), j)
        moved = {where[key]: mark for i, mark in self.marks.items()
                 if (key := (before[i].line, before[i].id)) in where}
        dropped = len(self.marks) - len(moved)
        self.marks = moved
        self.forget()
        return dropped

    def forget(self) -> None:
        """The model or the scores changed: the review is built again (the marks stay)."""
        self.review = self.reranked = None

    def clear(self) -> None:
        """Other rows are open: no marks, no review."""
        self.marks = {}
        self.forget()

    def restore(self, marks: dict, n: int) -> None:
        """Put saved marks (e.g. a session file's) on the rows, replacing any.

        Args:
            marks: row index (or its text, as JSON keeps it) -> True or "anomaly", False or "not anomaly".
            n: how many rows there are.

        Raises:
            ValueError: an index that is no row's, or a mark that is none of these.
        """
        restored = {}
        for key, value in marks.items():
            index = int(key)
            if not 0 <= index < n:
                raise ValueError(f"a saved mark is on graph {index}, but the open data has {counted(n, 'graph')}")
            if isinstance(value, str) and value in MARK_WORDS:
                restored[index] = MARK_WORDS[value]
            elif isinstance(value, (bool, np.bool_)):
                restored[index] = bool(value)
            else:
                raise ValueError(f"graph {index}: a mark is 'anomaly' or 'not anomaly', not {value!r}")
        self.marks = restored

    def words(self) -> dict[int, str]:
        """The marks as exports write them: row -> "anomaly" or "not anomaly"."""
        return {i: "anomaly" if a else "not anomaly" for i, a in self.marks.items()}

    def rank(self, free_ranking: np.ndarray) -> np.ndarray | None:
        """Each row's rank under the review (1 = top): the reviewed rows first, in their own order,
        then the others as the re-ranking orders them (ties in their own order).

        Args:
            free_ranking: the rows' label-free order (row indices, top first).

        Returns:
            One rank per row, or None without marks or re-ranking.
        """
        if not self.marks or self.reranked is None:
            return None
        n = len(free_ranking)
        free = np.empty(n, dtype=np.int64)
        free[np.asarray(free_ranking, dtype=np.int64)] = np.arange(n)
        marked = np.zeros(n, dtype=bool)
        marked[list(self.marks)] = True
        reviewed = np.flatnonzero(marked)
        reviewed = reviewed[np.argsort(free[reviewed], kind="stable")]
        rest = np.flatnonzero(~marked)  # the re-ranked statistic, highest first; ties in score order
        rest = rest[np.lexsort((free[rest], -self.reranked.statistic[rest]))]
        rank = np.empty(n, dtype=np.int64)
        rank[np.r_[reviewed, rest]] = np.arange(1, n + 1)
        return rank


GRAPH_KEY = "graph:"  # a mark's identity that is a graph's structure (core.graph_key), not a SMILES


def marks_with_ids(ids, marks: dict[int, bool], smiles=None) -> list[dict]:
    """Marks as a session file keeps them, each with its row's ID (and SMILES) so that it finds its row again.

    Args:
        ids: the rows' IDs, by index.
        marks: row index -> True (anomaly) or False (not anomaly).
        smiles: the rows' SMILES, by index (None: graphs without them).

    Returns:
        ``[{"index", "id", "smiles", "anomaly"}, ...]`` in index order (``smiles`` "" when unknown).
    """
    return [{"index": int(i), "id": str(ids[i]), "smiles": str(smiles[i] or "") if smiles is not None else "",
             "anomaly": bool(mark)} for i, mark in sorted(marks.items())]


def marks_on(ids, saved, smiles=None) -> dict[int, bool]:
    """Saved marks (:func:`marks_with_ids`) put back on the rows that are theirs.

    A row is a mark's when its ID is the mark's and, where both are known, so is its SMILES: at the
    saved index if that row still is, else the first such row not yet marked. A graph without a
    SMILES is known by its structure's key (``graph:...``, its ID being only its position). An ID alone is not
    enough where it is a line number (rows without an ID), which shifts when a line above goes;
    a mark whose row is gone or changed is dropped (the caller says how many).

    Args:
        ids: the open rows' IDs, by index.
        saved: the saved marks (anything but a list gives none).
        smiles: the open rows' SMILES, by index (None: unknown).

    Returns:
        Row index -> True (anomaly) or False (not anomaly).
    """
    if not isinstance(saved, list):
        return {}
    ids = [str(i) for i in ids]
    texts = [str(t or "") for t in smiles] if smiles is not None else [""] * len(ids)
    rows_of: dict[str, list[int]] = {}
    for i, gid in enumerate(ids):
        rows_of.setdefault(gid, []).append(i)

    rows_with: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        if text.startswith(GRAPH_KEY):
            rows_with.setdefault(text, []).append(i)

    def same(i: int, entry: dict) -> bool:
        saved_smiles = str(entry.get("smiles") or "")
        if saved_smiles.startswith(GRAPH_KEY):  # a graph whose ID is its position: its structure decides
            return texts[i] == saved_smiles
        return ids[i] == entry.get("id") and (not saved_smiles or not texts[i] or texts[i] == saved_smiles)

    marks: dict[int, bool] = {}
    for entry in saved:
        if not isinstance(entry, dict) or not isinstance(entry.get("anomaly"), bool):
            continue  # a verdict is True or False: "not anomaly", "false" or null read as an anomaly
        i = entry.get("index")
        if not (isinstance(i, int) and 0 <= i < len(ids) and same(i, entry) and i not in marks):
            key = str(entry.get("smiles") or "")
            candidates = rows_with.get(key, []) if key.startswith(GRAPH_KEY) else rows_of.get(str(entry.get("id")), [])
            i = next((j for j in candidates if same(j, entry) and j not in marks), None)
        if i is not None:
            marks[i] = entry["anomaly"]
    return marks
