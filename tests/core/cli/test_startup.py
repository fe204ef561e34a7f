"""Scoring a molecule file never imports torch-geometric or scikit-learn (each costs a second or
more of start-up): the model's layers, the adjacency and the pooling it scores with are torch's
own, and a saved model's LESINN scores precomputed distances."""
from __future__ import annotations

import subprocess
import sys

import pytest

from core import read_report
from core.cli.main import main
from tests.conftest import DEMO_DATA, moses_library

TINY = ["--epochs", "1", "--hidden", "16", "--out-dim", "8", "--device", "cpu"]


@pytest.mark.parametrize("detector", ["glocalkd", "consensus"])
def test_scoring_a_molecule_file_imports_neither_torch_geometric_nor_scikit_learn(detector, tmp_path):
    model = tmp_path / "m.pt"
    assert main(["train", str(DEMO_DATA / "herg.tab"), "-o", str(model), "--detector", detector, *TINY]) == 0
    library = moses_library(tmp_path / "lib.smi", 300, {5: "C1CC"})
    for command in ("screen", "score"):
        report = tmp_path / f"{command}.csv"
        workers = ["--workers", "1"] if command == "screen" else []
        run = subprocess.run([sys.executable, "-X", "importtime", "-m", "core", command, str(model), str(library),
                              "-o", str(report), *workers], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        imported = {line.split("|")[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
        assert "torch" in imported and "core.detectors.glocalkd" in imported  # the trace is complete
        assert not [m for m in imported if m.startswith(("torch_geometric", "sklearn"))], command
        written = read_report(report)
        assert len(written.score) == 299 and [r.id for r in written.rejects] == ["mol5"]  # every row accounted for
