"""The atom features of many molecules at once: the screening featurizer.

:func:`core.data.chem.mol_arrays` reads one molecule; :func:`featurize_molecules` reads a
batch, byte-identical to it molecule by molecule, with one RDKit call per molecule-level
property (:mod:`core.data.atom_queries`).
"""
from __future__ import annotations

from core.data.atom_queries import featurize_by_queries as featurize_molecules
from core.data.molecule_arrays import MoleculeArrays, concatenate

__all__ = ["MoleculeArrays", "concatenate", "featurize_molecules"]
