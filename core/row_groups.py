"""RowGroups: nodes whose first-layer inputs are identical, so node-wise work runs once per group.

A GCN's first layer sees each node through Â X: its own features and its neighbours', weighted
by degree. In molecules with discrete atom features most nodes share that row with many others
(an aromatic carbon between two aromatic carbons, a hydroxyl oxygen on a carbon, ...): in
batches of Tox21 molecules about 350 distinct rows stand for 4,500 atoms. Everything a layer
does to a row on its own (the dense product, the bias, the ReLU, the normalisation, and the
next layer's product before it propagates) then gives identical results for identical rows, so
it is computed once per group and copied out to the nodes before the next propagation. That is
exact: a row is only grouped with rows that are bitwise equal to it. Continuous attributes
(AIDS's coordinates) make nearly every row distinct, and then no grouping is used.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

# Group rows only when the groups are at most this fraction of the rows: copying rows out to
# the nodes (and summing their gradients back) costs a pass over memory, which only pays off
# when it saves a good share of the dense products.
MAX_GROUP_FRACTION = 0.75


@dataclass(frozen=True)
class RowGroups:
    """``first[g]`` is one node of group ``g``; ``inverse[v]`` is node ``v``'s group."""

    first: torch.Tensor
    inverse: torch.Tensor

    @property
    def num_groups(self) -> int:
        return int(self.first.numel())

    @property
    def num_rows(self) -> int:
        return int(self.inverse.numel())

    @classmethod
    def find(cls, rows: torch.Tensor, max_fraction: float = MAX_GROUP_FRACTION) -> "RowGroups | None":
        """The groups of bitwise-equal rows of ``rows`` (nodes x features), or None when there
        are more than ``max_fraction`` groups per row (grouping would not pay off).

        Rows are keyed by a fixed projection (float64), then every row is checked against its
        group's first row, so a key collision can never merge different rows: after one, the
        rows are grouped by torch's exact (and slower) row-wise ``unique``."""
        n = rows.shape[0]
        if n < 2 or rows.dim() != 2:
            return None
        key = rows.to(torch.float64) @ _projection(rows.shape[1], rows.device)
        groups = cls._from_keys(key, max_fraction)
        if groups is not None and not groups._holds(rows):  # a key collision
            groups = cls._from_keys(rows, max_fraction)
            if groups is not None and not groups._holds(rows):  # NaN rows
                groups = None
        return groups

    @classmethod
    def _from_keys(cls, keys: torch.Tensor, max_fraction: float) -> "RowGroups | None":
        n = keys.shape[0]
        unique, inverse = torch.unique(keys, return_inverse=True, dim=0 if keys.dim() > 1 else None)
        if unique.shape[0] > max_fraction * n:
            return None
        first = torch.empty(unique.shape[0], dtype=torch.long, device=keys.device)
        first.scatter_(0, inverse, torch.arange(n, device=keys.device))  # any member will do
        return cls(first, inverse)

    def _holds(self, rows: torch.Tensor) -> bool:
        """Every row equals its group's first row."""
        return torch.equal(self.expand(self.pick(rows)), rows)

    def pick(self, rows: torch.Tensor) -> torch.Tensor:
        """One row per group (the rows of each group's first node)."""
        return rows.index_select(0, self.first)

    def expand(self, grouped: torch.Tensor) -> torch.Tensor:
        """Per-group rows copied out to every node (the gradient flows back summed per group)."""
        return grouped.index_select(0, self.inverse)


def _projection(width: int, device: torch.device) -> torch.Tensor:
    """A fixed vector of distinct irrational-looking weights, the same on every call."""
    steps = torch.arange(1, width + 1, dtype=torch.float64, device=device)
    return torch.frac(steps * 0.6180339887498949) + steps.sqrt() * 1e-3
