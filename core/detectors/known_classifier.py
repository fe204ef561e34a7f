"""The known-anomaly classifier view: a logistic regression that tells graphs known to be anomalous
from normal training graphs on their WL subtree features.

Known anomalies (a chemist's reference actives, an analyst's marks) say more than which views to
trust: they say which substructures an anomaly has. A class-balanced logistic regression on the
cosine-normalised WL features of a consensus's WL view learns that from them, with the view's
training graphs as the normal class. Its decision value is a view of its own; its p-value is
conformal against the training graphs' *out-of-fold* decision values (each scored by a
classifier trained without it), so that no reference graph is scored by a model that saw it.

The setting (C, folds, class balance) was fixed before any measurement (research/README.md,
"The known-anomaly path with the classifier view"); the consensus joins the view to its own
p-value by Fisher's rule (:meth:`core.detectors.consensus.Consensus.weigh_views`), and the review
loop can add one learnt from the marks (:mod:`core.detectors.review`).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from core.data.pvalues import conformal_p_values
from core.data.scores import Scores
from core.detectors.graph_kernels import LabelledMoleculeView
from core.errors import GLocalKDError

CLASSIFIER_C = 1.0  # the one setting, fixed before measuring (research/README.md)
CLASSIFIER_FOLDS = 5  # cross-fitting folds over the reference graphs
CLASSIFIER_VIEW = "known-classifier"  # its name among a consensus's views and a report's view columns


def unit_rows(features, squares: np.ndarray):
    """Divide each row by its norm (``sqrt(squares)``; a zero row stays zero): the WL kernel's cosine
    normalisation, so that a graph's size does not set its distance from the boundary.

    Args:
        features: (graphs, columns) WL counts, sparse or dense.
        squares: each graph's squared norm over all its labels (those outside the vocabulary too).

    Returns:
        The normalised rows, CSR when ``features`` is sparse, else a float64 array.
    """
    squares = np.asarray(squares, dtype=np.float64)
    inverse = np.where(squares > 0, 1.0 / np.sqrt(np.where(squares > 0, squares, 1.0)), 0.0)
    if sp.issparse(features):
        return sp.csr_matrix(sp.diags(inverse) @ sp.csr_matrix(features, dtype=np.float64))
    return np.asarray(features, dtype=np.float64) * inverse[:, None]


def fit_logistic(x, y: np.ndarray):
    """Fit the view's one model: ``LogisticRegression(C=1, class_weight="balanced")`` (lbfgs).

    Args:
        x: (graphs, columns) normalised features.
        y: 1 for an anomaly, 0 for a normal graph.

    Returns:
        The fitted scikit-learn model.
    """
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=CLASSIFIER_C, class_weight="balanced", max_iter=1000).fit(x, y)


def _float32(values: np.ndarray) -> np.ndarray:
    """At float32 precision, as float64: equal graphs tie, as the consensus's scores do."""
    return np.asarray(values, dtype=np.float64).astype(np.float32).astype(np.float64)


def cross_fitted(x_labelled, y_labelled: np.ndarray, x_reference):
    """Fit on the labelled graphs plus the reference (normal) graphs, and score each reference graph
    with a classifier trained without it.

    Args:
        x_labelled: normalised features of the graphs labelled by hand (anomalies, and any marked normal).
        y_labelled: their labels, 1 anomalous, 0 normal.
        x_reference: normalised features of the reference normal graphs (label 0).

    Returns:
        ``(model, reference_decisions)``: the classifier trained on every graph, and the reference
        graphs' out-of-fold decision values (:data:`CLASSIFIER_FOLDS` folds, ``KFold(shuffle=True,
        random_state=0)``), at float32 precision.
    """
    from sklearn.model_selection import KFold

    n_reference = x_reference.shape[0]
    stack = sp.vstack if sp.issparse(x_reference) else np.vstack

    def fit(rows: np.ndarray):
        x = stack([x_labelled, x_reference[rows]])
        return fit_logistic(sp.csr_matrix(x) if sp.issparse(x) else x, np.r_[y_labelled, np.zeros(len(rows))])

    model = fit(np.arange(n_reference))
    reference = np.empty(n_reference)
    folds = KFold(n_splits=min(CLASSIFIER_FOLDS, n_reference), shuffle=True, random_state=0)
    for kept, held in folds.split(np.zeros(n_reference)):
        reference[held] = fit(kept).decision_function(x_reference[held])
    return model, _float32(reference)


class KnownClassifier(LabelledMoleculeView):
    """The classifier view of a consensus's known anomalies, on its WL view's features.

    A linear model: a graph's decision value is ``coef_ . x / |x| + intercept_`` over the WL view's
    feature columns. Fitted state: ``coef_`` (one weight per WL feature column), ``intercept_`` and
    ``reference_`` (the WL view's training graphs' out-of-fold decision values, its conformal
    reference). It reads graphs through ``kernel``, the fitted :class:`core.detectors.graph_kernels.GraphKernel`
    of the consensus's WL view, which it shares and does not save.

    Args:
        kernel: the WL view's fitted kernel.
    """

    name = CLASSIFIER_VIEW

    def __init__(self, kernel):
        if getattr(kernel, "kind", None) != "wl":
            raise GLocalKDError("the classifier view reads WL features: it needs a WL view's kernel")
        self.kernel = kernel

    def label_coding_fitted(self) -> dict | None:
        """Give the label coding of its WL view's fitted graphs.

        Returns:
            The coding (:func:`core.detectors.graph_kernels.label_coding`), or None when not recorded.
        """
        return getattr(self.kernel, "coding_", None)

    def fit(self, known_features, known_squares: np.ndarray) -> KnownClassifier:
        """Learn the known anomalies against the kernel's training graphs.

        Args:
            known_features: the known anomalies' WL features (the kernel's ``transform``).
            known_squares: their squared norms.

        Returns:
            Itself, fitted.

        Raises:
            GLocalKDError: no known anomaly, or fewer than two training graphs.
        """
        n_known, n_reference = known_features.shape[0], self.kernel.train_features_.shape[0]
        if n_known == 0 or n_reference < 2:
            raise GLocalKDError("the classifier view needs a known anomaly and two training graphs")
        model, self.reference_ = cross_fitted(
            unit_rows(known_features, known_squares), np.ones(n_known),
            unit_rows(self.kernel.train_features_, self.kernel.train_squares_))
        self.coef_ = np.asarray(model.coef_[0], dtype=np.float64)
        self.intercept_ = float(model.intercept_[0])
        return self

    def decisions(self, features, squares: np.ndarray) -> np.ndarray:
        """Give the decision values of graphs given as WL features.

        Args:
            features: (graphs, columns) WL counts over the kernel's vocabulary.
            squares: the graphs' squared norms.

        Returns:
            One decision value per graph (higher = more like the known anomalies), at float32 precision.
        """
        return _float32(unit_rows(features, squares) @ self.coef_ + self.intercept_)

    def p_values(self, decisions: np.ndarray) -> np.ndarray:
        """Give conformal p-values of decision values against the training graphs' out-of-fold ones.

        Args:
            decisions: decision values, shape (graphs,).

        Returns:
            The p-values, shape (graphs,).
        """
        return conformal_p_values(self.reference_, np.asarray(decisions, dtype=np.float64))

    def score_labelled(self, labelled: list) -> np.ndarray:
        """Give the decision values of graphs as ``(edge index, node labels)`` pairs.

        Args:
            labelled: the graphs, as :func:`core.detectors.graph_kernels.labelled_graphs` makes them.

        Returns:
            One decision value per graph.
        """
        if len(labelled) == 0:
            return np.zeros(0)
        return self.decisions(*self.kernel.kernel_.transform(labelled))

    def score(self, graphs) -> Scores:
        """Score graphs by their decision value (higher = more like the known anomalies).

        Args:
            graphs: a :class:`core.data.graphset.GraphSet`.

        Returns:
            Graph-only scores.
        """
        return Scores.graph_only(self.score_labelled(self.kernel.labelled(graphs)), graphs.node_ptr())

    def fitted_state(self) -> dict:
        """Give the fitted state as plain values for a model file (the kernel is its WL view's).

        Returns:
            ``{"coef", "intercept", "reference"}``.
        """
        return {"coef": self.coef_, "intercept": self.intercept_, "reference": self.reference_}

    def restore_fitted_state(self, state: dict) -> None:
        """Set the fitted state from :meth:`fitted_state`'s values, checking them against the kernel.

        Args:
            state: the values :meth:`fitted_state` gave.

        Raises:
            ValueError: a weight count other than the kernel's feature columns.
        """
        self.coef_ = np.asarray(state["coef"], dtype=np.float64)
        self.intercept_ = float(state["intercept"])
        self.reference_ = np.asarray(state["reference"], dtype=np.float64)
        if len(self.coef_) != self.kernel.kernel_.n_columns_:
            raise ValueError("the classifier view's weights do not match its WL view's features")
