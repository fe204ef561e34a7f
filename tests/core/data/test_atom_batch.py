"""The batch featurizer gives, molecule by molecule, exactly what ``mol_arrays`` gives (which
test_chem checks against a per-atom reading of the vocabulary)."""
import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import AllChem

from core.data import mol_pickle
from core.data.atom_batch import featurize_molecules, pickle_matches_mol_arrays
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


# Molecules whose atoms are not plain neutral closed-shell carbons, each a way the binary form
# can differ: charges, radicals, explicit and isotopic hydrogens, aromatic heteroatoms, hypervalent
# atoms, large and fused rings, fragments, isotopes, stereo; and ones it leaves to the other path.
TRICKY_BATCH = [
    "[O-][N+](=O)c1ccc(cc1)[NH3+]", "[O-2].[Fe+3].[Fe+3].[O-2].[O-2]", "C[N+](C)(C)CC(=O)[O-]",
    "[CH3]", "[CH2]C[C]", "C[N]C", "[2H]OC([2H])([2H])C", "[13CH3][15NH2]", "[H][H]", "[HH]",
    "c1cc[nH]c1", "c1ccncc1", "c1cc[o+]cc1", "c1cc[se]c1", "c1ccc2[nH]ncc2c1", "O=S1(=O)CCCC1",
    "F[S](F)(F)(F)(F)F", "O=[Cl](=O)(=O)[O-]", "C1CCCCCCCCCCCCCCCCCCC1", "C1CC2CCC1CC2",
    "C12C3C4C1C5C2C3C45", "[Na+].[Cl-]", "CCO.CCN.c1ccccc1", "C/C=C/[C@H](O)[C@@](F)(Cl)Br",
    "C[C@H](O)F |&1:1|", "[Cu+2].[O-]S(=O)(=O)[O-]", "[Si](C)(C)(C)C", "B1OB(O)OB(O)O1",
    "*C", "[CH3:1]O", "N->[Fe]", "C" * 260, "C" * 255,
]


def _assert_same_as_mol_arrays(mols, got):
    assert len(got.atom_counts) == len(mols)
    for mol, (x, bonds, z) in zip(mols, _split(got)):
        ex, eb, ez = mol_arrays(mol, x.dtype)
        assert np.array_equal(x, ex) and np.array_equal(bonds, eb) and np.array_equal(z, ez), Chem.MolToSmiles(mol)


def test_tricky_molecules_equal_mol_arrays_read_fast_or_not():
    mols = [parse_smiles(s)[0] for s in TRICKY_BATCH]
    stereo = parse_smiles("F/C=C/C=C(Cl)\\Br")[0]
    Chem.AssignStereochemistry(stereo, cleanIt=True, force=True)  # bond stereo written with its atoms
    with_hs = Chem.AddHs(parse_smiles("OC(=O)c1ccncc1")[0])  # hydrogen atoms, coordinates, properties
    AllChem.Compute2DCoords(with_hs)
    with_hs.SetProp("_Name", "isonicotinic acid")
    mols += [stereo, with_hs]
    assert all(m is not None for m in mols)
    decoded = mol_pickle.decode([m.ToBinary() for m in mols])
    assert decoded.ok.sum() == len(mols) - 4  # "*", the atom map, the dative bond, 260 atoms
    for dtype in (np.uint8, np.float32):
        _assert_same_as_mol_arrays(mols, featurize_molecules(mols, TRICKY_BATCH + [None, None], dtype=dtype))
        _assert_same_as_mol_arrays(mols[::-1], featurize_molecules(mols[::-1], dtype=dtype))


def test_the_bundled_molecules_take_the_binary_form():
    """So that the identity test above checks that path, not the fallback."""
    mols = [m for _, m in _molecules()]
    assert pickle_matches_mol_arrays()
    assert mol_pickle.decode([m.ToBinary() for m in mols]).ok.sum() >= len(mols) - 2


def test_without_the_binary_form_every_molecule_takes_the_query_path(monkeypatch):
    from core.data import atom_batch

    monkeypatch.setattr(atom_batch, "_pickle_ok", False)
    monkeypatch.setattr(mol_pickle, "decode", None)  # never called
    mols = [parse_smiles(s)[0] for s in TRICKY_BATCH]
    _assert_same_as_mol_arrays(mols, featurize_molecules(mols, TRICKY_BATCH))
