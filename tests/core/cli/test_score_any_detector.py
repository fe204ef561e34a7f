"""glocalkd score and screen read every saved detector's model file and write the same report."""
from __future__ import annotations

import csv

import pytest

from core.cli.main import main


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


@pytest.mark.parametrize("detector", ["consensus", "wl-lesinn", "size"])
def test_score_and_screen_agree_for_every_savable_detector(herg_path, tmp_path, detector):
    model = tmp_path / "m.pt"
    assert main(["train", str(herg_path), "-o", str(model), "--detector", detector, "--epochs", "2",
                 "--hidden", "16", "--out-dim", "8", "--device", "cpu"]) == 0
    assert main(["score", str(model), str(herg_path), "-o", str(tmp_path / "a.csv"), "--device", "cpu"]) == 0
    assert main(["screen", str(model), str(herg_path), "-o", str(tmp_path / "b.csv"), "--workers", "1",
                 "--device", "cpu"]) == 0
    a, b = _rows(tmp_path / "a.csv"), _rows(tmp_path / "b.csv")
    assert a == b
    scored = [r for r in a[1:] if r[10] == "ok"]
    assert len(scored) == 655
    has_nodes = detector == "consensus"  # GLocalKD's node errors
    assert all(bool(r[9]) == has_nodes for r in scored)  # top_nodes only where there are node errors
