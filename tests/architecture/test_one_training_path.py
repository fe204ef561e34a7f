"""Every front end trains through core.training.train_model: the command line, the app's job and
the evaluation harness fit no detector of their own (one path, one set of rules)."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from core.detectors.base import Detector
from core.training import use_case

ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINTS = ("core/cli/train.py", "app/tasks.py", "core/evaluation/protocol.py")
TINY = {"epochs": 2, "hidden_dim": 16, "out_dim": 8}


@pytest.fixture
def fits(monkeypatch):
    """Every Detector.fit call, each with whether train_model is on the call stack."""
    calls: list[bool] = []
    fit = Detector.fit

    def watched(self, *args, **kwargs):
        calls.append(any(frame.f_code is use_case.train_model.__code__ for frame, *_ in inspect.stack(0)))
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(Detector, "fit", watched)
    return calls


def test_the_command_line_trains_through_the_use_case(fits, tu_folder, tmp_path):
    from core.cli.main import main

    assert main(["train", str(tu_folder), "-o", str(tmp_path / "m.pt"), "--epochs", "2", "--hidden", "16",
                 "--out-dim", "8", "--device", "cpu"]) == 0
    assert fits and all(fits)


def test_the_apps_training_job_trains_through_the_use_case(fits, tu_folder):
    from app import tasks
    from core import load

    graphs = load(str(tu_folder))
    trained = tasks.train(graphs, "glocalkd", {**TINY, "device": "cpu"}, None, tasks.Job())
    tasks.score(trained.model, graphs, None, None, tasks.Job())  # the size baseline of a loaded model
    assert len(fits) == 3 and all(fits)  # GLocalKD, the size baseline twice


def test_the_evaluation_harness_trains_through_the_use_case(fits, tu_folder):
    from core.evaluation.protocol import evaluate

    evaluate(str(tu_folder), folds=2, method="glocalkd", model_params={**TINY, "device": "cpu"})
    assert len(fits) == 2 and all(fits)


@pytest.mark.parametrize("module", ENTRY_POINTS)
def test_no_entry_point_calls_fit_itself(module):
    """Read as code: no ``.fit(`` and none of the fitting helpers the use case wraps."""
    tree = ast.parse((ROOT / module).read_text())
    called = {node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
              for node in ast.walk(tree) if isinstance(node, ast.Call)
              and getattr(getattr(node.func, "value", None), "id", "") != "FeatureSchema"}  # not a detector
    assert not called & {"fit", "fit_calibrated", "fit_with_calibration", "weigh_views"}, module
