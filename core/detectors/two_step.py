"""Two-step detectors: a graph kernel's representation, then a shallow anomaly detector.

The GLocalKD paper's WL-iForest, WL-LESINN, PK-iForest and PK-LESINN baselines. The kernel
is fitted on the training graphs; a graph is represented by its kernel values against them
(the empirical kernel map), which is what iForest isolates; LESINN uses the kernel's own
feature-space distance (``sqrt(2 - 2k)`` for the normalised kernels). Both see exactly the
kernel's information, and a new graph is scored without refitting anything. Graph scores
only: no per-node scores. ``pool_size`` bounds the fit graphs a new graph is compared with (the
consensus's WL views use 2,048), so that scoring costs the same however many graphs the model
was trained on. ``normalize=False`` keeps the raw WL counts: WL-count-LESINN, a view
that also sees a graph's size (docs/consensus.md).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.detectors.base import GraphLevelDetector, is_count
from core.errors import GLocalKDError
from core.detectors.graph_kernels import GraphKernel, LabelledMoleculeView, labelled_graphs
from core.data.graphset import GraphSet
from core.detectors.lesinn import LESINN

# graphs x training graphs per block of scoring: 4M float64 values, 32 MB per dense matrix (each
# parsing worker holds one while it scores a consensus's WL views)
KERNEL_BLOCK_VALUES = 4_000_000

SCORERS = ("iforest", "lesinn")
POOL_STREAM = 0x9E3779B9  # the pool's draw: a random stream of its own, apart from the scorer's


class TwoStepDetector(LabelledMoleculeView, GraphLevelDetector):
    """A graph kernel's representation, then a shallow anomaly detector (iForest or LESINN).

    The registry names each combination (``wl-iforest``, ``pk-lesinn``, ``wl-count-lesinn``, ...),
    which fixes ``kernel``, ``scorer`` and ``normalize``. Fitted state: ``kernel_``, ``scorer_``,
    ``train_scores_``.

    Args:
        kernel: ``wl`` (Weisfeiler-Lehman subtree) or ``pk`` (propagation kernel).
        scorer: ``iforest`` or ``lesinn``.
        wl_iterations: the kernel's iterations.
        n_estimators: iForest's trees (the paper: 100). Its contamination of 0.1 only moves
            iForest's own cut-off, never the scores, so it is not a setting.
        max_samples: iForest's subsample per tree (the paper: 256; capped by the training size).
        ensemble_size: LESINN's members (the paper: 256).
        subsample_size: LESINN's graphs per member (the paper: 256).
        seed: the seed of the kernel's hashing and the scorer.
        normalize: the kernel cosine-normalised (the paper's baselines), else raw feature
            products (WL counts, which see a graph's size too).
        pool_size: when there are more fit graphs, the kernel and the scorer are fitted on this
            many of them, drawn at random with ``seed``, and the others are scored as new graphs;
            None (the paper's baselines) keeps them all. A LESINN member is a uniform random draw
            of the fit graphs either way; the pool bounds what scoring a graph costs.
    """

    has_node_scores = False

    def __init__(self, kernel: str = "wl", scorer: str = "iforest", wl_iterations: int = 3,
                 n_estimators: int = 100, max_samples: int = 256, ensemble_size: int = 256,
                 subsample_size: int = 256, seed: int = 0, normalize: bool = True, pool_size: int | None = None):
        self.kernel = kernel
        self.scorer = scorer
        self.wl_iterations = wl_iterations
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.ensemble_size = ensemble_size
        self.subsample_size = subsample_size
        self.seed = seed
        self.normalize = normalize
        self.pool_size = pool_size

    @property
    def name(self) -> str:
        """The registry name: ``kernel-scorer``, or ``kernel-count-scorer`` without normalisation."""
        return f"{self.kernel}-{self.scorer}" if self.normalize else f"{self.kernel}-count-{self.scorer}"

    FITTED = ("kernel_", "scorer_", "train_scores_", "loss_history_", "stopped_early_")

    def validate_params(self) -> None:
        """Check that ``scorer`` is ``iforest`` or ``lesinn`` and ``pool_size`` None or positive.

        Raises:
            ParameterError: another scorer, or a pool of no graphs (:meth:`check_settings`).
        """
        self.check_settings({"scorer": (self.scorer in SCORERS, "one of " + ", ".join(SCORERS)),
                             "pool_size": (self.pool_size is None or is_count(self.pool_size),
                                           "a whole number of graphs of at least 1, or None")})

    def pool(self, n: int) -> np.ndarray | None:
        """Choose the fit graphs the kernel and the scorer are fitted on.

        Args:
            n: the number of fit graphs.

        Returns:
            ``pool_size`` sorted indices drawn at random with ``seed``; None (all of them) when there
            are no more than ``pool_size`` or ``pool_size`` is None.
        """
        if self.pool_size is None or n <= int(self.pool_size):
            return None
        rng = np.random.default_rng([int(self.seed), POOL_STREAM])
        return np.sort(rng.choice(n, int(self.pool_size), replace=False))

    def _fit(self, graphs: GraphSet, on_epoch: Callable | None = None,
             should_stop: Callable[[], bool] | None = None) -> None:
        """Fit the kernel and the scorer (on the pool, when there is one); there are no epochs, so
        ``on_epoch`` and ``should_stop`` are not called."""
        pool = self.pool(len(graphs))
        self.kernel_ = GraphKernel(self.kernel, self.wl_iterations, self.seed, self.normalize)
        k_train = self.kernel_.fit(graphs if pool is None else graphs.subset(pool.tolist()))
        if self.scorer == "iforest":
            from sklearn.ensemble import IsolationForest  # here: importing scikit-learn costs about a second

            self.scorer_ = IsolationForest(n_estimators=self.n_estimators, max_samples=min(self.max_samples,
                                           len(graphs)), random_state=self.seed).fit(k_train)
            self.train_scores_ = -self.scorer_.score_samples(k_train)
        else:
            self.scorer_ = LESINN(self.ensemble_size, self.subsample_size, metric="precomputed",
                                  seed=self.seed).fit(self.kernel_.distances(k_train, self.kernel_.train_squares_,
                                                                             overwrite=True))
            self.train_scores_ = self.scorer_.train_scores_
        self.loss_history_: list[float] = []
        self.stopped_early_ = False
        if pool is not None:  # the pool's graphs as fitted, the others as any new graph
            scores = np.empty(len(graphs))
            rest = np.setdiff1d(np.arange(len(graphs)), pool)
            scores[pool] = self.train_scores_
            scores[rest] = self.score_labelled(labelled_graphs(graphs.subset(rest.tolist())))
            self.train_scores_ = scores

    def label_coding_fitted(self) -> dict | None:
        """Give the fitted graphs' label coding, as its kernel recorded it.

        Returns:
            The coding (:func:`core.detectors.graph_kernels.label_coding`), or None when not
            fitted or not recorded (an older model file).
        """
        return getattr(getattr(self, "kernel_", None), "coding_", None)

    @property
    def can_save(self) -> bool:
        """Whether it has a model file: LESINN ones do; scikit-learn's isolation forest has no safe format."""
        return self.scorer == "lesinn"  # scikit-learn's isolation forest has no safe file format

    def fitted_state(self) -> dict:
        """Give the kernel's and the LESINN scorer's state and the training scores, for a model file.

        Only LESINN detectors can be saved: scikit-learn's isolation forest has no safe file format.

        Returns:
            ``{"kernel", "scorer", "train_scores"}``.

        Raises:
            GLocalKDError: the detector is not trained, or its scorer is iForest.
        """
        self._check_fitted()
        if self.scorer != "lesinn":
            raise GLocalKDError(f"{self.name} models cannot be saved (scikit-learn's isolation forest has no "
                                "safe file format); LESINN ones can")
        return {"kernel": self.kernel_.fitted_state(), "scorer": self.scorer_.fitted_state(),
                "train_scores": self.train_scores_}

    def restore_fitted_state(self, state: dict, device: str = "auto") -> None:
        """Rebuild the kernel and the LESINN scorer from :meth:`fitted_state`'s values.

        Args:
            state: the values :meth:`fitted_state` gave.
            device: unused (no network).

        Raises:
            GLocalKDError: the scorer is iForest.
            ValueError: the kernel and the scorer saw different training graphs.
        """
        if self.scorer != "lesinn":
            raise GLocalKDError(f"{self.name} models cannot be loaded")
        self.kernel_ = GraphKernel(self.kernel, self.wl_iterations, self.seed, self.normalize)
        self.kernel_.restore_fitted_state(state["kernel"])
        self.scorer_ = LESINN(self.ensemble_size, self.subsample_size, metric="precomputed", seed=self.seed)
        self.scorer_.restore_fitted_state(state["scorer"])
        if self.scorer_.n_train_ != self.kernel_.n_train_:
            raise ValueError("the kernel and the scorer saw different training graphs")
        self.train_scores_ = np.asarray(state["train_scores"])
        self.loss_history_, self.stopped_early_ = [], False

    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor") -> np.ndarray:
        """Give each graph's kernel values against the training graphs (the representation scored).

        Args:
            graphs: the graphs.
            network: ignored: there is one representation.

        Returns:
            Shape (graphs, training graphs), float32.

        Raises:
            GLocalKDError: the detector is not trained.
        """
        self._check_fitted()
        return self.kernel_.transform(graphs).astype(np.float32)

    def graph_scores(self, graphs: GraphSet) -> np.ndarray:
        """Score graphs by the scorer on their kernel values (higher = more anomalous).

        Args:
            graphs: the graphs to score.

        Returns:
            One score per graph.
        """
        return self.score_labelled(self.kernel_.labelled(graphs))

    def score_labelled(self, labelled: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Score graphs given as (edge index, node labels) pairs: screening's path.

        With the WL kernel the graphs are scored a block at a time, so that their dense kernel
        against the training graphs stays near ``KERNEL_BLOCK_VALUES`` values: a graph's WL features
        are its own. (The propagation kernel's hashing depends on the graphs transformed together, so
        PK scores every graph given at once.)

        Args:
            labelled: the graphs, as :func:`core.detectors.graph_kernels.labelled_molecules` or
                :func:`core.detectors.graph_kernels.labelled_graphs` make them.

        Returns:
            The scores, shape (graphs,).

        Raises:
            GLocalKDError: the detector is not trained.
        """
        self._check_fitted()
        if self.kernel != "wl":
            return self._scores(labelled)
        if len(labelled) == 0:
            return np.zeros(0)
        # the features of all graphs at once (the same as block by block: a graph's are its own), so
        # that the other views of the same vocabulary reuse them (core.detectors.wl_features.shared_transforms)
        features, squares = self.kernel_.features_labelled(labelled)
        step = max(1, KERNEL_BLOCK_VALUES // max(1, self.kernel_.n_train_))
        return np.concatenate([self._scores_of_features(features[lo:lo + step], squares[lo:lo + step])
                               for lo in range(0, len(labelled), step)])

    def _scores_of_features(self, features, squares: np.ndarray) -> np.ndarray:
        """Scores of graphs from their WL feature rows (:meth:`_scores`'s values)."""
        if self.scorer == "iforest":
            return -self.scorer_.score_samples(self.kernel_.kernel_of_features(features, squares))
        return self.scorer_.decision_function(self.kernel_.kernel_of_features(features, squares, distances=True))

    def _scores(self, labelled: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Scores of graphs from their kernel values (iForest) or distances (LESINN) against
        the training graphs."""
        if len(labelled) == 0:
            return np.zeros(0)
        if self.scorer == "iforest":
            return -self.scorer_.score_samples(self.kernel_.transform_labelled(labelled))
        return self.scorer_.decision_function(self.kernel_.distances_labelled(labelled))
