"""SMARTS substructure search over the SMILES of a GraphSet (RDKit)."""
from __future__ import annotations

import numpy as np

from core.errors import GLocalKDError


def smarts_matches(smiles: list[str], smarts: str) -> np.ndarray:
    """Boolean mask: which SMILES contain the SMARTS pattern (unparseable SMILES never match)."""
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
