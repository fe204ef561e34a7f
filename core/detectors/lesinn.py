"""LESINN: an ensemble of nearest-neighbour distances over small random subsamples.

Pang, Ting and Albrecht, "LeSiNN: detecting anomalies by identifying least similar nearest
neighbours" (ICDM workshops 2015), the detector the GLocalKD paper pairs with graph kernels
and InfoGraph. Each of ``ensemble_size`` members draws ``subsample_size`` training points
at random; a point's score is its distance to the nearest member point, averaged over the
members. Far from every small sample of the normal data = anomalous. Higher is more
anomalous, as in PyOD. The paper's setting is 256 members of 256 points.
"""
from __future__ import annotations

import math

import numpy as np

from core.errors import GLocalKDError

# Distances scored per tile of rows (see LESINN._score): 256 rows of 1,600 training points.
ROW_TILE_VALUES = 409_600


class LESINN:
    """LESINN on feature vectors or on precomputed distances: the scorer of the two-step and view detectors.

    Fitted state: ``members_`` (each member's training indices), ``used_`` (the training points any
    member uses, sorted), ``n_train_``, ``train_`` (the used points' vectors; None for precomputed
    distances) and ``train_scores_``.

    Args:
        ensemble_size: members (the paper: 256).
        subsample_size: training points per member (the paper: 256; capped by the training size).
        metric: any scikit-learn metric, or ``precomputed``: then ``fit`` takes the (n, n) training
            distances and ``decision_function`` the (m, n) distances to the training points.
        seed: the seed of the members' draws.
    """

    def __init__(self, ensemble_size: int = 256, subsample_size: int = 256, metric: str = "euclidean",
                 seed: int = 0):
        self.ensemble_size = ensemble_size
        self.subsample_size = subsample_size
        self.metric = metric
        self.seed = seed

    def fit(self, X: np.ndarray) -> LESINN:
        """Draw the members' subsamples from the training points and score the training points.

        A training point is not its own nearest neighbour when it is scored.

        Args:
            X: the ``n`` training points as rows, or their (n, n) distances for ``precomputed``.

        Returns:
            ``self``, fitted.

        Raises:
            GLocalKDError: no members or an empty subsample, no training points, or precomputed
                distances that are not square.
        """
        if self.ensemble_size < 1 or self.subsample_size < 1:
            raise GLocalKDError("LESINN needs at least one member of at least one point")
        X = np.asarray(X)
        n = X.shape[0]
        if n == 0:
            raise GLocalKDError("LESINN needs training points")
        if self.metric == "precomputed" and X.shape != (n, n):
            raise GLocalKDError(f"precomputed training distances must be square, not {X.shape}")
        rng = np.random.default_rng(self.seed)
        self._columns_cache = None
        size = min(self.subsample_size, n)
        self.members_ = np.stack([rng.choice(n, size, replace=False) for _ in range(self.ensemble_size)])
        self.used_ = np.unique(self.members_)  # the training points any member uses
        self.n_train_ = n
        self.train_ = None if self.metric == "precomputed" else X[self.used_]
        train_d = X[:, self.used_] if self.metric == "precomputed" else self._distances(X)
        self.train_scores_ = self._score(train_d, exclude=np.arange(n))
        return self

    def fitted_state(self) -> dict:
        """Give the fitted state as plain values for a model file.

        Returns:
            ``{"members", "used", "n_train", "train_scores"}``, and ``"train"`` (the used
            training points' vectors) unless the distances are precomputed.

        Raises:
            GLocalKDError: not fitted.
        """
        if not hasattr(self, "members_"):
            raise GLocalKDError("LESINN is not fitted yet")
        state = {"members": self.members_, "used": self.used_, "n_train": self.n_train_,
                 "train_scores": self.train_scores_}
        return state if self.metric == "precomputed" else state | {"train": self.train_}

    def restore_fitted_state(self, state: dict) -> None:
        """Set the fitted state from :meth:`fitted_state`'s values, checking them.

        Args:
            state: the values :meth:`fitted_state` gave.

        Raises:
            ValueError: the members are not a 2-D array of used training points within range, or
                (unless the distances are precomputed) there is not one training vector per used point.
        """
        self._columns_cache = None
        self.members_ = np.asarray(state["members"], dtype=np.int64)
        self.used_ = np.asarray(state["used"], dtype=np.int64)
        self.n_train_ = int(state["n_train"])
        self.train_scores_ = np.asarray(state["train_scores"])
        self.train_ = None if self.metric == "precomputed" else np.asarray(state.get("train"), dtype=np.float64)
        if self.members_.ndim != 2 or not np.isin(self.members_, self.used_).all() or \
                (len(self.used_) and not 0 <= self.used_.min() <= self.used_.max() < self.n_train_):
            raise ValueError("LESINN's members do not match its training points")
        if self.train_ is not None and (self.train_.ndim != 2 or len(self.train_) != len(self.used_)):
            raise ValueError("LESINN needs one training vector per used point")

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """Score points: the mean distance to the nearest point of each member's subsample (higher = more anomalous).

        Args:
            X: the points as rows, or for ``precomputed`` their (m, n) distances to all the training
                points.

        Returns:
            The scores, shape (m,).

        Raises:
            GLocalKDError: not fitted, or precomputed distances without ``n_train_`` columns.
        """
        if not hasattr(self, "members_"):
            raise GLocalKDError("LESINN is not fitted yet")
        X = np.asarray(X)
        if self.metric == "precomputed":
            if X.ndim != 2 or X.shape[1] != self.n_train_:
                raise GLocalKDError(f"precomputed distances need {self.n_train_} columns, not {X.shape}")
            return self._score(X if len(self.used_) == self.n_train_ else X[:, self.used_])
        return self._score(self._distances(X))

    def _distances(self, X: np.ndarray) -> np.ndarray:
        """Distances from the rows of X to the used training points. Euclidean ones pair by pair
        (scipy's cdist), not by the dot-product expansion that scikit-learn computes with BLAS: the
        expansion rounds a pair's distance differently with the number of rows beside it (an exact
        duplicate of a training point came out 0 or 1e-7), and a graph's score must not depend on
        the batch it is scored with."""
        if self.metric == "euclidean":
            from scipy.spatial.distance import cdist

            return cdist(np.asarray(X, dtype=np.float64), np.asarray(self.train_, dtype=np.float64), "euclidean")
        from sklearn.metrics import pairwise_distances  # here: precomputed distances (a saved model) never need it

        return pairwise_distances(X, self.train_, metric=self.metric)

    def _columns(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The members' points as columns of the distances to the used points, and
        :func:`membership` of them: the same for every block a fitted scorer scores, so made once."""
        cached = getattr(self, "_columns_cache", None)
        if cached is None or cached[0] != n:
            position = np.searchsorted(self.used_, self.members_)
            cached = (n, position, membership(position, n))
            self._columns_cache = cached
        return cached[1], cached[2]

    def __getstate__(self) -> dict:
        """Pickled (to screening's workers, a cluster) without the columns' cache: it is remade there."""
        return {**self.__dict__, "_columns_cache": None}

    def _score(self, d_used: np.ndarray, exclude: np.ndarray | None = None) -> np.ndarray:
        """``d_used``: distances to the used training points. ``exclude[i]`` is the training index
        of row i itself (a training point is not its own nearest neighbour), or None."""
        d = np.asarray(d_used, dtype=np.float64)  # copied below only if it is written to
        if exclude is not None:
            d = d.copy()
            col = np.searchsorted(self.used_, exclude)
            hit = (col < len(self.used_)) & (self.used_[np.minimum(col, len(self.used_) - 1)] == exclude)
            d[np.flatnonzero(hit), col[hit]] = np.inf
        position, member_of = self._columns(d.shape[1])
        total = np.zeros(d.shape[0])
        # Rows a tile at a time, so that a tile's distances stay in the cache (gathering a
        # member's scattered columns from thousands of rows at once was 5-20x slower per row).
        step = max(1, ROW_TILE_VALUES // max(1, d.shape[1]))
        for lo in range(0, d.shape[0], step):
            nearest = member_nearest(d[lo:lo + step], position, member_of)
            # a one-point member holding the point itself has no other neighbour: count it as 0
            nearest = np.where(np.isfinite(nearest), nearest, 0.0)
            # summed member by member, in the members' order: a running sum (cumsum is sequential,
            # unlike sum's pairwise order), so the scores stay bit for bit what they were
            total[lo:lo + step] += np.cumsum(nearest, axis=1)[:, -1]
        return total / len(position)


def membership(position: np.ndarray, n: int) -> np.ndarray:
    """Mark which distance columns belong to which member.

    Args:
        position: (members, subsample) column numbers of each member's points.
        n: the number of columns.

    Returns:
        (n, members) uint8: 1 where column j is one of member m's points, else 0.
    """
    member_of = np.zeros((n, len(position)), dtype=np.uint8)
    member_of[position, np.arange(len(position))[:, None]] = 1
    return member_of


def member_nearest(d: np.ndarray, position: np.ndarray, member_of: np.ndarray | None = None) -> np.ndarray:
    """Find each row's smallest distance to a point of each member, looking only at its nearest columns.

    The direct way gathers every member's columns (members x subsample values a row). Here only
    each row's ``k`` nearest columns are looked at: a member's nearest point is its first point
    among them in order of distance, and with ``k = n / subsample (ln members + 5)`` a member has
    no point among them with probability below e^-5 / members; a row where some member has none
    takes the direct way. The values are exactly the direct way's (a nearest distance is one of
    the row's own values): 25-30 against 117-120 µs a row for 1,600 training graphs and 256
    members of 256 points.

    Args:
        d: distances, shape (rows, n columns).
        position: (members, subsample): ``position[m]`` are member m's columns of ``d``.
        member_of: :func:`membership` of ``position`` (made here if not given; a caller scoring
            many tiles makes it once).

    Returns:
        Shape (rows, members): each row's nearest distance within each member.
    """
    members, size = position.shape
    n = d.shape[1]
    k = min(n, math.ceil(n / size * (math.log(members) + 5)))
    candidates = np.argpartition(d, k - 1, axis=1)[:, :k]
    distances = np.take_along_axis(d, candidates, axis=1)
    order = np.argsort(distances, axis=1)
    candidates = np.take_along_axis(candidates, order, axis=1)
    distances = np.take_along_axis(distances, order, axis=1)
    if member_of is None:
        member_of = membership(position, n)
    hits = member_of[candidates]  # (rows, k, members): 1 where the row's i-th nearest column is in member m
    if k > 255:
        hits = hits.astype(np.uint16 if k < 65536 else np.int64)
    # each member's first column in order of distance i is where k - i is largest among its columns
    # (0: none of them): a max over the k candidates, contiguous in the members (an argmax over that
    # axis took three times as long)
    np.multiply(hits, (k - np.arange(k)).astype(hits.dtype)[None, :, None], out=hits)
    top = hits.max(axis=1)
    first = np.minimum(k - top.astype(np.int64), k - 1)
    nearest = np.take_along_axis(distances, first, axis=1)
    uncovered = ~(top > 0).all(axis=1)
    rows = np.flatnonzero(uncovered)  # a few a tile: each takes (members, subsample) values at once
    group = max(1, ROW_TILE_VALUES // max(1, position.size))
    for lo in range(0, len(rows), group):
        some = rows[lo:lo + group]
        nearest[some] = d[some][:, position].min(axis=2)
    return nearest
