"""glocalkd score and screen read every saved detector's model file and write the same report."""
from __future__ import annotations

import csv

import numpy as np
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


def test_a_detector_whose_scores_depend_on_the_batch_is_scored_whole_and_never_streamed(tmp_path, capsys):
    """PK-LESINN hashes the labels a batch brings in (as GraKeL does), so a molecule's score moved
    with the chunk it was screened in (9 of 40 scores with --chunk-size 5, where half the
    molecules were salts of an atom unseen in training). ``score`` now scores the file whole, as
    in memory, and ``screen`` refuses it."""
    from core import load, load_detector
    from tests.conftest import moses_library

    train = moses_library(tmp_path / "train.smi", 120, {})
    lines = moses_library(tmp_path / "all.smi", 160, {}).read_text().splitlines()[121:]
    library = tmp_path / "lib.smi"  # half of them salts: Na and Cl are atoms the model never saw
    library.write_text("smiles name\n" + "\n".join(
        (f"{s}.[Na+].[Cl-] {n}" if k % 2 else f"{s} {n}") for k, (s, n) in enumerate(line.split() for line in lines)) + "\n")
    model = tmp_path / "pk.pt"
    assert main(["train", str(train), "-o", str(model), "--detector", "pk-lesinn", "--calibration", "0"]) == 0
    assert main(["score", str(model), str(library), "-o", str(tmp_path / "r.csv")]) == 0
    detector = load_detector(model)
    whole = detector.score(load(library)).score
    scored = {r[2]: float(r[4]) for r in _rows(tmp_path / "r.csv")[1:] if r[10] == "ok"}
    assert [scored[m.id] for m in load(library).meta] == pytest.approx(list(whole), rel=1e-5)
    capsys.readouterr()
    assert main(["screen", str(model), str(library), "-o", str(tmp_path / "s.csv"), "--chunk-size", "5"]) == 2
    assert "depends on the other graphs scored with it" in capsys.readouterr().err
    assert not (tmp_path / "s.csv").exists()


def test_a_consensus_with_a_batch_dependent_view_is_scored_whole_and_never_streamed(herg_path, tmp_path):
    """The registry's flag is the view's: a consensus of PK-LESINN and graph size inherits it, so
    screening refuses it and chunked scoring scores it whole (20 of 60 scores moved with a chunk
    size of 5 when only the consensus's own entry was read)."""
    from core import GLocalKDError, load, make_detector, score_graphs, screen
    from core.detectors.registry import scores_alone

    herg = load(herg_path)
    train, lib = herg.subset(range(40)), herg.subset(range(40, 100))
    model = make_detector("consensus", components=["pk-lesinn", "size"], reserve_views=[]).fit(train)
    assert not scores_alone(model) and scores_alone(make_detector("consensus"))
    library = tmp_path / "lib.smi"
    library.write_text("".join(f"{m.smiles} {m.id}\n" for m in lib.meta))
    with pytest.raises(GLocalKDError, match="depends on the other graphs scored with it"):
        screen(model, str(library), str(tmp_path / "r.csv"), workers=1, chunk_size=5)
    assert np.array_equal(score_graphs(model, lib, chunk=5).score, model.score(lib).score)
