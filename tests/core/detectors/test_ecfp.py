"""The chemists' baseline: ECFP4 nearest-neighbour Tanimoto distance to the training molecules."""
from __future__ import annotations

import numpy as np
import pytest

from core import load, load_detector, make_detector
from core.detectors.conformal import fit_calibrated
from core.errors import NotApplicableError
from core.evaluation import evaluate, read_json, write_json


def _tanimoto_distance(smiles: str, training: list[str]) -> float:
    from rdkit import Chem, DataStructs
    from rdkit.Chem import rdFingerprintGenerator

    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    fp = gen.GetFingerprint(Chem.MolFromSmiles(smiles))
    return 1.0 - max(DataStructs.BulkTanimotoSimilarity(fp, [gen.GetFingerprint(Chem.MolFromSmiles(s))
                                                              for s in training]))


def test_the_score_is_one_minus_the_largest_tanimoto_to_the_training_molecules(herg_path):
    graphs = load(herg_path)
    model = make_detector("ecfp-nn").fit(graphs.subset(range(100)))
    scores = model.score(graphs.subset(range(95, 110))).score
    assert np.all(scores[:5] == 0.0)  # seen in training
    training = [m.smiles for m in graphs.meta[:100]]
    expected = [_tanimoto_distance(graphs.meta[i].smiles, training) for i in range(100, 110)]
    np.testing.assert_allclose(scores[5:], expected)
    alone = [model.score(graphs.subset([i])).score[0] for i in range(100, 110)]
    assert np.array_equal(alone, scores[5:])  # a molecule's score does not depend on its batch
    # each training molecule is compared with the others
    assert model.train_scores_[0] == pytest.approx(_tanimoto_distance(graphs.meta[0].smiles, training[1:]))


def test_it_is_calibrated_saved_and_loaded_like_the_others(herg_path, tmp_path):
    graphs = load(herg_path)
    model = fit_calibrated(make_detector("ecfp-nn"), graphs.subset(range(200)))
    assert model.is_calibrated and model.can_save
    model.save(tmp_path / "ecfp.pt")
    back = load_detector(tmp_path / "ecfp.pt")
    test = graphs.subset(range(300, 340))
    assert back.name == "ecfp-nn" and np.array_equal(back.score(test).score, model.score(test).score)
    assert np.array_equal(back.p_values(back.score(test).score), model.p_values(model.score(test).score))


def test_tu_molecules_are_fingerprinted_from_element_and_bond_labels(aids_zip):
    graphs = load(aids_zip)
    assert graphs.kind == "graph" and graphs.is_molecular
    model = make_detector("ecfp-nn").fit(graphs.subset(range(60)))
    scores = model.score(graphs.subset(range(50, 80))).score
    assert np.all(scores[:10] == 0.0) and np.all(scores[10:] > 0.0) and np.all(scores <= 1.0)
    assert model.graph_embeddings(graphs.subset([0])).sum() > 5  # bits from atoms and bonds


def test_graphs_that_are_not_molecules_are_refused_and_the_harness_says_n_a(tu_folder, tmp_path):
    graphs = load(tu_folder)
    with pytest.raises(NotApplicableError, match="do not map to chemical elements"):
        make_detector("ecfp-nn").fit(graphs)
    result = evaluate(tu_folder, folds=3, method="ecfp-nn")
    assert result.complete and not result.folds and "chemical elements" in result.not_applicable
    assert "ROC-AUC: n/a" in result.summary()
    write_json(result, tmp_path / "r.json")
    assert read_json(tmp_path / "r.json").not_applicable == result.not_applicable


def test_a_saved_model_scores_files_through_the_command_line(herg_path, tmp_path):
    """`glocalkd score` hands the detector screening's chunks: graphs that carry their SMILES."""
    import csv

    from core.cli.main import main

    model = fit_calibrated(make_detector("ecfp-nn"), load(herg_path).subset(range(200)))
    model.save(tmp_path / "ecfp.pt")
    assert main(["score", str(tmp_path / "ecfp.pt"), str(herg_path), "-o", str(tmp_path / "r.csv")]) == 0
    rows = [r for r in csv.DictReader((tmp_path / "r.csv").open()) if r["rank"]]
    assert len(rows) == 655 and all(r["status"] == "ok" and r["p_value"] for r in rows)
    assert sum(float(r["score"]) == 0.0 for r in rows) >= 160  # every molecule it was fitted on (4 in 5 of 200)
