"""The paper's competing detectors: LESINN, the WL/PK two-step methods, OCGCN and the registry."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from core import load, write_report
from core.detectors.registry import DEFAULT_DETECTOR, DETECTORS, accepted_params, detector_info, make_detector
from core.errors import GLocalKDError
from core.evaluation import evaluate, paper_value
from core.nn.gcn import GCNEncoder
from core.detectors.graph_kernels import GraphKernel, kernel_distance, node_labels
from core.detectors.lesinn import LESINN
from core.evaluation.metrics import roc_auc
from tests.conftest import path, ring, write_tu

SMALL_GCN = dict(epochs=30, lr=1e-2, batch_size=16, hidden_dim=16, out_dim=8, num_layers=2, device="cpu")


@pytest.fixture
def odd_rings(tmp_path: Path):
    """40 normal rings of 5-12 nodes with random node labels 0-2 (graph label 5) and 6 anomalous
    paths whose nodes carry label 9, which no normal graph has: every detector should rank the
    paths first. 30 of the rings are the training set."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(5, 13, size=40).tolist()
    graphs = [(n, ring(n), 5) for n in sizes] + [(6, path(6), 0) for _ in range(6)]
    folder = write_tu(tmp_path / "ODD", "ODD", graphs)
    labels = rng.integers(0, 3, size=sum(sizes)).tolist() + [9] * 36
    (folder / "ODD_node_labels.txt").write_text("\n".join(map(str, labels)) + "\n")
    data = load(folder)
    is_anom = np.array([lab == "0" for lab in data.labels])
    train = data.subset(list(range(30)))
    return data, is_anom, train


def test_lesinn_scores_far_points_higher_and_precomputed_matches_vectors():
    rng = np.random.default_rng(0)
    normal = rng.normal(size=(300, 2))
    test = np.vstack([rng.normal(size=(50, 2)), rng.normal(size=(10, 2)) + 8.0])
    a = LESINN(ensemble_size=20, subsample_size=16, seed=3).fit(normal)
    scores = a.decision_function(test)
    assert scores[50:].min() > scores[:50].max()
    from sklearn.metrics import pairwise_distances

    b = LESINN(ensemble_size=20, subsample_size=16, metric="precomputed", seed=3).fit(pairwise_distances(normal))
    assert np.allclose(b.decision_function(pairwise_distances(test, normal)), scores)
    assert np.allclose(b.train_scores_, a.train_scores_)


def test_lesinn_training_points_are_not_their_own_nearest_neighbour():
    x = np.array([[0.0], [1.0], [3.0]])
    model = LESINN(ensemble_size=4, subsample_size=3, seed=0).fit(x)
    # every member holds all three points: nearest other point is 1, 1 and 2 away
    assert np.allclose(model.train_scores_, [1.0, 1.0, 2.0])
    assert np.allclose(model.decision_function(x), [0.0, 0.0, 0.0])


def test_kernels_are_normalised_and_distances_follow():
    rings = [(5, ring(5), 1), (6, ring(6), 1), (7, path(7), 0)]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        data = load(write_tu(Path(tmp) / "K", "K", rings))
    for kind in ("wl", "pk"):
        kernel = GraphKernel(kind, seed=0)
        k = kernel.fit(data)
        assert k.shape == (3, 3) and np.allclose(np.diag(k), 1.0)
        assert np.allclose(kernel.transform(data.subset([2])), k[2:3])
        assert np.allclose(np.diag(kernel_distance(k)), 0.0)


def test_propagation_kernel_equals_grakels_own_computation(odd_rings):
    """The sparse product gives GraKeL's pairwise kernel, also for new graphs whose node label
    (9) no training graph has, which GraKeL hashes with fresh random directions."""
    from grakel.kernels import Propagation

    from core.detectors.graph_kernels import to_grakel

    data, _, train = odd_rings
    ours = GraphKernel("pk", seed=3)
    theirs = Propagation(normalize=True, random_state=3)
    assert np.allclose(ours.fit(train), theirs.fit_transform(to_grakel(train)), atol=1e-12)
    assert np.allclose(ours.transform(data), np.nan_to_num(theirs.transform(to_grakel(data))), atol=1e-12)


def test_node_labels_for_tu_molecules_and_plain_graphs(tmp_path, herg_path):
    plain = load(write_tu(tmp_path / "P", "P", [(4, path(4), 1)], node_labels=False))
    assert node_labels(plain.graphs[0]).tolist() == [1, 2, 2, 1]  # degrees
    mol = load(herg_path)
    from core.data.chem import ELEMENTS

    carbon = ELEMENTS.index("C")
    assert carbon in node_labels(mol.graphs[0]).tolist()


@pytest.mark.parametrize("name", ["wl-iforest", "wl-lesinn", "pk-iforest", "pk-lesinn", "ocgcn"])
def test_every_competitor_ranks_unseen_structures_first(odd_rings, name):
    data, is_anom, train = odd_rings
    params = SMALL_GCN if name == "ocgcn" else {}
    model = make_detector(name, **params).fit(train)
    scores = model.score(data)
    assert roc_auc(is_anom, scores.score) > 0.9
    assert not scores.has_node_scores and not model.has_node_scores
    assert len(model.train_scores_) == len(train)
    assert model.threshold(50) <= model.threshold(99)
    assert model.graph_embeddings(data).shape[0] == len(data)


def test_ocgcn_follows_deep_svdd(odd_rings):
    _, _, train = odd_rings
    model = make_detector("ocgcn", **SMALL_GCN).fit(train)
    assert all(p.dim() == 2 for p in model.net_.parameters())  # no biases: no collapse onto the centre
    assert (model.center_.abs() >= model.eps - 1e-7).all()
    assert model.loss_history_[-1] < model.loss_history_[0]
    again = make_detector("ocgcn", **SMALL_GCN).fit(train)
    assert np.allclose(again.train_scores_, model.train_scores_)


def test_graph_only_scores_leave_node_columns_empty_in_the_report(odd_rings, tmp_path):
    data, _, train = odd_rings
    scores = make_detector("wl-iforest").fit(train).score(data)
    assert scores.top_nodes(0) == [] and math.isnan(scores.graph_term[0])
    out = tmp_path / "r.csv"
    write_report(out, data, scores)
    rows = list(csv.DictReader(out.open()))[:-1]  # less the end row
    assert len(rows) == len(data)
    assert all(r["graph_score"] == "" and r["node_score"] == "" and r["top_nodes"] == "" for r in rows)
    assert all(float(r["score"]) == pytest.approx(float(v), rel=1e-5)
               for r, v in zip(rows, np.sort(scores.score)[::-1]))


def test_the_default_detector_is_the_consensus_of_glocalkd_graph_size_and_wl_lesinn():
    import core
    from core.detectors.consensus import Consensus

    assert core.DEFAULT_DETECTOR == DEFAULT_DETECTOR == "consensus"
    model = make_detector()
    assert isinstance(model, Consensus) and model.name == "consensus"
    assert set(model.components) == {"glocalkd", "wl-lesinn", "size"} and model.rule == "fisher"
    assert isinstance(make_detector(seed=3), Consensus) and make_detector(seed=3).seed == 3
    assert type(make_detector("glocalkd")).__name__ == "GLocalKD"  # the paper's method stays a choice


def test_registry_builds_each_detector_and_refuses_unknown_names_and_settings():
    assert set(DETECTORS) == {"glocalkd", "ocgcn", "wl-iforest", "wl-lesinn", "wl-count-lesinn", "pk-iforest",
                              "pk-lesinn", "gin-iforest", "kme-lesinn", "spectral-lesinn", "distance-lesinn", "graphlet-lesinn",
                              "rare-substructure", "property-lesinn", "ecfp-nn", "size", "consensus"}
    counts = make_detector("wl-count-lesinn")
    assert counts.name == "wl-count-lesinn" and counts.get_params()["normalize"] is False
    assert "normalize" in accepted_params("glocalkd") and "normalize" not in accepted_params("wl-lesinn")
    assert detector_info("GLocalKD").has_node_scores
    assert "lam" in accepted_params("glocalkd") and "lam" not in accepted_params("ocgcn")
    assert make_detector("pk-lesinn").get_params()["kernel"] == "pk"
    with pytest.raises(GLocalKDError, match="unknown detector"):
        make_detector("svm")
    with pytest.raises(GLocalKDError, match="does not take epochs"):
        make_detector("wl-iforest", epochs=3)
    with pytest.raises(GLocalKDError, match="not trained"):
        make_detector("wl-lesinn").score(None)


def test_encoder_without_bias_has_weights_only():
    net = GCNEncoder(3, 4, 2, 2, bias=False)
    assert all(name.endswith("weight") for name, _ in net.named_parameters())
    assert net(torch.ones(2, 3), torch.eye(2).to_sparse_csr()).shape == (2, 2)


def test_evaluate_runs_a_competitor_on_the_same_folds(odd_rings, tmp_path):
    data, _, _ = odd_rings
    a = evaluate(data, folds=3, method="wl-lesinn")
    b = evaluate(data, folds=3, method="glocalkd", model_params=dict(SMALL_GCN, epochs=2))
    assert a.method == "wl-lesinn" and b.method == "glocalkd"
    assert [f.n_test_anomalies for f in a.folds] == [f.n_test_anomalies for f in b.folds]
    assert a.mean("auc") > 0.9 and math.isnan(a.mean("auc_graph"))
    assert "graph term" not in a.summary()
    with pytest.raises(GLocalKDError, match="two score terms"):
        evaluate(data, folds=3, method="ocgcn", score="graph", model_params=SMALL_GCN)
    assert paper_value("AIDS", "wl-lesinn") == (0.584, 0.016)


def test_a_resumed_evaluation_runs_only_the_missing_folds_and_equals_a_whole_run(odd_rings):
    data, _, _ = odd_rings
    whole = evaluate(data, folds=3, method="wl-iforest")
    folds_done = {"n": 0}
    partial = evaluate(data, folds=3, method="wl-iforest", on_fold=lambda r: folds_done.update(n=len(r.folds)),
                       should_stop=lambda: folds_done["n"] >= 1)
    assert len(partial.folds) == 1 and not partial.complete
    seen: list[str] = []
    resumed = evaluate(data, folds=3, method="wl-iforest", resume=partial, on_progress=seen.append)
    assert any("1 of 3 folds already done" in m for m in seen)
    assert resumed.complete and [f.auc for f in resumed.folds] == [f.auc for f in whole.folds]
    with pytest.raises(GLocalKDError, match="cannot resume"):
        evaluate(data, folds=3, method="wl-lesinn", resume=partial)


def test_folds_run_in_separate_processes_merge_into_the_whole_run(odd_rings):
    """``only`` splits one evaluation between processes; resuming from all parts gives the result
    an uninterrupted run gives, and parts of different evaluations refuse to merge."""
    data, _, _ = odd_rings
    whole = evaluate(data, folds=3, method="wl-iforest")
    first = evaluate(data, folds=3, method="wl-iforest", only=[1, 3])
    second = evaluate(data, folds=3, method="wl-iforest", only=[2])
    assert [f.fold for f in first.folds] == [1, 3] and not first.complete
    seen: list[str] = []
    merged = evaluate(data, folds=3, method="wl-iforest", resume=[first, second], on_progress=seen.append)
    assert any("3 of 3 folds already done" in m for m in seen)
    assert merged.complete and [f.auc for f in merged.folds] == [f.auc for f in whole.folds]
    assert merged.wall_seconds >= first.wall_seconds + second.wall_seconds
    with pytest.raises(GLocalKDError, match="no fold 4"):
        evaluate(data, folds=3, method="wl-iforest", only=[4])
    other = evaluate(data, folds=3, method="wl-lesinn", only=[2])
    with pytest.raises(GLocalKDError, match="cannot merge"):
        evaluate(data, folds=3, method="wl-iforest", resume=[first, other])



def test_size_baseline_scores_how_far_a_graph_size_is_from_the_training_sizes(tmp_path):
    """Rings of 8-10 nodes train it; a ring of 9 is normal, rings of 3 or 30 nodes are not, and
    structure does not matter: a path of 9 nodes (8 edges, not 9) is only a little unusual."""
    train = load(write_tu(tmp_path / "T", "T", [(n, ring(n), 1) for n in (8, 9, 10) * 5]))
    test = load(write_tu(tmp_path / "S", "T_testing", [(9, ring(9), 1), (3, ring(3), 0), (30, ring(30), 0),
                                                       (9, path(9), 0)]))  # a split of T: the same kind
    model = make_detector("size").fit(train)
    s = model.score(test).score
    assert s[0] < s[3] < min(s[1], s[2])
    assert s[0] < 0.01  # the mean size (in logs) of the training rings
    assert len(model.train_scores_) == 15 and model.threshold(50) <= model.threshold(99)
    assert not model.score(test).has_node_scores
    one_size = make_detector("size").fit(load(write_tu(tmp_path / "U", "T_training", [(5, ring(5), 1)] * 3)))
    assert np.isfinite(one_size.score(test).score).all()  # zero spread in training: no division by zero


def test_every_view_that_scores_whole_graphs_takes_the_one_scoring_template():
    """A graph-level view gives its values only (``graph_scores``); the checks, the progress call and
    the empty set are the base class's, so a new view cannot forget one of them."""
    from core.data.graphset import GraphSet
    from core.detectors.base import GraphLevelDetector

    own_scoring = {"glocalkd", "ocgcn", "consensus"}  # node errors, or batches on a network
    for name in DETECTORS:
        detector = make_detector(name)
        if name in own_scoring:
            assert not isinstance(detector, GraphLevelDetector), name
            continue
        assert isinstance(detector, GraphLevelDetector) and type(detector).score is GraphLevelDetector.score, name
        with pytest.raises(GLocalKDError, match="not (fitted|trained)"):
            detector.score(GraphSet([], []))


def test_a_graph_level_view_scores_an_empty_set_and_reports_its_progress(odd_rings):
    from core.data.graphset import GraphSet

    data, _, train = odd_rings
    size = make_detector("size").fit(train)
    seen = []
    scores = size.score(data, on_progress=lambda done, total: seen.append((done, total)))
    assert seen == [(len(data), len(data))] and not scores.has_node_scores
    np.testing.assert_array_equal(scores.score, size.graph_scores(data).astype(np.float32))
    empty = size.score(GraphSet([], []))
    assert len(empty) == 0 and empty.score.dtype == np.float32


FAST = {"glocalkd": dict(epochs=2, hidden_dim=16, out_dim=8, device="cpu"),
        "ocgcn": dict(epochs=2, hidden_dim=16, out_dim=8, device="cpu"),
        "consensus": dict(component_params={"glocalkd": dict(epochs=2, hidden_dim=16, out_dim=8)}, device="cpu")}


@pytest.mark.parametrize("name", sorted(DETECTORS))
def test_a_model_read_back_from_its_file_keeps_its_fingerprint(name, tmp_path):
    """Reports name the model that scored them by its fingerprint (a shard merge and the app's
    review compare them): the same model, trained in memory or read from its file, must give the
    same one, and another fit another."""
    from core import load_detector

    molecules = load(Path(__file__).resolve().parents[3] / "app" / "demo_data" / "herg.tab")
    normal = molecules.with_label("1").subset(list(range(80)))
    model = make_detector(name, **FAST.get(name, {})).fit(normal)
    if not model.can_save:  # no file, so no report can be matched with one: it says so
        with pytest.raises(GLocalKDError, match="cannot be saved"):
            model.fingerprint()
        return
    model.save(tmp_path / "model.pt")
    again = load_detector(tmp_path / "model.pt")
    assert again.fingerprint() == model.fingerprint()
    other = make_detector(name, **FAST.get(name, {})).fit(molecules.with_label("1").subset(list(range(80, 160))))
    assert other.fingerprint() != model.fingerprint()


@pytest.mark.parametrize("name, setting", [
    ("wl-lesinn", {"wl_iterations": -5}), ("pk-lesinn", {"wl_iterations": -1}), ("wl-iforest", {"n_estimators": 0}),
    ("wl-iforest", {"max_samples": 0}), ("wl-lesinn", {"ensemble_size": 0}), ("spectral-lesinn", {"subsample_size": 0}),
    ("distance-lesinn", {"ensemble_size": -1}), ("graphlet-lesinn", {"subsample_size": 0})])
def test_a_count_below_its_floor_is_refused_by_name_in_every_detector(name, setting):
    """wl_iterations -5 acted as 0 (and was recorded as -5); n_estimators 0 failed inside
    scikit-learn, ensemble_size 0 as 'LESINN needs at least one member', naming no setting."""
    from core import ParameterError, make_detector

    with pytest.raises(ParameterError) as refused:
        make_detector(name, **setting).check_params()
    assert refused.value.params == tuple(setting)
