"""The chemist's properties of many molecules at once, bitwise equal to RDKit's own functions.

RDKit's Crippen logP costs about 0.4 ms a molecule (it adds the hydrogens, then matches some
110 SMARTS patterns against every atom) and its strict rotatable-bond count 0.1 ms: more, for a
screen, than scoring the molecule. Yet logP, TPSA and the H-bond donor and acceptor counts are
sums over atoms, the rotatable-bond count a count of bonds whose two atoms each pass a test, and
what RDKit's patterns decide for an atom depends only on its near surroundings: no pattern looks
further than two bonds from the atom it types, and only those rooted at N, O and S look past
the first (and there only across a double bond, or round a carbonyl oxygen's carbon).

So :func:`batch_properties` reads every atom's surroundings from the molecules' binary form
(:mod:`core.data.mol_pickle`) as one 64-bit key: the atom's element, aromaticity, hydrogens,
charge, degree and three-ring membership; each bond's type and ring membership; each
neighbour's element, aromaticity and charge, with its hydrogens and degree (around a carbon only
whether it is a methyl and whether it is terminal); for N, O and S also the element,
aromaticity and charge of what lies two bonds away where the patterns look. It asks RDKit only
about a molecule holding an atom whose key this process has not met yet (:func:`_learn`): on
MOSES, one molecule in 53 over the first 50,000. logP and TPSA are summed in RDKit's order, so
every value is bitwise RDKit's.

The locality argument is checked, not trusted: each process compares its results with RDKit's
functions on tricky molecules at first use (:data:`CHECK_SMILES`), on the first molecules it
learns from and on one molecule in 512 of the others; a difference, or one key meeting two
answers, sends every molecule to RDKit's functions (:func:`reference_properties`) from then on,
with a warning. Molecules the binary form does not cover, or with hydrogen or dummy atoms in
the graph, always go there.
"""
from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable, Sequence
from functools import cache

import numpy as np
from rdkit import Chem

from core.data import mol_pickle
from core.data.properties import PROPERTY_COLUMNS

COLUMNS = PROPERTY_COLUMNS  # the result's column order

# RDKit's own definitions (Code/GraphMol/Descriptors/Lipinski.cpp; CalcNumHBA's version 2.0.2):
# CalcNumHBD and CalcNumHBA count the atoms these match; CalcNumRotatableBonds (strict, RDKit's
# default) counts the non-ring single bonds between an atom of the first kind and one of the second.
_HBD = "[N&!H0&v3,N&!H0&+1&v4,O&H1&+0,S&H1&+0,n&H1&+0]"
_HBA = ("[$([O,S;H1;v2]-[!$(*=[O,N,P,S])]),$([O,S;H0;v2]),$([O,S;-]),$([N;v3;!$(N-*=!@[O,N,P,S])]),"
        "$([nH0X2,o,s;+0])]")
_ROTOR_END = "!$(*#*)&!D1&!$(C(F)(F)F)&!$(C(Cl)(Cl)Cl)&!$(C(Br)(Br)Br)&!$(C([CH3])([CH3])[CH3])"
_ROTOR_LEFT = (f"[{_ROTOR_END}&!$([CD3](=[N,O,S])-!@[#7,O,S!D1])&!$([#7,O,S!D1]-!@[CD3]=[N,O,S])"
               "&!$([CD3](=[N+])-!@[#7!D1])&!$([#7!D1]-!@[CD3]=[N+])]")
_ROTOR_RIGHT = f"[{_ROTOR_END}]"

# Molecules for the first-use check: each kind of atom the patterns tell apart by what lies two
# bonds away (amides, esters, acids and their anions, thioamides, amidinium, nitro, sulfonyl,
# aldehydes, hydroxylamines, peroxides), CF3/CCl3/tBu rotors, charges, aromatic heteroatoms,
# three-membered rings, fused and bridged rings.
CHECK_SMILES = (
    "CC(=O)NC", "CC(=O)OC", "CC(=O)O", "CC(=O)[O-]", "CC(=S)NC", "NC(=[NH2+])c1ccccc1", "C[N+](=O)[O-]",
    "CS(=O)(=O)Nc1ccccc1", "O=CCc1ccccc1", "CNO", "COOC", "FC(F)(F)c1ccccc1C(Cl)(Cl)Cl", "CC(C)(C)CCO",
    "c1cc[nH]c1CC[NH3+]", "c1ccncc1OC", "C1CN1CC1CO1", "C1CC2CCC1C2", "c1ccc2ccccc2c1", "CC#N",
    "O=C1NC(=O)C(=O)N1", "OC(=O)c1ccc(o1)S(=O)(=O)[O-]", "CN(C)C=O", "C=CC=O", "OP(=O)(O)OCC",
    "CC(=O)C(C)=NO", "Cc1nc(N)sc1C(=O)NN", "CCSC(=S)SCC", "[O-][n+]1ccccc1", "N#CC(=C)C(F)(F)Br",
    "c1ccc(cc1)-c1ccccc1", "CC1=CC(=O)C=CC1=O", "NC(=O)N", "ClC(Cl)=C(Cl)Cl", "[Na+].[O-]C(=O)CC(O)C",
)
_VERIFIED_LEARNING = 64  # a process compares this many of the molecules it learns from with RDKit,
_SPOT_CHECK = 512  # and one molecule in this many of the others

_SEEDS = tuple(np.uint64(s) for s in (0x9E3779B97F4A7C15, 0xD1B54A32D192ED03, 0x8CB92BA72F3D8DD7,
                                      0xA24BAED4963EE407, 0xF1357AEA2E62A9C5, 0xC2B2AE3D27D4EB4F,
                                      0x165667B19E3779F9))
_BOND_CODE = np.zeros(256, dtype=np.uint64)  # Bond::BondType -> 1..4 (single, double, triple, aromatic)
_BOND_CODE[[1, 2, 3, 12]] = [1, 2, 3, 4]
_SINGLE = 1


class _Memory:
    """What this process learned from RDKit: atom key -> row of ``values``, whose columns are the
    atom's Crippen contribution, that of each of its hydrogens, its TPSA contribution, donor,
    acceptor, and whether it can be each end of a rotatable bond."""

    def __init__(self) -> None:
        self.rows: dict[int, int] = {}
        self.values = np.zeros((1024, 7), dtype=np.float64)
        self.size = 0
        self.checked: bool | None = None  # the first-use check's answer (None: not run yet)
        self.learned = 0  # molecules learned from and compared with RDKit
        self.seen = 0  # molecules computed from their atoms' environments
        self.lock = threading.RLock()

    def add(self, answers: dict[int, tuple]) -> None:
        """Remember new keys' rows."""
        new = [(key, row) for key, row in answers.items() if key not in self.rows]
        if self.size + len(new) > len(self.values):
            grown = np.zeros((2 * (self.size + len(new)), 7), dtype=np.float64)
            grown[: self.size] = self.values[: self.size]
            self.values = grown
        for key, row in new:
            self.rows[key] = self.size
            self.values[self.size] = row
            self.size += 1


_memory = _Memory()
_SLICE = 1024  # molecules computed under the lock at once: a fork never waits long for it


def _fork_safely() -> None:
    """Hold the memory's lock across ``fork`` (screening's workers are forked, maybe while another
    thread computes properties), so that a child starts with a whole memory and a lock of its own."""
    os.register_at_fork(before=lambda: _memory.lock.acquire(), after_in_parent=lambda: _memory.lock.release(),
                        after_in_child=_new_lock)


def _new_lock() -> None:
    """The child's own lock (the parent's was held by the forking thread)."""
    _memory.lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    _fork_safely()


def reference_properties(mol: Chem.Mol) -> list[float]:
    """A molecule's properties from RDKit's functions: the definition the fast path must equal.

    Args:
        mol: an RDKit molecule.

    Returns:
        The values, in :data:`COLUMNS` order.
    """
    return [f(mol) for f in _functions()]


@cache
def _functions() -> tuple[Callable, ...]:
    """RDKit's functions, in :data:`COLUMNS` order (``PROPERTY_FUNCTIONS`` names them)."""
    from rdkit.Chem import Crippen, Descriptors, rdMolDescriptors

    by_name = {"mw": Descriptors.MolWt, "clogp": Crippen.MolLogP, "tpsa": rdMolDescriptors.CalcTPSA,
               "hbd": rdMolDescriptors.CalcNumHBD, "hba": rdMolDescriptors.CalcNumHBA,
               "rotatable_bonds": rdMolDescriptors.CalcNumRotatableBonds, "heavy_atoms": Chem.Mol.GetNumHeavyAtoms,
               "rings": rdMolDescriptors.CalcNumRings, "formal_charge": Chem.GetFormalCharge}
    return tuple(by_name[name] for name in COLUMNS)


@cache
def _patterns() -> tuple[Chem.Mol, ...]:
    """The donor, acceptor and two rotor-end patterns, parsed once."""
    return tuple(Chem.MolFromSmarts(s) for s in (_HBD, _HBA, _ROTOR_LEFT, _ROTOR_RIGHT))


def batch_properties(mols: Sequence[Chem.Mol], decoded: mol_pickle.PickledAtoms | None = None) -> np.ndarray:
    """The properties of many molecules, equal to RDKit's functions molecule by molecule.

    Args:
        mols: RDKit molecules.
        decoded: :func:`core.data.mol_pickle.decode` of their ``ToBinary()``, when the caller
            has it already (the screening featurizer does).

    Returns:
        float64 array of shape (molecules, len(COLUMNS)), columns in :data:`COLUMNS` order.
    """
    if decoded is None and len(mols) > _SLICE:
        return np.concatenate([batch_properties(mols[k: k + _SLICE]) for k in range(0, len(mols), _SLICE)])
    out = np.empty((len(mols), len(COLUMNS)), dtype=np.float64)
    if not len(mols):
        return out
    fast = np.zeros(len(mols), dtype=bool)
    with _memory.lock:
        if _fast_path_holds():
            fast, values = _by_environment(mols, decoded)
            out[fast] = values
            if not _fast_path_holds():  # a molecule learned from disagreed with RDKit: none of these is trusted
                fast[:] = False
    for k in np.flatnonzero(~fast).tolist():
        out[k] = reference_properties(mols[k])
    return out


def _fast_path_holds() -> bool:
    """Whether this process computes from atom environments: checked on :data:`CHECK_SMILES` once."""
    if _memory.checked is None:
        _memory.checked = True  # for the check itself
        from core.data.chem import parse_smiles

        mols = [parse_smiles(s)[0] for s in CHECK_SMILES]
        try:
            fast, values = _by_environment(mols, verify=False)
            expected = np.array([reference_properties(m) for m in mols])
            same = bool(fast.all()) and np.array_equal(values, expected)
        except Exception:  # any surprise in the bytes or the patterns means: not this way
            same = False
        if not same:
            _give_up("the first-use check on tricky molecules")
    return bool(_memory.checked)


def _give_up(where: str) -> None:
    """Send every molecule to RDKit's functions from now on, and say why once."""
    if _memory.checked:
        warnings.warn(f"chemists' properties: atom environments disagreed with RDKit's functions in {where}; "
                      "computing every molecule with RDKit's functions (slower, same values)", RuntimeWarning,
                      stacklevel=3)
    _memory.checked = False


def _by_environment(mols: Sequence[Chem.Mol], decoded: mol_pickle.PickledAtoms | None = None,
                    verify: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Properties from the atoms' environments: which molecules could be done, and their rows."""
    if decoded is None:
        decoded = mol_pickle.decode([m.ToBinary() for m in mols])
    done = decoded.ok.copy()
    counts, bond_counts = decoded.atom_counts[done], decoded.bond_counts[done]
    if not len(counts):
        return done, np.empty((0, len(COLUMNS)))
    keys, usable, ring = _atom_keys(decoded, counts, bond_counts)
    owner = np.repeat(np.arange(len(counts)), counts)
    usable = np.bincount(owner[~usable], minlength=len(counts)) == 0  # per molecule
    index = np.flatnonzero(done)
    done[index[~usable]] = False
    unique, inverse = np.unique(keys, return_inverse=True)
    unique_rows = np.fromiter((_memory.rows.get(k, -1) for k in unique.tolist()), dtype=np.int64, count=len(unique))
    first = np.cumsum(counts) - counts
    learned = []
    for m in np.flatnonzero(usable & (np.bincount(owner[unique_rows[inverse] < 0], minlength=len(counts)) > 0)).tolist():
        atoms = inverse[first[m]: first[m] + counts[m]]
        if (unique_rows[atoms] < 0).any():  # a key still unknown: RDKit types this molecule's atoms
            if not _learn(mols[index[m]], unique[atoms]):
                done[index[m]] = False
                usable[m] = False
                continue
            learned.append(m)
            unique_rows[atoms] = [_memory.rows[k] for k in unique[atoms].tolist()]
    values = _assemble(mols, decoded, index, counts, bond_counts, unique_rows[inverse], owner, ring)
    if verify:
        spot = np.flatnonzero(usable)
        spot = spot[(_memory.seen + np.arange(len(spot))) % _SPOT_CHECK == 0]
        _memory.seen += int(usable.sum())
        checked = learned[: max(0, _VERIFIED_LEARNING - _memory.learned)]
        _memory.learned += len(checked)
        for m in sorted(set(checked) | set(spot.tolist())):
            if not np.array_equal(values[m], reference_properties(mols[index[m]])):
                _give_up(f"molecule {Chem.MolToSmiles(mols[index[m]])}")
                break
    return done, values[usable]


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a bijection of uint64 that spreads every input bit over the output."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _atom_keys(decoded: mol_pickle.PickledAtoms, counts: np.ndarray,
               bond_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each atom's environment key (uint64), whether the atom can be keyed at all, and whether
    each bond lies in a ring."""
    atoms = int(counts.sum())
    first = np.cumsum(counts) - counts
    bond_first = np.repeat(first, bond_counts)
    u, v = decoded.bonds[:, 0] + bond_first, decoded.bonds[:, 1] + bond_first
    degree = np.bincount(np.concatenate([u, v]), minlength=atoms)
    in_three_ring = np.zeros(atoms, dtype=np.int64)
    in_three_ring[decoded.ring_atoms[decoded.ring_sizes == 3]] = 1
    z, h, charge = decoded.atomic_numbers, decoded.hydrogens, decoded.charges
    usable = (z > 1) & (h < 16) & (charge >= -16) & (charge < 16) & (degree < 32)
    invariant = (z | decoded.aromatic.astype(np.int64) << 8 | h << 9 | (charge + 16) << 13 | degree << 18
                 | in_three_ring << 23).astype(np.uint64)
    short = (z | decoded.aromatic.astype(np.int64) << 8 | (charge + 16) << 9).astype(np.uint64)
    ring = _ring_bonds(decoded, u, v, atoms)
    bond = _BOND_CODE[decoded.bond_types] + np.uint64(8) * ring.astype(np.uint64)
    src, dst, code = np.concatenate([u, v]), np.concatenate([v, u]), np.concatenate([bond, bond])
    s = _SEEDS
    # radius one: the atom, and the multiset of (bond, neighbour) pairs (a sum of mixed terms).
    # Around a carbon the patterns ask less of a neighbour: its element, aromaticity and charge,
    # whether it is a methyl (tert-butyl, CF3-like rotors) and whether it is terminal (D1).
    for_carbon = (z | decoded.aromatic.astype(np.int64) << 8 | (charge + 16) << 9 | (h == 3).astype(np.int64) << 14
                  | (degree == 1).astype(np.int64) << 15).astype(np.uint64)
    neighbour = np.where(z[dst] == 6, for_carbon[src], invariant[src])
    first_shell = _mix(_mix(neighbour ^ s[0]) ^ code * s[1])
    keys = _mix(invariant ^ s[2])
    np.add.at(keys, dst, first_shell)
    # radius two, for N, O and S: each neighbour with what lies beyond it. The patterns look
    # there only across a double bond (C=O, C=N, S=O beside the atom), except for a carbonyl
    # oxygen, whose carbon's other neighbours they read too (ketone, acid, ester, aldehyde).
    double = np.concatenate([decoded.bond_types, decoded.bond_types]) == 2
    term = _mix(_mix(short[src] ^ s[3]) ^ code * s[4])
    beyond_double, beyond_all = np.zeros(atoms, dtype=np.uint64), np.zeros(atoms, dtype=np.uint64)
    np.add.at(beyond_double, dst[double], term[double])
    np.add.at(beyond_all, dst, term)
    carbonyl_oxygen = double & (z[dst] == 8)  # the edge from the carbon to its double-bonded oxygen
    beyond = np.where(carbonyl_oxygen, beyond_all[src], beyond_double[src])
    second = np.zeros(atoms, dtype=np.uint64)
    np.add.at(second, dst, _mix((beyond ^ s[5]) + first_shell))
    nos = (z == 7) | (z == 8) | (z == 16)
    keys = np.where(nos, _mix(keys ^ _mix(second ^ s[6])), keys)
    return keys, usable, ring


def _ring_bonds(decoded: mol_pickle.PickledAtoms, u: np.ndarray, v: np.ndarray, atoms: int) -> np.ndarray:
    """Whether each bond lies in a ring: both its atoms are in one of the rings RDKit found.

    (Two bonded atoms on a common cycle close a cycle through their bond, whatever the cycle's
    other bonds; and every ring bond lies on one of the rings of RDKit's ring basis.)
    """
    if not len(u) or not len(decoded.ring_atoms):
        return np.zeros(len(u), dtype=bool)
    order = np.argsort(decoded.ring_atoms, kind="stable")
    ring_of = decoded.ring_ids[order]  # entries sorted by atom
    per_atom = np.bincount(decoded.ring_atoms, minlength=atoms)
    start = np.cumsum(per_atom) - per_atom
    bond = np.repeat(np.arange(len(u)), per_atom[u])  # each bond, once per ring of its first atom
    offset = np.arange(len(bond)) - np.repeat(np.cumsum(per_atom[u]) - per_atom[u], per_atom[u])
    rings = ring_of[start[u][bond] + offset]
    entries = np.sort(decoded.ring_ids * atoms + decoded.ring_atoms)
    wanted = rings * atoms + v[bond]
    found = entries[np.minimum(np.searchsorted(entries, wanted), len(entries) - 1)] == wanted
    return np.bincount(bond[found], minlength=len(u)) > 0


def _learn(mol: Chem.Mol, keys: np.ndarray) -> bool:
    """Ask RDKit about each atom of ``mol`` and remember the answers under the atoms' keys.

    Returns:
        False when RDKit's answers do not fit the keys (then nothing is remembered, and a
        second answer for a known key turns the whole path off).
    """
    from rdkit.Chem import rdMolDescriptors

    with_hs = Chem.AddHs(mol)
    crippen = [c[0] for c in rdMolDescriptors._CalcCrippenContribs(with_hs)]
    tpsa = list(rdMolDescriptors._CalcTPSAContribs(mol))
    n = mol.GetNumAtoms()
    of_h: list[float | None] = [None] * n
    for j in range(n, with_hs.GetNumAtoms()):
        heavy = with_hs.GetAtomWithIdx(j).GetNeighbors()[0].GetIdx()
        if of_h[heavy] is None:
            of_h[heavy] = crippen[j]
        elif of_h[heavy] != crippen[j]:  # the hydrogens of one atom are alike
            return False
    matched = [{m[0] for m in mol.GetSubstructMatches(p)} for p in _patterns()]
    answers = {}
    for k, key in enumerate(keys.tolist()):
        row = (crippen[k], of_h[k] if of_h[k] is not None else 0.0, tpsa[k], int(k in matched[0]),
               int(k in matched[1]), k in matched[2], k in matched[3])
        known = _memory.rows.get(key)
        if (known is not None and tuple(_memory.values[known]) != row) or answers.setdefault(key, row) != row:
            _give_up(f"molecule {Chem.MolToSmiles(mol)}")
            return False
    _memory.add(answers)
    return True


def _assemble(mols: Sequence[Chem.Mol], decoded: mol_pickle.PickledAtoms, index: np.ndarray, counts: np.ndarray,
              bond_counts: np.ndarray, rows: np.ndarray, owner: np.ndarray, ring: np.ndarray) -> np.ndarray:
    """Each decoded molecule's row from its atoms' table rows (rows of -1 give rows to drop)."""
    m = len(counts)
    table = _memory.values[np.maximum(rows, 0)]
    crippen, crippen_h, tpsa = table[:, 0], table[:, 1], table[:, 2]
    hbd, hba, left, right = table[:, 3], table[:, 4], table[:, 5] > 0, table[:, 6] > 0
    h = decoded.hydrogens
    out = np.empty((m, len(COLUMNS)), dtype=np.float64)
    # logP: heavy atoms in order, then each atom's hydrogens, as RDKit adds and sums them
    position = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    per_molecule = np.bincount(owner, h, minlength=m).astype(np.int64)
    h_before = np.cumsum(h) - h - np.repeat(np.cumsum(per_molecule) - per_molecule, counts)  # within the molecule
    h_owner, h_atom = np.repeat(owner, h), np.repeat(np.arange(len(owner)), h)
    which = np.arange(len(h_atom)) - np.repeat(np.cumsum(h) - h, h)  # the atom's first hydrogen, second, ...
    h_position = counts[h_owner] + h_before[h_atom] + which
    out[:, 1] = _sequential_sums(m, np.concatenate([owner, h_owner]), np.concatenate([position, h_position]),
                                 np.concatenate([crippen, crippen_h[h_atom]]))
    out[:, 2] = _sequential_sums(m, owner, position, tpsa)
    out[:, 3] = np.bincount(owner, hbd, minlength=m)
    out[:, 4] = np.bincount(owner, hba, minlength=m)
    bond_owner = np.repeat(np.arange(m), bond_counts)
    first = np.cumsum(counts) - counts
    u, v = decoded.bonds[:, 0] + first[bond_owner], decoded.bonds[:, 1] + first[bond_owner]
    rotor = (decoded.bond_types == _SINGLE) & ~ring & ((left[u] & right[v]) | (left[v] & right[u]))
    out[:, 5] = np.bincount(bond_owner[rotor], minlength=m)
    out[:, 6] = counts
    ring_entries = np.bincount(decoded.ring_ids, minlength=1)
    ring_owner = np.zeros(len(ring_entries), dtype=np.int64)
    ring_owner[decoded.ring_ids] = owner[decoded.ring_atoms]
    out[:, 7] = np.bincount(ring_owner[ring_entries > 0], minlength=m)
    out[:, 8] = np.bincount(owner, decoded.charges, minlength=m)
    from rdkit.Chem import Descriptors

    out[:, 0] = [Descriptors.MolWt(mols[k]) for k in index.tolist()]
    return out


def _sequential_sums(m: int, owner: np.ndarray, position: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """Per molecule, its terms added one after the other from 0.0 in position order, as a C loop would."""
    if not len(terms):
        return np.zeros(m)
    grid = np.zeros((int(position.max()) + 1, m), dtype=np.float64)
    grid[position, owner] = terms
    total = np.zeros(m, dtype=np.float64)
    for column in grid:  # adding the padding's 0.0 changes no sum
        total += column
    return total
