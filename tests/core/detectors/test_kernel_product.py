"""The graph kernel's split product (dense block for common features, sparse for the rest) gives
exactly the plain sparse product's values, and falls back to it where it could not be exact."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from core import load
from core.detectors.graph_kernels import GraphKernel, SplitProduct
from tests.conftest import DEMO_DATA


def random_counts(rng, rows, cols, density, high=6):
    m = sp.random(rows, cols, density=density, random_state=rng, format="csr")
    m.data = rng.integers(1, high, size=m.nnz).astype(np.float64)
    m[:, :5] = rng.integers(0, high, size=(rows, 5)).astype(np.float64)  # features most graphs have
    return sp.csr_matrix(m)


@pytest.mark.parametrize("share", [0.0, 0.05, 0.5, 2.0])  # all dense, mixed, few dense, all sparse
def test_split_product_is_the_plain_product_bit_for_bit(share):
    rng = np.random.default_rng(0)
    train, new = random_counts(rng, 60, 300, 0.03), random_counts(rng, 45, 300, 0.03)
    new[7] = 0  # a graph with no known feature
    new.eliminate_zeros()
    ours = SplitProduct(train, dense_share=share).dot(new)
    plain = np.asarray((new @ train.T).toarray(), dtype=np.float64)
    assert ours.dtype == np.float64 and np.array_equal(ours, plain)


def test_large_counts_take_float64_and_are_still_exact():
    rng = np.random.default_rng(1)
    train, new = random_counts(rng, 30, 80, 0.1, high=5000), random_counts(rng, 20, 80, 0.1, high=5000)
    assert np.array_equal(SplitProduct(train).dot(new), (new @ train.T).toarray())


@pytest.mark.parametrize("value", [0.5, -1.0, 2.0 ** 50])
def test_features_that_are_not_small_counts_get_no_split_product(value):
    rng = np.random.default_rng(2)
    train, new = random_counts(rng, 30, 80, 0.1), random_counts(rng, 20, 80, 0.1)
    new.data[0] = value
    assert SplitProduct(train).dot(new) is None


def test_the_kernel_takes_the_plain_product_when_the_split_one_declines(monkeypatch):
    herg = load(DEMO_DATA / "herg.tab")
    train, test = herg.subset(range(120)), herg.subset(range(500, 560))
    kernel = GraphKernel("wl")
    kernel.fit(train)
    split = kernel.transform(test)
    monkeypatch.setattr(SplitProduct, "dot", lambda self, features: None)
    kernel._product = None
    assert np.array_equal(kernel.transform(test), split)


def test_a_refitted_kernel_does_not_reuse_the_old_training_features():
    herg = load(DEMO_DATA / "herg.tab")
    kernel = GraphKernel("wl")
    kernel.fit(herg.subset(range(100)))
    kernel.transform(herg.subset(range(500, 520)))  # makes the split product of the first fit
    kernel.fit(herg.subset(range(200, 330)))
    fresh = GraphKernel("wl")
    fresh.fit(herg.subset(range(200, 330)))
    assert np.array_equal(kernel.transform(herg.subset(range(500, 520))), fresh.transform(herg.subset(range(500, 520))))


def packed_molecules():
    from core.detectors.graph_kernels import PackedLabelled

    rng = np.random.default_rng(3)
    node_counts = np.array([3, 1, 0, 5, 4])
    bond_counts = np.array([2, 0, 0, 6, 3])
    labels = rng.integers(0, 4, size=node_counts.sum())
    bonds = np.concatenate([rng.integers(0, max(n, 1), size=(b, 2)) for n, b in zip(node_counts, bond_counts)])
    return PackedLabelled(labels, bonds, node_counts, bond_counts)


def test_packed_graphs_are_the_graph_by_graph_pairs():
    packed = packed_molecules()
    pairs = list(packed)
    assert len(pairs) == 5 and pairs[2][0].shape == (2, 0) and len(pairs[2][1]) == 0
    assert [len(p[1]) for p in packed[1:4]] == [1, 0, 5]
    assert np.array_equal(packed[3][0], pairs[3][0]) and np.array_equal(packed[1:4][2][1], pairs[3][1])


@pytest.mark.parametrize("cut", [slice(0, 5), slice(1, 4), slice(2, 3)])
def test_wl_features_of_packed_graphs_are_those_of_the_pairs(cut):
    from core.detectors.wl_features import WLFeatures

    packed = packed_molecules()
    wl = WLFeatures(3)
    wl.fit(list(packed))
    ours, ours_sq = wl.transform(packed[cut])
    theirs, theirs_sq = wl.transform(list(packed)[cut])
    assert (ours != theirs).nnz == 0 and np.array_equal(ours_sq, theirs_sq)


def test_graphs_without_nodes_get_a_zero_kernel_not_nan():
    from core.detectors.graph_kernels import PackedLabelled

    herg = load(DEMO_DATA / "herg.tab")
    kernel = GraphKernel("wl")
    kernel.fit(herg.subset(range(60)))
    empty = PackedLabelled(np.zeros(0, dtype=np.int64), np.zeros((0, 2), dtype=np.int64), np.array([0, 0]),
                           np.array([0, 0]))
    k = kernel.transform_labelled(empty)
    assert k.shape == (2, 60) and np.array_equal(k, np.zeros((2, 60)))
    assert np.array_equal(kernel.distances_labelled(empty), np.full((2, 60), np.sqrt(2.0)))
