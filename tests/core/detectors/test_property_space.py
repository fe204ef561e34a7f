"""The property-space view: a molecule scores how far its medicinal-chemistry properties lie
from the training molecules', scaled as the module says, whatever else is scored with it."""
from __future__ import annotations

import numpy as np
import pytest

from core import load, load_detector, make_detector
from core.detectors.conformal import fit_calibrated
from core.detectors.lesinn import LESINN
from core.detectors.property_space import property_scales
from core.errors import GLocalKDError, NotApplicableError
from core.evaluation import evaluate


def _rdkit_properties(smiles: str) -> list[float]:
    """The nine properties straight from RDKit's functions, in the product's column order."""
    from rdkit import Chem
    from rdkit.Chem import Crippen, Descriptors, rdMolDescriptors

    mol = Chem.MolFromSmiles(smiles)
    return [Descriptors.MolWt(mol), Crippen.MolLogP(mol), rdMolDescriptors.CalcTPSA(mol),
            rdMolDescriptors.CalcNumHBD(mol), rdMolDescriptors.CalcNumHBA(mol),
            rdMolDescriptors.CalcNumRotatableBonds(mol), mol.GetNumHeavyAtoms(), rdMolDescriptors.CalcNumRings(mol),
            Chem.GetFormalCharge(mol)]


@pytest.fixture(scope="module")
def herg():
    from tests.conftest import DEMO_DATA

    return load(DEMO_DATA / "herg.tab")


def test_the_embedding_is_rdkits_properties_scaled_by_median_and_interquartile_range(herg):
    train, test = herg.subset(range(150)), herg.subset(range(300, 310))
    model = make_detector("property-lesinn", ensemble_size=16, subsample_size=32).fit(train)
    values = np.array([_rdkit_properties(m.smiles) for m in train.meta])
    centre = np.median(values, axis=0)
    q1, q3 = np.percentile(values, [25, 75], axis=0)
    spread = (q3 - q1) / 1.349
    scale = np.where(spread > 0, spread, np.where(values.std(axis=0) > 0, values.std(axis=0), 1.0))
    np.testing.assert_allclose(model.centre_, centre)
    np.testing.assert_allclose(model.scale_, scale)
    expected = (np.array([_rdkit_properties(m.smiles) for m in test.meta]) - centre) / scale
    np.testing.assert_allclose(model.graph_embeddings(test), expected, rtol=1e-5, atol=1e-5)  # float32
    again = LESINN(16, 32, seed=0).fit((values - centre) / scale)
    np.testing.assert_allclose(model.score(test).score, again.decision_function(expected), rtol=1e-5)


def test_a_molecule_far_out_in_property_space_scores_highest_whatever_it_is_scored_with(herg):
    model = make_detector("property-lesinn").fit(herg.subset(range(300)))
    test = herg.subset(range(300, 320))
    # a greasy chain of forty carbons, and a polyol with thirteen H-bond donors
    far = load_smiles(["C" * 40, "OCC(O)C(O)C(O)C(O)C(O)C(O)C(O)C(O)C(O)C(O)C(O)CO"])
    scores = model.graph_scores(test)
    far_scores = model.graph_scores(far)
    assert far_scores.min() > scores.max()
    alone = [model.graph_scores(test.subset([i]))[0] for i in range(5)]
    # a molecule's score does not depend on its batch (up to the last bits of BLAS's distances)
    np.testing.assert_allclose(alone, scores[:5], rtol=1e-12, atol=1e-12)


def load_smiles(smiles: list[str]):
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    (folder / "far.smi").write_text("".join(f"{s} far{i}\n" for i, s in enumerate(smiles)))
    return load(folder / "far.smi")


def test_a_property_every_training_molecule_shares_counts_any_change_as_one_unit():
    values = np.array([[100.0, 0.0, 1.0], [120.0, 0.0, 1.0], [140.0, 0.0, 9.0], [160.0, 0.0, 1.0],
                       [180.0, 0.0, 1.0]])
    centre, scale = property_scales(values)
    assert centre.tolist() == [140.0, 0.0, 1.0]
    assert scale[0] == pytest.approx(40.0 / 1.349) and scale[1] == 1.0
    assert scale[2] == pytest.approx(values[:, 2].std())  # no interquartile range: the deviation


def test_it_is_calibrated_saved_and_loaded_like_the_others(herg, tmp_path):
    model = fit_calibrated(make_detector("property-lesinn", ensemble_size=32), herg.subset(range(250)))
    assert model.is_calibrated and model.can_save
    model.save(tmp_path / "properties.pt")
    back = load_detector(tmp_path / "properties.pt")
    test = herg.subset(range(300, 360))
    assert back.name == "property-lesinn" and np.array_equal(back.score(test).score, model.score(test).score)
    assert np.array_equal(back.p_values(back.score(test).score), model.p_values(model.score(test).score))


def test_tu_molecules_are_read_from_element_labels_and_other_graphs_are_refused(aids_zip, tu_folder):
    graphs = load(aids_zip)
    model = make_detector("property-lesinn", ensemble_size=8).fit(graphs.subset(range(80)))
    assert np.isfinite(model.graph_scores(graphs.subset(range(80, 100)))).all()
    with pytest.raises(NotApplicableError, match="Property outlier reads molecules; .*chemical elements"):
        make_detector("property-lesinn").fit(load(tu_folder))
    result = evaluate(tu_folder, folds=3, method="property-lesinn")
    assert result.complete and not result.folds and "chemical elements" in result.not_applicable


def test_a_lesinn_on_vectors_round_trips_and_a_state_without_its_vectors_is_refused():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    scorer = LESINN(8, 10, seed=2).fit(x)
    state = scorer.fitted_state()
    back = LESINN(8, 10, seed=2)
    back.restore_fitted_state(state)
    y = rng.normal(size=(5, 3))
    assert np.array_equal(back.decision_function(y), scorer.decision_function(y))
    with pytest.raises(ValueError, match="one training vector per used point"):
        LESINN(8, 10).restore_fitted_state({k: v for k, v in state.items() if k != "train"})
    with pytest.raises(GLocalKDError, match="not fitted"):
        LESINN().fitted_state()


def test_bad_settings_are_refused_before_fitting(herg):
    from core.errors import ParameterError

    with pytest.raises(ParameterError, match="ensemble_size"):
        make_detector("property-lesinn", ensemble_size=0).fit(herg.subset(range(20)))
