"""The selected molecule's nearest training molecule, drawn beside it with their maximum common
substructure marked (in the drawing process: the search may take up to its time-out): on the
training tab for the selected graph, and on a scored file's tab for its selected row (whose similar
training molecules are found here, in the background)."""
from __future__ import annotations

import functools

from PySide6.QtCore import QObject, Slot

from .. import tasks
from ..state import AppState
from ..structures import StructureImages
from ..widgets.nearest import WAITING, NearestPanel
from ..workers import LatestJob

MCS_TIMEOUT = 2  # seconds the common substructure search may take


def pair_job(smiles_a: str, smiles_b: str, legends: tuple[str, str]) -> tuple[bytes, bool]:
    """The two molecules drawn side by side, and whether they are the same molecule (runs in the
    drawing process)."""
    from core import pair_png, same_molecule

    return pair_png(smiles_a, smiles_b, legends, timeout=MCS_TIMEOUT), same_molecule(smiles_a, smiles_b)


class NearestController(QObject):
    """Draws the pair for each selected molecule (the state's similar training molecules, the
    list the heatmap panel shows).

    Args:
        state: the app's state.
        panel: where the pair is shown.
        images: the window's drawing process.
        parent: the owning QObject.
    """

    def __init__(self, state: AppState, panel: NearestPanel, images: StructureImages, parent: QObject | None = None):
        super().__init__(parent)
        self.state, self.panel, self.images = state, panel, images
        self._request = 0

    @Slot(int, list)
    def show(self, i: int, similar: list) -> None:
        """Draw graph ``i`` beside the first of ``similar`` ((graph index, similarity), most similar first)."""
        st = self.state
        self._request += 1
        if st.graphs is None or not st.has_smiles():
            self.panel.clear("These graphs are not molecules: no nearest training molecule to draw.")
            return
        if not similar:
            self.panel.clear("No training molecule to compare with (train or load a model; the selected molecule "
                             "must parse).")
            return
        j, sim = similar[0]
        meta, near = st.graphs.meta[i], st.graphs.meta[j]
        scores = st.scores
        self.draw((meta.id, meta.smiles, float(scores.score[i]) if scores is not None else None),
                  (near.id, near.smiles, float(scores.score[j]) if scores is not None else None), sim,
                  same="the training data holds it twice")

    def draw(self, selected: tuple[str, str, float | None], nearest: tuple[str, str, float | None],
             similarity: float, same: str = "this row is in the training data") -> None:
        """Draw ``selected`` beside ``nearest`` (each its id, SMILES and score, or None without one)
        in the drawing process; a newer request replaces this one.

        Args:
            selected: the selected molecule (a row of the training data or of a scored file).
            nearest: its nearest training molecule.
            similarity: their Tanimoto similarity.
            same: what the caption says when the two are the same molecule.
        """
        self._request += 1
        (id_a, smiles_a, score_a), (id_b, smiles_b, score_b) = selected, nearest
        score_i = f", score {score_a:.3g}" if score_a is not None else ""
        score_j = f", score {score_b:.3g}" if score_b is not None else ""
        caption = (f"<b>{id_a}</b>{score_i} (selected) beside <b>{id_b}</b>{score_j}, its nearest training "
                   f"molecule: Tanimoto similarity <b>{similarity:.2f}</b> (ECFP4).")
        request = self._request
        self.panel.caption.setText(caption + " Drawing…")
        self.images.submit(pair_job, (smiles_a, smiles_b, (f"{id_a} (selected)", f"{id_b} (training)")),
                           lambda result: self._drawn(request, result, caption, same))

    def _drawn(self, request: int, result, caption: str, same_note: str) -> None:
        if request != self._request:  # another row was selected since
            return
        if isinstance(result, BaseException) or not result[0]:
            problem = result if isinstance(result, BaseException) else "a molecule does not parse"
            self.panel.clear(f"{caption}<br>Could not draw the pair: {problem}")
            return
        png, same = result
        if same:
            caption += f" <b>They are the same molecule</b>: {same_note}."
        self.panel.show_pair(png, caption)

    def clear(self, message: str = WAITING) -> None:
        """Forget the pair being drawn and show ``message`` instead."""
        self._request += 1
        self.panel.clear(message)


NO_MODEL = "Open or train a model on molecules to compare this row with its training molecules."
NOT_MOLECULES = "The open graphs are not molecules: this row has no training molecules to compare with."


class ReportNearestController(QObject):
    """A scored file's tab: the training molecules most like its selected row (ECFP4 Tanimoto,
    found by :func:`app.tasks.similar_training` on the row's SMILES, the newest row winning), listed
    in the tab's heatmap panel and the nearest drawn beside the row (:class:`NearestController`).
    The fingerprint index is the state's, shared with the training tab. New data or a new model
    finds them again for the row shown.

    Args:
        state: the app's state (its training molecules), or None (a tab on its own: nothing to compare).
        heatmap: the tab's heatmap panel (its list of similar training molecules).
        panel: the tab's nearest-molecule panel.
        images: the window's drawing process (None: the pair is not drawn).
        parent: the owning QObject (the tab).
    """

    def __init__(self, state: AppState | None, heatmap, panel: NearestPanel, images: StructureImages | None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.state, self.heatmap, self.panel = state, heatmap, panel
        self.jobs = LatestJob("report neighbours", self)
        self.pair = NearestController(state, panel, images, self) if images is not None else None
        self._row: tuple[int, str, str, float] | None = None  # (row, id, SMILES, score) asked about
        self._state_signals = ()
        if state is not None:
            self._state_signals = (state.data_changed, state.model_changed, state.scores_changed)
            for signal in self._state_signals:
                signal.connect(self._refresh)

    def show(self, row: int, ident: str, smiles: str, score: float) -> None:
        """Find the training molecules most like row ``row`` (its id, the SMILES it was scored as and
        its score) in the background; the heatmap's list and the panel say so meanwhile."""
        self._row = (row, ident, smiles, score)
        self._request()

    def _refresh(self, *_args) -> None:
        if self._row is not None:
            self._request()

    def _request(self) -> None:
        st = self.state
        inputs = st.similarity_inputs() if st is not None else None
        if inputs is None:
            self.jobs.cancel()
            self._say(NOT_MOLECULES if st is not None and st.graphs is not None and not st.has_smiles()
                      else NO_MODEL)
            return
        row, _ident, smiles, _score = self._row
        self.heatmap.finding_neighbours()
        self._clear_pair("Finding the nearest training molecule (ECFP4 Tanimoto)…")
        job = functools.partial(tasks.similar_training, inputs["graphs"], inputs["train"], inputs["index"],
                                inputs["token"], smiles)
        self.jobs.request(job, functools.partial(self._found, row), self._failed, self._keep_index)

    def _keep_index(self, result: tasks.Neighbours) -> None:
        self.state.keep_similarity_index(result.token, result.index)

    def _found(self, row: int, result: tasks.Neighbours) -> None:
        st = self.state
        self._keep_index(result)
        if self._row is None or self._row[0] != row:
            return  # another row is shown now (its own request follows)
        now = st.similarity_inputs()
        if now is None or now["token"] is not result.token:
            self._request()  # found for data or a model that changed since: find them again
            return
        scores = st.scores
        score_of = (lambda j: float(scores.score[j])) if scores is not None else (lambda _j: None)
        self.heatmap.set_neighbours([(j, st.graphs.meta[j].id, sim, score_of(j)) for j, sim in result.similar])
        if not result.similar:
            self._clear_pair("No training molecule to compare with: this row's molecule does not parse, or no "
                             "training molecule does.")
            return
        _row, ident, smiles, score = self._row
        j, sim = result.similar[0]
        if self.pair is not None:
            self.pair.draw((ident, smiles, score), (st.graphs.meta[j].id, st.graphs.meta[j].smiles, score_of(j)), sim)

    def _failed(self, message: str) -> None:
        self.heatmap.set_neighbours([])
        self.heatmap.neighbours_label.setText(f"Similar training molecules:\n{message}")
        self.heatmap.neighbours_label.setVisible(True)
        self._clear_pair(f"Could not find the nearest training molecule: {message}")

    def _say(self, message: str) -> None:
        self.heatmap.set_neighbours([])
        self._clear_pair(message)

    def _clear_pair(self, message: str) -> None:
        if self.pair is not None:
            self.pair.clear(message)
        else:
            self.panel.clear(message)

    def stop(self) -> None:
        """Forget the row, stop listening to the state and wait for the running job (the tab closes)."""
        self._row = None
        for signal in self._state_signals:
            signal.disconnect(self._refresh)
        self._state_signals = ()
        if self.pair is not None:
            self.pair.clear("")
        self.jobs.stop_all()
