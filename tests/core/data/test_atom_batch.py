"""The batch featurizer gives, molecule by molecule, exactly what ``mol_arrays`` gives (which
test_chem checks against a per-atom reading of the vocabulary)."""
import numpy as np
import pytest

from core.data.atom_batch import featurize_molecules
from core.data.chem import ATOM_FEATURE_DIM, mol_arrays, parse_smiles
from tests.core.data.test_chem import TRICKY, _molecules


def _split(arrays):
    atoms = np.concatenate([[0], np.cumsum(arrays.atom_counts)])
    bonds = np.concatenate([[0], np.cumsum(arrays.bond_counts)])
    for k in range(len(arrays.atom_counts)):
        yield (arrays.x[atoms[k]:atoms[k + 1]], arrays.bonds[bonds[k]:bonds[k + 1]],
               arrays.atomic_numbers[atoms[k]:atoms[k + 1]])


@pytest.mark.parametrize("with_text", [True, False])
def test_batch_features_equal_mol_arrays_molecule_by_molecule(with_text):
    molecules = _molecules()
    texts = [s.strip() for s, _ in molecules] if with_text else None
    arrays = featurize_molecules([m for _, m in molecules], texts)
    assert arrays.x.dtype == np.uint8 and arrays.bonds.dtype == np.int32
    assert len(arrays.atom_counts) == len(molecules)
    for (smiles, mol), got in zip(molecules, _split(arrays)):
        expected = mol_arrays(mol, np.uint8)
        for name, a, b in zip(("features", "bonds", "atomic numbers"), got, expected):
            assert np.array_equal(a, b), f"{name} differ for {smiles}"


def test_a_wrong_or_missing_text_falls_back_to_the_atoms():
    """The text only saves asking atoms for their elements: a text whose atoms cannot be the
    molecule's (a count that differs, hydrogens RDKit removed) or none changes nothing."""
    mols = [parse_smiles(s)[0] for s in ("c1ccccc1O", "[H]OC", "CCN")]
    texts = ["CC", "[H]OC", None]
    got = featurize_molecules(mols, texts, dtype=np.float32)
    for mol, (x, bonds, z) in zip(mols, _split(got)):
        ex, eb, ez = mol_arrays(mol)
        assert np.array_equal(x, ex) and np.array_equal(bonds, eb) and np.array_equal(z, ez)


def test_large_molecules_sit_between_small_ones_in_place():
    smiles = ["CCO", TRICKY[-1], "c1ccccc1", "C" * 200, "N"]
    mols = [parse_smiles(s)[0] for s in smiles]
    got = featurize_molecules(mols, smiles)
    assert [a.shape[0] for a, _, _ in _split(got)] == [m.GetNumAtoms() for m in mols]
    for mol, (x, bonds, z) in zip(mols, _split(got)):
        ex, eb, ez = mol_arrays(mol, np.uint8)
        assert np.array_equal(x, ex) and np.array_equal(bonds, eb) and np.array_equal(z, ez)


def test_no_molecules():
    got = featurize_molecules([], [])
    assert got.x.shape == (0, ATOM_FEATURE_DIM) and got.bonds.shape == (0, 2) and len(got.atom_counts) == 0
