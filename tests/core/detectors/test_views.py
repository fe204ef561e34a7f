"""The label-free embedding views (random-GIN forests, kernel mean embeddings, the spectral view,
the distance profile, graphlets): behind the common contract, and a graph's score never depends on the batch it
is scored with."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core import load, make_detector
from core.data.features import FeatureSchema
from core.detectors import embedding_view
from core.detectors.node_signals import node_batch
from core.detectors.distance_profile import DISTANCE_EDGES, WIDTH, distance_profile, sources
from core.detectors.spectral import rayleigh_quotients, spectral_moments
from core.evaluation.metrics import roc_auc
from tests.conftest import path, ring, write_tu

SMALL = {"gin-iforest": dict(n_encoders=3, n_estimators=25), "kme-lesinn": dict(n_features=64, ensemble_size=16),
         "spectral-lesinn": dict(ensemble_size=16), "distance-lesinn": dict(ensemble_size=16)}


@pytest.fixture
def odd_rings(tmp_path: Path):
    """40 normal rings with node labels 0-2 and attributes near 0 (graph label 5), 6 anomalous
    paths whose nodes carry label 9 and attributes near 5; the first 30 rings train."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(5, 13, size=40).tolist()
    graphs = [(n, ring(n), 5) for n in sizes] + [(6, path(6), 0) for _ in range(6)]
    folder = write_tu(tmp_path / "ODD", "ODD", graphs)
    labels = rng.integers(0, 3, size=sum(sizes)).tolist() + [9] * 36
    (folder / "ODD_node_labels.txt").write_text("\n".join(map(str, labels)) + "\n")
    attrs = np.concatenate([rng.normal(0, 1, sum(sizes)), rng.normal(5, 1, 36)])
    (folder / "ODD_node_attributes.txt").write_text("\n".join(f"{a:.6f}" for a in attrs) + "\n")
    data = load(folder)
    return data, np.array([lab == "0" for lab in data.labels]), data.subset(range(30))


@pytest.mark.parametrize("name", list(SMALL))
def test_each_view_ranks_unseen_structures_first(odd_rings, name):
    data, is_anom, train = odd_rings
    model = make_detector(name, **SMALL[name]).fit(train)
    scores = model.score(data)
    assert roc_auc(is_anom, scores.score) > 0.9
    assert not scores.has_node_scores and len(model.train_scores_) == len(train)
    assert model.graph_embeddings(data).shape[0] == len(data)


@pytest.mark.parametrize("name", [*SMALL, "graphlet-lesinn"])  # graphlets: rings and paths alike (test_graphlets.py)
def test_a_graphs_score_does_not_depend_on_the_batch_it_is_scored_with(herg_path, monkeypatch, name):
    graphs = load(herg_path)
    model = make_detector(name, **SMALL.get(name, {"ensemble_size": 16})).fit(graphs.subset(range(200)))
    test = list(range(200, 260))
    whole = model.score(graphs.subset(test)).score
    alone = np.array([model.score(graphs.subset([i])).score[0] for i in test[:12]])
    reversed_ = model.score(graphs.subset(test[::-1])).score[::-1]
    mixed = model.score(graphs.subset([*test[:12], *range(100)])).score[:12]
    monkeypatch.setattr(embedding_view, "CHUNK_NODES", 50)  # a few graphs a chunk
    if name == "gin-iforest":
        from core.detectors import random_gin_forest
        monkeypatch.setattr(random_gin_forest, "CHUNK_NODES", 50)
    chunked = model.score(graphs.subset(test)).score
    np.testing.assert_allclose(alone, whole[:12], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(reversed_, whole, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mixed, whole[:12], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=1e-12)


def test_a_lone_tiny_graph_scores_bit_for_bit_as_in_a_batch(tmp_path):
    """A graph of one node scored alone went through BLAS's matrix-vector path in the KME view and
    scored 2.8e-16 where its batch gave 0.0, which moves a p-value when a calibration score is 0:
    every view that reads TU graphs scores a lone graph as it scores it among others, exactly."""
    from core.detectors.registry import DETECTORS

    rng = np.random.default_rng(1)
    sizes = rng.integers(4, 10, size=60).tolist()  # enough for a consensus to hold out a calibration share
    graphs = [(n, ring(n), 1) for n in sizes] + [(1, [], 1), (1, [], 1), (2, [(0, 1)], 1), (3, [], 1)]
    data = load(write_tu(tmp_path / "TINY", "TINY", graphs, attributes=True))
    train, test = data, list(range(len(data) - 10, len(data)))  # its own training graphs: a distance of exactly 0
    molecules_only = {"property-lesinn", "ecfp-nn"}
    names = [n for n in DETECTORS if n not in molecules_only]
    fast = {"gin-iforest": {"n_encoders": 3}, "glocalkd": {"epochs": 2}, "ocgcn": {"epochs": 2},
            "consensus": {"component_params": {"glocalkd": {"epochs": 2}}}}
    for name in names:  # at the library's settings: the KME view's 512 features took the matrix-vector path
        model = make_detector(name, **fast.get(name, {})).fit(train)
        whole = model.score(data.subset(test)).score
        alone = np.array([model.score(data.subset([i])).score[0] for i in test])
        np.testing.assert_array_equal(alone, whole, err_msg=name)


def test_rayleigh_quotients_and_moments_match_a_dense_laplacian(odd_rings):
    data, _, _ = odd_rings
    some = data.subset([0, 1, 40])
    batch = node_batch(some, FeatureSchema.fit(some, "auto"))
    rq, moments = rayleigh_quotients(batch), spectral_moments(batch)
    for i, g in enumerate(some.graphs):
        n = int(g.num_nodes)
        a = np.zeros((n, n))
        a[g.edge_index[0].numpy(), g.edge_index[1].numpy()] = 1.0
        d = a.sum(1)
        inv = np.where(d > 0, 1 / np.sqrt(np.maximum(d, 1)), 0.0)
        lap = np.diag((d > 0).astype(float)) - inv[:, None] * a * inv[None, :]
        x = batch.x[batch.graph == i]
        norms = (x * x).sum(0)
        expected = np.divide(np.einsum("ic,ij,jc->c", x, lap, x), norms, out=np.zeros(len(norms)), where=norms > 0)
        np.testing.assert_allclose(rq[i], expected, atol=1e-12)
        powers = [np.trace(np.linalg.matrix_power(lap, k)) / n for k in range(1, 5)]
        np.testing.assert_allclose(moments[i], powers, atol=1e-12)


def test_the_distance_profile_counts_shortest_paths_and_eccentricities_as_networkx_does():
    import networkx as nx

    rng = np.random.default_rng(3)
    graphs = [nx.barbell_graph(4, 3), nx.path_graph(40), nx.gnp_random_graph(30, 0.08, seed=1), nx.empty_graph(1)]
    graphs[0].add_node(99)  # an isolated node: unreachable from the rest, eccentricity 0
    edges = np.r_[DISTANCE_EDGES, np.inf]
    for g in graphs:
        nodes = list(g.nodes)
        rng.shuffle(nodes)
        got = distance_profile(nx.to_scipy_sparse_array(g, nodelist=nodes, format="csr"))
        n = len(nodes)
        lengths = dict(nx.all_pairs_shortest_path_length(g))
        dist = [lengths[u].get(v, np.inf) for u in nodes for v in nodes if u != v]
        expected = np.zeros(WIDTH)
        if n > 1:
            expected[:len(DISTANCE_EDGES)] = np.histogram([d for d in dist if np.isfinite(d)], bins=edges)[0] / len(dist)
            expected[len(DISTANCE_EDGES)] = np.mean(np.isinf(dist))
        ecc = [max(lengths[u].values()) for u in nodes]
        expected[len(DISTANCE_EDGES) + 1:] = np.histogram(ecc, bins=np.r_[0, edges])[0] / n
        np.testing.assert_allclose(got, expected, atol=1e-12)


def test_a_large_graphs_distance_profile_reads_256_evenly_spread_sources():
    assert np.array_equal(sources(10), np.arange(10))
    big = sources(1000)
    assert len(big) == 256 and big[0] == 0 and big[-1] == 999 and np.all(np.diff(big) > 0)
    import networkx as nx

    cycle = nx.to_scipy_sparse_array(nx.cycle_graph(1000), format="csr")  # every node alike: sampling is exact
    profile = distance_profile(cycle)
    assert profile[len(DISTANCE_EDGES) - 1] == pytest.approx((1000 - 1 - 2 * 32) / 999)  # distances of 33 and more
    assert profile[-1] == 1.0  # every eccentricity is 500


def test_the_random_gin_forest_draws_the_same_encoders_from_the_same_seed(odd_rings):
    data, _, train = odd_rings
    a = make_detector("gin-iforest", **SMALL["gin-iforest"], seed=4).fit(train).score(data).score
    b = make_detector("gin-iforest", **SMALL["gin-iforest"], seed=4).fit(train).score(data).score
    c = make_detector("gin-iforest", **SMALL["gin-iforest"], seed=5).fit(train).score(data).score
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_the_gcn_settings_of_the_app_and_the_harness_do_not_reach_the_views():
    """The app and `glocalkd evaluate` pass a detector every setting it accepts by name: the GCN's
    width and depth must not resize the random encoders (measured at 64 wide, 3 deep)."""
    from core import accepted_params

    for name in SMALL:
        assert not accepted_params(name) & {"hidden_dim", "num_layers", "epochs", "lr", "out_dim"}
