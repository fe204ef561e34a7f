"""Molecules of graphs: the one place a graph becomes an RDKit molecule.

A graph from a molecule file (SMILES, SDF, CSV) is its SMILES, parsed by the one SMILES reader
(:func:`core.data.chem.parse_smiles`). A graph of a TU collection whose readme maps node labels
to elements (AIDS, Tox21) is built atom by atom in node order, with bonds from edge labels that
name bond orders (``1``/``2``/``3``/``4`` or ``-``/``=``/``#``/``:``; every bond single without
edge labels), and hydrogens implicit, as the collection stripped them: an oxygen with one single
bond is a hydroxyl, not a radical. Drawing, SD files, fingerprints and properties all take their
molecules from here, so that what a user sees, exports and scores is one molecule.

Two readings: :func:`molecules` is strict (detectors: a graph that cannot be read is an error
naming it), :func:`graph_molecule` lenient (drawing and export: an unknown label is drawn as a
``*`` atom, an unknown bond as single, and None means "draw it as a plain graph").
"""
from __future__ import annotations

from core.data.graphset import GraphSet, element_symbols
from core.errors import DataError, NotApplicableError

# an SD file holds molecules only: why one of graphs that are not molecules is refused (the writers' words)
NOT_MOLECULES = ("{path}: these graphs are not molecules (no SMILES, and no node labels that name elements), "
                 "so an SD file of them would be empty; export a CSV report (.csv) instead")

BOND_ORDERS = {"1": "SINGLE", "-": "SINGLE", "2": "DOUBLE", "=": "DOUBLE", "3": "TRIPLE", "#": "TRIPLE",
               ":": "AROMATIC", "4": "AROMATIC"}


def tu_bond_types(graphs: GraphSet, reader: str = "this detector") -> dict[int, str] | None:
    """Map each edge label to an RDKit bond type name.

    Args:
        graphs: a TU collection.
        reader: what reads the graphs, named in the message.

    Returns:
        Edge label to ``SINGLE``/``DOUBLE``/``TRIPLE``/``AROMATIC``; None when the graphs have no
        edge labels (every bond single).

    Raises:
        NotApplicableError: some edge label names no bond order.
    """
    if not graphs.graphs or "edge_label" not in graphs.graphs[0]:
        return None
    names = graphs.edge_label_names or {}
    mapped = {int(k): BOND_ORDERS.get(str(v).strip()) for k, v in names.items()}
    if not mapped or None in mapped.values():
        raise NotApplicableError(f"{graphs.source}: {reader} reads molecules and needs bond orders, but the edge "
                                 f"labels ({', '.join(sorted(map(str, names.values()))) or 'unnamed'}) do not map "
                                 "to them")
    return mapped


def _build(graphs: GraphSet, i: int, elements: dict[int, str], bonds: dict[int, str] | None, strict: bool):
    """Graph i from its element labels and bond types (None: all single); strict raises on an
    unknown label, lenient makes it a ``*`` atom or a single bond."""
    from rdkit import Chem

    g = graphs.graphs[i]
    meta = graphs.meta[i]
    labels = g.get("node_label")
    if labels is None or (strict and any(int(v) not in elements for v in labels.tolist())):
        raise DataError(f"graph {meta.id}: a node label that names no element", graphs.source, meta.line)
    mol = Chem.RWMol()
    for v in labels.tolist():
        mol.AddAtom(Chem.Atom(elements.get(int(v), "*")))
    edges = g.edge_index.numpy()
    kinds = g.edge_label.numpy() if bonds is not None and "edge_label" in g else None
    for j in range(edges.shape[1]):
        u, v = int(edges[0, j]), int(edges[1, j])
        if u == v or mol.GetBondBetweenAtoms(u, v) is not None:
            continue
        kind = "SINGLE" if kinds is None else bonds.get(int(kinds[j]))
        if kind is None:
            if strict:
                raise DataError(f"graph {meta.id}: edge label {int(kinds[j])} names no bond order", graphs.source,
                                meta.line)
            kind = "SINGLE"
        mol.AddBond(u, v, getattr(Chem.BondType, kind))
        if kind == "AROMATIC":
            mol.GetBondBetweenAtoms(u, v).SetIsAromatic(True)
            mol.GetAtomWithIdx(u).SetIsAromatic(True)
            mol.GetAtomWithIdx(v).SetIsAromatic(True)
    out = mol.GetMol()
    out.UpdatePropertyCache(strict=False)  # implicit hydrogens from each atom's valence
    Chem.FastFindRings(out)
    return out


def _reads_smiles(graphs: GraphSet) -> bool:
    return graphs.kind == "molecule" or bool(graphs.meta and all(m.smiles for m in graphs.meta))


def molecules(graphs: GraphSet, reader: str = "this detector") -> list:
    """Make an RDKit molecule per graph, strictly (what detectors read).

    Args:
        graphs: the graphs: molecule files' (or any graphs that all carry a SMILES, as
            screening's chunks do), or a TU collection whose node labels name elements.
        reader: what reads them, named in the message when they are not molecules.

    Returns:
        One molecule per graph, in order.

    Raises:
        NotApplicableError: the data is not molecules (node labels that the readme does not map
            to elements, or edge labels that name no bond order).
        DataError: a SMILES that no longer parses, or a graph with a label that names no element
            or bond order, naming it.
    """
    if _reads_smiles(graphs):
        from core.data.chem import parse_smiles  # the one SMILES reader, with its limits

        out = []
        for meta in graphs.meta:
            mol, reason = parse_smiles(meta.smiles) if meta.smiles else (None, "no SMILES")
            if mol is None:
                raise DataError(f"molecule {meta.id}: cannot read it as a molecule ({reason})", graphs.source,
                                meta.line)
            out.append(mol)
        return out
    elements = element_symbols(graphs.node_label_names)
    if not elements:
        raise NotApplicableError(f"{graphs.source or 'these graphs'}: {reader} reads molecules; these graphs' "
                                 "node labels do not map to chemical elements (a TU readme must name them, as "
                                 "AIDS's and Tox21's do)")
    bonds = tu_bond_types(graphs, reader)
    return [_build(graphs, i, elements, bonds, strict=True) for i in range(len(graphs))]


def graph_molecule(graphs: GraphSet, i: int):
    """Make an RDKit molecule of graph i, in node order, for drawing and SD files (leniently).

    Args:
        graphs: the graph set.
        i: the graph's index.

    Returns:
        The molecule parsed from the graph's SMILES, or built from TU element labels (bond labels
        when the readme names them, single bonds otherwise; an unknown label a ``*`` atom or a
        single bond), hydrogens implicit; None when the graph is not a molecule (no SMILES and
        no element labels, or labels RDKit cannot build).
    """
    from core.data.chem import parse_smiles

    meta = graphs.meta[i]
    if meta.smiles:
        return parse_smiles(meta.smiles)[0]
    elements = element_symbols(graphs.node_label_names)
    if not elements or graphs.graphs[i].get("node_label") is None:
        return None
    names = graphs.edge_label_names or {}
    bonds = {int(k): BOND_ORDERS.get(str(v).strip()) for k, v in names.items()} if names else None
    try:
        return _build(graphs, i, elements, bonds, strict=False)
    except Exception:  # an odd label map or bond: fall back to a plain graph drawing
        return None
