"""The atom features of many molecules with one RDKit call per molecule-level property.

This was the screening featurizer before :mod:`core.data.atom_batch` read RDKit's binary form;
it now reads the molecules that form does not cover (and stays the reference way to featurize
a batch without it). Each RDKit call made from Python costs more than the work it asks for (an
atom object alone costs about a microsecond to hand to Python), so
:func:`featurize_by_queries` asks RDKit per *molecule*, never per atom, and builds the features
of the whole batch with a few numpy operations at the end:

- bonds, degrees and aromaticity come from one bond-order adjacency matrix (an atom is
  aromatic exactly when one of its bonds is; RDKit marks both together);
- elements come from the SMILES text the molecule was parsed from (RDKit numbers atoms in
  the order the text writes them; ``None`` text or a count that does not match falls back
  to asking the atoms);
- hydrogen counts, hybridisations and formal charges come from one SMARTS match per value
  that is not the common one (an atom no pattern matches has no hydrogen, is SP3 or is
  neutral); radicals are asked of bracket atoms only (no other atom can carry one);
- ring membership and sizes come from the ring info, as in ``mol_arrays``.

The result is byte-identical to ``mol_arrays`` molecule by molecule (a test compares the two
on every bundled molecule). Molecules past ``mol_arrays``'s dense-adjacency size, and the rare ones
with hydrogen atoms or zero-order bonds, take its path.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from rdkit import Chem

from core.data.chem import (ATOM_FEATURE_DIM, CHARGES, DEGREES, DENSE_ADJACENCY_ATOMS, FEATURE_NAMES,
                             HYDROGENS, RING_SIZES, mol_arrays)
from core.data.molecule_arrays import MoleculeArrays


def _pattern(smarts: str) -> Chem.Mol:
    return Chem.MolFromSmarts(smarts)


# the first column of each block of the vocabulary, and a few single columns
_COLUMN = {name: k for k, name in enumerate(FEATURE_NAMES)}
_OFF_DEGREE, _OFF_CHARGE, _OFF_H = _COLUMN["degree=0"], _COLUMN["charge<=-2"], _COLUMN["hydrogens=0"]
_SP3_COLUMN, _OTHER_COLUMN = _COLUMN["hybridisation=SP3"], _COLUMN["hybridisation=other"]
_AROMATIC, _IN_RING, _RADICAL = _COLUMN["aromatic"], _COLUMN["in_ring"], _COLUMN["radical"]
_FIRST_RING_SIZE = _COLUMN[f"ring_size={RING_SIZES[0]}"]
_FIRST_HYBRID = _COLUMN["hybridisation=SP"]

# One pattern per value that is not the common one (no hydrogen, SP3).
_HYDROGEN_PATTERNS = [(h, _pattern(f"[H{h}]")) for h in range(1, HYDROGENS - 1)] + [
    (HYDROGENS - 1, _pattern("[" + ";".join(f"!H{h}" for h in range(HYDROGENS - 1)) + "]"))]
# SP3, the common value, is what no pattern matches; SP3D and SP3D2 are looked for only when
# one of them is there (one cheap test instead of two matches)
_HYBRID_PATTERNS = [(_pattern("[^1]"), _COLUMN["hybridisation=SP"]), (_pattern("[^2]"), _COLUMN["hybridisation=SP2"]),
                    (_pattern("[!^1;!^2;!^3;!^4;!^5]"), _COLUMN["hybridisation=other"]),
                    (_pattern("[^4]"), _COLUMN["hybridisation=SP3D"]), (_pattern("[^5]"), _COLUMN["hybridisation=SP3D2"])]
_HYPER = _pattern("[^4,^5]")
_CHARGED = _pattern("[!+0]")

# SMILES atoms: a bracket atom, or an organic-subset symbol (two-letter ones first), or "*"
_ATOM_TOKEN = re.compile(r"\[[^\]]*\]|Br|Cl|[BCNOPSFIbcnops*]")
_BRACKET_SYMBOL = re.compile(r"\[\d*([A-Z][a-z]?|[a-z][a-z]?|\*)")
_TABLE = Chem.GetPeriodicTable()
_Z_OF_TOKEN: dict[str, int] = {}

# atomic number -> element column (the last entry: "other element", also for numbers past the table)
_ELEMENT_COLUMN = np.array([_COLUMN.get(f"element={_TABLE.GetElementSymbol(z)}", _COLUMN["element=other"])
                            for z in range(119)] + [_COLUMN["element=other"]], dtype=np.int64)


def _token_z(token: str) -> int:
    """Atomic number of a SMILES atom token ("c", "Cl", "[nH]", "[13C@@H+]"); -1 if unknown."""
    z = _Z_OF_TOKEN.get(token)
    if z is None:
        symbol = token
        if token.startswith("["):
            m = _BRACKET_SYMBOL.match(token)
            symbol = m.group(1) if m else ""
        symbol = symbol[:1].upper() + symbol[1:]
        try:
            z = 0 if symbol == "*" else _TABLE.GetAtomicNumber(symbol)
        except RuntimeError:  # not an element symbol
            z = -1
        _Z_OF_TOKEN[token] = z
    return z


def featurize_by_queries(mols: Sequence[Chem.Mol], smiles: Sequence[str | None] | None = None,
                        dtype: type = np.uint8) -> MoleculeArrays:
    """The features and bonds of ``mols``, all at once, by SMARTS queries (molecules the binary form does not cover).

    Args:
        mols: the molecules.
        smiles: ``smiles[i]`` is the text ``mols[i]`` was parsed from (None: unknown); it saves
            asking each atom for its element.
        dtype: the numpy type of the feature matrix (default uint8, the features being 0/1).

    Returns:
        The features, bonds, atomic numbers and per-molecule atom and bond counts of every
        molecule, in the order of ``mols``, equal to :func:`core.data.chem.mol_arrays`'s.
    """
    texts = smiles if smiles is not None else [None] * len(mols)
    counts, bond_counts = np.zeros(len(mols), dtype=np.int64), np.zeros(len(mols), dtype=np.int64)
    zs, rows, cols, vals = [], [], [], []  # per molecule: atomic numbers; adjacency entries
    hot_atoms, hot_cols = [], []  # one-hot entries beyond the per-atom blocks: (atom, column)
    h_atoms, h_values, charge_atoms, charge_values = [], [], [], []  # atoms off the common value
    slow: list[tuple[int, np.ndarray, np.ndarray]] = []  # (molecule, x, bonds) read by mol_arrays
    base = 0
    for k, (mol, text) in enumerate(zip(mols, texts)):
        n = mol.GetNumAtoms()
        counts[k] = n
        fast = n <= DENSE_ADJACENCY_ATOMS
        if fast:
            adj = Chem.GetAdjacencyMatrix(mol, useBO=True)
            i, j = adj.nonzero()
            tokens = _ATOM_TOKEN.findall(text.split(None, 1)[0]) if text else ()
            z = [_token_z(t) for t in tokens] if len(tokens) == n else []
            if len(z) != n or -1 in z:
                z, tokens = [mol.GetAtomWithIdx(a).GetAtomicNum() for a in range(n)], ()
            # a zero-order bond is missing from a bond-order matrix; SMARTS counts hydrogen atoms
            # kept as atoms (isotopes) in a neighbour's H count, mol_arrays does not
            fast = len(i) == 2 * mol.GetNumBonds() and 1 not in z
        if not fast:
            x, pairs, z = mol_arrays(mol, dtype)
            slow.append((k, x, pairs))
            zs.append(z)
            base += n
            continue
        rows.append(i + base)
        cols.append(j + base)
        vals.append(adj[i, j])
        bond_counts[k] = len(i) // 2
        zs.append(z)
        for h, pattern in _HYDROGEN_PATTERNS:
            for (a,) in mol.GetSubstructMatches(pattern, uniquify=False, maxMatches=n):
                h_atoms.append(a + base)
                h_values.append(h)
        hyper = mol.HasSubstructMatch(_HYPER)
        for pattern, column in _HYBRID_PATTERNS[:5 if hyper else 3]:
            for (a,) in mol.GetSubstructMatches(pattern, uniquify=False, maxMatches=n):
                hot_atoms.append(a + base)
                hot_cols.append(column)
        atom_at = mol.GetAtomWithIdx
        for (a,) in mol.GetSubstructMatches(_CHARGED, uniquify=False, maxMatches=n):
            charge_atoms.append(a + base)
            charge_values.append(atom_at(a).GetFormalCharge())
        for a in ([a for a, t in enumerate(tokens) if t[0] == "["] if tokens else range(n)):
            if atom_at(a).GetNumRadicalElectrons():
                hot_atoms.append(a + base)
                hot_cols.append(_RADICAL)
        for ring in mol.GetRingInfo().AtomRings():
            column = _FIRST_RING_SIZE + min(len(ring), RING_SIZES[-1]) - RING_SIZES[0]
            for a in ring:
                hot_atoms += (a + base, a + base)
                hot_cols += (_IN_RING, column)
        base += n
    return _assemble(base, counts, bond_counts, zs, rows, cols, vals, hot_atoms, hot_cols,
                     (h_atoms, h_values), (charge_atoms, charge_values), slow, dtype)


def _assemble(atoms: int, counts, bond_counts, zs, rows, cols, vals, hot_atoms, hot_cols, hydrogens, charges,
              slow, dtype) -> MoleculeArrays:
    """The batch's arrays from what :func:`featurize_by_queries` gathered, in a few numpy steps."""
    empty = np.zeros(0, dtype=np.int64)
    i = np.concatenate(rows) if rows else empty
    j = np.concatenate(cols) if cols else empty
    v = np.concatenate(vals) if vals else np.zeros(0)
    z = np.fromiter((a for zz in zs for a in zz), dtype=np.int64, count=atoms)
    degree = np.bincount(i, minlength=atoms)
    aromatic = np.bincount(i[v == 1.5], minlength=atoms) > 0
    hs = np.zeros(atoms, dtype=np.int64)
    hs[hydrogens[0]] = hydrogens[1]
    charge = np.zeros(atoms, dtype=np.int64)
    charge[charges[0]] = charges[1]
    x = np.zeros((atoms, ATOM_FEATURE_DIM), dtype=dtype)
    every = np.arange(atoms)
    x[every, _ELEMENT_COLUMN[np.minimum(z, len(_ELEMENT_COLUMN) - 1)]] = 1
    x[every, _OFF_DEGREE + np.minimum(degree, DEGREES - 1)] = 1
    x[every, _OFF_CHARGE + np.clip(charge, CHARGES[0], CHARGES[-1]) - CHARGES[0]] = 1
    x[every, _OFF_H + hs] = 1
    x[every, _SP3_COLUMN] = 1  # SP3 unless another hybridisation is set below
    hyb = np.asarray(hot_atoms, dtype=np.int64)
    hyb_cols = np.asarray(hot_cols, dtype=np.int64)
    is_hyb = (hyb_cols >= _FIRST_HYBRID) & (hyb_cols <= _OTHER_COLUMN)
    x[hyb[is_hyb], _SP3_COLUMN] = 0
    x[hyb, hyb_cols] = 1
    x[aromatic, _AROMATIC] = 1
    first = i < j  # each bond once, in the row-major order of mol_arrays
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    owner = np.repeat(np.arange(len(counts)), counts)
    bonds = np.stack([i[first], j[first]], axis=1) - starts[owner[i[first]]][:, None] if len(i) else \
        np.zeros((0, 2), dtype=np.int64)
    if slow:  # the large molecules, read by mol_arrays: put their rows and bonds in place
        x, bonds = _with_large(x, bonds, counts, bond_counts, starts, slow)
    return MoleculeArrays(x=x, bonds=bonds.astype(np.int32), atomic_numbers=z, atom_counts=counts,
                          bond_counts=bond_counts)


def _with_large(x, bonds, counts, bond_counts, starts, slow):
    """Insert the rows and bonds of molecules read by ``mol_arrays`` (whose adjacency was skipped)."""
    pieces, at = [], 0
    bond_starts = np.concatenate([[0], np.cumsum(bond_counts)[:-1]])
    for k, xk, pairs in slow:
        x[starts[k]:starts[k] + counts[k]] = xk
        bond_counts[k] = len(pairs)
        cut = bond_starts[k]
        pieces += [bonds[at:cut], pairs.astype(bonds.dtype)]
        at = cut
    pieces.append(bonds[at:])
    return x, np.concatenate(pieces)
