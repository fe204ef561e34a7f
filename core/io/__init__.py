"""Reading graphs from files (TU collections, SMILES, CSV/TSV, SDF) and writing and reading ranked reports."""
from core.io.load import MOLECULE_TABLE_SUFFIXES, SMILES_SUFFIXES, load

__all__ = ["load", "MOLECULE_TABLE_SUFFIXES", "SMILES_SUFFIXES"]
