"""glocalkd train: any savable detector, calibrated on a held-out share unless told otherwise."""
from __future__ import annotations

import pytest

from core.cli.main import main
from core.detectors.model_file import load_detector

TINY = ["--epochs", "2", "--hidden", "16", "--out-dim", "8", "--device", "cpu"]


@pytest.mark.parametrize("detector", ["glocalkd", "consensus", "wl-lesinn", "size"])
def test_train_writes_a_calibrated_model_of_the_chosen_detector(herg_path, tmp_path, capsys, detector):
    out = tmp_path / "m.pt"
    assert main(["train", str(herg_path), "-o", str(out), "--detector", detector, *TINY]) == 0
    model = load_detector(out, device="cpu")
    assert model.name == detector and model.is_calibrated
    assert len(model.calibration_scores_) == 131  # a fifth of hERG's 655 molecules
    assert "calibrated on 131 held out" in capsys.readouterr().err


def test_calibration_zero_trains_on_every_graph_as_the_paper(herg_path, tmp_path, capsys):
    out = tmp_path / "m.pt"
    assert main(["train", str(herg_path), "-o", str(out), "--calibration", "0", *TINY]) == 0
    model = load_detector(out)
    assert not model.is_calibrated and len(model.train_scores_) == 655
    assert main(["train", str(herg_path), "-o", str(out), "--detector", "consensus", "--calibration", "0",
                 *TINY]) == 2
    assert "--calibration must be above 0" in capsys.readouterr().err


def test_too_few_graphs_train_on_all_and_say_there_are_no_p_values(tu_folder, tmp_path, capsys):
    out = tmp_path / "m.pt"
    assert main(["train", str(tu_folder), "-o", str(out), *TINY]) == 0
    assert "too few to hold out a calibration share" in capsys.readouterr().err
    assert not load_detector(out).is_calibrated
