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
    train, test = herg.subset(range(0, 120)), herg.subset(range(500, 560))
    kernel = GraphKernel("wl")
    kernel.fit(train)
    split = kernel.transform(test)
    monkeypatch.setattr(SplitProduct, "dot", lambda self, features: None)
    kernel._product = None
    assert np.array_equal(kernel.transform(test), split)


def test_a_refitted_kernel_does_not_reuse_the_old_training_features():
    herg = load(DEMO_DATA / "herg.tab")
    kernel = GraphKernel("wl")
    kernel.fit(herg.subset(range(0, 100)))
    kernel.transform(herg.subset(range(500, 520)))  # makes the split product of the first fit
    kernel.fit(herg.subset(range(200, 330)))
    fresh = GraphKernel("wl")
    fresh.fit(herg.subset(range(200, 330)))
    assert np.array_equal(kernel.transform(herg.subset(range(500, 520))), fresh.transform(herg.subset(range(500, 520))))
