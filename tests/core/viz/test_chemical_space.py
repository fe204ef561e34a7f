import numpy as np
import pytest

from core import GLocalKD, GLocalKDError, load
from core.viz.chemical_space import project, space_map


@pytest.fixture(scope="module")
def fitted(herg_path_module):
    graphs = load(herg_path_module).subset(range(120))
    return GLocalKD(epochs=2, hidden_dim=32, out_dim=16, device="cpu").fit(graphs), graphs


@pytest.fixture(scope="module")
def herg_path_module():
    from tests.conftest import DEMO_DATA

    return DEMO_DATA / "herg.tab"


def test_map_has_one_point_per_graph_and_is_reproducible(fitted):
    model, graphs = fitted
    a = space_map(model, graphs, "predictor", "tsne", seed=1)
    b = space_map(model, graphs, "predictor", "tsne", seed=1)
    assert a.coords.shape == (120, 2) and np.array_equal(a.indices, np.arange(120))
    assert np.array_equal(a.coords, b.coords)
    assert "t-SNE of all 120 graphs" in a.note


def test_spaces_differ_and_difference_is_predictor_minus_target(fitted):
    model, graphs = fitted
    p = model.graph_embeddings(graphs, "predictor")
    t = model.graph_embeddings(graphs, "target")
    d = model.graph_embeddings(graphs, "difference")
    assert p.shape == (120, 16) and not np.allclose(p, t)
    assert np.allclose(d, p - t, atol=1e-5)
    pca = space_map(model, graphs, "target", "pca")
    assert pca.coords.shape == (120, 2) and "PCA of all 120 graphs" in pca.note


def test_large_sets_are_subsampled_for_tsne_and_said_so():
    emb = np.random.default_rng(0).normal(size=(300, 8))
    coords, idx, note = project(emb, "tsne", seed=0, max_points=100)
    assert coords.shape == (100, 2) and len(set(idx)) == 100 and idx.max() < 300
    assert "random 100 of 300" in note
    coords, idx, _ = project(emb, "pca")
    assert coords.shape == (300, 2)


def test_bad_arguments(fitted):
    model, graphs = fitted
    with pytest.raises(GLocalKDError):
        space_map(model, graphs, "nowhere")
    with pytest.raises(GLocalKDError):
        project(np.zeros((10, 3)), "umap")
    with pytest.raises(GLocalKDError, match="at least 3"):
        project(np.zeros((2, 3)))
