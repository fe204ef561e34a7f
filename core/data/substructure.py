"""SMARTS substructure search over the SMILES of a GraphSet (RDKit)."""
from __future__ import annotations

import numpy as np

from core.errors import GLocalKDError


def smarts_matches(smiles: list[str], smarts: str) -> np.ndarray:
    """Find which SMILES contain a SMARTS pattern.

    Args:
        smiles: the SMILES strings (empty or unparseable ones never match).
        smarts: the SMARTS pattern.

    Returns:
        A boolean mask, one entry per SMILES.

    Raises:
        GLocalKDError: ``smarts`` is not a valid SMARTS pattern.
    """
    from rdkit import Chem

    from core.data.chem import parse_smiles

    pattern = Chem.MolFromSmarts(smarts)
    if pattern is None:
        raise GLocalKDError(f"not a valid SMARTS pattern: {smarts!r}")
    out = np.zeros(len(smiles), dtype=bool)
    for k, s in enumerate(smiles):
        if s:
            mol = parse_smiles(s)[0]
            out[k] = mol is not None and mol.HasSubstructMatch(pattern)
    return out
