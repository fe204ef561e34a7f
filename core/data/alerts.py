"""Structural alerts: the substructures chemists already call suspicious (RDKit's FilterCatalog).

The alerts are RDKit's own catalogs (Brenk, PAINS families A, B and C, NIH), never hand-written
SMARTS. Atom indices are 0-based in the order of the parsed SMILES, the order of a graph's nodes
and of the report's ``top_nodes`` names (``C3`` is atom 3).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from collections.abc import Sequence

ALERT_FAMILIES = ("Brenk", "PAINS_A", "PAINS_B", "PAINS_C", "NIH")  # RDKit FilterCatalogs names (Brenk: BRENK)


@dataclass(frozen=True)
class Alert:
    """One match of a structural alert in a molecule.

    Attributes:
        family: the catalog it comes from (one of ``ALERT_FAMILIES``).
        name: the alert's name in that catalog (e.g. ``Michael_acceptor_1``).
        atoms: the matched atoms, 0-based, sorted.
    """

    family: str
    name: str
    atoms: tuple[int, ...]

    @property
    def label(self) -> str:
        """``Brenk Michael acceptor 1``: family and name in words."""
        return f"{self.family} {self.name.replace('_', ' ')}"


@cache
def _catalog(family: str):
    """The FilterCatalog of one family, built once per process."""
    from rdkit.Chem import FilterCatalog

    params = FilterCatalog.FilterCatalogParams()
    params.AddCatalog(getattr(params.FilterCatalogs, "BRENK" if family == "Brenk" else family))
    return FilterCatalog.FilterCatalog(params)


def structural_alerts(molecule, families: Sequence[str] = ALERT_FAMILIES) -> list[Alert]:
    """The structural alerts a molecule matches, one per match, in family then atom order.

    Args:
        molecule: a SMILES string or an RDKit ``Mol``; a SMILES that does not parse has no alerts.
        families: the catalogs searched (default: all of ``ALERT_FAMILIES``).

    Returns:
        The matches, each with its family, name and 0-based atom indices.
    """
    from core.data.chem import parse_smiles

    mol = parse_smiles(molecule)[0] if isinstance(molecule, str) else molecule
    if mol is None:
        return []
    alerts: list[Alert] = []
    for family in families:
        if family not in ALERT_FAMILIES:
            raise ValueError(f"unknown alert family {family!r}; known: {', '.join(ALERT_FAMILIES)}")
        found = set()
        for entry in _catalog(family).GetMatches(mol):
            for match in entry.GetFilterMatches(mol):
                atoms = tuple(sorted({int(atom) for _, atom in match.atomPairs}))
                key = (entry.GetDescription(), atoms)
                if atoms and key not in found:
                    found.add(key)
                    alerts.append(Alert(family, entry.GetDescription(), atoms))
    return alerts


def graph_alerts(graphs, i: int) -> list[Alert]:
    """The structural alerts of graph i of a graph set: its SMILES's, or its molecule's when a TU
    collection's labels name elements (:func:`core.data.graph_molecules.graph_molecule`).

    Args:
        graphs: a :class:`~core.data.graphset.GraphSet`.
        i: the graph's index.

    Returns:
        The alerts it matches; none for a graph that is not a molecule.
    """
    smiles = graphs.meta[i].smiles
    if smiles:
        return structural_alerts(smiles)
    if not graphs.is_molecular:
        return []
    from core.data.graph_molecules import graph_molecule

    mol = graph_molecule(graphs, i)
    return structural_alerts(mol) if mol is not None else []


def alerts_at_atoms(alerts: Sequence[Alert], atoms: Sequence[int], symbols: Sequence[str]) -> list[str]:
    """Say which of the given atoms (e.g. the top-error atoms) lie in which alert.

    Args:
        alerts: the molecule's alerts (``structural_alerts``).
        atoms: 0-based atom indices, in the order to name them (e.g. largest error first).
        symbols: the molecule's element symbols, in atom order.

    Returns:
        One line per alert that holds any of the atoms, e.g. ``N7 and C8: Brenk Michael acceptor 1``,
        in the order of the first atom named.
    """
    lines: list[tuple[int, str]] = []
    order = {atom: k for k, atom in reversed(list(enumerate(atoms)))}
    for alert in alerts:
        inside = sorted((a for a in set(atoms) if a in alert.atoms), key=order.__getitem__)
        if inside:
            names = [f"{symbols[a] if a < len(symbols) else '?'}{a}" for a in inside]
            said = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            lines.append((order[inside[0]], f"{said}: {alert.label}"))
    return [text for _, text in sorted(lines, key=lambda pair: pair[0])]


def alerts_text(alerts: Sequence[Alert]) -> str:
    """The alerts as one line for a table cell or an SD property.

    Args:
        alerts: a molecule's alerts (``structural_alerts``).

    Returns:
        ``Brenk Michael_acceptor_1 [0 1 2 3]; PAINS_A ene_rhod_A(235) [0 1 2 3 4 5 6 7]`` (0-based
        atoms), or an empty string when there are none.
    """
    return "; ".join(f"{a.family} {a.name} [{' '.join(map(str, a.atoms))}]" for a in alerts)
