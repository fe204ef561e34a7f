"""Molecules to graphs: RDKit parsing with reasons, and a fixed, documented atom-feature vocabulary.

The vocabulary never depends on the data, so a model trained on one compound file
scores any other. Each atom (heavy atoms only; hydrogens are a count) becomes:

========================  ==========================================================
block                      values (one-hot unless said otherwise)
========================  ==========================================================
element                    ELEMENTS below, then one "other element" slot
degree                     0, 1, 2, 3, 4, 5, 6 or more
formal charge              -2 or less, -1, 0, +1, +2 or more
total hydrogens            0, 1, 2, 3, 4 or more
hybridisation              SP, SP2, SP3, SP3D, SP3D2, other
aromatic                   1 flag
in ring                    1 flag
radical electrons          1 flag (any unpaired electron)
ring sizes                 in a 3-, 4-, 5-, 6-, 7-, 8-or-more-membered ring (flags;
                           fused atoms have several; SSSR rings)
========================  ==========================================================

The ring sizes came in version 2 of the vocabulary (a cyclopropane or cyclobutane is
otherwise just "in ring"); they are the last block, so the first ``ATOM_FEATURE_DIMS[1]``
columns are exactly version 1 and models trained on it keep working.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from rdkit import Chem, RDLogger

if TYPE_CHECKING:
    from torch_geometric.data import Data

RDLogger.DisableLog("rdApp.*")

ELEMENTS: tuple[str, ...] = (
    "C", "N", "O", "S", "F", "Cl", "Br", "I", "P", "B", "Si", "Se", "Na", "K", "Li", "Mg", "Ca",
    "Zn", "Cu", "Fe", "Co", "Ni", "Mn", "Cr", "Pt", "Pd", "Au", "Ag", "Hg", "Sn", "As", "Ge", "Al",
    "Bi", "Sb", "Te", "H",
)
DEGREES = 7
CHARGES = (-2, -1, 0, 1, 2)
HYDROGENS = 5
HYBRIDISATIONS = (
    Chem.HybridizationType.SP,
    Chem.HybridizationType.SP2,
    Chem.HybridizationType.SP3,
    Chem.HybridizationType.SP3D,
    Chem.HybridizationType.SP3D2,
)

FEATURE_NAMES: tuple[str, ...] = (
    tuple(f"element={e}" for e in ELEMENTS)
    + ("element=other",)
    + tuple(f"degree={d}" for d in range(DEGREES - 1))
    + (f"degree>={DEGREES - 1}",)
    + ("charge<=-2", "charge=-1", "charge=0", "charge=+1", "charge>=+2")
    + tuple(f"hydrogens={h}" for h in range(HYDROGENS - 1))
    + (f"hydrogens>={HYDROGENS - 1}",)
    + ("hybridisation=SP", "hybridisation=SP2", "hybridisation=SP3", "hybridisation=SP3D",
       "hybridisation=SP3D2", "hybridisation=other")
    + ("aromatic", "in_ring", "radical")
    + ("ring_size=3", "ring_size=4", "ring_size=5", "ring_size=6", "ring_size=7", "ring_size>=8")
)
ATOM_FEATURE_DIM = len(FEATURE_NAMES)
RING_SIZES = (3, 4, 5, 6, 7, 8)  # the last one means "8 or more"
ATOM_FEATURE_VERSION = 2
ATOM_FEATURE_DIMS = {1: ATOM_FEATURE_DIM - len(RING_SIZES), 2: ATOM_FEATURE_DIM}  # version -> leading columns

_ELEMENT_INDEX = {e: i for i, e in enumerate(ELEMENTS)}
_OFF_DEGREE = len(ELEMENTS) + 1
_OFF_CHARGE = _OFF_DEGREE + DEGREES
_OFF_H = _OFF_CHARGE + len(CHARGES)
_OFF_HYB = _OFF_H + HYDROGENS
_OFF_FLAGS = _OFF_HYB + len(HYBRIDISATIONS) + 1
_OFF_RINGS = _OFF_FLAGS + 3


# Per-row limits: past them a row is rejected with its reason rather than holding a worker (and its
# memory) for minutes. The largest MOSES, ChEMBL or hERG molecules are far below them.
MAX_SMILES_CHARS = 100_000
MAX_ATOMS = 10_000
# Ring-closure bonds (each written as a pair of digits or %nn): what makes RDKit's ring perception
# explode. Measured on fused ladders (peak RSS of the parse): 250 rings (500 atoms) 91 MB and
# 0.2 s; 500 rings 336 MB and 1.3-5.9 s; 1,000 rings 2.1 GB and 24-64 s (the load varied); 5,000
# rings (a legal 20,000-character SMILES) took a screening worker to 4.8 GB before it died, and
# RDKit's parse alone to a reported 20 GB. Branches and nesting cost nothing like it (50,000 nested branches: 0.2 s, 74 MB), so they
# are not limited. Drug-like molecules have under 20 ring bonds; a C540 fullerene has 271.
MAX_RING_BONDS = 250
# Ring-closure labels outside bracket atoms: %(nnn), %nn or one digit.
_RING_LABEL = re.compile(r"\[[^\]]*\]|%\(\d+\)|%\d\d|\d")


def ring_bonds(smiles: str) -> int:
    """The number of ring-closure bonds a SMILES string writes, counted from the text alone, before RDKit sees it.

    That is half its ring-closure labels; digits inside bracket atoms, such as isotopes and
    charges, are not labels.

    Args:
        smiles: one SMILES string (without a CXSMILES extension).

    Returns:
        The ring-closure bonds (a truncated string counts half a bond per unmatched label).
    """
    if not any(c.isdigit() for c in smiles):
        return 0
    return sum(1 for m in _RING_LABEL.finditer(smiles) if m.group()[0] != "[") // 2


def parse_smiles(smiles: str) -> tuple[Chem.Mol | None, str]:
    """Parse and sanitise a SMILES string, giving the reason in plain words when it cannot be read.

    Every reader of SMILES comes here. Hydrogens written as atoms ("[H]") become hydrogen
    counts, as in RDKit's default reader. A SMILES over ``MAX_SMILES_CHARS`` characters,
    ``MAX_RING_BONDS`` ring-closure bonds or ``MAX_ATOMS`` atoms is refused: the first two before
    RDKit sees it, so no row can make the parse take gigabytes. Running out of memory while
    parsing (a worker's address-space limit, :mod:`core.runtime.memory`) is a refused row too.

    Args:
        smiles: one SMILES string; surrounding whitespace is ignored, and a CXSMILES extension
            ("| ... |") after a space is allowed.

    Returns:
        (the sanitised molecule, "") or, on failure, (None, the reason).
    """
    text = smiles.strip()
    if not text:
        return None, "empty SMILES"
    if len(text) > MAX_SMILES_CHARS:
        return None, f"SMILES has {len(text):,} characters, more than the limit of {MAX_SMILES_CHARS:,}"
    parts = text.split(None, 1)
    if len(parts) > 1 and not parts[1].startswith("|"):  # RDKit would read only the first part
        return None, f"SMILES contains a space or line break (is a name in the SMILES field?): {_clip(text)}"
    if not parts[0].isascii():  # RDKit stops at the first such character and reads the rest as a name
        odd = next(c for c in parts[0] if not c.isascii())
        return None, f"SMILES contains {odd!r} (U+{ord(odd):04X}), not a SMILES character: {_clip(text)}"
    if len(parts[0]) > 2 * MAX_RING_BONDS and (rings := ring_bonds(parts[0])) > MAX_RING_BONDS:
        return None, (f"SMILES has {rings:,} ring-closure bonds, more than the limit of {MAX_RING_BONDS:,} "
                      f"(ring perception would take gigabytes): {_clip(text)}")
    try:
        mol = Chem.MolFromSmiles(text, sanitize=False)
        if mol is None:
            return None, f"invalid SMILES syntax: {_clip(text)}"
        if mol.GetNumAtoms() > MAX_ATOMS:
            return None, f"molecule has {mol.GetNumAtoms():,} atoms, more than the limit of {MAX_ATOMS:,}"
        mol, reason = _sanitised(mol, text)
        if mol is not None and _HYDROGEN_ATOM.search(text):
            return _without_hydrogen_atoms(mol)
    except MemoryError:
        return None, f"out of memory while parsing the SMILES (the parsing worker's limit): {_clip(text)}"
    return mol, reason


# A hydrogen written as an atom of its own: [H], [2H], [H+] (not [Hg], [He], [nH] or [NH4+]).
_HYDROGEN_ATOM = re.compile(r"\[\d*H(?![a-z])")


def _without_hydrogen_atoms(mol: Chem.Mol) -> tuple[Chem.Mol | None, str]:
    """Hydrogen atoms folded into their heavy atoms' hydrogen counts, as RDKit's default readers
    do, so that "[H]C([H])([H])O", "CO" and a molfile with explicit hydrogens make one graph.
    RDKit keeps the hydrogens that carry information (isotopes, H2, a lone [H+]). Sanitized
    again: without it the heavy atoms would keep the hydrogen counts of before (none)."""
    try:
        return Chem.RemoveHs(mol), ""
    except Exception as exc:  # Chem.rdchem.MolSanitizeException and kin
        return None, f"chemistry error after removing the hydrogen atoms: {str(exc).strip()}"


def parse_molblock(block: str) -> tuple[Chem.Mol | None, str]:
    """Parse and sanitise an MDL molblock, giving the reason when it cannot be read.

    The limits of :func:`parse_smiles` on atoms and ring bonds hold here too, checked before
    ring perception; hydrogen atoms become hydrogen counts.

    Args:
        block: the molblock (V2000 or V3000), header lines included.

    Returns:
        (the sanitised molecule, "") or, on failure, (None, the reason).
    """
    size = molblock_size(block)
    if size is not None and size[0] > MAX_ATOMS:
        return None, f"molecule has {size[0]:,} atoms, more than the limit of {MAX_ATOMS:,}"
    if size is not None and size[1] > MAX_RING_BONDS:  # RDKit's molblock reader finds rings already
        return None, f"molecule has {size[1]:,} ring-closure bonds, more than the limit of {MAX_RING_BONDS:,}"
    try:
        mol = Chem.MolFromMolBlock(block, sanitize=False, removeHs=False)
    except MemoryError:
        return None, "out of memory while reading the molblock (the parsing worker's limit)"
    except Exception as exc:  # RDKit raises for some malformed blocks
        return None, f"broken molblock: {exc}"
    if mol is None:
        return None, "broken molblock (RDKit could not read the atom or bond block)"
    try:
        mol, reason = _sanitised(mol, "")
        return (None, reason) if mol is None else _without_hydrogen_atoms(mol)
    except MemoryError:
        return None, "out of memory while reading the molblock (the parsing worker's limit)"


def molblock_size(block: str) -> tuple[int, int] | None:
    """The atoms and ring-closure bonds of an MDL molblock (V2000 or V3000), read from its text before RDKit sees it.

    Ring-closure bonds are bonds - atoms + connected pieces, what a SMILES of the molecule would
    write as ring closures. None when the counts or bonds cannot be read (RDKit's reader then
    says what is wrong).

    Args:
        block: the molblock, header lines included.

    Returns:
        (atoms, ring-closure bonds), or None.
    """
    lines = block.splitlines()
    try:
        if len(lines) > 3 and "V3000" in lines[3]:
            counts = next(line.split() for line in lines if line.startswith("M  V30 COUNTS"))
            atoms = int(counts[3])
            if atoms > MAX_ATOMS:  # refused on its atom count: no need to read (or allocate for) its bonds
                return atoms, 0
            start = next(i for i, line in enumerate(lines) if line.startswith("M  V30 BEGIN BOND")) + 1 \
                if int(counts[4]) else len(lines)
            pairs = []
            for line in lines[start:]:
                if line.startswith("M  V30 END BOND"):
                    break
                fields = line.split()
                pairs.append((int(fields[4]), int(fields[5])))
        else:
            atoms, bonds = int(lines[3][0:3]), int(lines[3][3:6])  # V2000: at most 999 each
            pairs = [(int(line[0:3]), int(line[3:6])) for line in lines[4 + atoms:4 + atoms + bonds]]
    except (IndexError, ValueError, StopIteration):
        return None
    parent = list(range(atoms + 1))  # union-find over atoms 1..atoms: the connected pieces

    def root(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    pieces = atoms
    for a, b in pairs:
        if not (0 < a <= atoms and 0 < b <= atoms):
            return None
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[ra] = rb
            pieces -= 1
    return atoms, len(pairs) - atoms + pieces


def _sanitised(mol: Chem.Mol, text: str) -> tuple[Chem.Mol | None, str]:
    try:
        Chem.SanitizeMol(mol)
    except Exception as exc:  # Chem.rdchem.MolSanitizeException and kin
        return None, f"chemistry error: {str(exc).strip()}"
    if mol.GetNumAtoms() == 0:
        return None, "molecule has no atoms"
    return mol, ""


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


_TABLE = Chem.GetPeriodicTable()
_SYMBOL_BY_Z = [_TABLE.GetElementSymbol(z) for z in range(119)]
_ELEMENT_BY_Z = [_ELEMENT_INDEX.get(sym, len(ELEMENTS)) for sym in _SYMBOL_BY_Z] + [len(ELEMENTS)]
_LAST_Z = len(_ELEMENT_BY_Z) - 1  # atomic numbers past the table are "other element"
# RDKit's SMARTS hybridisation primitives ^1..^5, in the order of HYBRIDISATIONS
_HYB_PATTERNS = [Chem.MolFromSmarts(f"[^{k}]") for k in range(1, 6)]
DENSE_ADJACENCY_ATOMS = 128  # larger molecules: neighbour lists instead of a dense adjacency matrix


def atom_features(mol: Chem.Mol, dtype: type = np.float32) -> np.ndarray:
    """The fixed-vocabulary feature matrix of a molecule's atoms.

    Args:
        mol: a sanitised molecule.
        dtype: the numpy type of the matrix (default float32).

    Returns:
        The one-hot features, shape (atoms, ATOM_FEATURE_DIM).
    """
    return mol_arrays(mol, dtype)[0]


def mol_arrays(mol: Chem.Mol, dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A molecule as arrays: its atom features, bonds and atomic numbers.

    Featurizing is on the screening hot path, and each RDKit call from Python costs about a
    microsecond (``GetHybridization`` five): so bonds and degrees come from one adjacency
    matrix, hybridisations from one SMARTS match per kind, ring membership and sizes from the
    ring info, and only five calls per atom remain. The one-hot entries are collected as
    flat indices and set at once.

    Args:
        mol: a sanitised molecule.
        dtype: the numpy type of the feature matrix (default float32).

    Returns:
        (atom features of shape (atoms, ATOM_FEATURE_DIM); bonds as (bonds, 2) int32 atom-index
        pairs, the lower index first, sorted; atomic numbers of shape (atoms,), int64).
    """
    n = mol.GetNumAtoms()
    if n <= DENSE_ADJACENCY_ATOMS:
        adj = Chem.GetAdjacencyMatrix(mol)
        degree = adj.sum(axis=1).tolist()
        pairs = np.argwhere(np.triu(adj)).astype(np.int32)
    else:  # a dense matrix would be large; each atom's neighbours, in the dense matrix's order
        # (iterating mol.GetBonds() from Python is quadratic: 9.4 s for 80,000 atoms, this 0.14 s)
        atom_at = mol.GetAtomWithIdx
        pairs_list, degree = [], []
        for a in range(n):
            neighbours = sorted(nb.GetIdx() for nb in atom_at(a).GetNeighbors())
            degree.append(len(neighbours))
            pairs_list.extend((a, b) for b in neighbours if b > a)
        pairs = np.array(pairs_list, dtype=np.int32).reshape(-1, 2)
    hyb = [_OFF_HYB + len(HYBRIDISATIONS)] * n  # "other" unless a pattern below matches
    for k, pattern in enumerate(_HYB_PATTERNS):
        for (a,) in mol.GetSubstructMatches(pattern, uniquify=False, maxMatches=max(n, 1)):
            hyb[a] = _OFF_HYB + k
    lo, hi = CHARGES[0], CHARGES[-1]
    z_list, hot, base = [], [], 0
    atom_at = mol.GetAtomWithIdx  # faster than iterating mol.GetAtoms()
    for a in range(n):
        atom = atom_at(a)
        z = atom.GetAtomicNum()
        z_list.append(z)
        c = min(max(atom.GetFormalCharge(), lo), hi)
        hot += (base + _ELEMENT_BY_Z[min(z, _LAST_Z)], base + _OFF_DEGREE + min(degree[a], DEGREES - 1),
                base + _OFF_CHARGE + c - lo, base + _OFF_H + min(atom.GetTotalNumHs(), HYDROGENS - 1), base + hyb[a])
        if atom.GetIsAromatic():
            hot.append(base + _OFF_FLAGS)
        if atom.GetNumRadicalElectrons():
            hot.append(base + _OFF_FLAGS + 2)
        base += ATOM_FEATURE_DIM
    for ring in mol.GetRingInfo().AtomRings():
        col = _OFF_RINGS + min(len(ring), RING_SIZES[-1]) - RING_SIZES[0]
        for a in ring:
            hot += (a * ATOM_FEATURE_DIM + _OFF_FLAGS + 1, a * ATOM_FEATURE_DIM + col)  # in a ring; its size
    x = np.zeros(n * ATOM_FEATURE_DIM, dtype=dtype)
    x[hot] = 1
    return x.reshape(n, ATOM_FEATURE_DIM), pairs, np.asarray(z_list, dtype=np.int64)


def element_symbols(atomic_numbers: np.ndarray) -> list[str]:
    """Element symbols for atomic numbers.

    Args:
        atomic_numbers: integer array of atomic numbers.

    Returns:
        One symbol per number: "*" for 0 (a dummy atom), "?" outside the periodic table.
    """
    return [_SYMBOL_BY_Z[z] if 0 <= z < len(_SYMBOL_BY_Z) else "?" for z in atomic_numbers.tolist()]


def mol_to_graph(mol: Chem.Mol) -> Data:
    """A molecule as a torch-geometric graph: atom features in ``x``, bonds both ways in ``edge_index``.

    torch is imported here, not with the module: the screening workers featurize without it.

    Args:
        mol: a sanitised molecule.

    Returns:
        A ``Data`` with float32 ``x`` (atoms, ATOM_FEATURE_DIM), ``edge_index`` (2, 2 * bonds)
        and ``num_nodes``.
    """
    import torch
    from torch_geometric.data import Data

    x, bonds, _ = mol_arrays(mol)
    pairs = torch.from_numpy(bonds.astype(np.int64)).t()
    edge_index = torch.cat([pairs, pairs.flip(0)], dim=1)
    return Data(x=torch.from_numpy(x), edge_index=edge_index, num_nodes=x.shape[0])


def atom_symbols(smiles: str) -> list[str]:
    """Element symbols of the atoms of a SMILES string, in graph node order.

    Args:
        smiles: one SMILES string.

    Returns:
        One symbol per heavy atom; an empty list when the SMILES cannot be parsed.
    """
    mol, _ = parse_smiles(smiles)
    return [a.GetSymbol() for a in mol.GetAtoms()] if mol is not None else []


def murcko_scaffolds(smiles: Sequence[str]) -> list[str]:
    """Compute the Bemis-Murcko scaffold SMILES of each molecule.

    Args:
        smiles: the molecules, one SMILES each.

    Returns:
        One scaffold SMILES per molecule; ``""`` for acyclic or unparseable ones (or where RDKit
        fails on the fragment).
    """
    from rdkit.Chem.Scaffolds import MurckoScaffold

    out = []
    for s in smiles:
        mol = parse_smiles(s)[0] if s else None
        if mol is None:
            out.append("")
            continue
        try:
            core = MurckoScaffold.GetScaffoldForMol(mol)
            out.append(Chem.MolToSmiles(core) if core.GetNumAtoms() else "")
        except Exception:  # an odd valence in a fragment: no scaffold rather than no table
            out.append("")
    return out
