"""The GPU path: training and scoring on ``device="cuda"`` give the CPU's scores (within float
tolerance), for GLocalKD, the consensus, a saved model moved onto the GPU, and screening.

Every test here is marked ``cuda``: it runs where torch sees a GPU and is skipped elsewhere."""
from __future__ import annotations

import numpy as np
import pytest

from core import GLocalKD, load, load_detector, make_detector, save_detector, screen
from tests.conftest import DEMO_DATA

pytestmark = pytest.mark.cuda
SMALL = {"epochs": 2, "hidden_dim": 16, "out_dim": 8, "seed": 0}


@pytest.fixture(scope="module")
def herg():
    data = load(DEMO_DATA / "herg.tab")
    return data.subset(range(160)), data.subset(range(400, 460))


def close_ranks(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman correlation of two score vectors."""
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def test_glocalkd_trains_and_scores_on_the_gpu_as_on_the_cpu(herg):
    train, test = herg
    cpu = GLocalKD(device="cpu", **SMALL).fit(train)
    gpu = GLocalKD(device="cuda", **SMALL).fit(train)
    assert gpu.device_.type == "cuda"
    assert np.all(np.isfinite(gpu.loss_history_))
    np.testing.assert_allclose(gpu.loss_history_, cpu.loss_history_, rtol=1e-3)
    s_cpu, s_gpu = cpu.score(test), gpu.score(test)
    np.testing.assert_allclose(s_gpu.score, s_cpu.score, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(s_gpu.node_errors, s_cpu.node_errors, rtol=1e-3, atol=1e-4)


def test_a_model_trained_on_the_cpu_scores_the_same_on_the_gpu(herg, tmp_path):
    train, test = herg
    cpu = GLocalKD(device="cpu", **SMALL).fit(train)
    save_detector(cpu, tmp_path / "m.pt")
    gpu = load_detector(tmp_path / "m.pt", device="cuda")
    assert gpu.device_.type == "cuda"
    np.testing.assert_allclose(gpu.score(test).score, cpu.score(test).score, rtol=1e-4, atol=1e-5)


def test_auto_picks_the_gpu(herg):
    train, _ = herg
    assert GLocalKD(device="auto", **SMALL).fit(train).device_.type == "cuda"


def test_the_consensus_runs_its_glocalkd_on_the_gpu(herg):
    train, test = herg
    params = {"component_params": {"glocalkd": {k: v for k, v in SMALL.items() if k != "seed"}}}
    cpu = make_detector("consensus", device="cpu", **params).fit(train)
    gpu = make_detector("consensus", device="cuda", **params).fit(train)
    assert gpu.components_["glocalkd"].device_.type == "cuda"
    a, b = cpu.score(test), gpu.score(test)
    np.testing.assert_allclose(b.component_scores()["glocalkd"], a.component_scores()["glocalkd"], rtol=1e-3,
                               atol=1e-4)
    assert close_ranks(a.score, b.score) > 0.99


def test_screening_on_the_gpu_ranks_as_on_the_cpu(herg, tmp_path):
    train, _ = herg
    model = GLocalKD(device="cpu", **SMALL).fit(train)
    save_detector(model, tmp_path / "m.pt")
    library = tmp_path / "lib.smi"
    molecules = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "CCN(CC)CC", "O=C(O)c1ccccc1",
                 "CC(C)Cc1ccc(C(C)C(=O)O)cc1", "not a smiles"]
    library.write_text("".join(f"{m}\n" for m in molecules))
    reports = {}
    for device in ("cpu", "cuda"):
        out = tmp_path / f"{device}.csv"
        summary = screen(load_detector(tmp_path / "m.pt", device=device), library, out, workers=1)
        assert summary.scored == 6 and summary.rejected == 1
        reports[device] = out.read_text().splitlines()
    ids = [[line.split(",")[:2] for line in reports[d][1:7]] for d in ("cpu", "cuda")]
    assert ids[0] == ids[1]  # same rows in the same order
