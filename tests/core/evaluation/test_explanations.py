import gzip

import numpy as np
import pytest

from core import GLocalKD, make_detector
from core.data.chem import ELEMENTS
from core.evaluation.explanations import (GLOBAL_MAKERS, LOCAL_PLANTERS, evaluate_explanations, make_planted,
                               node_explanation_quality)
from tests.conftest import RESOURCES


@pytest.fixture(scope="module")
def smiles():
    with gzip.open(RESOURCES / "moses_sample.csv.gz", "rt") as fh:
        return [line.strip() for line in fh][1:600]


def test_planted_atoms_are_the_changed_atoms(smiles):
    p = make_planted(smiles, n_train=200, n_normal=50, n_local=40, n_global=30, seed=0)
    assert len(p.local) == 40 and len(p.global_) == 30 and len(p.train) == 200
    assert set(p.local_kinds) == set(LOCAL_PLANTERS) and set(p.global_kinds) == set(GLOBAL_MAKERS)
    train_smiles = {m.smiles for m in p.train.meta}
    assert not train_smiles & {m.smiles for m in p.local.meta}
    si, se = ELEMENTS.index("Si"), ELEMENTS.index("Se")
    for g, atoms, kind in zip(p.local.graphs, p.local_planted, p.local_kinds):
        assert atoms and max(atoms) < g.num_nodes
        if kind == "element":
            assert g.x[atoms[0], si] == 1 or g.x[atoms[0], se] == 1
        if kind == "chain":
            assert all(g.x[a, ELEMENTS.index("S")] == 1 or g.x[a, si] == 1 for a in atoms)


def test_node_quality_metrics():
    aucs, hits = node_explanation_quality([np.array([0.1, 0.9, 0.2, 0.8]), np.array([0.5, 0.4, 0.3])],
                                          [[1, 3], [2]])
    assert aucs.tolist() == [1.0, 0.0] and hits.tolist() == [1.0, 0.0]


def test_tiny_benchmark_runs_end_to_end(smiles):
    p = make_planted(smiles, n_train=150, n_normal=40, n_local=24, n_global=15, seed=1)
    model = GLocalKD(epochs=3, hidden_dim=32, out_dim=16, device="cpu", seed=0)
    raw, z = evaluate_explanations(p, model)
    for r in (raw, z):
        assert 0 <= r.graph_auc_local <= 1 and 0 <= r.graph_auc_global <= 1
        assert 0 <= r.node_auc <= 1 and 0 <= r.topk_hit_rate <= 1
        assert set(r.by_kind) == {f"local:{k}" for k in LOCAL_PLANTERS} | {f"global:{k}" for k in GLOBAL_MAKERS}
    assert raw.graph_auc_local == z.graph_auc_local and raw.node_error == "raw" and z.node_error == "zscore"


def test_consensus_benchmark_reads_its_glocalkd_components_node_errors(smiles):
    from core.evaluation.metrics import roc_auc

    p = make_planted(smiles, n_train=150, n_normal=40, n_local=24, n_global=15, seed=2)
    model = make_detector("consensus", device="cpu", seed=0,
                          component_params={"glocalkd": {"epochs": 2, "hidden_dim": 32, "out_dim": 16}})
    raw, _ = evaluate_explanations(p, model)
    assert raw.detector == "consensus" and list(raw.components) == ["glocalkd", "wl-lesinn", "size"]
    size = model.components_["size"]
    expected = roc_auc(np.r_[np.zeros(40), np.ones(15)], np.r_[size.score(p.normal).score, size.score(p.global_).score])
    assert raw.components["size"]["global"] == pytest.approx(expected)
    errors = model.components_["glocalkd"].score(p.local)
    node_aucs, hits = node_explanation_quality([errors.node_errors_of(i) for i in range(len(errors))], p.local_planted)
    assert raw.node_auc == pytest.approx(np.nanmean(node_aucs)) and raw.topk_hit_rate == pytest.approx(hits.mean())
    assert raw.graph_auc_global == pytest.approx(roc_auc(np.r_[np.zeros(40), np.ones(15)],
                                                         np.r_[model.score(p.normal).score, model.score(p.global_).score]))


def test_cli_evaluate_explanations(tmp_path, capsys):
    import json

    from core.cli.main import main

    out = tmp_path / "new folder" / "x.json"  # written by the project's atomic writer, which makes the folder
    assert main(["evaluate-explanations", str(RESOURCES / "moses_sample.csv.gz"), "--train", "120", "--normal", "30",
                 "--local", "12", "--global", "9", "--epochs", "2", "--device", "cpu", "--detector", "glocalkd",
                 "--json", str(out)]) == 0
    assert "node errors raw: graph AUC local" in capsys.readouterr().out
    saved = json.loads(out.read_text())
    assert saved["results"][0]["detector"] == "glocalkd" and saved["results"][0]["components"] == {}
    assert [r["node_error"] for r in saved["results"]] == ["raw", "zscore"]
    assert saved["results"][0]["sizes"] == {"train": 120, "normal": 30, "local": 12, "global": 9}
