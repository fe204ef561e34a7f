"""Many molecules as one set of arrays (the featurizers' result), and how to join such sets."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class MoleculeArrays:
    """Many molecules as arrays: features of all atoms, molecule after molecule, and bonds as
    atom-index pairs *within* each molecule (i < j, sorted), with the counts that cut them."""

    x: np.ndarray  # (atoms, ATOM_FEATURE_DIM)
    bonds: np.ndarray  # (bonds, 2) int32
    atomic_numbers: np.ndarray  # (atoms,) int64
    atom_counts: np.ndarray  # (molecules,) int64
    bond_counts: np.ndarray  # (molecules,) int64


_FIELDS = ("x", "bonds", "atomic_numbers", "atom_counts", "bond_counts")


def concatenate(parts: Sequence[MoleculeArrays]) -> MoleculeArrays:
    """Join the arrays of several batches, one after the other.

    Args:
        parts: the batches (at least one), in order.

    Returns:
        One set of arrays (``parts[0]`` itself when there is only one).
    """
    if len(parts) == 1:
        return parts[0]
    return MoleculeArrays(*(np.concatenate([getattr(p, name) for p in parts]) for name in _FIELDS))


def interleave(first: MoleculeArrays, second: MoleculeArrays, from_first: np.ndarray) -> MoleculeArrays:
    """Merge two batches into one, molecule by molecule, each keeping its order.

    Args:
        first: the molecules that go where ``from_first`` is True, in order.
        second: the molecules that go where it is False, in order.
        from_first: one flag per molecule of the result, shape (len(first) + len(second),).

    Returns:
        One batch: molecule ``k`` is the next one of ``first`` where ``from_first[k]``, else the
        next one of ``second``.
    """
    from_first = np.asarray(from_first, dtype=bool)
    counts = np.zeros(len(from_first), dtype=np.int64)
    bond_counts = np.zeros(len(from_first), dtype=np.int64)
    counts[from_first], counts[~from_first] = first.atom_counts, second.atom_counts
    bond_counts[from_first], bond_counts[~from_first] = first.bond_counts, second.bond_counts
    atom_first, bond_first = np.repeat(from_first, counts), np.repeat(from_first, bond_counts)
    out = []
    for name, rows in (("x", atom_first), ("bonds", bond_first), ("atomic_numbers", atom_first)):
        a, b = getattr(first, name), getattr(second, name)
        joined = np.empty((len(rows),) + a.shape[1:], dtype=np.result_type(a, b))
        joined[rows], joined[~rows] = a, b
        out.append(joined)
    return MoleculeArrays(*out, atom_counts=counts, bond_counts=bond_counts)
