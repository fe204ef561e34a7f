"""The binary-form reader against RDKit's own getters, and what it refuses to read."""
import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import AllChem

from core.data import mol_pickle
from core.data.chem import parse_smiles
from tests.core.data.test_chem import _molecules


def _per_atom(mol: Chem.Mol) -> dict:
    """What ``decode`` should give for one molecule, read one RDKit call at a time."""
    atoms = list(mol.GetAtoms())
    return {
        "atomic_numbers": [a.GetAtomicNum() for a in atoms], "aromatic": [a.GetIsAromatic() for a in atoms],
        "charges": [a.GetFormalCharge() for a in atoms], "hydrogens": [a.GetTotalNumHs() for a in atoms],
        "hybridisations": [int(a.GetHybridization()) for a in atoms],
        "radicals": [a.GetNumRadicalElectrons() > 0 for a in atoms],
        "bonds": [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()],
        "rings": [tuple(r) for r in mol.GetRingInfo().AtomRings()],
    }


def _split(decoded: mol_pickle.PickledAtoms) -> list[dict]:
    """``decode``'s arrays molecule by molecule, in the shape of :func:`_per_atom`."""
    out, atom, bond = [], 0, 0
    ring_atoms, ring_sizes = decoded.ring_atoms.tolist(), decoded.ring_sizes.tolist()
    entry = 0
    for n, nb in zip(decoded.atom_counts[decoded.ok].tolist(), decoded.bond_counts[decoded.ok].tolist()):
        rings = []
        while entry < len(ring_atoms) and ring_atoms[entry] < atom + n:
            size = ring_sizes[entry]
            rings.append(tuple(a - atom for a in ring_atoms[entry:entry + size]))
            entry += size
        cut = slice(atom, atom + n)
        out.append({
            "atomic_numbers": decoded.atomic_numbers[cut].tolist(), "aromatic": decoded.aromatic[cut].tolist(),
            "charges": decoded.charges[cut].tolist(), "hydrogens": decoded.hydrogens[cut].tolist(),
            "hybridisations": decoded.hybridisations[cut].tolist(), "radicals": decoded.radicals[cut].tolist(),
            "bonds": [tuple(b) for b in decoded.bonds[bond:bond + nb].tolist()], "rings": rings,
        })
        atom, bond = atom + n, bond + nb
    return out


def _stereo_bond_molecule() -> Chem.Mol:
    mol = parse_smiles("C/C=C/C(F)=C(Cl)\\Br")[0]
    Chem.AssignStereochemistry(mol, cleanIt=True, force=True)  # sets STEREOE/Z with stereo atoms
    assert any(b.GetStereo() != Chem.BondStereo.STEREONONE for b in mol.GetBonds())
    return mol


def _with_conformer_and_props() -> Chem.Mol:
    mol = Chem.AddHs(parse_smiles("OC(=O)c1ccncc1")[0])
    AllChem.Compute2DCoords(mol)
    mol.SetProp("_Name", "isonicotinic acid")
    mol.GetAtomWithIdx(0).SetIntProp("note", 7)
    return mol


def test_decode_reads_what_rdkit_reports_atom_by_atom():
    mols = [m for _, m in _molecules()] + [_stereo_bond_molecule(), _with_conformer_and_props()]
    mols += [parse_smiles(s)[0] for s in ("C[C@H](O)F |&1:1|", "[13CH3][15NH2]", "C1CCCCCCCCCCCCCCCCCCC1.[K+].[O-]C",
                                           "[CH2]C[C]", "O=[Cl](=O)(=O)[O-]", "c1cc[se]c1", "[2H]OC")]
    decoded = mol_pickle.decode([m.ToBinary() for m in mols])
    readable = [m for m, ok in zip(mols, decoded.ok) if ok]
    assert len(readable) >= len(mols) - 2  # "*" (a dummy label) and the molecule over 255 atoms
    for mol, got in zip(readable, _split(decoded)):
        assert got == _per_atom(mol), Chem.MolToSmiles(mol)


@pytest.mark.parametrize("mol", [
    parse_smiles("*C")[0],  # a dummy atom's label follows the atom
    parse_smiles("[CH3:1]O")[0],  # an atom map number
    parse_smiles("N->[Fe]")[0],  # a dative bond
    parse_smiles("C" * 256)[0],  # atom indices past one byte
    Chem.MolFromSmarts("[C,N]=O"),  # query atoms and bonds
], ids=["dummy", "atom map", "dative", "256 atoms", "query"])
def test_what_the_reader_does_not_cover_is_marked_not_ok_and_the_rest_still_read(mol):
    benzene = parse_smiles("c1ccccc1")[0]
    decoded = mol_pickle.decode([benzene.ToBinary(), mol.ToBinary(), benzene.ToBinary()])
    assert decoded.ok.tolist() == [True, False, True]
    assert decoded.atom_counts.tolist() == [6, 0, 6] and len(decoded.atomic_numbers) == 12
    assert _split(decoded) == [_per_atom(benzene)] * 2


def test_a_molecule_without_ring_info_is_not_read():
    mol = Chem.MolFromSmiles("C1CC1O", sanitize=False)
    mol.UpdatePropertyCache()
    with pytest.raises(RuntimeError, match="not initialized"):  # RDKit itself has no rings to give
        mol.GetRingInfo().NumRings()
    assert not mol_pickle.decode([mol.ToBinary()]).ok[0]


def test_another_pickle_version_is_not_read():
    blob = bytearray(parse_smiles("CCO")[0].ToBinary())
    assert mol_pickle.decode([bytes(blob)]).ok[0]
    blob[12:16] = (99).to_bytes(4, "little")  # the minor version
    assert not mol_pickle.decode([bytes(blob)]).ok[0]


def test_broken_bytes_are_refused_not_misread():
    good = parse_smiles("O=C(O)c1ccc(N)cc1[N+](=O)[O-]")[0].ToBinary()
    rng = np.random.default_rng(0)
    cuts = [good[:k] for k in range(len(good))]
    decoded = mol_pickle.decode(cuts + [good])
    assert not decoded.ok[:-1].any() and decoded.ok[-1]
    noise = [bytes(rng.integers(0, 256, size=int(rng.integers(0, 400)), dtype=np.uint8)) for _ in range(200)]
    assert not mol_pickle.decode(noise).ok.any()  # and no exception


def test_no_blobs():
    decoded = mol_pickle.decode([])
    assert len(decoded.ok) == 0 and decoded.bonds.shape == (0, 2)
