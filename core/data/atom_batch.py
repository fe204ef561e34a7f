"""The atom features of many molecules at once: the screening featurizer.

:func:`core.data.chem.mol_arrays` reads one molecule. Screening reads millions, and there
each RDKit call made from Python costs more than the work it asks for. So
:func:`featurize_molecules` asks RDKit for one thing per molecule, its binary form
(``mol.ToBinary()``), reads the atoms, bonds and rings of the whole batch from those bytes
(:mod:`core.data.mol_pickle`) and builds the features with a few numpy operations.

The binary form is RDKit's own: molecules it does not cover (query atoms, more than 255
atoms, unusual bond types, another pickle version, ...) are read by
:func:`core.data.atom_queries.featurize_by_queries`, and the first call checks on tricky
molecules that the bytes give what ``mol_arrays`` gives (else every molecule goes that way).
The result is byte-identical to ``mol_arrays`` molecule by molecule (tests compare the two on
every bundled molecule).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rdkit import Chem

from core.data import mol_pickle
from core.data.atom_queries import featurize_by_queries
from core.data.chem import ATOM_FEATURE_DIM, CHARGES, DEGREES, FEATURE_NAMES, HYDROGENS, RING_SIZES, mol_arrays
from core.data.molecule_arrays import MoleculeArrays, concatenate, interleave

__all__ = ["MoleculeArrays", "concatenate", "featurize_molecules"]

_COLUMN = {name: k for k, name in enumerate(FEATURE_NAMES)}
_OFF_DEGREE, _OFF_CHARGE, _OFF_H = _COLUMN["degree=0"], _COLUMN["charge<=-2"], _COLUMN["hydrogens=0"]
_AROMATIC, _IN_RING, _RADICAL = _COLUMN["aromatic"], _COLUMN["in_ring"], _COLUMN["radical"]
_FIRST_RING_SIZE = _COLUMN[f"ring_size={RING_SIZES[0]}"]
_TABLE = Chem.GetPeriodicTable()
# atomic number (one byte) -> element column ("other element" for the rest)
_ELEMENT_COLUMN = np.array([_COLUMN.get(f"element={_TABLE.GetElementSymbol(z)}", _COLUMN["element=other"])
                            for z in range(119)] + [_COLUMN["element=other"]] * (256 - 119), dtype=np.int64)
# Atom::HybridizationType (one byte) -> column: SP, SP2, SP3, SP3D, SP3D2; the rest "other"
_HYBRID_COLUMN = np.full(256, _COLUMN["hybridisation=other"], dtype=np.int64)
_HYBRID_COLUMN[[2, 3, 4, 6, 7]] = [_COLUMN[f"hybridisation={h}"] for h in ("SP", "SP2", "SP3", "SP3D", "SP3D2")]

# Molecules for the first-use check: charges, radicals, explicit and isotopic H, aromatic
# heteroatoms, hypervalence, large and fused rings, fragments, stereo, metals (not "*": a dummy
# atom carries a label the binary form's reader leaves to the other path).
CHECK_SMILES = (
    "C", "[U]", "[2H]C([2H])([2H])[2H]", "[NH4+]", "[O-][N+](=O)c1ccccc1", "[Fe+3]", "[O-2]",
    "[Na+].[Cl-]", "[CH3]", "C[C]C", "[O]", "F[S](F)(F)(F)(F)F", "FP(F)(F)(F)F", "c1ccc2c(c1)[nH]c1ccccc12",
    "C1CC12CCCCC2CCc1ccc2ccccc2c1", "C1CCCCCCCCCCC1", "C12C3C4C1C5C2C3C45", "C=[N+]=[N-]", "[Pt](Cl)(Cl)(N)N",
    "OB(O)c1ccccc1", "[Se]1C=CC=C1", "C/C=C/[C@H](O)[13CH2]F", "c1cc[o+]cc1", "[nH]1cccc1", "CC#N",
)
_pickle_ok: bool | None = None  # the first-use check's answer


def pickle_matches_mol_arrays() -> bool:
    """Check once whether, with this RDKit, features read from the binary form equal ``mol_arrays``'s.

    The check runs on :data:`CHECK_SMILES` at the first call; later calls return its answer.

    Returns:
        True when the binary form can be read (any surprise in the bytes gives False).
    """
    global _pickle_ok
    if _pickle_ok is None:
        from core.data.chem import parse_smiles

        mols = [parse_smiles(s)[0] for s in CHECK_SMILES]
        try:
            decoded = mol_pickle.decode([m.ToBinary() for m in mols])
            same = bool(decoded.ok.all())
            if same:
                got = _from_pickle(decoded, np.uint8)
                expected = [mol_arrays(m, np.uint8) for m in mols]
                same = (np.array_equal(got.x, np.concatenate([e[0] for e in expected]))
                        and np.array_equal(got.bonds, np.concatenate([e[1] for e in expected]))
                        and np.array_equal(got.atomic_numbers, np.concatenate([e[2] for e in expected])))
        except Exception:  # any surprise in the bytes means: not this way
            same = False
        _pickle_ok = same
    return _pickle_ok


def featurize_molecules(mols: Sequence[Chem.Mol], smiles: Sequence[str | None] | None = None,
                        dtype: type = np.uint8, decoded: mol_pickle.PickledAtoms | None = None) -> MoleculeArrays:
    """The features and bonds of ``mols``, all at once, byte-identical to :func:`mol_arrays` molecule by molecule.

    Molecules the binary form does not cover (and every molecule, when
    :func:`pickle_matches_mol_arrays` is False) go through :func:`featurize_by_queries`.

    Args:
        mols: the molecules.
        smiles: ``smiles[i]`` is the text ``mols[i]`` was parsed from (None: unknown); it helps
            with the molecules the binary form does not cover.
        dtype: the numpy type of the feature matrix (default uint8, the features being 0/1).
        decoded: :func:`mol_pickle.decode` of the molecules' ``ToBinary()``, when the caller has
            it already (it computes the chemist's properties from it too).

    Returns:
        The features, bonds, atomic numbers and per-molecule atom and bond counts of every
        molecule, in the order of ``mols``.
    """
    if not pickle_matches_mol_arrays():
        return featurize_by_queries(mols, smiles, dtype)
    if decoded is None:
        decoded = mol_pickle.decode([m.ToBinary() for m in mols])
    fast = _from_pickle(decoded, dtype)
    if decoded.ok.all():
        return fast
    rest = np.flatnonzero(~decoded.ok).tolist()
    slow = featurize_by_queries([mols[k] for k in rest], None if smiles is None else [smiles[k] for k in rest],
                                dtype)
    return interleave(fast, slow, decoded.ok)


def _from_pickle(decoded: mol_pickle.PickledAtoms, dtype: type) -> MoleculeArrays:
    """The feature matrix and sorted bonds of the molecules :func:`mol_pickle.decode` read."""
    counts, bond_counts = decoded.atom_counts[decoded.ok], decoded.bond_counts[decoded.ok]
    atoms = int(counts.sum())
    first_atom = np.repeat(np.cumsum(counts) - counts, bond_counts)
    lo = np.minimum(decoded.bonds[:, 0], decoded.bonds[:, 1])
    hi = np.maximum(decoded.bonds[:, 0], decoded.bonds[:, 1])
    order = np.argsort((lo + first_atom) * 256 + hi)  # each molecule's bonds as mol_arrays sorts them
    bonds = np.stack([lo[order], hi[order]], axis=1).astype(np.int32)
    degree = np.bincount(np.concatenate([lo, hi]) + np.concatenate([first_atom, first_atom]), minlength=atoms)
    row = np.arange(atoms) * ATOM_FEATURE_DIM
    ring_row = decoded.ring_atoms * ATOM_FEATURE_DIM
    hot = np.concatenate([
        row + _ELEMENT_COLUMN[decoded.atomic_numbers],
        row + _OFF_DEGREE + np.minimum(degree, DEGREES - 1),
        row + _OFF_CHARGE + np.clip(decoded.charges, CHARGES[0], CHARGES[-1]) - CHARGES[0],
        row + _OFF_H + np.minimum(decoded.hydrogens, HYDROGENS - 1),
        row + _HYBRID_COLUMN[decoded.hybridisations],
        row[decoded.aromatic] + _AROMATIC,
        row[decoded.radicals] + _RADICAL,
        ring_row + _IN_RING,
        ring_row + _FIRST_RING_SIZE + np.minimum(decoded.ring_sizes, RING_SIZES[-1]) - RING_SIZES[0],
    ])
    x = np.zeros(atoms * ATOM_FEATURE_DIM, dtype=dtype)
    x[hot] = 1
    return MoleculeArrays(x=x.reshape(atoms, ATOM_FEATURE_DIM), bonds=bonds, atomic_numbers=decoded.atomic_numbers,
                          atom_counts=counts, bond_counts=bond_counts)
