"""Checks of the paper's own numbers (what its Tox21 figures compare with)."""
