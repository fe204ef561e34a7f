"""The names of the node-feature recipes (:class:`core.data.features.FeatureSchema` explains each).

A module of its own so that the command line can offer them without loading torch.
"""
from __future__ import annotations

MODES: tuple[str, ...] = ("auto", "attributes", "labels", "both", "degree", "atom", "atom-rings")
