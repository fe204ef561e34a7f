"""What every detector shares: PyOD's ``decision_function`` and a flagging threshold taken
from the training graphs' scores."""
from __future__ import annotations

import numpy as np

from core.data.graphset import GraphSet


class Detector:
    """Base of the detectors. A subclass defines ``score(graphs) -> Scores`` and
    ``_check_fitted()``, and its ``fit`` sets ``train_scores_``."""

    def decision_function(self, graphs: GraphSet) -> np.ndarray:
        """Graph anomaly scores only (PyOD's name for it)."""
        return self.score(graphs).score

    def threshold(self, percentile: float = 95.0) -> float:
        """The given percentile of the training graphs' scores: a natural cut-off for flagging."""
        self._check_fitted()
        return float(np.percentile(self.train_scores_, percentile))
