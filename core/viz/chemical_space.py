"""Chemical-space maps: 2-D coordinates of graphs from the model's graph embeddings.

Like the paper's Figure 2 (t-SNE of the random target's and the trained predictor's
graph embeddings), a map shows whether high scorers are lone outliers, a small unusual
cluster, or the edge of a normal cluster.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import GLocalKDError
from core.data.graphset import GraphSet

SPACES = ("predictor", "target", "difference")
METHODS = ("tsne", "pca")
TSNE_MAX_POINTS = 5000


@dataclass
class SpaceMap:
    """A chemical-space map: 2-D positions of graphs and how they were made.

    Attributes:
        coords: positions, shape (points, 2); ``coords[k]`` is where graph ``indices[k]`` sits.
        indices: the graph indices mapped, shape (points,); a subsample for t-SNE of many graphs.
        method: ``tsne`` or ``pca``.
        space: the embedding space mapped (one of ``SPACES``).
        note: says how the map was made (method, how many graphs, which representation), for the view.
    """

    coords: np.ndarray
    indices: np.ndarray
    method: str
    space: str
    note: str


def project(embeddings: np.ndarray, method: str = "tsne", seed: int = 0,
            max_points: int = TSNE_MAX_POINTS) -> tuple[np.ndarray, np.ndarray, str]:
    """Project embedding rows to 2-D coordinates for a map.

    The rows are standardised per column first. t-SNE (scikit-learn, PCA initialisation; wider
    rows are first reduced to 50 PCA components) runs on at most ``max_points`` rows, a seeded
    random subsample beyond that; PCA maps every row.

    Args:
        embeddings: one row per graph, shape (graphs, features).
        method: ``tsne`` (default) or ``pca``.
        seed: the seed of the subsample, PCA and t-SNE.
        max_points: the most rows t-SNE maps.

    Returns:
        ``(coords, indices, note)``: positions, shape (points, 2); the row indices used, sorted;
        and a one-line note for the view (method, how many graphs, PCA's share of the variance).

    Raises:
        GLocalKDError: for an unknown ``method`` or fewer than 3 rows.
    """
    if method not in METHODS:
        raise GLocalKDError(f"map method must be one of {', '.join(METHODS)}, not {method!r}")
    n = embeddings.shape[0]
    if n < 3:
        raise GLocalKDError("a map needs at least 3 graphs")
    x = np.asarray(embeddings, dtype=np.float64)
    x = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-12)
    indices = np.arange(n)
    if method == "pca":
        from sklearn.decomposition import PCA

        pca = PCA(n_components=2, random_state=seed)
        coords = pca.fit_transform(x)
        share = pca.explained_variance_ratio_.sum()
        return coords, indices, f"PCA of all {n:,} graphs ({share:.0%} of the variance)"
    note = f"t-SNE of all {n:,} graphs"
    if n > max_points:
        indices = np.sort(np.random.default_rng(seed).choice(n, size=max_points, replace=False))
        x = x[indices]
        note = f"t-SNE of a random {max_points:,} of {n:,} graphs (use PCA to see them all)"
    from sklearn.decomposition import PCA
    from sklearn.manifold import TSNE

    if x.shape[1] > 50:
        x = PCA(n_components=50, random_state=seed).fit_transform(x)
    perplexity = float(min(30.0, max(2.0, (len(indices) - 1) / 3)))
    coords = TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(x)
    return coords, indices, note


# what a detector without GLocalKD's three spaces maps (its graph_embeddings)
_REPRESENTATION = {"ocgcn": "OCGCN graph embeddings", "wl-iforest": "WL kernel values against the training graphs",
                   "wl-lesinn": "WL kernel values against the training graphs",
                   "pk-iforest": "PK kernel values against the training graphs",
                   "pk-lesinn": "PK kernel values against the training graphs"}


def space_map(model, graphs: GraphSet, space: str = "predictor", method: str = "tsne", seed: int = 0,
              max_points: int = TSNE_MAX_POINTS) -> SpaceMap:
    """Map graphs by a trained model's graph embeddings in one of its spaces.

    Detectors without GLocalKD's three spaces map their own representation (``graph_embeddings``:
    OCGCN's embeddings, kernel values against the training graphs, ...), and the note says which.

    Args:
        model: a fitted detector (:class:`core.detectors.base.GraphAnomalyDetector`).
        graphs: the graphs to map.
        space: ``predictor`` (default), ``target`` or ``difference``.
        method: ``tsne`` (default) or ``pca``, as in :func:`project`.
        seed: the seed of the projection.
        max_points: the most graphs t-SNE maps.

    Returns:
        The map, with float32 coordinates.

    Raises:
        GLocalKDError: for an unknown ``space``, and as :func:`project`.
    """
    if space not in SPACES:
        raise GLocalKDError(f"space must be one of {', '.join(SPACES)}, not {space!r}")
    coords, indices, note = project(model.graph_embeddings(graphs, space), method, seed, max_points)
    what = f"{space} embeddings" if model.has_node_scores else _REPRESENTATION.get(model.name, "representation")
    return SpaceMap(coords=coords.astype(np.float32), indices=indices, method=method, space=space,
                    note=f"{note}, {what}")
