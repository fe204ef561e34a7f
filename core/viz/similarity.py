"""Nearest training molecules and Bemis-Murcko scaffolds (RDKit), for explaining a ranked list."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.data.chem import murcko_scaffolds as scaffolds  # noqa: F401  (the public name, core.scaffolds)


def _fingerprints(smiles: Sequence[str], radius: int = 2, bits: int = 2048) -> list:
    """Morgan fingerprints of ``smiles`` (None where a SMILES does not parse)."""
    from rdkit.Chem import rdFingerprintGenerator

    from core.data.chem import parse_smiles

    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=bits)
    out = []
    for s in smiles:
        mol = parse_smiles(s)[0] if s else None
        out.append(gen.GetFingerprint(mol) if mol is not None else None)
    return out


class SimilarityIndex:
    """Morgan fingerprints (radius 2, 2048 bits) of a set of molecules, searched by Tanimoto similarity.

    Args:
        smiles: the molecules to search (e.g. the training molecules), one SMILES each; empty
            or unparseable entries are never returned.
    """

    def __init__(self, smiles: Sequence[str]):
        self.fps = _fingerprints(smiles)
        self._valid = [k for k, fp in enumerate(self.fps) if fp is not None]

    def nearest(self, query: str, k: int = 5, exclude: int | None = None) -> list[tuple[int, float]]:
        """Find the molecules most similar to ``query`` (Tanimoto on Morgan fingerprints).

        Args:
            query: a SMILES.
            k: how many to return.
            exclude: an index to leave out (the query itself when it is in the set).

        Returns:
            Up to ``k`` (index, Tanimoto similarity) pairs, most similar first; empty when the query
            does not parse or the set holds no valid molecule.
        """
        from rdkit import DataStructs

        fp = _fingerprints([query])[0]
        if fp is None or not self._valid:
            return []
        sims = np.array(DataStructs.BulkTanimotoSimilarity(fp, [self.fps[j] for j in self._valid]))
        idx = np.array(self._valid)
        if exclude is not None:
            keep = idx != exclude
            sims, idx = sims[keep], idx[keep]
        order = np.argsort(-sims, kind="stable")[:k]
        return [(int(idx[j]), float(sims[j])) for j in order]

    def similarities(self, query: str) -> np.ndarray:
        """The Tanimoto similarity of every molecule of the index to ``query``.

        Args:
            query: a SMILES.

        Returns:
            One similarity per molecule, in the index's order; NaN where a molecule did not parse.

        Raises:
            DataError: ``query`` is not a valid SMILES (the message says why).
        """
        from rdkit import DataStructs

        from core.data.chem import parse_smiles
        from core.errors import DataError

        mol, reason = parse_smiles(query or "")
        if mol is None:
            raise DataError(f"the query is not a valid SMILES ({reason})")
        fp = _fingerprints([query])[0]
        out = np.full(len(self.fps), np.nan)
        if self._valid:
            out[self._valid] = DataStructs.BulkTanimotoSimilarity(fp, [self.fps[j] for j in self._valid])
        return out


def query_similarities(query: str, smiles: Sequence[str]) -> np.ndarray:
    """The Tanimoto similarity of each molecule to a query (ECFP4: Morgan radius 2, 2,048 bits).

    Build a :class:`SimilarityIndex` to search the same molecules with many queries.

    Args:
        query: the query SMILES.
        smiles: the molecules to compare with it.

    Returns:
        One similarity per SMILES in ``[0, 1]`` (1 for the query's own molecule); NaN where a
        SMILES is empty or does not parse.

    Raises:
        DataError: ``query`` is not a valid SMILES.
    """
    return SimilarityIndex(smiles).similarities(query)


def similar_molecules(training_smiles: Sequence[str], query: str, k: int = 5) -> list[tuple[int, float]]:
    """Find the training molecules most similar to ``query`` (Morgan fingerprints, Tanimoto).

    Build a :class:`SimilarityIndex` to search many times.

    Args:
        training_smiles: the molecules to search, one SMILES each.
        query: a SMILES.
        k: how many to return.

    Returns:
        Up to ``k`` (index into ``training_smiles``, similarity) pairs, most similar first.
    """
    return SimilarityIndex(training_smiles).nearest(query, k)
