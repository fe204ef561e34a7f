"""The evaluation harness: protocols, anomaly-class rules, training-set options, writers, CLI."""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from core import load
from core.cli.main import main
from core.errors import DataError, GLocalKDError
from core.evaluation import (EvaluationResult, choose_anomaly_label, dataset_name, evaluate, markdown_table,
                           paper_settings, read_json, write_json, write_markdown)
from tests.conftest import path, ring, write_tu

TINY = dict(epochs=2, hidden_dim=8, out_dim=4, num_layers=2, device="cpu")


def _label_file(folder: Path, name: str, labels: list[int]) -> None:
    (folder / f"{name}_node_labels.txt").write_text("\n".join(map(str, labels)) + "\n")


@pytest.fixture
def easy_tu(tmp_path: Path) -> Path:
    """9 anomalous rings (graph label 0, every node labelled 9) then 30 normal rings (label 5, node labels 0-2).

    Label 0 is both the minority and the first label; node label 9 never occurs in a normal graph,
    so a trained model must rank the anomalies first.
    """
    graphs = [(6, ring(6), 0) for _ in range(9)] + [(5 + i % 3, ring(5 + i % 3), 5) for i in range(30)]
    folder = write_tu(tmp_path / "EASY", "EASY", graphs)
    labels = [9] * (9 * 6) + [j % 3 for n, _, _ in graphs[9:] for j in range(n)]
    _label_file(folder, "EASY", labels)
    return folder


@pytest.fixture
def noisy_tu(tmp_path: Path) -> Path:
    """30 rings and paths of 4-8 nodes with random node labels, every third graph anomalous: the
    full score and its two terms rank them differently (on easy_tu all three AUCs are 1)."""
    import random

    rng = random.Random(3)
    graphs = [(n, ring(n) if i % 2 else path(n), int(i % 3 == 0))
              for i, n in enumerate(rng.randint(4, 8) for _ in range(30))]
    folder = write_tu(tmp_path / "NOISY", "NOISY", graphs)
    _label_file(folder, "NOISY", [rng.randint(0, 3) for n, _, _ in graphs for _ in range(n)])
    return folder


def test_anomaly_rules_minority_first_label_and_explicit(tu_folder, herg_path):
    toy = load(tu_folder)  # 8 rings labelled 1 listed first, then 4 paths labelled 0
    assert choose_anomaly_label(toy, "minority") == "0"
    assert choose_anomaly_label(toy, "first-label") == "1"
    assert choose_anomaly_label(toy, "1") == "1"
    with pytest.raises(DataError, match="no graph has that label"):
        choose_anomaly_label(toy, "7")
    herg = load(herg_path)  # 451 blockers (Y=1, first row) and 204 non-blockers
    assert choose_anomaly_label(herg, "minority") == "0"
    assert choose_anomaly_label(herg, "first-label") == "1"
    assert choose_anomaly_label(herg, "0.0") == "0"


def test_minority_ties_go_to_the_first_appearing_label(tmp_path):
    folder = write_tu(tmp_path / "TIE", "TIE", [(4, ring(4), 2), (4, ring(4), 1), (4, ring(4), 1), (4, ring(4), 2)])
    assert choose_anomaly_label(load(folder), "minority") == "2"


def test_cv_trains_on_normal_graphs_only_and_scores_every_held_out_graph(tu_folder):
    result = evaluate(tu_folder, protocol="cv", folds=4, method="glocalkd", model_params=TINY)
    assert result.complete and len(result.folds) == 4
    assert (result.anomaly_rule, result.anomaly_label, result.normal_labels) == ("minority", "0", ["1"])
    assert sum(f.n_test for f in result.folds) == 12            # every graph is held out exactly once
    assert sum(f.n_test_anomalies for f in result.folds) == 4
    for f in result.folds:
        assert f.n_train_anomalies == 0
        assert f.n_train == 8 - (f.n_test - f.n_test_anomalies)   # the training folds' normal graphs
        assert f.n_test_anomalies == 1                           # stratified
        assert 0.0 <= f.auc <= 1.0 and 0.0 <= f.auc_graph <= 1.0 and 0.0 <= f.auc_node <= 1.0
        assert f.epochs_run == 2
    assert result.std() >= 0 and math.isfinite(result.mean())


def test_cv_ranks_anomalies_with_unseen_node_labels_first(easy_tu):
    result = evaluate(easy_tu, folds=3, method="glocalkd",
                      model_params=dict(epochs=40, lr=1e-2, hidden_dim=16, out_dim=8, num_layers=2, device="cpu"))
    assert result.anomaly_label == "0"
    assert result.mean("auc") > 0.95
    assert result.mean("auc_node") > 0.95


def test_same_seeds_give_the_same_aucs_and_folds_follow_cv_seed(easy_tu):
    a = evaluate(easy_tu, folds=3, method="glocalkd", model_params=TINY)
    b = evaluate(easy_tu, folds=3, method="glocalkd", model_params=TINY)
    assert [f.auc for f in a.folds] == [f.auc for f in b.folds]
    assert a.options["cv_seed"] == 1


def test_first_label_rule_makes_the_other_class_normal(tu_folder):
    result = evaluate(tu_folder, folds=4, anomaly="first-label", method="glocalkd", model_params=TINY)
    assert (result.anomaly_rule, result.anomaly_label) == ("first-label", "1")
    assert sum(f.n_test_anomalies for f in result.folds) == 8
    assert all(f.n_train == 4 - (f.n_test - f.n_test_anomalies) for f in result.folds)


def test_contamination_and_train_fraction_shape_the_training_set(easy_tu):
    clean = evaluate(easy_tu, folds=3, method="glocalkd", model_params=TINY)
    dirty = evaluate(easy_tu, folds=3, contamination=0.1, method="glocalkd", model_params=TINY)
    for c, d in zip(clean.folds, dirty.folds):
        assert d.n_train_anomalies == round(0.1 / 0.9 * c.n_train) > 0
        assert d.n_train == c.n_train + d.n_train_anomalies
        assert d.n_test == c.n_test                                # the held-out fold is unchanged
    half = evaluate(easy_tu, folds=3, train_fraction=0.5, method="glocalkd", model_params=TINY)
    assert [f.n_train for f in half.folds] == [round(0.5 * c.n_train) for c in clean.folds]


def test_split_protocol_repeats_over_seeds_on_the_testing_file(tmp_path):
    train = write_tu(tmp_path / "Tox21_X_training", "Tox21_X_training",
                     [(5, ring(5), 0)] * 10 + [(4, ring(4), 1)] * 3)
    test = write_tu(tmp_path / "Tox21_X_testing", "Tox21_X_testing", [(5, ring(5), 0)] * 4 + [(4, ring(4), 1)] * 2)
    result = evaluate(train, protocol="split", test=test, seeds=[0, 1, 2], method="glocalkd", model_params=TINY)
    assert result.dataset == "Tox21 X" and result.anomaly_label == "1"
    assert [f.seed for f in result.folds] == [0, 1, 2]
    assert all((f.n_train, f.n_train_anomalies, f.n_test, f.n_test_anomalies) == (10, 0, 6, 2)
               for f in result.folds)
    assert len({f.auc for f in result.folds} | {f.final_loss for f in result.folds}) > 1  # seeds differ
    with pytest.raises(GLocalKDError, match="needs a testing file"):
        evaluate(train, protocol="split", method="glocalkd", model_params=TINY)


def test_split_refuses_testing_labels_the_training_data_has_not(tmp_path):
    """Training labelled -1/1, testing 0/1: the graphs labelled 0 counted as normal, unsaid."""
    train = write_tu(tmp_path / "train", "SET", [(5, ring(5), -1)] * 6 + [(4, ring(4), 1)] * 3)
    test = write_tu(tmp_path / "test", "SET", [(4, ring(4), 1), (5, ring(5), 0), (5, ring(5), -1), (5, ring(5), 0)])
    with pytest.raises(DataError, match=r"test:2: 2 testing graphs labelled 0 \(the first: SET #2\), which no "
                                        r"training graph is.*training labels: -1, 1"):
        evaluate(train, protocol="split", test=test, seeds=[0], method="glocalkd", model_params=TINY)


def test_molecule_file_cv_with_explicit_anomaly_class(herg_path):
    result = evaluate(herg_path, folds=3, anomaly="0", method="glocalkd", model_params=dict(TINY, epochs=1))
    assert result.dataset == "hERG"
    assert (result.anomaly_rule, result.anomaly_label, result.normal_labels) == ("explicit", "0", ["1"])
    assert sum(f.n_test for f in result.folds) == 655
    assert sum(f.n_train for f in result.folds) == 2 * 451      # each blocker trains in 2 of 3 folds


def test_ablation_score_ensemble_and_standardize_options(easy_tu):
    graph = evaluate(easy_tu, folds=3, score="graph", ensemble=2, zscore_attributes=True,
                     method="glocalkd", model_params=dict(TINY, epochs=1))
    assert graph.primary_score == "graph"
    assert graph.options["ensemble"] == 2 and graph.options["standardize"]
    assert "graph term only" in markdown_table([graph])


def test_the_primary_score_gives_the_auc_ap_and_fpr95_everywhere(noisy_tu, tmp_path, monkeypatch):
    """--score node: each fold's AUC, AP and FPR95 are of the node term, and the printed summary,
    the JSON summary and the Markdown table give the same AUC (the JSON and the printed lines gave
    both terms' AUC, the Markdown the term's, and AP and FPR95 were always of both terms)."""
    import core.evaluation.protocol as protocol
    from core.evaluation.metrics import average_precision, fpr_at_tpr, roc_auc

    ap_of, fpr_of = [], []  # the AUC of the scores that AP and FPR95 were measured on
    monkeypatch.setattr(protocol, "average_precision", lambda y, s: ap_of.append(roc_auc(y, s)) or
                        average_precision(y, s))
    monkeypatch.setattr(protocol, "fpr_at_tpr", lambda y, s: fpr_of.append(roc_auc(y, s)) or fpr_at_tpr(y, s))
    result = evaluate(noisy_tu, folds=3, score="node", method="glocalkd", model_params=dict(TINY, epochs=1))
    both = evaluate(noisy_tu, folds=3, method="glocalkd", model_params=dict(TINY, epochs=1))
    assert ap_of[:3] == fpr_of[:3] == [f.auc_node for f in result.folds]
    for f, b in zip(result.folds, both.folds):
        assert f.auc == f.auc_node and f.auc_both == b.auc == b.auc_both and f.auc_node == b.auc_node
    assert result.mean() == pytest.approx(result.mean("auc_node"))
    write_json(result, tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["summary"]["auc"]["mean"] == pytest.approx(result.mean("auc_node"))
    assert data["summary"]["auc_both"]["mean"] == pytest.approx(both.mean())
    assert f"ROC-AUC (node term only): {result.mean('auc_node'):.4f}" in result.summary()
    assert f"ROC-AUC both terms: {both.mean():.4f}" in result.summary()
    assert f"{result.mean('auc_node'):.3f} ± {result.std('auc_node'):.3f} (node term only)" in markdown_table([result])


def test_a_result_file_from_before_auc_both_reads_or_is_refused_clearly(easy_tu, tmp_path):
    """Written before the primary score decided AUC, AP and FPR95: with both terms primary it
    reads (its AUC is both terms'); with one term its AP and FPR95 are of the wrong score: refused."""
    result = evaluate(easy_tu, folds=3, method="glocalkd", model_params=dict(TINY, epochs=1))
    data = result.to_dict()
    for fold in data["folds"]:
        del fold["auc_both"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    back = read_json(tmp_path / "old.json")
    assert [f.auc_both for f in back.folds] == [f.auc for f in result.folds]
    data["options"]["score"] = "graph"
    (tmp_path / "old.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match="before --score graph decided the AUC, AP .*run the evaluation again"):
        read_json(tmp_path / "old.json")


def test_json_round_trip_and_markdown_with_paper_values(tu_folder, tmp_path):
    result = evaluate(tu_folder, folds=4, method="glocalkd", model_params=TINY)
    result.dataset = "AIDS"
    write_json(result, tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["paper"]["auc"] == 0.992 and len(data["folds"]) == 4
    assert data["summary"]["auc"]["mean"] == pytest.approx(result.mean())
    back = read_json(tmp_path / "r.json")
    assert isinstance(back, EvaluationResult) and back.mean() == pytest.approx(result.mean())
    write_markdown(back, tmp_path / "r.md", pending=["NCI1"])
    text = (tmp_path / "r.md").read_text()
    assert "0.992 ± 0.004" in text and "InfoGraph-LESINN" in text
    assert "| NCI1 |" in text and "not run yet" in text


def test_dataset_names_and_paper_settings():
    assert dataset_name("/x/Tox21_HSE_training/") == "Tox21 HSE"
    assert dataset_name("data/herg.tab") == "hERG" and dataset_name("resources/AIDS.zip") == "AIDS"
    assert paper_settings("AIDS") == {"lr": 1e-5, "batch_size": 300}
    assert paper_settings("Tox21 p53") == {"lr": 1e-5, "batch_size": 2000}
    assert paper_settings("PROTEINS_full")["lr"] == 1e-2 and paper_settings("NCI1")["lr"] == 1e-4


def test_the_paper_settings_and_values_follow_the_collection_not_its_folder(tmp_path, capsys):
    """AIDS copied to a folder aids_copy took the settings of no benchmark (lr 1e-4, not the paper's
    1e-5 for AIDS) and no paper values; and --lr 0.5 was called "the paper's settings lr=0.5"."""
    data = write_tu(tmp_path / "aids_copy", "AIDS", [(5, ring(5), 1)] * 6 + [(4, path(4), 0)] * 3)
    result = evaluate(data, folds=2, method="glocalkd", model_params=TINY, only=[])
    assert result.dataset == "AIDS" and result.params["lr"] == 1e-5 and result.paper["auc"] == 0.992
    tiny = ["--epochs", "1", "--hidden", "8", "--out-dim", "4", "--layers", "2", "--device", "cpu"]
    assert main(["evaluate", str(data), "--method", "glocalkd", "--folds", "2", "--only", "1", "--lr", "0.5",
                 *tiny]) == 0
    err = capsys.readouterr().err
    assert "AIDS: using the paper's batch size=300" in err and "lr=0.5" not in err
    # a result recorded under the folder's name (as before) resumes: its digest says which data it was
    done = evaluate(data, folds=2, method="glocalkd", model_params=TINY, only=[1])
    before = dataclasses.replace(done, dataset="aids_copy")
    resumed = evaluate(data, folds=2, method="glocalkd", model_params=TINY, resume=before)
    assert resumed.complete and resumed.folds[0] == done.folds[0]
    with pytest.raises(GLocalKDError, match="other settings"):  # without digests, the names must agree
        evaluate(data, folds=2, method="glocalkd", model_params=TINY,
                 resume=dataclasses.replace(before, data_digest=None))


def test_the_api_gives_the_consensus_view_the_glocalkd_settings(tmp_path):
    """Since evaluate's default is the consensus, evaluate(path, model_params={"epochs": 1}) refused
    "Consensus does not take epochs": training gives such settings to its GLocalKD view, and so
    does evaluation now."""
    data = write_tu(tmp_path / "set", "SET", [(5, ring(5), 1)] * 8 + [(4, path(4), 0)] * 4)
    result = evaluate(data, folds=2, model_params=TINY, only=[])
    assert result.method == "consensus"
    view = result.params["component_params"]["glocalkd"]
    assert all(view[k] == v for k, v in TINY.items() if k != "device")


def test_split_reads_labels_as_text_in_memory_too(tmp_path):
    """In-memory sets with whole-number labels: the split check compared 1 with "1" and refused
    every testing graph as of a class the training data had not."""
    train = load(write_tu(tmp_path / "train", "SET", [(5, ring(5), -1)] * 6 + [(4, ring(4), 1)] * 3))
    test = load(write_tu(tmp_path / "test", "SET", [(4, ring(4), 1), (5, ring(5), -1), (5, ring(5), -1)]))
    for graphs in (train, test):
        graphs.meta = [dataclasses.replace(m, label=int(m.label)) for m in graphs.meta]
    result = evaluate(train, protocol="split", test=test, seeds=[0], method="size")
    assert len(result.folds) == 1 and result.folds[0].n_test == 3


def test_cli_evaluate_prints_the_rule_and_writes_json(tu_folder, tmp_path, capsys):
    out = tmp_path / "res.json"
    assert main(["evaluate", str(tu_folder), "--method", "glocalkd", "--folds", "4", "--epochs", "2", "--hidden", "8",
                 "--out-dim", "4", "--layers", "2", "--anomaly", "first-label", "--device", "cpu", "--json",
                 str(out)]) == 0
    captured = capsys.readouterr()
    assert "anomaly rule 'first-label' -> anomalous class '1'" in captured.err
    assert "ROC-AUC" in captured.out
    data = json.loads(out.read_text())
    assert data["complete"] and len(data["folds"]) == 4 and data["command"].startswith("glocalkd evaluate")
    assert main(["evaluate", str(tu_folder), "--protocol", "split", "--epochs", "1"]) == 2
    assert "needs a testing file" in capsys.readouterr().err


def test_cli_evaluate_defaults_to_the_products_default_detector(tu_folder, monkeypatch):
    """Without --method the harness evaluates the consensus, as `glocalkd train` and the app build
    it (GCN options left at their defaults reach nothing, those given reach its GLocalKD);
    --method glocalkd keeps the paper's method at the paper's settings."""
    import core.evaluation.protocol as protocol
    from core.detectors.registry import DEFAULT_DETECTOR

    seen = []
    monkeypatch.setattr(protocol, "evaluate", lambda data, **kw: seen.append(kw) or EvaluationResult(
        dataset="x", data_path=str(data), protocol="cv", method=kw["method"]))
    main(["evaluate", str(tu_folder)])
    main(["evaluate", str(tu_folder), "--epochs", "2", "--hidden", "16", "--lr", "0.01"])
    main(["evaluate", str(tu_folder), "--method", "glocalkd", "--epochs", "2"])
    assert DEFAULT_DETECTOR == "consensus"
    assert seen[0]["method"] == "consensus" and seen[0]["model_params"] == {"device": "auto", "component_params": None}
    assert seen[1]["model_params"]["component_params"] == {"glocalkd": {"epochs": 2, "hidden_dim": 16, "lr": 0.01}}
    assert seen[2]["method"] == "glocalkd" and seen[2]["model_params"]["epochs"] == 2
    assert "lr" not in seen[2]["model_params"]  # the paper's setting is evaluate's to choose, for CLI and API alike


def test_the_api_the_cli_and_a_cluster_choose_the_same_method_and_paper_settings(tmp_path):
    """core.evaluation.evaluate defaulted to GLocalKD at its own learning rate, `glocalkd evaluate`
    to the consensus, and applied the paper's lr and batch size for --method glocalkd itself; a
    cluster's evaluation did as the API. One function chooses now."""
    from core.detectors.registry import DEFAULT_DETECTOR
    from core.evaluation.cluster import evaluate_on_cluster

    data = write_tu(tmp_path / "AIDS", "AIDS", [(5, ring(5), 1)] * 6 + [(4, path(4), 0)] * 3)
    api, cluster = evaluate(data, folds=2, only=[]), evaluate_on_cluster("local:1", data, folds=2, only=[])
    assert api.method == cluster.method == DEFAULT_DETECTOR and api.params == cluster.params
    said = []
    api = evaluate(data, folds=2, method="glocalkd", model_params=TINY, only=[], on_progress=said.append)
    assert (api.params["lr"], api.params["batch_size"]) == (1e-5, 300)  # the paper's for AIDS
    assert any("AIDS: using the paper's lr=1e-05, batch size=300" in line for line in said)
    cluster = evaluate_on_cluster("local:1", data, folds=2, method="glocalkd", model_params=TINY, only=[])
    assert cluster.params == api.params
    out = tmp_path / "cli.json"
    assert main(["evaluate", str(data), "--method", "glocalkd", "--folds", "2", "--only", "1", "--epochs", "2",
                 "--hidden", "8", "--out-dim", "4", "--layers", "2", "--device", "cpu", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["params"] == api.params


def test_cli_runs_folds_side_by_side_and_merges_them(tu_folder, tmp_path, capsys):
    """--only in two runs, then --resume-from both: the merged JSON is complete and records the
    command of the whole evaluation, not of its parts."""
    base = ["evaluate", str(tu_folder), "--folds", "3", "--method", "size"]
    assert main([*base, "--only", "1,2", "--json", str(tmp_path / "a.json")]) == 0
    assert main([*base, "--only", "3", "--json", str(tmp_path / "b.json")]) == 0
    assert not json.loads((tmp_path / "a.json").read_text())["complete"]
    out = tmp_path / "all.json"
    assert main([*base, "--resume-from", str(tmp_path / "a.json"), "--resume-from", str(tmp_path / "b.json"),
                 "--json", str(out)]) == 0
    merged = json.loads(out.read_text())
    assert merged["complete"] and [f["fold"] for f in merged["folds"]] == [1, 2, 3]
    assert "--only" not in merged["command"] and "--resume-from" not in merged["command"]
    capsys.readouterr()
    assert main([*base, "--resume-from", str(tmp_path / "missing.json")]) == 2
    assert "missing.json: no such result file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--only", "0"])


def test_every_readout_of_the_same_model_is_measured_and_kept_in_json(easy_tu, tmp_path):
    result = evaluate(easy_tu, folds=3, method="glocalkd", model_params=dict(TINY, epochs=5))
    for fold in result.folds:
        assert set(fold.auc_readouts) == {"paper", "node_max", "size", "node_max+size"}
        assert fold.auc_readouts["paper"] == pytest.approx(fold.auc)  # the model's own score is the paper's
    both = evaluate(easy_tu, folds=3, method="glocalkd",
                    model_params=dict(TINY, epochs=5, node_max=True, size_term=True))
    assert [f.auc for f in both.folds] == pytest.approx([f.auc_readouts["node_max+size"] for f in result.folds])
    write_json(result, tmp_path / "r.json")
    back = read_json(tmp_path / "r.json")
    assert [f.auc_readouts for f in back.folds] == [f.auc_readouts for f in result.folds]
    assert "readout 'size'" in back.summary()


def test_a_consensus_result_from_before_reserve_views_is_not_merged_with_one_that_has_them():
    """Known anomalies weigh a fourth view since the consensus has reserve views: folds measured
    with three views must not pass for folds measured with four."""
    from core.evaluation.results import EvaluationResult, settings_key

    new = EvaluationResult(dataset="D", data_path="D", protocol="cv", method="consensus", anomaly_rule="minority",
                           anomaly_label="1", normal_labels=["0"], params={"reserve_views": ["wl-count-lesinn"]},
                           options={"known_anomalies": 10})
    old = EvaluationResult.from_dict({**new.to_dict(), "params": {}})
    assert settings_key(old) != settings_key(new)
    assert settings_key(old) == settings_key(EvaluationResult.from_dict({**new.to_dict(), "params": {"reserve_views": []}}))


def test_a_run_written_before_the_readout_settings_existed_can_be_resumed(easy_tu, tmp_path):
    partial = evaluate(easy_tu, folds=3, method="glocalkd", model_params=dict(TINY, epochs=2))
    partial.folds = partial.folds[:1]
    for key in ("node_max", "size_term"):
        del partial.params[key]
    write_json(partial, tmp_path / "old.json")
    resumed = evaluate(easy_tu, folds=3, method="glocalkd", model_params=dict(TINY, epochs=2),
                       resume=read_json(tmp_path / "old.json"))
    assert resumed.complete and len(resumed.folds) == 3


def test_a_testing_file_of_another_kind_is_refused_before_any_training(herg_path, tu_folder, monkeypatch):
    """``--protocol split --test`` with a graph collection beside molecule data failed only after
    training, naming no file."""
    from core.detectors import base

    monkeypatch.setattr(base.Detector, "fit", lambda *a, **k: pytest.fail("trained before the check"))
    with pytest.raises(DataError, match=f"{tu_folder}: the testing file holds a graph collection and the data "
                                        "molecules"):
        evaluate(str(herg_path), protocol="split", test=str(tu_folder), seeds=[0])


def test_a_testing_file_whose_node_labels_mean_something_else_is_refused_before_any_training(tmp_path,
                                                                                             monkeypatch):
    """Two collections' unnamed node labels: the split protocol trained seed run 1, then scoring
    refused the testing file (SchemaMismatchError) without naming it."""
    from core.errors import SchemaMismatchError
    import core.evaluation.protocol as protocol

    train = write_tu(tmp_path / "train", "ONE", [(5, ring(5), 0)] * 6 + [(4, ring(4), 1)] * 3)
    test = write_tu(tmp_path / "test", "TWO", [(5, ring(5), 0)] * 2 + [(4, ring(4), 1)] * 2)
    monkeypatch.setattr(protocol, "_run_fold", lambda *a, **k: pytest.fail("trained before the check"))
    with pytest.raises(SchemaMismatchError, match=f"{test}: a model trained on the data cannot score the testing "
                                                  "file: .*ONE's TU node labels.*TWO's TU node labels"):
        evaluate(train, protocol="split", test=test, seeds=[0], method="glocalkd", model_params=TINY)


def test_evaluate_standardises_molecules_as_train_does(tmp_path, capsys):
    """``evaluate --standardize`` z-scored TU node attributes while ``train --standardize`` (an
    alias of ``--standardise``) standardises molecules: on molecules the flag changed nothing but
    the JSON. ``--standardise`` now means one thing everywhere; z-scoring is ``--zscore-attributes``."""
    import json

    from core.cli.main import main

    rows = [("CCCCCCCCCC", "0")] * 30 + [("CCO.CCCCCCCCCC", "1")] * 6  # anomalies: a solvent beside the molecule
    (tmp_path / "d.csv").write_text("smiles,label\n" + "".join(f"{s},{y}\n" for s, y in rows))
    for flag, auc in (([], 1.0), (["--standardise"], 0.5)):
        out = tmp_path / f"r{len(flag)}.json"
        assert main(["evaluate", str(tmp_path / "d.csv"), "--method", "size", "--folds", "2", "--json", str(out),
                     *flag]) == 0
        result = json.loads(out.read_text())
        assert [f["auc"] for f in result["folds"]] == [auc, auc]  # the solvent counts, or is stripped
        assert result["options"].get("standardise", False) == bool(flag)
    assert main(["evaluate", str(tmp_path / "d.csv"), "--standardize", "--zscore-attributes", "--method", "size",
                 "--folds", "2"]) == 0  # both spellings: the molecules' standardising, as train's


def test_an_evaluation_says_and_records_the_rows_it_could_not_read(tmp_path, capsys):
    """Rows of the data file that were not read as graphs were dropped without a word: the
    evaluation says them, with their lines, and its JSON counts them."""
    import json

    from core.cli.main import main
    from tests.conftest import DEMO_DATA

    data = tmp_path / "herg_bad.tab"
    data.write_text((DEMO_DATA / "herg.tab").read_text() + "".join(f"BAD{i}\tC1CC(\t1\n" for i in range(4)))
    out = tmp_path / "r.json"
    assert main(["evaluate", str(data), "--method", "size", "--folds", "2", "--anomaly", "0", "--json", str(out),
                 "--threads", "1"]) == 0
    err = capsys.readouterr().err
    assert "4 rows rejected, not evaluated (line 657: invalid SMILES syntax" in err and ", ...)" in err
    assert json.loads(out.read_text())["rows_rejected"] == 4


def test_a_resume_on_other_data_is_refused(tmp_path, capsys):
    """``--resume`` compared the data set's name only: folds scored on another testing file (or a
    changed data file of the same name) were averaged with the earlier ones into one figure."""
    import json

    from core.cli.main import main
    from tests.conftest import DEMO_DATA

    lines = (DEMO_DATA / "herg.tab").read_text().splitlines(keepends=True)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "herg.tab").write_text("".join(lines))
    (tmp_path / "b" / "herg.tab").write_text("".join(lines[:-40]))  # same name, other graphs
    out = tmp_path / "r.json"
    common = ["--method", "size", "--folds", "3", "--anomaly", "0", "--json", str(out), "--threads", "1"]
    assert main(["evaluate", str(tmp_path / "a" / "herg.tab"), *common, "--only", "1"]) == 0
    assert json.loads(out.read_text())["data_digest"].startswith("sha256:")
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "b" / "herg.tab"), *common, "--resume"]) == 2
    assert "cannot resume: the earlier result was made on other data" in capsys.readouterr().err
    assert main(["evaluate", str(tmp_path / "a" / "herg.tab"), *common, "--resume"]) == 0  # the same data resumes
    assert json.loads(out.read_text())["complete"] is True
