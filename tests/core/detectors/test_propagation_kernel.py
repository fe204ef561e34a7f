"""The sparse propagation kernel against GraKeL's own dense computation."""
from __future__ import annotations

import numpy as np
import pytest

from core.detectors.propagation_kernel import PropagationFeatures


def random_graphs(rng: np.random.Generator, count: int, labels: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Connected-ish random graphs (a path plus chords, a repeated edge and a self-loop, which
    both implementations ignore) and an isolated node now and then."""
    graphs = []
    for _ in range(count):
        n = int(rng.integers(3, 14))
        src = list(range(n - 1)) + rng.integers(0, n, size=n // 2).tolist() + [0, 0]
        dst = list(range(1, n)) + rng.integers(0, n, size=n // 2).tolist() + [1, 0]
        if rng.random() < 0.3:  # the last node loses its edges
            keep = [i for i, (a, b) in enumerate(zip(src, dst)) if n - 1 not in (a, b)]
            src, dst = [src[i] for i in keep], [dst[i] for i in keep]
        edges = np.array([src + dst, dst + src], dtype=np.int64)  # both directions
        graphs.append((edges, rng.choice(labels, size=n)))
    return graphs


def grakel_input(graphs) -> list[list]:
    out = []
    for edges, labels in graphs:
        adjacency = {v: [] for v in range(len(labels))}
        for a, b in edges.T.tolist():
            if a != b:
                adjacency[a].append(b)
        out.append([adjacency, dict(enumerate(labels.tolist()))])
    return out


def kernel(features, squares, train_features, train_squares) -> np.ndarray:
    k = (features @ train_features.T).toarray()
    return k / np.sqrt(np.outer(squares, train_squares))


@pytest.mark.parametrize("test_labels", [[0, 1, 2, 3], [0, 1, 2, 3, 7], [0, 1, 7, 8, 9]])
def test_features_give_grakels_kernel(test_labels):
    """Same kernel as GraKeL's Propagation for training graphs and for new graphs, with no new
    label, one, or several (GraKeL then hashes nodes touching every new label apart and counts
    the next graph's first node as well)."""
    from grakel.kernels import Propagation

    rng = np.random.default_rng(1)
    train = random_graphs(rng, 25, [0, 1, 2, 3])
    test = random_graphs(rng, 15, test_labels)
    ours = PropagationFeatures(seed=5)
    x_train, sq_train = ours.fit(train)
    x_test, sq_test = ours.transform(test)
    theirs = Propagation(normalize=True, random_state=5)
    assert np.array_equal(kernel(x_train, sq_train, x_train, sq_train), theirs.fit_transform(grakel_input(train)))
    assert np.allclose(kernel(x_test, sq_test, x_train, sq_train), theirs.transform(grakel_input(test)),
                       rtol=0, atol=1e-12)


def test_transform_is_repeatable_and_fit_is_seeded():
    """Unlike GraKeL's, every transform starts from the random state fit left, so scoring the
    same graphs twice gives the same kernel; another seed gives other hashes."""
    rng = np.random.default_rng(2)
    train, test = random_graphs(rng, 20, [0, 1, 2]), random_graphs(rng, 10, [0, 1, 5, 6])
    model = PropagationFeatures(seed=0)
    model.fit(train)
    first, second = model.transform(test), model.transform(test)
    assert (first[0] != second[0]).nnz == 0 and np.array_equal(first[1], second[1])
    other = PropagationFeatures(seed=1)
    other.fit(train)
    assert not np.array_equal(other.hashes_[1], model.hashes_[1])
