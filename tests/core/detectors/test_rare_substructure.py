"""The rare-substructure view: a graph scores the rarity of its most surprising node
neighbourhoods among the training graphs, counted as the module says, whatever else is scored."""
from __future__ import annotations

import numpy as np
import pytest

from core import load, make_detector
from core.detectors.graph_kernels import labelled_graphs
from core.detectors.rare_substructure import top_mean
from core.detectors.wl_features import WLFeatures
from core.errors import GLocalKDError
from tests.conftest import ring, write_tu


@pytest.fixture
def rings_with_a_flag(tmp_path):
    """30 labelled rings (labels 0-2) train; 10 more rings score, of which the last 4 carry one
    node labelled 7, a label no training graph has."""
    rng = np.random.default_rng(1)
    sizes = rng.integers(6, 11, size=40).tolist()
    graphs = [(n, ring(n), 1) for n in sizes]
    folder = write_tu(tmp_path / "FLAG", "FLAG", graphs)
    labels = [rng.integers(0, 3, size=n).tolist() for n in sizes]
    for g in range(36, 40):
        labels[g][0] = 7
    (folder / "FLAG_node_labels.txt").write_text("\n".join(str(v) for lab in labels for v in lab) + "\n")
    data = load(folder)
    return data.subset(range(30)), data.subset(range(30, 40))


def test_a_graph_holding_a_label_no_training_graph_has_scores_highest(rings_with_a_flag):
    train, test = rings_with_a_flag
    model = make_detector("rare-substructure").fit(train)
    scores = model.score(test).score
    assert scores[6:].min() > scores[:6].max()
    assert len(model.train_scores_) == len(train) and not model.score(test).has_node_scores


def test_the_score_is_the_counting_the_module_states(rings_with_a_flag):
    """Recomputed by hand for one graph: per node the mean over radii 0-2 of -log((df+1)/(N+2)),
    then the mean of the three largest."""
    train, test = rings_with_a_flag
    model = make_detector("rare-substructure").fit(train)
    wl = WLFeatures(2)
    train_features, _ = wl.fit(labelled_graphs(train))
    holds = (train_features.toarray() > 0).sum(axis=0)
    columns, graph, _ = wl.node_columns(labelled_graphs(test.subset([7])))
    rarity = np.where(columns >= 0, -np.log((holds[np.maximum(columns, 0)] + 1) / (len(train) + 2)),
                      np.log(len(train) + 2))
    expected = np.sort(rarity.mean(axis=0))[::-1][:3].mean()
    assert model.score(test.subset([7])).score[0] == pytest.approx(expected, rel=1e-6)  # Scores hold float32


def test_training_scores_are_leave_one_out(rings_with_a_flag):
    """A training graph's own score counts its labels without it: as the same graph scored by a
    model fitted on the other training graphs."""
    train, _ = rings_with_a_flag
    model = make_detector("rare-substructure").fit(train)
    for i in (0, 13):
        others = make_detector("rare-substructure").fit(train.subset([j for j in range(len(train)) if j != i]))
        # the same counts, but the vocabulary of the others may lack the graph's own labels: those
        # count 0 either way, and N - 1 + 2 is the denominator either way
        assert model.train_scores_[i] == pytest.approx(others.score(train.subset([i])).score[0], rel=1e-6)


def test_a_graphs_score_does_not_depend_on_the_batch_it_is_scored_with(herg_path):
    graphs = load(herg_path)
    model = make_detector("rare-substructure").fit(graphs.subset(range(200)))
    test = list(range(200, 260))
    whole = model.score(graphs.subset(test)).score
    alone = np.array([model.score(graphs.subset([i])).score[0] for i in test[:12]])
    mixed = model.score(graphs.subset([*test[:12], *range(100)])).score[:12]
    np.testing.assert_array_equal(alone, whole[:12])
    np.testing.assert_array_equal(mixed, whole[:12])
    np.testing.assert_array_equal(model.score(graphs.subset(test[::-1])).score[::-1], whole)


def test_screening_scores_molecules_from_packed_arrays_as_score_does(herg_path):
    from core.data.atom_batch import MoleculeArrays  # noqa: F401  (the arrays screening hands its views)

    graphs = load(herg_path)
    model = make_detector("rare-substructure").fit(graphs.subset(range(200)))
    test = graphs.subset(range(200, 240))
    x = np.concatenate([g.x.numpy() for g in test.graphs])
    bonds = [g.edge_index.numpy()[:, g.edge_index[0].numpy() < g.edge_index[1].numpy()].T for g in test.graphs]
    packed = model.score_molecules(x, np.concatenate(bonds), np.array([int(g.num_nodes) for g in test.graphs]),
                                   np.array([len(b) for b in bonds]))
    np.testing.assert_array_equal(packed.astype(np.float32), model.score(test).score)
    assert model.molecule_views() == {"rare-substructure": model}


def test_a_saved_model_scores_as_the_fitted_one(herg_path, tmp_path):
    from core.detectors.model_file import load_detector

    graphs = load(herg_path)
    model = make_detector("rare-substructure").fit(graphs.subset(range(200)))
    model.save(tmp_path / "rare.glkd")
    again = load_detector(tmp_path / "rare.glkd", device="cpu")
    np.testing.assert_array_equal(again.score(graphs.subset(range(200, 260))).score,
                                  model.score(graphs.subset(range(200, 260))).score)
    np.testing.assert_array_equal(again.train_scores_, model.train_scores_)


def test_settings_are_checked_and_an_unfitted_model_refuses_to_score(rings_with_a_flag):
    train, _ = rings_with_a_flag
    with pytest.raises(GLocalKDError, match="top_nodes"):
        make_detector("rare-substructure", top_nodes=0).fit(train)
    with pytest.raises(GLocalKDError, match="not trained"):
        make_detector("rare-substructure").score(train)


def test_top_mean_averages_each_groups_largest_values():
    values = np.array([1.0, 5.0, 3.0, 2.0, 4.0, 9.0])
    group = np.array([0, 0, 0, 0, 2, 2])
    np.testing.assert_allclose(top_mean(values, group, 3, 3), [(5 + 3 + 2) / 3, 0.0, (9 + 4) / 2])
