"""A medicinal chemist's properties beside the score: weight, cLogP, TPSA, H-bond donors and
acceptors, rotatable bonds, heavy atoms, rings and formal charge, from RDKit's descriptors.

They answer "is this anomalous only because it is large, greasy or charged?" at a glance. Each
is RDKit's own function (named in :data:`PROPERTY_FUNCTIONS`), computed for many molecules at
once (:mod:`core.data.batch_properties`); graphs that are not molecules (a TU collection without
SMILES) and SMILES that do not parse get NaN.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from core.data.mol_pickle import PickledAtoms

# report column -> (table heading, RDKit function, integer-valued)
PROPERTY_FUNCTIONS: dict[str, tuple[str, str, bool]] = {
    "mw": ("MW", "Descriptors.MolWt", False),
    "clogp": ("cLogP", "Crippen.MolLogP", False),
    "tpsa": ("TPSA", "rdMolDescriptors.CalcTPSA", False),
    "hbd": ("HBD", "rdMolDescriptors.CalcNumHBD", True),
    "hba": ("HBA", "rdMolDescriptors.CalcNumHBA", True),
    "rotatable_bonds": ("Rot. bonds", "rdMolDescriptors.CalcNumRotatableBonds", True),
    "heavy_atoms": ("Heavy atoms", "Mol.GetNumHeavyAtoms", True),
    "rings": ("Rings", "rdMolDescriptors.CalcNumRings", True),
    "formal_charge": ("Charge", "Chem.GetFormalCharge", True),
}
PROPERTY_COLUMNS: tuple[str, ...] = tuple(PROPERTY_FUNCTIONS)


def molecule_properties(molecules: Iterable, decoded: PickledAtoms | None = None) -> np.ndarray:
    """The properties of each molecule, as one float64 row per molecule.

    Every path that shows or writes the properties (the app's table, reports, SDF and HTML
    exports) comes here: the values are RDKit's functions' bitwise
    (:mod:`core.data.batch_properties` computes many molecules at once).

    Args:
        molecules: RDKit ``Mol`` objects, SMILES strings, or None (no molecule), in any mix.
        decoded: :func:`core.data.mol_pickle.decode` of these molecules' ``ToBinary()``, when the
            caller has it already (then every item is a ``Mol``).

    Returns:
        An array of shape (molecules, len(PROPERTY_COLUMNS)), columns in ``PROPERTY_COLUMNS`` order;
        a row of NaN where there is no molecule or the SMILES does not parse.
    """
    from core.data.batch_properties import batch_properties
    from core.data.chem import parse_smiles

    mols = []
    for mol in molecules:
        if isinstance(mol, str):
            mol = parse_smiles(mol)[0] if mol else None
        mols.append(mol)
    table = np.full((len(mols), len(PROPERTY_COLUMNS)), np.nan)
    present = [k for k, m in enumerate(mols) if m is not None]
    if present:
        table[present] = batch_properties([mols[k] for k in present], decoded if len(present) == len(mols) else None)
    return table


def molecular_properties(molecules) -> dict[str, np.ndarray]:
    """A chemist's properties of every graph of a GraphSet, or of molecules or SMILES.

    Args:
        molecules: a :class:`~core.data.graphset.GraphSet` (each graph's molecule,
            :func:`core.data.graph_molecules.graph_molecule`: its SMILES, or a TU collection's
            element labels; graphs that are not molecules get NaN), or a sequence of RDKit ``Mol``,
            SMILES or None.

    Returns:
        One float64 array per name of ``PROPERTY_COLUMNS`` (``mw``: Descriptors.MolWt, ``clogp``:
        Crippen.MolLogP, ``tpsa``: rdMolDescriptors.CalcTPSA, ``hbd``/``hba``: CalcNumHBD/CalcNumHBA
        (Lipinski-style counts), ``rotatable_bonds``, ``heavy_atoms``, ``rings`` (SSSR),
        ``formal_charge``), NaN where a graph is not a molecule.
    """
    meta = getattr(molecules, "meta", None)
    if meta is None:
        items: Sequence = list(molecules)
    elif molecules.is_molecular and not all(m.smiles for m in meta):  # a TU collection whose labels name elements
        from core.data.graph_molecules import graph_molecule

        items = [m.smiles or graph_molecule(molecules, i) for i, m in enumerate(meta)]
    else:
        items = [m.smiles or None for m in meta]
    table = molecule_properties(items)
    return {name: table[:, k].copy() for k, name in enumerate(PROPERTY_COLUMNS)}


def set_sd_properties(mol) -> None:
    """Set a molecule's properties as SD properties (``mw``, ``clogp``, ...; see ``PROPERTY_COLUMNS``).

    Args:
        mol: an RDKit ``Mol`` (changed in place).
    """
    for name, value in zip(PROPERTY_COLUMNS, molecule_properties([mol])[0]):
        text = property_text(name, float(value))
        if text:
            mol.SetProp(name, text)


def properties_line(mol) -> str:
    """A molecule's properties in one line for a report: ``MW 180.16 · cLogP 1.31 · ...``.

    Args:
        mol: an RDKit ``Mol``, or None.

    Returns:
        The line; empty without a molecule.
    """
    if mol is None:
        return ""
    values = molecule_properties([mol])[0]
    return " · ".join(f"{PROPERTY_FUNCTIONS[name][0]} {property_text(name, float(v))}"
                      for name, v in zip(PROPERTY_COLUMNS, values))


def property_text(name: str, value: float) -> str:
    """One property as report text: integers without decimals, others to two; empty for NaN.

    Args:
        name: a name of ``PROPERTY_COLUMNS``.
        value: its value.

    Returns:
        ``"180.16"``, ``"3"``, ``"-1"`` or ``""``.
    """
    if not np.isfinite(value):
        return ""
    return str(int(round(value))) if PROPERTY_FUNCTIONS[name][2] else f"{value:.2f}"
