"""The selected molecule's nearest training molecule, drawn beside it with their maximum common
substructure marked (in the drawing process: the search may take up to its time-out)."""
from __future__ import annotations

from PySide6.QtCore import QObject, Slot

from ..state import AppState
from ..structures import StructureImages
from ..widgets.nearest import NearestPanel

MCS_TIMEOUT = 2  # seconds the common substructure search may take


def pair_job(smiles_a: str, smiles_b: str, legends: tuple[str, str]) -> bytes:
    """The two molecules drawn side by side (runs in the drawing process)."""
    from core import pair_png

    return pair_png(smiles_a, smiles_b, legends, timeout=MCS_TIMEOUT)


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
        score_i = f", score {scores.score[i]:.3g}" if scores is not None else ""
        score_j = f", score {scores.score[j]:.3g}" if scores is not None else ""
        caption = (f"<b>{meta.id}</b>{score_i} (selected) beside <b>{near.id}</b>{score_j}, its nearest training "
                   f"molecule: Tanimoto similarity <b>{sim:.2f}</b> (ECFP4).")
        request = self._request
        self.panel.caption.setText(caption + " Drawing…")
        self.images.submit(pair_job, (meta.smiles, near.smiles, (f"{meta.id} (selected)", f"{near.id} (training)")),
                           lambda result: self._drawn(request, result, caption))

    def _drawn(self, request: int, result, caption: str) -> None:
        if request != self._request:  # another row was selected since
            return
        if isinstance(result, BaseException) or not result:
            self.panel.clear(f"{caption}<br>Could not draw the pair: {result or 'a molecule does not parse'}")
            return
        self.panel.show_pair(result, caption)

    def clear(self) -> None:
        self._request += 1
        self.panel.clear()
