"""Atoms, bonds and rings of many molecules read from RDKit's binary form, in numpy.

``mol.ToBinary()`` writes a whole molecule in one C++ call (about 16 µs for a MOSES molecule),
where asking its atoms one property at a time from Python costs a microsecond a call. Its
bytes (RDKit's ``MolPickler``, Code/GraphMol/MolPickler.cpp) hold, per atom, the atomic number,
the aromatic and no-implicit flags and a bit mask saying which of charge, chirality,
hybridisation, explicit H count, explicit and implicit valence, radicals and isotope follow;
per bond, its atoms, flags and type; then the ring info. :func:`decode` reads the bytes of a
whole batch at once: records vary in length, so it walks them one step per atom (per bond,
per ring) for all molecules together, each step a few numpy operations.

The format is RDKit's, not ours: a molecule with anything this reader does not know (another
pickle version, query atoms or bonds, atom maps, dummy labels, residue info, bond types other
than single, double, triple and aromatic, more than 255 atoms, no ring info) is marked not
``ok``, and the caller reads it another way.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# MolPickler.h: the pickle version this reader was written against (the layout below is that of
# 16.3 in RDKit's source and 16.4 as written by RDKit 2026.09)
KNOWN_VERSIONS = ((16, 3, 0), (16, 4, 0))
_ENDIAN_ID = 0xDEADBEEF
_BEGINATOM, _BEGINBOND, _ENDMOL = 1, 11, 22
_RING_TAGS = (20, 66, 67, 68)  # BEGINSSSR, BEGINSYMMSSSR, BEGINFASTFIND, BEGINFINDOTHERORUNKNOWN
# what may follow the ring info: BEGINPROPS, ENDMOL, BEGINCONFS, BEGINATOMPROPS, BEGINBONDPROPS,
# BEGINSGROUP, BEGINSTEREOGROUP, BEGINCONFS_DOUBLE
_AFTER_RINGS = (18, 22, 23, 58, 59, 61, 62, 64)
_HEADER_BYTES = 30  # endian id, VERSION tag, major, minor, patch, atoms, bonds (int32 each), flag, BEGINATOM
_MAX_ATOMS = 255  # past it atom indices are int32, not one byte
_PAD = 1024  # zero bytes after the batch: a malformed record never reads past the buffer

# atom flags byte: aromatic (bit 6) and no-implicit (bit 5) are read; query, atom map, dummy
# label, monomer info (bits 4-1) bring more data: not read
_AROMATIC, _NO_IMPLICIT, _ATOM_FLAGS_READ = 0x40, 0x20, 0x60
# atom property mask (low byte): bit 1 charge, 2 chirality, 3 hybridisation, 4 explicit Hs,
# 5 explicit valence, 6 implicit valence, 7 radicals (one byte each); bit 8 (next byte) isotope
# (four bytes); bit 0 (a float mass) is no longer written
_SP3 = 4  # Atom::HybridizationType, written only when not SP3
_BITS = np.array([(b & 0xFE).bit_count() for b in range(256)], dtype=np.int64)
_BEFORE = {bit: np.array([(b & 0xFE & ((1 << bit) - 1)).bit_count() for b in range(256)], dtype=np.int64)
           for bit in (3, 4, 6, 7)}  # data bytes before that property's byte
# bond flags byte: aromatic (6), conjugated (5), type (3), direction (2), stereo (1) are read or
# skipped; query (4), molfile end points (0) and bit 7 are not read
_BOND_TYPE, _BOND_DIR, _BOND_STEREO, _BOND_FLAGS_UNREAD = 0x08, 0x04, 0x02, 0x91
_BOND_TYPES = np.zeros(256, dtype=bool)
_BOND_TYPES[[2, 3, 12]] = True  # DOUBLE, TRIPLE, AROMATIC (SINGLE is written as no type)


@dataclass
class PickledAtoms:
    """What :func:`decode` read, for the ``ok`` molecules only, molecule after molecule."""

    ok: np.ndarray  # (molecules,) bool: decoded; the others are in none of the arrays below
    atom_counts: np.ndarray  # (molecules,) int64, 0 where not ok
    bond_counts: np.ndarray  # (molecules,) int64, 0 where not ok
    atomic_numbers: np.ndarray  # (atoms,) int64
    aromatic: np.ndarray  # (atoms,) bool
    charges: np.ndarray  # (atoms,) int64
    hydrogens: np.ndarray  # (atoms,) int64: explicit + implicit (RDKit's GetTotalNumHs)
    hybridisations: np.ndarray  # (atoms,) int64: Atom::HybridizationType
    radicals: np.ndarray  # (atoms,) bool: any radical electron
    bonds: np.ndarray  # (bonds, 2) int64: atom indices within the molecule, as written (begin, end)
    bond_types: np.ndarray  # (bonds,) int64: Bond::BondType (1 single, 2 double, 3 triple, 12 aromatic)
    ring_atoms: np.ndarray  # (ring atom entries,) int64: atom index in the batch (the arrays above)
    ring_sizes: np.ndarray  # (ring atom entries,) int64: the size of the ring the entry belongs to
    ring_ids: np.ndarray  # (ring atom entries,) int64: which ring of the batch the entry belongs to


def _walk(buf: np.ndarray, start: np.ndarray, steps: np.ndarray, advance, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Follow ``steps[k]`` records from ``start[k]`` for every molecule at once; ``advance(p)`` is
    the length of the records at positions ``p``. Returns each record's position (molecule after
    molecule) and where each molecule's records end."""
    total = int(steps.sum())
    positions = np.empty(total, dtype=np.int64)
    end = start.copy()
    if total == 0:
        return positions, end
    order = np.argsort(-steps, kind="stable")  # the molecules still walking are a prefix
    sorted_steps = steps[order]
    first = (np.cumsum(steps) - steps)[order]
    active = np.searchsorted(-sorted_steps, -np.arange(int(sorted_steps[0])), side="left")
    pos = start[order]
    for s, k in enumerate(active.tolist()):
        p = pos[:k]
        positions[first[:k] + s] = p
        pos[:k] = np.minimum(p + advance(p), limit)
    end[order] = pos
    return positions, end


def _u32(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Little-endian 32-bit unsigned integers at byte positions ``at``."""
    b = buf[at[:, None] + np.arange(4)].astype(np.int64)
    return b[:, 0] | b[:, 1] << 8 | b[:, 2] << 16 | b[:, 3] << 24


def decode(blobs: Sequence[bytes]) -> PickledAtoms:
    """Read the atoms, bonds and rings of a batch of molecules from RDKit's binary form.

    Args:
        blobs: ``mol.ToBinary()`` of each molecule.

    Returns:
        What was read, molecule after molecule, for the molecules marked ``ok``; the others (a
        layout this reader does not know) are in none of its arrays, for the caller to read
        another way.
    """
    m = len(blobs)
    lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=m)
    starts = np.cumsum(lengths) - lengths
    ends = starts + lengths
    buf = np.frombuffer(b"".join(blobs) + bytes(_PAD), dtype=np.uint8)
    limit = len(buf) - _PAD
    sbuf = buf.view(np.int8)

    head = buf[starts[:, None] + np.arange(_HEADER_BYTES)].astype(np.int64)
    words = head[:, :28].reshape(m, 7, 4)
    words = words[:, :, 0] | words[:, :, 1] << 8 | words[:, :, 2] << 16 | words[:, :, 3] << 24
    version = words[:, 2:5]
    ok = (words[:, 0] == _ENDIAN_ID) & (words[:, 1] == 0) & (head[:, 28] == 0x80) & (head[:, 29] == _BEGINATOM)
    ok &= np.any(np.all(version[:, None, :] == np.array(KNOWN_VERSIONS)[None], axis=2), axis=1)
    ok &= (words[:, 5] >= 1) & (words[:, 5] <= _MAX_ATOMS) & (words[:, 6] >= 0) & (words[:, 6] <= 4 * _MAX_ATOMS)
    ok &= lengths >= _HEADER_BYTES
    n = np.where(ok, words[:, 5], 0)
    nb = np.where(ok, words[:, 6], 0)

    # atoms: 1 byte atomic number, 1 byte flags, int32 property mask, then the properties it names
    def atom_length(p):
        return 6 + _BITS[buf[p + 2]] + 4 * (buf[p + 3] & 1)

    ap, after_atoms = _walk(buf, starts + _HEADER_BYTES, n, atom_length, limit)
    flags, mask, mask_hi = buf[ap + 1], buf[ap + 2], buf[ap + 3]
    atom_bad = ((flags & (0xFF ^ _ATOM_FLAGS_READ)) != 0) | ((mask & 1) != 0) | (mask_hi > 1) | (buf[ap + 4] != 0) | (
        buf[ap + 5] != 0)
    data = ap + 6
    charges = np.where(mask & 2, sbuf[data], 0).astype(np.int64)
    hybridisations = np.where(mask & 8, buf[data + _BEFORE[3][mask]], _SP3).astype(np.int64)
    explicit_hs = np.where(mask & 16, sbuf[data + _BEFORE[4][mask]], 0).astype(np.int64)
    implicit = np.where(flags & _NO_IMPLICIT, 0, np.where(mask & 64, sbuf[data + _BEFORE[6][mask]], 0)).astype(np.int64)
    radicals = (mask & 128) != 0
    radicals &= buf[data + _BEFORE[7][mask]] != 0
    atom_bad |= (explicit_hs < 0) | (implicit < 0)
    owner = np.repeat(np.arange(m), n)
    ok &= np.bincount(owner[atom_bad], minlength=m) == 0
    ok &= buf[after_atoms] == _BEGINBOND

    # bonds: begin, end (one byte each), flags, then type, direction, stereo as the flags say
    def bond_length(p):
        f = buf[p + 2]
        fixed = 3 + ((f >> 3) & 1) + ((f >> 2) & 1)
        return fixed + np.where(f & _BOND_STEREO, 2 + buf[p + fixed + 1], 0)

    bp, after_bonds = _walk(buf, after_atoms + 1, nb, bond_length, limit)
    bond_flags = buf[bp + 2]
    bond_owner = np.repeat(np.arange(m), nb)
    begin, end = buf[bp].astype(np.int64), buf[bp + 1].astype(np.int64)
    bond_bad = ((bond_flags & _BOND_FLAGS_UNREAD) != 0) | ((bond_flags & _BOND_TYPE) != 0) & ~_BOND_TYPES[buf[bp + 3]]
    bond_bad |= (begin >= n[bond_owner]) | (end >= n[bond_owner]) | (begin == end)
    ok &= np.bincount(bond_owner[bond_bad], minlength=m) == 0

    # rings: a tag, a uint32 count, then per ring its size and atoms (one byte each)
    ok &= np.isin(buf[after_bonds], _RING_TAGS)
    rings = np.where(ok, _u32(buf, after_bonds + 1), 0)
    ok &= rings <= 4 * _MAX_ATOMS
    rings = np.where(ok, rings, 0)
    rp, after_rings = _walk(buf, after_bonds + 5, rings, lambda p: 1 + buf[p].astype(np.int64), limit)
    sizes = buf[rp].astype(np.int64)
    ring_owner = np.repeat(np.arange(m), rings)
    entry_ring = np.repeat(np.arange(len(rp)), sizes)
    within = np.arange(len(entry_ring)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    ring_local = buf[rp[entry_ring] + 1 + within].astype(np.int64)
    entry_owner = ring_owner[entry_ring]
    ok &= np.bincount(entry_owner[ring_local >= n[entry_owner]], minlength=m) == 0
    ok &= np.isin(buf[after_rings], _AFTER_RINGS) & (after_rings < ends) & (buf[np.maximum(ends - 1, 0)] == _ENDMOL)

    # keep the molecules read whole
    atom_keep, bond_keep, entry_keep = ok[owner], ok[bond_owner], ok[entry_owner]
    counts, bond_counts = np.where(ok, n, 0), np.where(ok, nb, 0)
    first_atom = np.cumsum(counts) - counts
    return PickledAtoms(
        ok=ok, atom_counts=counts, bond_counts=bond_counts,
        atomic_numbers=buf[ap[atom_keep]].astype(np.int64), aromatic=(flags[atom_keep] & _AROMATIC) != 0,
        charges=charges[atom_keep], hydrogens=(explicit_hs + implicit)[atom_keep],
        hybridisations=hybridisations[atom_keep], radicals=radicals[atom_keep],
        bonds=np.stack([begin[bond_keep], end[bond_keep]], axis=1),
        bond_types=np.where(bond_flags & _BOND_TYPE, buf[bp + 3], 1).astype(np.int64)[bond_keep],
        ring_atoms=ring_local[entry_keep] + first_atom[entry_owner[entry_keep]],
        ring_sizes=sizes[entry_ring[entry_keep]], ring_ids=entry_ring[entry_keep])
