"""Property-space view: how far a molecule's medicinal-chemistry properties lie from the training molecules'.

Each molecule is the nine properties the product shows beside every score
(:mod:`core.data.properties`: weight, cLogP, TPSA, H-bond donors and acceptors, rotatable bonds,
heavy atoms, rings, formal charge; RDKit's own functions). Chemists draw chemical space and a
model's applicability domain in these properties, and toxic outcomes go with them (compounds
with cLogP > 3 and TPSA < 75 are more often toxic, Hughes et al. 2008), while no other view reads
lipophilicity, polarity, hydrogen bonding or charge: graph size counts atoms and bonds, WL-LESINN
the shares of atom-label subtrees, GLocalKD embedding errors over atom labels.

Each property is centred on its median over the training molecules and divided by its
interquartile range / 1.349 (the standard deviation of a normal distribution with that range;
the property's standard deviation where the range is 0, and 1 where both are, so that a
property every training molecule shares counts any change as one unit). LESINN scores the
scaled rows, as it scores the other views' embeddings. A molecule's score depends on itself and
the fitted state only, never on the other molecules scored with it.

Molecules come from :func:`core.data.graph_molecules.molecules`: SMILES of molecule files, or TU
collections whose node labels map to elements. Other graphs raise
:class:`core.errors.NotApplicableError` and the evaluation harness reports "n/a".

Settings, fixed before the first measurement (research/README.md, "The property-space view"):
the nine properties, median and IQR scaling, LESINN with 256 members of 256 molecules.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.data.graph_molecules import molecules
from core.data.graphset import GraphSet
from core.data.scaling import usable_spread
from core.data.properties import PROPERTY_COLUMNS, molecule_properties
from core.detectors.base import GraphLevelDetector, is_count
from core.detectors.lesinn import LESINN

IQR_TO_SD = 1.349  # a normal distribution's interquartile range, in standard deviations


def property_scales(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Give each property's centre and scale over the training molecules (robust to outliers).

    Args:
        values: shape (molecules, properties), finite.

    Returns:
        ``(centre, scale)``: each column's median, and its interquartile range / 1.349, its
        standard deviation where that range is 0, and 1 where both are 0.
    """
    centre = np.median(values, axis=0)
    q1, q3 = np.percentile(values, [25, 75], axis=0)
    scale = (q3 - q1) / IQR_TO_SD
    std = values.std(axis=0)
    scale = usable_spread(scale, centre, fallback=usable_spread(std, centre))  # 1 where both are rounding
    return centre, scale


class PropertySpace(GraphLevelDetector):
    """Scores a molecule by LESINN on its scaled medicinal-chemistry properties (higher = further out).

    Fitted state: ``centre_`` and ``scale_`` (per property), ``scorer_`` (LESINN on the scaled
    training rows), ``train_scores_``.

    Args:
        ensemble_size: LESINN's members.
        subsample_size: LESINN's training molecules per member.
        seed: the seed of LESINN's draws.
    """

    name = "property-lesinn"
    has_node_scores = False
    FITTED = ("centre_", "scale_", "scorer_", "train_scores_", "loss_history_", "stopped_early_")

    def __init__(self, ensemble_size: int = 256, subsample_size: int = 256, seed: int = 0):
        self.ensemble_size = ensemble_size
        self.subsample_size = subsample_size
        self.seed = seed

    def validate_params(self) -> None:
        """Check LESINN's sizes before fitting.

        Raises:
            ParameterError: ``ensemble_size`` or ``subsample_size`` not a whole number from 1.
        """
        self.check_settings({"ensemble_size": (is_count(self.ensemble_size), "a whole number from 1"),
                             "subsample_size": (is_count(self.subsample_size), "a whole number from 1")})

    @staticmethod
    def properties(graphs: GraphSet) -> np.ndarray:
        """Give each molecule's properties, unscaled, in ``PROPERTY_COLUMNS`` order.

        Args:
            graphs: molecules (:func:`core.data.graph_molecules.molecules`).

        Returns:
            Shape (graphs, len(PROPERTY_COLUMNS)), float64.

        Raises:
            NotApplicableError: the graphs are not molecules.
            DataError: a molecule cannot be made, naming it.
        """
        if not len(graphs):
            return np.zeros((0, len(PROPERTY_COLUMNS)))
        return molecule_properties(molecules(graphs, "Property outlier"))

    def _fit(self, graphs: GraphSet, on_epoch: Callable | None = None,
             should_stop: Callable[[], bool] | None = None) -> None:
        """Scale the training molecules' properties and fit LESINN on them; no epochs."""
        values = self.properties(graphs)
        self.centre_, self.scale_ = property_scales(values)
        self.scorer_ = LESINN(self.ensemble_size, self.subsample_size, metric="euclidean",
                              seed=self.seed).fit(self._scaled(values))
        self.train_scores_ = self.scorer_.train_scores_
        self.loss_history_: list[float] = []
        self.stopped_early_ = False

    def _scaled(self, values: np.ndarray) -> np.ndarray:
        return (values - self.centre_) / self.scale_

    def fitted_state(self) -> dict:
        """Give the scaling and LESINN's state, for a model file.

        Returns:
            ``{"centre", "scale", "scorer"}``.

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        return {"centre": self.centre_, "scale": self.scale_, "scorer": self.scorer_.fitted_state()}

    def restore_fitted_state(self, state: dict, device: str = "auto") -> None:
        """Set the scaling and LESINN from :meth:`fitted_state`'s values.

        Args:
            state: the values :meth:`fitted_state` gave.
            device: unused (no network).

        Raises:
            ValueError: not one centre and one positive scale per property, or LESINN's state
                does not hold together.
        """
        centre, scale = np.asarray(state["centre"], float), np.asarray(state["scale"], float)
        shape = (len(PROPERTY_COLUMNS),)
        if centre.shape != shape or scale.shape != shape or not np.all(scale > 0):
            raise ValueError(f"a property view needs {shape[0]} centres and {shape[0]} positive scales")
        scorer = LESINN(self.ensemble_size, self.subsample_size, metric="euclidean", seed=self.seed)
        scorer.restore_fitted_state(state["scorer"])
        if scorer.train_ is None or scorer.train_.shape[1:] != shape:
            raise ValueError(f"a property view's LESINN needs its training rows of {shape[0]} properties")
        self.centre_, self.scale_, self.scorer_ = centre, scale, scorer
        self.train_scores_ = scorer.train_scores_
        self.loss_history_, self.stopped_early_ = [], False

    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor") -> np.ndarray:
        """Give each molecule's scaled properties (the representation LESINN scores).

        Args:
            graphs: the molecules.
            network: ignored: there is one representation.

        Returns:
            Shape (graphs, len(PROPERTY_COLUMNS)), float32.

        Raises:
            GLocalKDError: not fitted.
            NotApplicableError: the graphs are not molecules.
        """
        self._check_fitted()
        return self._scaled(self.properties(graphs)).astype(np.float32)

    def graph_scores(self, graphs: GraphSet) -> np.ndarray:
        """Score molecules by LESINN on their scaled properties (higher = further from the training molecules).

        Args:
            graphs: the molecules to score.

        Returns:
            One score per molecule.

        Raises:
            NotApplicableError: the graphs are not molecules.
            DataError: a molecule cannot be made, naming it.
        """
        return self.scorer_.decision_function(self._scaled(self.properties(graphs)))
