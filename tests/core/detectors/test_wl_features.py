"""Hashed WL subtree features give GraKeL's Weisfeiler-Lehman kernel."""
from __future__ import annotations

import numpy as np
import pytest

from core import load
from core.detectors.graph_kernels import GraphKernel, to_grakel
from core.detectors.wl_features import WLFeatures, mix64
from tests.conftest import DEMO_DATA, ring, write_tu


def grakel_wl(train, test, iterations=3):
    from grakel.kernels import VertexHistogram, WeisfeilerLehman

    theirs = WeisfeilerLehman(n_iter=iterations, base_graph_kernel=VertexHistogram, normalize=True)
    k_train = np.nan_to_num(np.asarray(theirs.fit_transform(to_grakel(train)), dtype=np.float64))
    k_test = np.nan_to_num(np.asarray(theirs.transform(to_grakel(test)), dtype=np.float64))
    return k_train, k_test


@pytest.mark.parametrize("iterations", [1, 3])
def test_the_kernel_is_grakels_on_molecules(iterations):
    herg = load(DEMO_DATA / "herg.tab")
    train, test = herg.subset(range(0, 120)), herg.subset(range(500, 560))
    ours = GraphKernel("wl", wl_iterations=iterations)
    k_train, k_test = ours.fit(train), ours.transform(test)
    theirs_train, theirs_test = grakel_wl(train, test, iterations)
    np.testing.assert_allclose(k_train, theirs_train, atol=1e-12)
    np.testing.assert_allclose(k_test, theirs_test, atol=1e-12)


def test_the_kernel_is_grakels_on_plain_graphs_with_isolated_nodes(tmp_path):
    """Degree labels, rings, paths and isolated nodes (no edges at all), as on IMDB and REDDIT."""
    rng = np.random.default_rng(1)
    graphs = []
    for n in rng.integers(3, 12, size=40):
        edges = ring(int(n)) if n % 2 else [(i, i + 1) for i in range(int(n) - 2)]  # the last node isolated
        graphs.append((int(n), edges, 0))
    data = load(write_tu(tmp_path, "PLAIN", graphs, node_labels=False))
    train, test = data.subset(range(25)), data.subset(range(25, 40))
    ours = GraphKernel("wl")
    np.testing.assert_allclose(ours.fit(train), grakel_wl(train, test)[0], atol=1e-12)
    np.testing.assert_allclose(ours.transform(test), grakel_wl(train, test)[1], atol=1e-12)


def test_unseen_labels_count_in_the_norm_only():
    # a triangle trains; a path of three and a triangle with a new element are scored
    triangle = (np.array([[0, 1, 1, 2, 2, 0], [1, 0, 2, 1, 0, 2]]), np.array([6, 6, 6]))
    odd = (triangle[0], np.array([6, 6, 7]))
    wl = WLFeatures(iterations=1)
    train, train_sq = wl.fit([triangle])
    test, test_sq = wl.transform([triangle, odd])
    assert train_sq[0] == 9 + 9 and test_sq[0] == 18  # three C, then three "C with two C neighbours"
    assert test[1].sum() == 2  # only the two carbons' original label is known
    # iteration 0: C twice, N once; iteration 1: the two carbons (each beside C and N) share a label
    assert test_sq[1] == (4 + 1) + (4 + 1)


def test_the_hash_is_a_bijection_on_a_sample():
    x = np.arange(100_000, dtype=np.uint64)
    assert len(np.unique(mix64(x))) == len(x)


def test_shared_transforms_compute_the_features_of_the_same_graphs_once_per_vocabulary(monkeypatch):
    """Inside shared_transforms, two WLFeatures fitted on the same graphs (equal vocabularies) give
    one computation for the same graphs; another vocabulary, other graphs, or outside the block:
    computed again. Every result is the plain transform's."""
    from core.detectors import wl_features

    triangle = (np.array([[0, 1, 1, 2, 2, 0], [1, 0, 2, 1, 0, 2]]), np.array([6, 6, 6]))
    odd = (triangle[0], np.array([6, 6, 7]))
    pair = (np.array([[0, 1], [1, 0]]), np.array([6, 8]))
    first, second, other = WLFeatures(2), WLFeatures(2), WLFeatures(2)
    first.fit([triangle, pair])
    second.fit([triangle, pair])
    other.fit([triangle, odd])
    assert first.vocabulary_digest() == second.vocabulary_digest() != other.vocabulary_digest()
    graphs, again = [triangle, odd, pair], [triangle, odd, pair]
    plain = {name: wl.transform(graphs) for name, wl in (("first", first), ("other", other))}
    calls = []
    original = WLFeatures._features
    monkeypatch.setattr(WLFeatures, "_features", lambda self, *a: calls.append(1) or original(self, *a))
    with wl_features.shared_transforms():
        a, b, c, d = first.transform(graphs), second.transform(graphs), other.transform(graphs), first.transform(again)
        with wl_features.shared_transforms():  # nested: part of the outer block
            e = second.transform(graphs)
    assert len(calls) == 3 and b is a and e is a and c is not a and d is not a
    for got, want in ((a, plain["first"]), (c, plain["other"]), (d, plain["first"])):
        assert (got[0] != want[0]).nnz == 0 and np.array_equal(got[1], want[1])
    first.transform(graphs)
    assert len(calls) == 4  # outside the block: computed again, nothing held
    assert getattr(wl_features._local, "shared", None) is None


def test_shared_transforms_are_per_thread():
    """A block in one thread shares nothing with another thread (the app scores in a background thread)."""
    import threading

    from core.detectors import wl_features

    wl = WLFeatures(1)
    graphs = [(np.array([[0, 1], [1, 0]]), np.array([6, 8]))]
    wl.fit(graphs)
    seen = {}
    with wl_features.shared_transforms():
        seen["main"] = wl.transform(graphs)
        thread = threading.Thread(target=lambda: seen.update(other=wl.transform(graphs)))
        thread.start()
        thread.join()
        assert wl.transform(graphs) is seen["main"]
    assert seen["other"] is not seen["main"] and (seen["other"][0] != seen["main"][0]).nnz == 0
