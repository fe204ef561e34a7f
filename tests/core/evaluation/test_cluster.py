"""Evaluation on a Dask cluster: folds and seed runs as tasks, the same result as one process."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from core.cli.main import main
from core.evaluation import evaluate, read_json
from core.evaluation.cluster import evaluate_on_cluster
from tests.conftest import ring, write_tu

TINY = dict(epochs=1, hidden_dim=16, out_dim=8, num_layers=2, device="cpu")


pytestmark = pytest.mark.usefixtures("no_hang")



@pytest.fixture(scope="module")
def easy(tmp_path_factory) -> Path:
    """9 anomalous rings (label 0, node label 9), 30 normal rings (label 5, node labels 0-2)."""
    graphs = [(6, ring(6), 0) for _ in range(9)] + [(5 + i % 3, ring(5 + i % 3), 5) for i in range(30)]
    folder = write_tu(tmp_path_factory.mktemp("tu") / "EASY", "EASY", graphs)
    labels = [9] * (9 * 6) + [j % 3 for n, _, _ in graphs[9:] for j in range(n)]
    (folder / "EASY_node_labels.txt").write_text("\n".join(map(str, labels)) + "\n")
    return folder


def _same(a, b) -> None:
    """Two results agree on everything but timings and the machine."""
    def strip(d):
        if isinstance(d, dict):
            return {k: strip(v) for k, v in d.items() if "seconds" not in k and k not in ("environment", "command")}
        return [strip(v) for v in d] if isinstance(d, list) else d

    da, db = strip(a.to_dict()), strip(b.to_dict())
    assert da["folds"] and json.dumps(da, sort_keys=True, default=str) == json.dumps(db, sort_keys=True, default=str)


def test_cv_folds_as_tasks_give_the_single_process_result(client, easy):
    local = evaluate(easy, protocol="cv", folds=3, method="glocalkd", model_params=TINY)
    partial_seen = []
    remote = evaluate_on_cluster(client, easy, protocol="cv", folds=3, method="glocalkd", model_params=TINY,
                                 on_fold=lambda r: partial_seen.append(len(r.folds)))
    assert remote.complete and [f.fold for f in remote.folds] == [1, 2, 3]
    assert sorted(partial_seen) == [1, 2, 3]
    _same(local, remote)


def test_split_seed_runs_as_tasks_and_resume(client, easy):
    local = evaluate(easy, protocol="split", test=easy, seeds=[0, 1, 2], method="glocalkd", model_params=TINY)
    first = evaluate_on_cluster(client, easy, protocol="split", test=easy, seeds=[0, 1, 2], method="glocalkd",
                                model_params=TINY, only=[2])
    assert not first.complete and [f.fold for f in first.folds] == [2]
    rest = evaluate_on_cluster(client, easy, protocol="split", test=easy, seeds=[0, 1, 2], method="glocalkd",
                               model_params=TINY, resume=first)
    assert rest.complete and [f.seed for f in rest.folds] == [0, 1, 2]
    _same(local, rest)
    assert not math.isnan(rest.mean("auc"))


def test_the_command_line_writes_the_same_json(client, easy, tmp_path):
    common = ["evaluate", str(easy), "--method", "glocalkd", "--folds", "3", "--epochs", "1", "--hidden", "16", "--out-dim", "8",
              "--layers", "2", "--device", "cpu"]
    assert main(common + ["--json", str(tmp_path / "local.json")]) == 0
    assert main(common + ["--json", str(tmp_path / "cluster.json"), "--scheduler", client.scheduler.address]) == 0
    local, remote = read_json(tmp_path / "local.json"), read_json(tmp_path / "cluster.json")
    assert remote.complete
    _same(local, remote)
