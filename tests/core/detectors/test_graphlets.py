"""The graphlet view counts every connected induced 3- and 4-node graphlet exactly (against a
brute-force enumeration) and ranks graphs that close into triangles above rings and trees."""
from __future__ import annotations

from itertools import combinations
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from core import load, make_detector
from core.detectors.graphlets import FOUR, THREE, graphlet_counts, graphlet_shares
from core.evaluation.metrics import roc_auc
from tests.conftest import write_tu

# an induced 4-node subgraph's kind by its sorted degrees (connected ones only)
KIND = {(1, 1, 2, 2): "path4", (1, 1, 1, 3): "star", (2, 2, 2, 2): "cycle4", (1, 2, 2, 3): "tailed_triangle",
        (2, 2, 3, 3): "diamond", (3, 3, 3, 3): "clique4"}


def brute_force(g: nx.Graph) -> np.ndarray:
    counts = dict.fromkeys((*THREE, *FOUR), 0)
    for nodes in combinations(g.nodes, 3):
        edges = g.subgraph(nodes).number_of_edges()
        if edges >= 2:
            counts["triangle" if edges == 3 else "path3"] += 1
    for nodes in combinations(g.nodes, 4):
        sub = g.subgraph(nodes)
        if nx.is_connected(sub):
            counts[KIND[tuple(sorted(d for _, d in sub.degree))]] += 1
    return np.array([counts[k] for k in (*THREE, *FOUR)], dtype=np.float64)


@pytest.mark.parametrize("seed,n,p", [(0, 9, 0.3), (1, 10, 0.5), (2, 8, 0.8), (3, 12, 0.2), (4, 7, 1.0),
                                      (5, 11, 0.4)])
def test_the_counts_are_a_brute_force_enumerations(seed, n, p):
    g = nx.gnp_random_graph(n, p, seed=seed)
    got = graphlet_counts(nx.to_scipy_sparse_array(g, nodelist=sorted(g.nodes), format="csr"))
    np.testing.assert_array_equal(got, brute_force(g))


def test_stars_cliques_loops_and_repeated_edges():
    star = nx.star_graph(30)  # a hub of degree 30: C(30, 3) stars, no triangle
    got = graphlet_counts(nx.to_scipy_sparse_array(star, format="csr"))
    assert got[len(THREE) + FOUR.index("star")] == 4060 and got[THREE.index("triangle")] == 0
    clique = nx.to_scipy_sparse_array(nx.complete_graph(6), format="csr")
    assert graphlet_counts(clique)[len(THREE) + FOUR.index("clique4")] == 15  # C(6, 4)
    messy = clique.copy().tolil()
    messy.setdiag(1)  # loops, and an edge given twice, are one simple graph
    messy[0, 1] = 2
    np.testing.assert_array_equal(graphlet_counts(messy.tocsr()), graphlet_counts(clique))
    assert not graphlet_counts(nx.to_scipy_sparse_array(nx.empty_graph(5), format="csr")).any()


def test_shares_are_taken_within_each_size():
    shares = graphlet_shares(np.array([[3.0, 1.0, 0, 0, 0, 0, 0, 0], [0, 0, 2.0, 2.0, 0, 0, 0, 4.0]]))
    np.testing.assert_allclose(shares, [[0.75, 0.25, 0, 0, 0, 0, 0, 0], [0, 0, 0.25, 0.25, 0, 0, 0, 0.5]])


def test_graphs_that_close_into_triangles_rank_above_rings(tmp_path: Path):
    """Rings of 8-12 nodes (normal) against rings of the same sizes with two chords, each closing
    a triangle."""
    rng = np.random.default_rng(0)
    graphs = []
    for i in range(46):
        n = int(rng.integers(8, 13))
        edges = [(k, (k + 1) % n) for k in range(n)]
        if i >= 40:  # anomalous: chords k -- k+2 close triangles
            edges += [(0, 2), (4, 6)]
        graphs.append((n, edges, 0 if i >= 40 else 1))
    data = load(write_tu(tmp_path / "CHORDS", "CHORDS", graphs))
    model = make_detector("graphlet-lesinn", ensemble_size=16).fit(data.subset(range(30)))
    assert roc_auc(np.arange(46) >= 40, model.score(data).score) == 1.0
