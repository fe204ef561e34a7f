"""A consensus of detectors: several views of a graph, each calibrated against held-out normal
graphs, combined into one p-value.

No single detector wins every data set (docs/results.md): GLocalKD sees what a GCN's
embeddings miss, WL-LESINN sees unusual subtrees, and the graph-size baseline sees unusual node
and edge counts. A graph that is odd in any one view should rank high. So each component is
fitted on the same normal graphs, its scores are turned into conformal p-values against a
held-out calibration share of them, and the p-values are combined by a fixed rule:

- ``fisher``: -2 Σ log p (Fisher 1932): strong evidence from any component counts, and a
  component that calls an anomaly normal (p near 1) adds almost nothing;
- ``cauchy``: mean of tan((0.5 - p) π) (Liu and Xie 2020, ACAT): robust to dependence
  between the components;
- ``minp``: the smallest p-value (Tippett; Bonferroni-valid).

The combined statistic is the score (higher = more anomalous). It is calibrated again against
the calibration graphs' own combined statistics, each computed leave-one-out, so the
consensus's p-values are conformal p-values too, whatever the dependence between its
components. The node errors and the two score terms come from the GLocalKD component, so
heatmaps keep working.

With a few graphs known to be anomalous (a chemist's reference actives), :meth:`Consensus.weigh_views`
trusts each view as far as it ranks them above the calibration graphs: view c's weight is
``max(0, AUC_c - 0.5)``, its evidence is multiplied by it (weights scaled to a mean of 1), and the
calibration graphs' statistics are computed again with the weights, so p-values stay calibrated.
Without known anomalies every component weighs the same. *Reserve views* (by default LESINN on
raw WL counts) are fitted and calibrated beside the components but weigh nothing, and are not
even scored, until known anomalies weigh the views: they point the right way on some data sets
and the wrong way on others, which only known anomalies can tell (docs/consensus.md).

Known anomalies also train a *classifier view* (:mod:`core.detectors.known_classifier`): a logistic
regression that tells them from the WL view's training graphs on their WL features. A graph's
statistic is then Fisher's rule over two p-values, the weighed views' and the classifier's, and it
is calibrated once more against the calibration graphs' statistics, computed the same way.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from core.data.graph_identity import graph_keys
from core.data.graphset import GraphSet
from core.data.scores import COMPONENT_PREFIX, WEIGHED_VIEWS_PART, Scores
from core.detectors.base import Detector, EpochInfo
from core.detectors.catalog import MIN_KNOWN_ANOMALIES, SINGLE_DETECTORS, make_single, single_params
from core.detectors.conformal import (DEFAULT_CALIBRATION_FRACTION, MAX_CALIBRATION_SHARE, calibration_groups,
                                     calibration_split, can_calibrate, conformal_p_values)
from core.detectors.graph_kernels import csr_from_state
from core.detectors.known_classifier import CLASSIFIER_VIEW, KnownClassifier
from core.detectors.wl_features import shared_transforms
from core.errors import DataError, GLocalKDError, ParameterError
from core.wording import counted

RULES = ("fisher", "cauchy", "minp")
WEIGHABLE_RULES = ("fisher", "cauchy")  # the rules that sum the components' evidence
DEFAULT_COMPONENTS = ("glocalkd", "wl-lesinn", "size")
DEFAULT_RESERVE_VIEWS = ("wl-count-lesinn",)
# fit graphs a WL view compares a graph with, at most: scoring then costs the same however large the
# training set (research/consensus/README.md, where these two views were measured with it); a
# view's component_params can set another
VIEW_POOL_SIZE = 2048
POOLED_VIEWS = ("wl-lesinn", "wl-count-lesinn")
# the views whose WL features the known-anomaly classifier reads, the first one present
CLASSIFIER_FEATURE_VIEWS = ("wl-lesinn", "wl-count-lesinn")


def combine_p_values(p: np.ndarray, rule: str, weights: np.ndarray | None = None) -> np.ndarray:
    """Combine each graph's p-values from several views into one statistic (higher = stronger evidence).

    Args:
        p: p-values, shape (n graphs, m views).
        rule: ``fisher`` (-2 Σ log p), ``cauchy`` (mean of tan((0.5 - p) π)) or ``minp`` (-log of
            the smallest).
        weights: m values with a mean of 1 that multiply each view's evidence under ``fisher`` and
            ``cauchy``; None weighs them equally.

    Returns:
        The combined statistic, shape (n,). p-values are clipped to [1e-300, 1] first.

    Raises:
        GLocalKDError: an unknown rule, or weights with ``minp``.
    """
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-300, 1.0)
    if rule == "minp":
        if weights is not None:
            raise GLocalKDError("the minp rule cannot weigh its components")
        return -np.log(p.min(axis=1))
    if rule == "fisher":
        evidence = -2.0 * np.log(p)
        return evidence.sum(axis=1) if weights is None else (evidence * weights).sum(axis=1)
    if rule == "cauchy":
        evidence = np.tan((0.5 - p) * np.pi)
        return evidence.mean(axis=1) if weights is None else (evidence * weights).mean(axis=1)
    raise GLocalKDError(f"rule must be one of {', '.join(RULES)}, not {rule!r}")


def view_weights(known_auc: dict[str, float]) -> dict[str, float] | None:
    """Turn each view's ROC-AUC of known anomalies into its weight in the consensus.

    Args:
        known_auc: view name -> ROC-AUC of the known anomalies against the calibration graphs
            (a non-finite AUC counts as 0.5).

    Returns:
        View name -> ``max(0, AUC - 0.5)`` scaled to a mean of 1; None (equal weights) when no
        view ranks them above the normal graphs.
    """
    raw = {name: max(0.0, float(auc) - 0.5) if np.isfinite(auc) else 0.0 for name, auc in known_auc.items()}
    total = sum(raw.values())
    if total <= 0.0:
        return None
    return {name: len(raw) * w / total for name, w in raw.items()}


def separation_auc(normal_scores: np.ndarray, anomaly_scores: np.ndarray) -> float:
    """Measure how well scores separate anomalies from normal graphs: ROC-AUC by Mann-Whitney.

    Args:
        normal_scores: scores of normal graphs (higher = more anomalous).
        anomaly_scores: scores of the anomalies.

    Returns:
        The chance that an anomaly scores above a normal graph, ties counting half.
    """
    normal = np.sort(np.asarray(normal_scores, dtype=np.float64))
    s = np.asarray(anomaly_scores, dtype=np.float64)
    below = np.searchsorted(normal, s, side="left")
    ties = np.searchsorted(normal, s, side="right") - below
    return float(np.mean((below + 0.5 * ties) / len(normal)))


def leave_one_out_p_values(calibration_scores: np.ndarray) -> np.ndarray:
    """Give each calibration graph's conformal p-value against the other calibration graphs.

    Args:
        calibration_scores: the calibration graphs' scores, shape (n,).

    Returns:
        (1 + the others scoring at least as high) / n, shape (n,).
    """
    cal = np.asarray(calibration_scores, dtype=np.float64)
    n = len(cal)
    at_least_others = n - np.searchsorted(np.sort(cal), cal, side="left") - 1
    return (1.0 + at_least_others) / n


def _csr_state(features) -> dict | None:
    """A ``(features, squares)`` pair as plain values for a model file (None stays None)."""
    if features is None:
        return None
    f, squares = features
    data = f.data
    if len(data) and data.min() >= 0 and data.max() <= np.iinfo(np.uint16).max and np.all(data == np.round(data)):
        data = data.astype(np.uint16)  # WL label counts: a quarter of float64's bytes, exactly
    return {"features": {"data": data, "indices": f.indices, "indptr": f.indptr, "shape": list(f.shape)},
            "squares": squares}


def fisher_two_statistic(p_first: np.ndarray, p_second: np.ndarray) -> np.ndarray:
    """Fisher's statistic of two p-values per graph, one weight each: ``-2 log p1 - 2 log p2``.

    Args:
        p_first: one view's p-values, shape (n,).
        p_second: the other's, shape (n,).

    Returns:
        The statistic, shape (n,).
    """
    return combine_p_values(np.column_stack([p_first, p_second]), "fisher")


def _as_scored(statistic: np.ndarray) -> np.ndarray:
    """The statistic rounded as :meth:`Consensus.score` returns it (float32), kept as float64."""
    return np.asarray(statistic, dtype=np.float32).astype(np.float64)


class Consensus(Detector):
    """Conformal p-values of several detectors combined by ``rule``.

    Args:
        components: registry names of the detectors combined (default: GLocalKD, WL-LESINN and
            graph size).
        reserve_views: registry names of detectors fitted and calibrated beside them that count
            only once known anomalies weigh the views (default: WL counts).
        rule: ``fisher``, ``cauchy`` or ``minp``.
        calibration: share of the normal training graphs held out to calibrate the components.
        component_params: constructor parameters per component name, e.g.
            ``{"glocalkd": {"epochs": 50}}``. The WL views (:data:`POOLED_VIEWS`) compare with a
            pool of at most :data:`VIEW_POOL_SIZE` fit graphs unless their ``pool_size`` is given
            (None: all).
        seed: seeds the calibration split and every component.
        device: for the components that run on a GPU.
        known_classifier: let known anomalies also train the classifier view (on when the consensus
            has a WL view: :data:`CLASSIFIER_FEATURE_VIEWS`); the calibration graphs' WL features are
            kept for it.

    Fitted state, for every view (components and reserve views): ``components_`` (name -> fitted
    detector), ``component_calibration_`` (name -> the calibration graphs' scores),
    ``component_train_`` (name -> the fit graphs' scores); and ``calibration_scores_`` (the
    calibration graphs' combined statistics), ``train_scores_``, ``loss_history_`` (GLocalKD's,
    when a component), ``stopped_early_``, ``view_weights_`` (name -> weight, or None: not weighed;
    :meth:`weights_now` says what each view weighs either way), ``known_anomaly_auc_`` (name ->
    the ROC-AUC of the known anomalies of :meth:`weigh_views`, or None), ``calibration_features_``
    (the calibration graphs' WL features and squared norms, or None) and ``known_classifier_`` (the
    :class:`core.detectors.known_classifier.KnownClassifier` the known anomalies trained, or None)
    with ``weighed_calibration_`` (the calibration graphs' statistics before it joins), and
    ``fit_keys_`` and ``calibration_keys_`` (each fit and calibration graph's
    :func:`core.data.graph_identity.graph_key`, None from an older model file): known anomalies
    among them are graphs the views have seen (:meth:`seen_graphs`).
    """

    name = "consensus"
    FITTED = ("components_", "component_calibration_", "component_train_", "calibration_scores_", "train_scores_",
              "loss_history_", "stopped_early_", "view_weights_", "known_anomaly_auc_", "calibration_features_",
              "known_classifier_", "weighed_calibration_", "fit_keys_", "calibration_keys_")

    def __init__(self, components: Sequence[str] = DEFAULT_COMPONENTS, rule: str = "fisher",
                 calibration: float = DEFAULT_CALIBRATION_FRACTION, component_params: dict | None = None,
                 seed: int = 0, device: str = "auto", reserve_views: Sequence[str] = DEFAULT_RESERVE_VIEWS,
                 known_classifier: bool = True):
        # lists, as they read back from JSON; anything else is kept for validate_params to refuse
        self.components = list(components) if isinstance(components, (list, tuple)) else components
        self.reserve_views = list(reserve_views) if isinstance(reserve_views, (list, tuple)) else reserve_views
        self.rule = rule
        self.calibration = calibration
        self.component_params = component_params
        self.seed = seed
        self.device = device
        self.known_classifier = known_classifier

    @property
    def standardises(self) -> bool:
        """Whether it reads molecules standardised (as it was trained); its views read them so too."""
        return self.__dict__.get("standardises", False)

    @standardises.setter
    def standardises(self, value: bool) -> None:
        """Set it for the consensus and its views: a view read back from a model file knows nothing
        of it, and scores the graphs its consensus hands it (:func:`core.detectors.base.as_model_reads`).

        Args:
            value: whether the molecules are read standardised.
        """
        self.__dict__["standardises"] = value
        for view in (*getattr(self, "components_", {}).values(), getattr(self, "known_classifier_", None)):
            if isinstance(view, Detector):
                view.standardises = value

    @property
    def has_node_scores(self) -> bool:  # the GLocalKD component's node errors
        """Whether its scores carry node errors: those of a GLocalKD component, when it has one."""
        return "glocalkd" in self.components

    @property
    def views(self) -> list[str]:
        """Every view the consensus fits: its components, then its reserve views."""
        return [*self.components, *self.reserve_views]

    def reported_views(self) -> list[str]:
        """List the views whose raw scores a report's ``view:`` columns hold (:meth:`view_scores`).

        Returns:
            Every view (:attr:`views`), then the classifier view when known anomalies trained one.
        """
        classifier = [CLASSIFIER_VIEW] if getattr(self, "known_classifier_", None) is not None else []
        return [*self.views, *classifier]

    def scored_views(self) -> list[str]:
        """List the views whose scores the consensus combines now.

        Returns:
            Its components, and every view (the reserve views too) once known anomalies have weighed
            them, then the classifier view (:data:`CLASSIFIER_VIEW`) when they trained one.
        """
        classifier = [CLASSIFIER_VIEW] if getattr(self, "known_classifier_", None) is not None else []
        return [*self._weighed_views(), *classifier]

    def _weighed_views(self) -> list[str]:
        """The scored views with calibration scores of their own, whose p-values Fisher's rule weighs."""
        return self.views if getattr(self, "view_weights_", None) is not None else list(self.components)

    def view(self, name: str):
        """Give a fitted view by name: a component, a reserve view or the classifier view.

        Args:
            name: the view's name (:attr:`views`, or :data:`CLASSIFIER_VIEW`).

        Returns:
            The fitted view (it has ``score``; the molecule views ``score_molecules`` too).

        Raises:
            GLocalKDError: not fitted.
            KeyError: no such view.
        """
        self._check_fitted()
        return self._view(name)

    def _view(self, name: str):
        if name == CLASSIFIER_VIEW and getattr(self, "known_classifier_", None) is not None:
            return self.known_classifier_
        return self.components_[name]

    def validate_params(self) -> None:
        """Check the views, the rule and the calibration share.

        Raises:
            ParameterError: no components, an unknown or repeated view name, an unknown rule, a
                calibration share not strictly between 0 and 1, or settings under a name that is
                no detector's (a misspelt view; naming the parameter).
        """
        for name in ("components", "reserve_views"):
            value = getattr(self, name)
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ParameterError(f"{{{name}}} must be a list of detector names, not {value!r}", name)
        views = self.views
        unknown = [c for c in views if c not in SINGLE_DETECTORS]
        if not self.components or unknown or len(set(views)) != len(views):
            raise ParameterError(f"{{components}} and {{reserve_views}} must be distinct detector names, not "
                                 f"{list(self.components)} and {list(self.reserve_views)}", "components",
                                 "reserve_views")
        if self.rule not in RULES:
            raise ParameterError(f"{{rule}} must be one of {', '.join(RULES)}, not {self.rule!r}", "rule")
        if not 0.0 < float(self.calibration) < 1.0:  # a model file of an older rule still loads
            raise ParameterError(f"{{calibration}} must be a share between 0 and 1 (both excluded), not "
                                 f"{self.calibration}", "calibration")
        given = self.component_params
        if given is not None and (not isinstance(given, dict) or not all(isinstance(v, dict) for v in given.values())):
            raise ParameterError(f"{{component_params}} must map view names to their settings, not {given!r}",
                                 "component_params")
        strangers = [name for name in (given or {}) if name not in SINGLE_DETECTORS]
        if strangers:  # a misspelt view's settings would be ignored and the view trained at its defaults
            raise ParameterError(f"{{component_params}} names {', '.join(map(repr, strangers))}, not a detector "
                                 f"(the views are named as the registry names them: {', '.join(views)})",
                                 "component_params")

    def _make(self, name: str) -> Detector:
        params = dict((self.component_params or {}).get(name, {}))
        accepted = single_params(name)
        for key, value in (("seed", self.seed), ("device", self.device)):
            if key in accepted:
                params.setdefault(key, value)
        if name in POOLED_VIEWS:
            params.setdefault("pool_size", VIEW_POOL_SIZE)
        return make_single(name, **params)

    def _fit(self, graphs: GraphSet, on_epoch: Callable[[EpochInfo], None] | None,
             should_stop: Callable[[], bool] | None) -> None:
        if float(self.calibration) > MAX_CALIBRATION_SHARE:  # the plan's rule, for the library's fit too
            raise ParameterError(f"{{calibration}} must be at most {MAX_CALIBRATION_SHARE} to fit a consensus (a "
                                 "larger share holds out more graphs than it leaves to train on), not "
                                 f"{self.calibration}", "calibration")
        if not can_calibrate(len(graphs), self.calibration):  # the plan's rule too: 19 of 20 graphs were held out
            raise GLocalKDError(f"{counted(len(graphs), 'graph')} {'is' if len(graphs) == 1 else 'are'} too few for "
                                "a consensus to hold out a calibration share and fit its views on as many: fit "
                                "GLocalKD, which trains on every graph, or give more graphs")
        fit_idx, cal_idx = calibration_split(len(graphs), self.calibration, self.seed, calibration_groups(graphs))
        fit_graphs, cal_graphs = graphs.subset(fit_idx), graphs.subset(cal_idx)
        # which graphs the views were fitted and calibrated on (graph_key, the same in every process):
        # known anomalies among them have in-sample scores, or are in the calibration
        self.fit_keys_, self.calibration_keys_ = graph_keys(fit_graphs), graph_keys(cal_graphs)
        self.components_, self.component_calibration_ = {}, {}
        self.stopped_early_ = False
        for name in self.views:
            detector = self._make(name)
            detector.fit(fit_graphs, on_epoch=on_epoch if name == "glocalkd" else None, should_stop=should_stop)
            scores = detector.score(cal_graphs).score.astype(np.float64)
            if not np.all(np.isfinite(scores)):
                raise GLocalKDError(f"the {name} component scores some calibration graphs NaN or infinite")
            self.components_[name] = detector
            self.component_calibration_[name] = scores
            self.stopped_early_ |= bool(getattr(detector, "stopped_early_", False))
        glocalkd = self.components_.get("glocalkd")
        self.loss_history_ = list(glocalkd.loss_history_) if glocalkd is not None else []
        self.view_weights_, self.known_anomaly_auc_ = None, None
        self.known_classifier_ = self.weighed_calibration_ = None
        kernel = self._classifier_kernel()
        self.calibration_features_ = kernel.kernel_.transform(kernel.labelled(cal_graphs)) if kernel else None
        # the fit graphs' scores: a view that scored them as it fitted (GLocalKD) is not run over them
        # again (a second GLocalKD pass, part of the wait after a person stops a consensus's training)
        again = [n for n in self.views if not self.components_[n].TRAIN_SCORES_ARE_SCORES]
        rescored = self._component_scores(fit_graphs, views=again) if again else {}
        self.component_train_ = {n: np.asarray(rescored[n].score if n in rescored else self.components_[n].train_scores_,
                                                dtype=np.float64) for n in self.views}
        self._combine_reference_scores()

    def _classifier_kernel(self):
        """The WL kernel the classifier view reads (the first WL view's), or None when there is none
        or the classifier view is off."""
        if not self.known_classifier:
            return None
        for name in CLASSIFIER_FEATURE_VIEWS:
            kernel = getattr(self.components_.get(name), "kernel_", None)
            if getattr(kernel, "kind", None) == "wl":
                return kernel
        return None

    def _combine_reference_scores(self) -> None:
        """The calibration graphs' combined statistics (from leave-one-out p-values) and the fit
        graphs', under the current weights and classifier view."""
        views = self._weighed_views()
        loo = np.column_stack([leave_one_out_p_values(self.component_calibration_[n]) for n in views])
        # at the precision of the scores score() returns (float32), so that a graph tied with a
        # calibration or training graph compares as tied (p-values, percentile thresholds): the
        # combined statistic takes few distinct values, and ties are common
        weighed = _as_scored(combine_p_values(loo, self.rule, self._weights()))
        train = self._combine_arrays(self.component_train_, views)[0]
        classifier = self.known_classifier_
        if classifier is None:
            self.weighed_calibration_ = None
            self.calibration_scores_, self.train_scores_ = weighed, _as_scored(train)
            return
        # the classifier view joins: each calibration graph's weighed statistic against the others',
        # and its decision value against the WL view's training graphs' out-of-fold ones
        self.weighed_calibration_ = weighed
        decisions = classifier.decisions(*self.calibration_features_)
        self.calibration_scores_ = _as_scored(
            fisher_two_statistic(leave_one_out_p_values(weighed), classifier.p_values(decisions)))
        # the training graphs the classifier learnt from (the WL view's pool), by their out-of-fold values
        pool = self.components_[self._classifier_view_name()].pool(len(train))
        train = _as_scored(train if pool is None else train[pool])
        self.train_scores_ = _as_scored(
            fisher_two_statistic(conformal_p_values(weighed, train), classifier.p_values(classifier.reference_)))

    def _classifier_view_name(self) -> str:
        """The name of the WL view whose features the classifier view reads."""
        kernel = self._classifier_kernel() if self.known_classifier_ is None else self.known_classifier_.kernel
        return next(n for n in CLASSIFIER_FEATURE_VIEWS if getattr(self.components_.get(n), "kernel_", None) is kernel)

    def weights_now(self) -> dict[str, float]:
        """Give each view's weight in the consensus now.

        Returns:
            View name -> weight: the known anomalies' weights once they have weighed the views, else
            1 for every component and 0 for every reserve view.
        """
        if self.view_weights_ is not None:
            return dict(self.view_weights_)
        return {name: float(name in self.components) for name in self.views}

    def _weights(self) -> np.ndarray | None:
        """The scored views' weights, in :meth:`scored_views` order (None: equal)."""
        if self.view_weights_ is None:
            return None
        return np.array([self.view_weights_[n] for n in self._weighed_views()], dtype=np.float64)

    def weigh_views(self, known: GraphSet) -> dict[str, float]:
        """Trust each view as far as it ranks known anomalies above the calibration graphs.

        Every view is weighed, the reserve views too. A view's weight is ``max(0, AUC - 0.5)``,
        scaled so that the weights average 1; when no view ranks them above the normal graphs, the
        components weigh the same and the reserve views nothing, as without known anomalies. With
        ``known_classifier`` (the default) and a WL view, the known anomalies also train the
        classifier view, which joins the weighed views by Fisher's rule. The calibration graphs'
        statistics are recomputed with both, so p-values stay calibrated. Calling it again replaces
        the weights and the classifier.

        Args:
            known: graphs known to be anomalous, never trained or calibrated on; at least
                :data:`MIN_KNOWN_ANOMALIES`.

        Returns:
            Each view's ROC-AUC of ``known``, by name.

        Raises:
            GLocalKDError: not fitted, a rule that cannot weigh (``minp``), or a model file written
                before views could be weighed.
            DataError: fewer than :data:`MIN_KNOWN_ANOMALIES` known anomalies, or some that the views
                were fitted or calibrated on (:meth:`seen_graphs`).
        """
        self._check_fitted()
        if self.rule not in WEIGHABLE_RULES:
            raise GLocalKDError(f"the {self.rule} rule cannot weigh its views; use {' or '.join(WEIGHABLE_RULES)}")
        if self.component_train_ is None:
            raise GLocalKDError("this model file was written before views could be weighed: train the model again")
        if len(known) < MIN_KNOWN_ANOMALIES:
            raise DataError(f"weighing the views needs at least {MIN_KNOWN_ANOMALIES} known anomalies, "
                            f"not {len(known)}", known.source)
        seen = self.seen_graphs(known)
        if len(seen):  # their scores are in-sample: 10 fit graphs weighed WL-LESINN at an AUC of 0.09
            raise DataError(f"{len(seen):,} of the {len(known):,} known anomalies (the first: {known.meta[seen[0]].id}) "
                            "are graphs this model was trained or calibrated on as normal, so their scores say "
                            "nothing of how the views rank anomalies: give anomalies it has not seen", known.source)
        scores = self._component_scores(known, views=self.views)
        auc = {name: separation_auc(self.component_calibration_[name], scores[name].score) for name in self.views}
        self.known_anomaly_auc_ = auc
        self.view_weights_ = view_weights(auc)
        self.known_classifier_ = None
        kernel = self._classifier_kernel()
        if kernel is not None and self.calibration_features_ is not None:
            self.known_classifier_ = KnownClassifier(kernel).fit(*kernel.kernel_.transform(kernel.labelled(known)))
        self._combine_reference_scores()
        return dict(auc)

    def seen_graphs(self, graphs: GraphSet) -> np.ndarray:
        """Which of ``graphs`` the views were fitted or calibrated on (by :func:`graph_key`).

        Args:
            graphs: the graphs asked about.

        Returns:
            Their positions, in order; none for a model file written before the graphs' keys were kept.
        """
        self._check_fitted()
        if self.fit_keys_ is None or self.calibration_keys_ is None or not len(graphs):
            return np.zeros(0, dtype=np.int64)
        keys = graph_keys(graphs)
        return np.flatnonzero(np.isin(keys, self.fit_keys_) | np.isin(keys, self.calibration_keys_))

    def molecule_views(self) -> dict[str, Detector]:
        """Give the scored views that score molecules from their atoms, bonds and counts alone.

        Screening's parsing workers score these (WL-LESINN and graph size by default; the reserve
        views too once known anomalies weigh them), so that the scoring process only runs the
        GLocalKD view and combines the p-values. The scores are those :meth:`score` combines.

        Returns:
            View name -> fitted view, for each scored view that has ``score_molecules``.

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        views = {name: self.view(name) for name in self.scored_views()}
        return {name: view for name, view in views.items()
                if hasattr(view, "score_molecules") and view.molecule_views()}

    def _component_scores(self, graphs: GraphSet, on_progress: Callable[[int, int], None] | None = None,
                          known: dict[str, Scores] | None = None, views: list[str] | None = None) -> dict[str, Scores]:
        """Each view's scores of ``graphs`` (``views``: the scored views by default)."""
        known = known or {}
        views = self.scored_views() if views is None else views
        out = {}
        with shared_transforms():  # the WL views and the classifier read the same WL features
            for k, name in enumerate(views):
                out[name] = known[name] if name in known else self._view(name).score(graphs)
                if on_progress is not None:
                    on_progress(round(len(graphs) * (k + 1) / len(views)), len(graphs))
        return out

    def _combine(self, scores: dict[str, Scores]) -> tuple[np.ndarray, np.ndarray]:
        """The combined statistic and the components' p-values (n, m)."""
        return self._combine_arrays({n: s.score for n, s in scores.items()})

    def _combine_arrays(self, scores: dict[str, np.ndarray],
                        views: list[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The combined statistic and the weighed views' p-values (n, m); with the classifier view
        (``views`` None and one trained), Fisher's rule over the weighed statistic's p-value and its."""
        weighed = self._weighed_views() if views is None else views
        p = np.column_stack([conformal_p_values(self.component_calibration_[n], scores[n]) for n in weighed])
        statistic = combine_p_values(p, self.rule, self._weights())
        if views is None and self.known_classifier_ is not None:
            statistic = fisher_two_statistic(conformal_p_values(self.weighed_calibration_, _as_scored(statistic)),
                                             self.known_classifier_.p_values(scores[CLASSIFIER_VIEW]))
        return statistic, p

    def component_p_values(self, graphs: GraphSet) -> dict[str, np.ndarray]:
        """Give each scored view's conformal p-values of ``graphs``.

        Args:
            graphs: the graphs.

        Returns:
            View name -> p-values, shape (graphs,).

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        scores = self._component_scores(graphs)
        _, p = self._combine(scores)
        out = {name: p[:, k] for k, name in enumerate(self._weighed_views())}
        if self.known_classifier_ is not None:
            out[CLASSIFIER_VIEW] = self.known_classifier_.p_values(scores[CLASSIFIER_VIEW].score)
        return out

    def view_scores(self, graphs: GraphSet, scores: Scores | None = None) -> dict[str, np.ndarray]:
        """Give every view's raw score of ``graphs``, the reserve views' too (a report's ``view:`` columns).

        Args:
            graphs: the graphs.
            scores: this consensus's :meth:`score` of ``graphs``, whose views' scores are reused
                (None: every view scores the graphs here).

        Returns:
            View name -> float32 scores, in :attr:`views` order, then the classifier view's when known
            anomalies trained one, each as the view's own ``score`` gives them.

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        known = scores.component_scores() if scores is not None else {}
        with shared_transforms():
            return {name: np.asarray(known[name] if name in known else self._view(name).score(graphs).score,
                                     dtype=np.float32) for name in self.reported_views()}

    def component_scores(self, graphs: GraphSet) -> dict[str, np.ndarray]:
        """Give each scored view's own score of ``graphs``, to set its ranking beside the consensus's.

        The scores of :meth:`score` carry the same arrays (``Scores.component_scores()``).

        Args:
            graphs: the graphs.

        Returns:
            View name -> scores (higher = more anomalous), shape (graphs,).

        Raises:
            GLocalKDError: not fitted.
        """
        return self.score(graphs).component_scores()

    def score(self, graphs: GraphSet, on_progress: Callable[[int, int], None] | None = None, *,
              known: dict[str, Scores] | None = None) -> Scores:
        """Score graphs by the combined statistic of the views' p-values (higher = more anomalous).

        GLocalKD's terms and node errors come along when it is a component, and each view's raw
        score is in ``parts`` as ``component:NAME`` (read them with ``Scores.component_scores()``).

        Args:
            graphs: the graphs to score.
            on_progress: called as ``on_progress(done, total)`` after each view, ``done`` the share
                of views scored times the graph count.
            known: the scores some views already gave these graphs (screening scores the GLocalKD
                component on its faster array path), used as they are.

        Returns:
            The graphs' :class:`Scores`.

        Raises:
            GLocalKDError: not fitted, or a view fails to score.
        """
        self._check_fitted()
        return self.combine_scores(self._component_scores(graphs, on_progress, known), graphs.node_ptr())

    def combine_scores(self, scores: dict[str, Scores], node_ptr: np.ndarray) -> Scores:
        """Combine the views' scores of the same graphs: what :meth:`score` returns.

        Screening scores each view of a chunk on its own fast path and combines them here.

        Args:
            scores: every scored view's :class:`Scores` of the graphs, by name.
            node_ptr: node offsets of the graphs, shape (graphs + 1,), for graph-only scores.

        Returns:
            The combined statistic as float32 scores, with the GLocalKD view's terms and node errors
            when it has one, and each view's score in ``parts``.

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        combined, p = self._combine(scores)
        base = scores.get("glocalkd")
        if base is None:
            out = Scores.graph_only(combined, node_ptr)
        else:
            out = Scores(combined.astype(np.float32), base.graph_term, base.node_term, base.node_errors,
                         base.node_ptr)
        out.parts = {f"{COMPONENT_PREFIX}{n}": np.asarray(s.score, dtype=np.float32) for n, s in scores.items()}
        if self.known_classifier_ is not None:  # what the weighed views alone say, before the classifier joins
            out.parts[WEIGHED_VIEWS_PART] = combine_p_values(p, self.rule, self._weights()).astype(np.float32)
        return out

    @property
    def can_save(self) -> bool:
        """Whether it has a model file: when every component (fitted, or to be made) has one."""
        if hasattr(self, "components_"):
            return all(d.can_save for d in self.components_.values())
        return all(self._make(n).can_save for n in self.components)

    def fitted_state(self) -> dict:
        """Give every view's settings, state and calibration, and the consensus's own state.

        Returns:
            ``{"components", "component_calibration", "calibration", "component_train",
            "train_scores", "loss_history", "stopped_early", "view_weights", "known_anomaly_auc",
            "calibration_features", "known_classifier", "weighed_calibration", "fit_keys",
            "calibration_keys"}``.

        Raises:
            GLocalKDError: not fitted, or a view that cannot be saved.
        """
        self._check_fitted()
        return {"components": {n: {"params": d.get_params(), "state": d.fitted_state(),
                                   "calibration": d.calibration_scores_ if d.is_calibrated else None}
                               for n, d in self.components_.items()},
                "component_calibration": self.component_calibration_, "calibration": self.calibration_scores_,
                "component_train": self.component_train_, "train_scores": self.train_scores_,
                "loss_history": list(self.loss_history_), "stopped_early": bool(self.stopped_early_),
                "view_weights": self.view_weights_, "known_anomaly_auc": self.known_anomaly_auc_,
                "calibration_features": _csr_state(self.calibration_features_),
                "known_classifier": None if self.known_classifier_ is None else self.known_classifier_.fitted_state(),
                "weighed_calibration": self.weighed_calibration_,
                "fit_keys": self.fit_keys_, "calibration_keys": self.calibration_keys_}

    def restore_fitted_state(self, state: dict, device: str = "auto") -> None:
        """Rebuild every view from :meth:`fitted_state`'s values.

        Reserve views missing from an older file are dropped; a file written before views could be
        weighed restores without the fit graphs' scores (then :meth:`weigh_views` refuses).

        Args:
            state: the values :meth:`fitted_state` gave.
            device: where the views with networks run.

        Raises:
            ValueError: the saved views are not the model's.
        """
        saved = set(state["components"])
        self.reserve_views = [v for v in self.reserve_views if v in saved]  # older files have none
        if saved != set(self.views):
            raise ValueError("the saved components are not the model's components")
        self.components_ = {}
        for name in self.views:
            saved = state["components"][name]
            params = {k: v for k, v in saved["params"].items() if k in single_params(name)}
            if "device" in params:
                params["device"] = device
            component = make_single(name, **params)
            component.restore_fitted_state(saved["state"], device)
            if saved.get("calibration") is not None:
                component.calibration_scores_ = np.asarray(saved["calibration"], dtype=np.float64)
            self.components_[name] = component
        self.component_calibration_ = {n: np.asarray(state["component_calibration"][n], dtype=np.float64)
                                       for n in self.views}
        self.calibration_scores_ = np.asarray(state["calibration"], dtype=np.float64)
        self.train_scores_ = np.asarray(state["train_scores"])
        self.loss_history_ = list(state["loss_history"])
        self.stopped_early_ = bool(state["stopped_early"])
        # model files written before views could be weighed have neither
        train = state.get("component_train")
        self.component_train_ = None if train is None else {n: np.asarray(train[n], dtype=np.float64)
                                                            for n in self.views}
        self._check_reference_lengths()
        weights, auc = state.get("view_weights"), state.get("known_anomaly_auc")
        self.view_weights_ = None if weights is None else {n: float(weights[n]) for n in self.views}
        self.known_anomaly_auc_ = None if auc is None else {n: float(auc[n]) for n in self.views}
        # model files written before the classifier view have none of these
        kernel = self._classifier_kernel()
        features = state.get("calibration_features")
        self.calibration_features_ = None
        if kernel is not None and features is not None:
            n_calibration = len(self.component_calibration_[self.views[0]])
            squares = np.asarray(features["squares"], dtype=np.float64)
            if len(squares) != n_calibration:
                raise ValueError("the calibration graphs' WL features do not match the calibration graphs")
            matrix = csr_from_state(features["features"], (n_calibration, kernel.kernel_.n_columns_))
            self.calibration_features_ = (matrix.astype(np.float64), squares)
        classifier = state.get("known_classifier")
        self.known_classifier_ = None
        if classifier is not None:
            if kernel is None:
                raise ValueError("the model file has a classifier view but no WL view to read graphs with")
            self.known_classifier_ = KnownClassifier(kernel)
            self.known_classifier_.restore_fitted_state(classifier)
        weighed = state.get("weighed_calibration")
        self.weighed_calibration_ = None if weighed is None else np.asarray(weighed, dtype=np.float64)
        # model files written before the graphs' keys were kept have none: their graphs are not known
        self.fit_keys_, self.calibration_keys_ = None, None
        fit_keys, calibration_keys = state.get("fit_keys"), state.get("calibration_keys")
        if fit_keys is not None and calibration_keys is not None:
            self.fit_keys_ = np.asarray(fit_keys, dtype=np.int64).reshape(-1)
            self.calibration_keys_ = np.asarray(calibration_keys, dtype=np.int64).reshape(-1)
            if len(self.calibration_keys_) != len(self.calibration_scores_) or \
                    len(self.fit_keys_) != len(self.train_scores_):
                raise ValueError("the graphs' keys are not one per fit and calibration graph")

    def _check_reference_lengths(self) -> None:
        """Each view holds one score per calibration graph and one per fit graph, as many as the
        combined statistic's: a file whose arrays disagree gave p-values from mismatched graphs."""
        lengths = {len(s) for s in self.component_calibration_.values()} | {len(self.calibration_scores_)}
        if len(lengths) > 1:
            raise ValueError(f"the views' calibration scores are of {sorted(lengths)} graphs, not of one set")
        if self.component_train_ is not None:
            lengths = {len(s) for s in self.component_train_.values()} | {len(self.train_scores_)}
            if len(lengths) > 1:
                raise ValueError(f"the views' scores of the fit graphs are of {sorted(lengths)} graphs, not of one set")

    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor") -> np.ndarray:
        """Give the first component's representation (GLocalKD's embeddings by default).

        Args:
            graphs: the graphs.
            network: passed to the first component (GLocalKD's ``predictor``, ``target`` or
                ``difference``).

        Returns:
            One row per graph.

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        return self.components_[self.components[0]].graph_embeddings(graphs, network)
