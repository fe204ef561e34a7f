"""A tiny molecule model shared by the command-line tests."""
from __future__ import annotations

import pytest

from core.cli.main import main

TRAIN = ["--epochs", "1", "--hidden", "16", "--out-dim", "8", "--device", "cpu"]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    """A GLocalKD model trained by ``glocalkd train`` on five molecules."""
    folder = tmp_path_factory.mktemp("m")
    data = folder / "train.smi"
    data.write_text("CCO a\nCCN b\nc1ccccc1 c\nCC(=O)O d\nCCCl e\n")
    assert main(["train", str(data), "-o", str(folder / "mol.pt"), *TRAIN]) == 0
    return folder / "mol.pt"
