"""The consensus detector: calibrated components combined into one p-value."""
from __future__ import annotations

import numpy as np
import pytest

from core import GLocalKDError, ParameterError, load, make_detector, roc_auc
from core.detectors.conformal import calibration_groups, calibration_split
from core.detectors.consensus import Consensus, combine_p_values, leave_one_out_p_values, separation_auc, view_weights
from tests.conftest import DEMO_DATA

SMALL = {"glocalkd": {"epochs": 3, "hidden_dim": 16, "out_dim": 8}, "wl-lesinn": {"ensemble_size": 16}}


def test_the_rules_rank_strong_evidence_first_and_ignore_a_component_that_says_normal():
    p = np.array([[0.5, 0.5], [0.001, 0.9], [0.001, 0.999], [0.2, 0.2]])
    for rule in ("fisher", "minp"):
        t = combine_p_values(p, rule)
        assert t[1] > t[0] and t[2] > t[3], rule
    # Cauchy's tan((0.5 - p) pi) is as large below zero for p near 1 as above it for p near 0:
    # a component calling an anomaly very normal cancels another's strong evidence
    cauchy = combine_p_values(p, "cauchy")
    assert cauchy[1] > cauchy[0] and cauchy[2] < cauchy[3]
    with pytest.raises(GLocalKDError):
        combine_p_values(p, "mean")


def test_leave_one_out_p_values_rank_each_calibration_graph_among_the_others():
    np.testing.assert_allclose(leave_one_out_p_values(np.array([3.0, 1.0, 2.0])), [1 / 3, 1.0, 2 / 3])


@pytest.fixture(scope="module")
def herg():
    return load(DEMO_DATA / "herg.tab")


def test_consensus_finds_what_any_of_its_views_finds(herg):
    """Train on hERG blockers; score held-out blockers and non-blockers. The consensus must beat
    a coin and keep GLocalKD's node errors for the heatmaps."""
    labels = np.array(herg.labels)
    normal = np.flatnonzero(labels == "1")
    order = np.random.default_rng(0).permutation(normal)
    train, held = order[:300], order[300:]
    test = np.sort(np.concatenate([held, np.flatnonzero(labels == "0")]))
    model = make_detector("consensus", component_params=SMALL, seed=0).fit(herg.subset(np.sort(train)))
    assert model.components == ["glocalkd", "wl-lesinn", "size"] and model.reserve_views == ["wl-count-lesinn"]
    assert set(model.components_) == set(model.views) == {"glocalkd", "wl-lesinn", "size", "wl-count-lesinn"}
    assert model.scored_views() == model.components  # a reserve view waits for known anomalies
    assert len(model.calibration_scores_) == 60
    scores = model.score(herg.subset(test))
    auc = roc_auc(labels[test] == "0", scores.score)
    assert auc > 0.6, auc
    assert scores.has_node_scores and np.isfinite(scores.node_errors).all()
    assert set(scores.parts) == {"component:glocalkd", "component:wl-lesinn", "component:size"}
    p = model.p_values(scores.score)
    assert np.all((p > 0) & (p <= 1))
    # the fitted statistics are the scores score() gives: a tie is a tie (flags, p-values)
    fit_idx, _ = calibration_split(300, model.calibration, model.seed, calibration_groups(herg.subset(np.sort(train))))
    np.testing.assert_array_equal(model.score(herg.subset(np.sort(train)[fit_idx])).score, model.train_scores_)
    assert model.p_values(np.array([model.calibration_scores_.max()]))[0] == pytest.approx(
        (1 + np.sum(model.calibration_scores_ == model.calibration_scores_.max())) / 61)
    per_component = model.component_p_values(herg.subset(test[:10]))
    assert set(per_component) == set(model.components)
    # each component's own score, as its detector alone scores the graphs (for per-component AUCs)
    own = model.component_scores(herg.subset(test[:10]))
    assert list(own) == model.components == list(scores.component_scores())
    for name in model.components:
        detector = model.components_[name]
        np.testing.assert_allclose(own[name], detector.score(herg.subset(test[:10])).score, rtol=1e-6)
        np.testing.assert_array_equal(scores.component_scores()[name][:10],
                                      detector.score(herg.subset(test[:10])).score.astype(np.float32))
    assert model.components_["glocalkd"].score(herg.subset(test[:1])).parts  # GLocalKD's readouts ...
    assert model.components_["glocalkd"].score(herg.subset(test[:1])).component_scores() == {}  # ... no components


def test_invalid_components_or_rule_are_one_clear_error(herg):
    for params in ({"components": ("glocalkd", "nope")}, {"components": ()}, {"rule": "vote"},
                   {"components": ("size", "size")}, {"calibration": 1.5}):
        with pytest.raises(GLocalKDError):
            make_detector("consensus", **params).fit(herg.subset(range(100)))


def test_an_evaluation_of_the_consensus_records_each_component_auc(tmp_path):
    from core.evaluation import evaluate
    from tests.conftest import ring, write_tu

    rng = np.random.default_rng(0)
    # 40 normal graphs a fold's training part: as many as a consensus needs to hold out its calibration share
    graphs = [(n, ring(n), 0) for n in rng.integers(6, 9, size=80)] + [(n, ring(n), 1) for n in (14, 15, 16, 17, 18)] * 2
    data = write_tu(tmp_path, "RINGS", graphs)
    result = evaluate(data, folds=2, method="consensus",
                      model_params={"component_params": SMALL, "components": ("glocalkd", "size")})
    fold = result.folds[0]
    assert set(fold.auc_readouts) >= {"component:glocalkd", "component:size"}
    assert fold.auc_readouts["component:size"] > 0.9  # the anomalies are the large rings
    assert "component size" in result.summary()


def test_weights_from_known_anomalies_trust_the_view_that_ranks_them_high(tmp_path):
    """Normal graphs are rings of 6-8 nodes, the known anomalies rings of 14-18: graph size tells
    them apart best, so it gets the larger weight, and a held-out large ring gains on a graph of
    normal size that only WL-LESINN finds odd (a triangle with a tail). The weighted model keeps
    its weights, scores and p-values in its file."""
    from tests.conftest import ring, write_tu

    rng = np.random.default_rng(0)
    normal = [(int(n), ring(int(n)), 0) for n in rng.integers(6, 9, size=80)]
    known = [(n, ring(n), 1) for n in (14, 15, 16, 17, 18)]
    tailed_triangle = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 6)]
    test = [(7, ring(7), 0), (16, ring(16), 1), (7, tailed_triangle, 1)]
    data = load(write_tu(tmp_path, "RINGS", normal + known + test))
    fit_set, known_set, test_set = data.subset(range(80)), data.subset(range(80, 85)), data.subset([85, 86, 87])
    model = make_detector("consensus", components=("wl-lesinn", "size"), reserve_views=(), seed=0,
                          component_params={"wl-lesinn": {"ensemble_size": 16}}, known_classifier=False).fit(fit_set)
    assert model.view_weights_ is None and model.known_anomaly_auc_ is None
    before = model.score(test_set).score
    cal_before = model.calibration_scores_.copy()

    auc = model.weigh_views(known_set)
    assert auc["size"] == 1.0 and model.view_weights_["size"] > model.view_weights_["wl-lesinn"]
    assert np.mean(list(model.view_weights_.values())) == pytest.approx(1.0)
    after = model.score(test_set).score
    assert after[2] < before[2] and after[1] - after[2] > before[1] - before[2]
    assert after[0] == before[0] == 0.0  # a normal ring: no evidence in any view
    # the calibration graphs' statistics are recomputed with the weights (p-values stay calibrated)
    weights = np.array([model.view_weights_[n] for n in model.components])
    loo = np.column_stack([leave_one_out_p_values(model.component_calibration_[n]) for n in model.components])
    np.testing.assert_allclose(model.calibration_scores_, combine_p_values(loo, "fisher", weights), rtol=1e-6)
    assert not np.allclose(model.calibration_scores_, cal_before)
    fit_idx, _ = calibration_split(80, model.calibration, model.seed)
    np.testing.assert_array_equal(model.score(fit_set.subset(fit_idx)).score, model.train_scores_)

    path = tmp_path / "weighted.pt"
    model.save(path)
    loaded = make_detector("consensus").load(path)
    assert loaded.view_weights_ == model.view_weights_ and loaded.known_anomaly_auc_ == model.known_anomaly_auc_
    np.testing.assert_array_equal(loaded.score(test_set).score, after)


def test_a_reserve_view_counts_only_once_known_anomalies_weigh_it(tmp_path):
    """Rings of 6-8 nodes are normal, rings of 14-18 the known anomalies. Every node of a ring
    has the same subtrees, so WL-LESINN (shares of subtrees) cannot tell a large ring from a
    small one; the reserve view, LESINN on raw WL counts, can. Until known anomalies weigh the
    views, the reserve view changes nothing (not even scored); then it takes the weight."""
    from tests.conftest import ring, write_tu

    rng = np.random.default_rng(1)
    normal = [(int(n), ring(int(n)), 0) for n in rng.integers(6, 9, size=80)]
    known = [(n, ring(n), 1) for n in (14, 15, 16, 17, 18)]
    data = load(write_tu(tmp_path, "RINGS", normal + known + [(7, ring(7), 0), (16, ring(16), 1)], node_labels=False))
    fit_set, known_set, test_set = data.subset(range(80)), data.subset(range(80, 85)), data.subset([85, 86])
    params = dict(components=("wl-lesinn",), seed=0, component_params={"wl-lesinn": {"ensemble_size": 16}},
                  known_classifier=False)  # the weighing alone: the classifier view has tests of its own
    model = make_detector("consensus", **params).fit(fit_set)
    plain = make_detector("consensus", reserve_views=(), **params).fit(fit_set)
    assert model.scored_views() == ["wl-lesinn"] and set(model.components_) == {"wl-lesinn", "wl-count-lesinn"}
    assert model.weights_now() == {"wl-lesinn": 1.0, "wl-count-lesinn": 0.0}
    assert list(model.molecule_views()) == ["wl-lesinn"]  # what screening's parsing workers score: not the reserve
    before = model.score(test_set)
    np.testing.assert_array_equal(before.score, plain.score(test_set).score)  # the same consensus, exactly
    np.testing.assert_array_equal(model.calibration_scores_, plain.calibration_scores_)
    assert set(before.parts) == {"component:wl-lesinn"}
    assert before.score[1] == before.score[0]  # a large ring looks like a small one to WL-LESINN

    auc = model.weigh_views(known_set)
    assert auc["wl-count-lesinn"] == 1.0 and auc["wl-lesinn"] <= 0.5
    assert model.view_weights_ == {"wl-lesinn": 0.0, "wl-count-lesinn": 2.0}
    assert model.scored_views() == ["wl-lesinn", "wl-count-lesinn"] and model.weights_now() == model.view_weights_
    assert list(model.molecule_views()) == ["wl-lesinn", "wl-count-lesinn"]
    after = model.score(test_set)
    assert set(after.parts) == {"component:wl-lesinn", "component:wl-count-lesinn"}
    assert after.score[1] > after.score[0]  # the large ring: the smallest p-value its calibration allows
    assert model.p_values(after.score)[1] == pytest.approx(1 / (len(model.calibration_scores_) + 1))
    loo = np.column_stack([leave_one_out_p_values(model.component_calibration_[n]) for n in model.views])
    np.testing.assert_allclose(model.calibration_scores_, combine_p_values(loo, "fisher", np.array([0.0, 2.0])),
                               rtol=1e-6)
    fit_idx, _ = calibration_split(80, model.calibration, model.seed)
    np.testing.assert_array_equal(model.score(fit_set.subset(fit_idx)).score, model.train_scores_)
    path = tmp_path / "weighed.pt"
    model.save(path)
    loaded = make_detector("consensus").load(path)
    assert loaded.reserve_views == ["wl-count-lesinn"] and loaded.view_weights_ == model.view_weights_
    np.testing.assert_array_equal(loaded.score(test_set).score, after.score)


def test_raw_wl_counts_give_euclidean_distances_between_count_vectors(tmp_path):
    """WL-count-LESINN's distances are those of the graphs' subtree count vectors, unseen
    subtrees included; WL-LESINN's are the normalised kernel's."""
    from core.detectors.graph_kernels import GraphKernel, labelled_graphs
    from tests.conftest import ring, write_tu

    graphs = [(6, ring(6), 0), (9, ring(9), 0), (4, [(0, 1), (1, 2), (2, 3)], 0), (5, [(0, 1), (0, 2), (0, 3), (0, 4)], 0)]
    data = load(write_tu(tmp_path, "MIX", graphs, node_labels=False))
    train, new = data.subset([0, 1, 2]), data.subset([3])
    raw = GraphKernel("wl", 3, normalize=False)
    raw.fit(train)
    norm = GraphKernel("wl", 3)
    k_norm = norm.fit(train)

    def counts(graph_set):  # each graph's subtree labels per WL iteration, counted by hand
        from collections import Counter

        out = []
        for edges, labels in labelled_graphs(graph_set):
            nbrs = {i: sorted(edges[1][edges[0] == i].tolist()) for i in range(len(labels))}
            lab = [str(x) for x in labels]
            c = Counter((0, x) for x in lab)
            for it in range(1, 4):
                lab = [lab[i] + "|" + ",".join(sorted(lab[j] for j in nbrs[i])) for i in range(len(lab))]
                c.update((it, x) for x in lab)
            out.append(c)
        return out

    def dist(a, b):
        keys = set(a) | set(b)
        return np.sqrt(sum((a[k] - b[k]) ** 2 for k in keys))

    c_train, c_new = counts(train), counts(new)
    expected = np.array([[dist(c_new[0], t) for t in c_train]])
    np.testing.assert_allclose(raw.distances_labelled(labelled_graphs(new)), expected, atol=1e-9)
    np.testing.assert_allclose(norm.distances(k_norm, np.ones(3)), np.sqrt(np.clip(2 - 2 * k_norm, 0, None)))
    model = make_detector("wl-count-lesinn", ensemble_size=8, subsample_size=2).fit(train)
    assert model.name == "wl-count-lesinn" and np.all(np.isfinite(model.score(new).score))


def test_weighing_needs_enough_known_anomalies_and_a_summing_rule(herg):
    from core import DataError

    model = make_detector("consensus", components=("size",), seed=0).fit(herg.subset(range(100)))
    with pytest.raises(DataError, match="at least 3 known anomalies"):
        model.weigh_views(herg.subset([100, 101]))
    minp = make_detector("consensus", components=("size",), rule="minp", seed=0).fit(herg.subset(range(100)))
    with pytest.raises(GLocalKDError, match="cannot weigh"):
        minp.weigh_views(herg.subset(range(100, 110)))


def test_separation_auc_is_the_roc_auc_of_anomalies_against_normals():
    rng = np.random.default_rng(0)
    normal, anomalous = rng.integers(0, 5, 40).astype(float), rng.integers(2, 8, 7).astype(float)  # many ties
    expected = roc_auc(np.r_[np.zeros(40), np.ones(7)].astype(bool), np.r_[normal, anomalous])
    assert separation_auc(normal, anomalous) == pytest.approx(expected)


def test_known_anomalies_no_view_ranks_high_leave_equal_weights():
    assert view_weights({"a": 0.4, "b": 0.5}) is None
    assert view_weights({"a": 0.9, "b": 0.6, "c": 0.2}) == pytest.approx({"a": 3 * 0.4 / 0.5, "b": 3 * 0.1 / 0.5, "c": 0.0})


def test_an_evaluation_with_known_anomalies_draws_them_from_the_training_part(tmp_path):
    from core.evaluation import evaluate
    from tests.conftest import ring, write_tu

    rng = np.random.default_rng(0)
    graphs = [(n, ring(n), 0) for n in rng.integers(6, 9, size=80)] + [(n, ring(n), 1) for n in (14, 15, 16, 17, 18)] * 2
    data = write_tu(tmp_path, "RINGS", graphs)
    log = []
    result = evaluate(data, folds=2, method="consensus", known_anomalies=3, on_progress=log.append,
                      model_params={"component_params": SMALL, "components": ("glocalkd", "size")})
    assert result.options["known_anomalies"] == 3
    for fold in result.folds:
        assert fold.n_train == 40 and fold.n_test == 45 and fold.n_test_anomalies == 5  # test part untouched
        assert "equal-weights" in fold.auc_readouts and fold.auc > 0.9
    assert sum("; 3 known anomalies" in line for line in log) == 2
    assert "ROC-AUC with the views weighed equally" in result.summary()
    with pytest.raises(GLocalKDError, match="known anomalies weigh the consensus"):
        evaluate(data, folds=2, method="size", known_anomalies=3)


def test_the_kernel_views_compare_with_a_bounded_pool_of_fit_graphs(herg, tmp_path, monkeypatch):
    """However many graphs it is trained on, a WL view compares a graph with at most
    VIEW_POOL_SIZE of them (so screening costs the same); a view's own pool_size wins, and the
    model file keeps it."""
    from core.detectors import consensus

    monkeypatch.setattr(consensus, "VIEW_POOL_SIZE", 100)
    train = herg.subset(np.arange(300))
    model = make_detector("consensus", component_params=SMALL, seed=0).fit(train)
    fit_graphs = len(train) - len(model.calibration_scores_)
    assert fit_graphs > 100
    for name in ("wl-lesinn", "wl-count-lesinn"):
        view = model.components_[name]
        assert view.pool_size == 100 and view.kernel_.n_train_ == 100 and len(view.train_scores_) == fit_graphs
    every = make_detector("consensus", component_params={**SMALL, "wl-lesinn": {"ensemble_size": 16, "pool_size": None}},
                          seed=0).fit(train)
    assert every.components_["wl-lesinn"].kernel_.n_train_ == fit_graphs
    path = tmp_path / "pooled.pt"
    model.save(path)
    loaded = make_detector("consensus").load(path)
    assert loaded.components_["wl-lesinn"].pool_size == 100
    np.testing.assert_array_equal(loaded.score(herg.subset(np.arange(300, 400))).score,
                                  model.score(herg.subset(np.arange(300, 400))).score)


def test_only_the_measured_wl_views_get_the_pool():
    """The pool was measured on WL-LESINN and WL counts; another kernel view keeps every fit graph."""
    from core.detectors.consensus import VIEW_POOL_SIZE

    model = make_detector("consensus", components=("wl-lesinn", "wl-iforest", "size"), reserve_views=("wl-count-lesinn",))
    assert model._make("wl-lesinn").pool_size == model._make("wl-count-lesinn").pool_size == VIEW_POOL_SIZE
    assert model._make("wl-iforest").pool_size is None


@pytest.mark.parametrize("setting, param", [(dict(rule="median"), "rule"), (dict(calibration=0.0), "calibration"),
                                            (dict(components=("glocalkd", "glocalkd")), "components")])
def test_a_bad_setting_names_its_parameter(setting, param):
    """Each front end words the parameter as its own (core.errors.ParameterError)."""
    with pytest.raises(ParameterError) as failure:
        Consensus(**setting).validate_params()
    assert failure.value.param == param and "{" not in str(failure.value)


@pytest.mark.parametrize("entry", ["component_calibration", "component_train"])
def test_a_model_file_whose_views_hold_scores_of_other_graphs_is_refused(tmp_path, entry):
    """A file with one view's calibration (or fit-graph) scores cut short, its digest made to
    match, loaded and gave p-values against mismatched graphs; it is refused, naming the file."""
    import torch

    from core import ModelFileError, load_detector
    from core.data.serialization import decode_state, encode_state
    from core.runtime.model_files import write_model_file
    from tests.conftest import ring, write_tu

    rng = np.random.default_rng(0)
    data = load(write_tu(tmp_path, "RINGS", [(int(n), ring(int(n)), 0) for n in rng.integers(6, 9, size=60)],
                         node_labels=False))
    model = make_detector("consensus", components=("size", "wl-lesinn"), seed=0, known_classifier=False).fit(data)
    model.save(tmp_path / "m.pt")
    file = torch.load(tmp_path / "m.pt", weights_only=True)
    state = decode_state(file["state"])
    state[entry]["size"] = state[entry]["size"][:-3]
    write_model_file(tmp_path / "m.pt", {**file, "state": encode_state(state)})
    with pytest.raises(ModelFileError, match="graphs, not of one set") as info:
        load_detector(tmp_path / "m.pt", device="cpu")
    assert str(tmp_path / "m.pt") in str(info.value)


def test_the_library_fits_a_consensus_by_the_plans_calibration_rule(tmp_path):
    """``make_detector("consensus", calibration=0.9).fit(...)`` trained its views on a tenth of the
    graphs, a share ``train_model`` refuses; a model file of an older rule still loads."""
    from core import ParameterError
    from tests.conftest import ring, write_tu

    data = load(write_tu(tmp_path, "RINGS", [(n, ring(n), 0) for n in [6, 7, 8] * 30], node_labels=False))
    with pytest.raises(ParameterError, match="at most 0.5") as refused:
        make_detector("consensus", components=("size",), calibration=0.9, reserve_views=()).fit(data)
    assert refused.value.params == ("calibration",)
    assert make_detector("consensus", components=("size",), calibration=0.9, reserve_views=()).get_params()
