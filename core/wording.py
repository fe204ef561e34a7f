"""How counts read in messages: "1 graph", "2 graphs", "1,234 rows" (never "1 graphs")."""
from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count and its noun, singular for one.

    Args:
        n: how many.
        noun: the singular noun ("graph", "row").
        plural: the plural where it is not the noun plus "s" ("anomalies").

    Returns:
        The count with thousands separators and the noun that agrees with it.
    """
    return f"{int(n):,} {noun if int(n) == 1 else plural or noun + 's'}"
