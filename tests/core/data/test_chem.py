"""The atom featurizer against a plain per-atom reading of the vocabulary with RDKit's own getters.

``mol_arrays`` is written for speed (adjacency matrices, SMARTS matches, flat one-hot indices);
this reference asks every atom for every property one call at a time, so the two share no
code path beyond RDKit itself.
"""
import csv
import gzip
import itertools

import numpy as np
import pytest
from rdkit import Chem

from core.data.chem import (ATOM_FEATURE_DIM, CHARGES, DEGREES, ELEMENTS, FEATURE_NAMES, HYBRIDISATIONS,
                       HYDROGENS, RING_SIZES, mol_arrays, parse_molblock, parse_smiles)
from tests.conftest import DEMO_DATA, RESOURCES

TRICKY = [
    "C", "[U]", "*", "[2H]C([2H])([2H])[2H]", "[H]C([H])([H])O", "[NH4+]", "[CH4]", "[SiH4]",
    "[O-][N+](=O)c1ccccc1", "[O-]C(=O)CC[NH3+]", "C[N+](C)(C)C", "[Fe+2]", "[O-2]", "[Fe+3]",
    "[Na+].[Cl-]", "[CH3]", "[O]", "[CH2]C", "C[C]C", "F[S](F)(F)(F)(F)F", "FP(F)(F)(F)F",
    "C1CC12CCCCC2CCc1ccc2ccccc2c1", "C1CCCCCCCCCCC1", "C1CCC1", "C1CCCCCC1", "c1ccc2c(c1)[nH]c1ccccc12",
    "O=C=O", "C#N", "C=[N+]=[N-]", "[Pt](Cl)(Cl)(N)N", "OB(O)c1ccccc1", "[Se]1C=CC=C1", "C" * 200,
    "C12C3C4C1C5C2C3C45",  # cubane: atoms in several 4-rings
    "C1" + "C(O)" * 150 + "C1",  # over 128 atoms (the neighbour walk) with a ring-closure bond
]


def reference_features(mol: Chem.Mol) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, bonds (i < j, sorted) and atomic numbers, one RDKit call per property per atom."""
    names = {name: i for i, name in enumerate(FEATURE_NAMES)}
    x = np.zeros((mol.GetNumAtoms(), ATOM_FEATURE_DIM), dtype=np.float32)
    for atom in mol.GetAtoms():
        row = x[atom.GetIdx()]
        symbol = atom.GetSymbol()
        row[names[f"element={symbol}" if symbol in ELEMENTS else "element=other"]] = 1
        degree = atom.GetDegree()
        row[names[f"degree={degree}" if degree < DEGREES - 1 else f"degree>={DEGREES - 1}"]] = 1
        charge = min(max(atom.GetFormalCharge(), CHARGES[0]), CHARGES[-1])
        row[names[("charge<=-2", "charge=-1", "charge=0", "charge=+1", "charge>=+2")[charge - CHARGES[0]]]] = 1
        hs = atom.GetTotalNumHs()
        row[names[f"hydrogens={hs}" if hs < HYDROGENS - 1 else f"hydrogens>={HYDROGENS - 1}"]] = 1
        kind = atom.GetHybridization()
        label = str(kind) if kind in HYBRIDISATIONS else "other"
        row[names[f"hybridisation={label}"]] = 1
        row[names["aromatic"]] = atom.GetIsAromatic()
        row[names["in_ring"]] = atom.IsInRing()
        row[names["radical"]] = atom.GetNumRadicalElectrons() > 0
        for size in RING_SIZES[:-1]:
            row[names[f"ring_size={size}"]] = atom.IsInRingSize(size)
    for ring in mol.GetRingInfo().AtomRings():
        if len(ring) >= RING_SIZES[-1]:
            x[list(ring), names[f"ring_size>={RING_SIZES[-1]}"]] = 1
    bonds = sorted(tuple(sorted((b.GetBeginAtomIdx(), b.GetEndAtomIdx()))) for b in mol.GetBonds())
    z = np.array([a.GetAtomicNum() for a in mol.GetAtoms()], dtype=np.int64)
    return x, np.array(bonds, dtype=np.int32).reshape(-1, 2), z


def _molecules() -> list[tuple[str, Chem.Mol]]:
    out = []
    with gzip.open(RESOURCES / "moses_sample.csv.gz", "rt") as f:
        out += [(row["SMILES"], parse_smiles(row["SMILES"])[0]) for row in itertools.islice(csv.DictReader(f), 1000)]
    with open(DEMO_DATA / "herg.tab", encoding="utf-8") as f:
        out += [(row["Drug"], parse_smiles(row["Drug"])[0]) for row in csv.DictReader(f, delimiter="\t")]
    out += [(s, parse_smiles(s)[0]) for s in TRICKY]
    return out


def test_features_match_a_per_atom_reading_of_the_vocabulary():
    molecules = _molecules()
    assert len(molecules) > 1600 and all(mol is not None for _, mol in molecules)
    for smiles, mol in molecules:
        got, expected = mol_arrays(mol), reference_features(mol)
        for name, a, b in zip(("features", "bonds", "atomic numbers"), got, expected):
            assert a.dtype == b.dtype and np.array_equal(a, b), f"{name} differ for {smiles}"


@pytest.mark.parametrize("smiles, expect", [
    ("[CH3]", {"radical": 1, "hydrogens=3": 1}),
    ("[SiH4]", {"element=Si": 1, "hydrogens>=4": 1}),
    ("[U]", {"element=other": 1, "degree=0": 1}),
    ("[O-2]", {"charge<=-2": 1}),
    ("[Fe+3]", {"charge>=+2": 1, "element=Fe": 1}),
    ("C1CCCCCCCCCCC1", {"ring_size>=8": 1, "in_ring": 1}),
])
def test_rare_atoms_land_in_their_slots(smiles, expect):
    x = mol_arrays(parse_smiles(smiles)[0])[0]
    for name, value in expect.items():
        assert x[0, FEATURE_NAMES.index(name)] == value, name
    assert (x.sum(axis=1) >= 5).all()  # element, degree, charge, hydrogens, hybridisation: one each


def test_explicit_hydrogens_in_molfiles_and_smiles_make_the_same_graph():
    """A molfile with every hydrogen as an atom (as 3D tools write them) and a SMILES with
    [H] atoms give the arrays of the plain SMILES: hydrogens are counts on their heavy atoms."""
    smiles = [s for s, _ in _molecules()[-len(TRICKY) - 200:]]
    for text in smiles:
        plain, _ = parse_smiles(text)
        with_h = Chem.AddHs(plain)
        from_block, reason = parse_molblock(Chem.MolToMolBlock(with_h))
        assert from_block is not None, f"{text}: {reason}"
        from_smiles, reason = parse_smiles(Chem.MolToSmiles(with_h, allHsExplicit=False, allBondsExplicit=False))
        for other in (from_block, from_smiles):
            assert other.GetNumAtoms() == plain.GetNumAtoms(), text
        for a, b in zip(mol_arrays(from_block), mol_arrays(plain)):
            assert np.array_equal(a, b), text
    methanol = [mol_arrays(parse_smiles(s)[0])[0] for s in ("[H]C([H])([H])O", "CO", "OC([H])([H])[H]")]
    assert np.array_equal(methanol[0], methanol[1])
    assert np.array_equal(methanol[1][::-1], methanol[2])
    deuterated, _ = parse_smiles("[2H]C([2H])([2H])[2H]")  # isotopes are kept as atoms
    assert deuterated.GetNumAtoms() == 5


def test_rows_past_the_per_row_limits_are_refused_with_their_reason(monkeypatch):
    import core.data.chem as chem

    mol, reason = parse_smiles("C" * (chem.MAX_SMILES_CHARS + 1))
    assert mol is None and "more than the limit of 100,000" in reason
    monkeypatch.setattr(chem, "MAX_ATOMS", 5)
    assert parse_smiles("CCCCC")[0] is not None
    mol, reason = parse_smiles("CCCCCC")
    assert mol is None and reason == "molecule has 6 atoms, more than the limit of 5"
