"""GraphSet: the graphs a loader read, their metadata, and the rows it had to reject."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING
from collections.abc import Iterable

import numpy as np

if TYPE_CHECKING:  # the graphs are torch-geometric Data, but scoring never needs the import
    from torch_geometric.data import Data

MAX_CLASSES = 20  # more label values than this, most on one graph each: a measurement (GraphSet.labels_note)


@dataclass
class GraphMeta:
    """What a user knows a graph by: id, name, SMILES, label and where it came from."""

    id: str
    name: str = ""
    smiles: str = ""
    label: str | None = None
    line: int | None = None
    input_smiles: str = ""  # the SMILES as read, when ``smiles`` is its standardised form


@dataclass
class Reject:
    """An input row or record that could not become a graph, and why."""

    line: int | None
    id: str
    reason: str
    text: str = ""

    @property
    def status(self) -> str:
        """The row's status in every report and export: ``rejected: line N: reason`` (the SD export
        of a training tab wrote ``rejected: reason``, without the line)."""
        return f"rejected: line {self.line}: {self.reason}" if self.line is not None else f"rejected: {self.reason}"


@dataclass
class GraphSet:
    """Graphs (torch-geometric ``Data``) with per-graph metadata and the rejected rows.

    TU graphs carry raw ``node_label`` (long) and/or ``node_attr`` (float) tensors;
    molecules carry RDKit atom features in ``x`` already (a fixed vocabulary, see
    :mod:`core.data.chem`). Node features for a model are made by a fitted
    :class:`core.data.features.FeatureSchema`.
    """

    graphs: list[Data]
    meta: list[GraphMeta]
    rejects: list[Reject] = field(default_factory=list)
    source: str = ""
    format: str = ""
    kind: str = "graph"  # "molecule" (SMILES/SDF) or "graph" (TU)
    standardised: bool = False  # molecules standardised as read (core.data.standardise); meta.input_smiles as read
    as_read: GraphSet | None = field(default=None, repr=False, compare=False)  # before standardising in memory
    node_label_names: dict[int, str] | None = None
    edge_label_names: dict[int, str] | None = None
    collection: str = ""  # a TU collection's name (DS of its DS_A.txt): what its unnamed node labels number
    # what the reader changed in reading the file, for a person (a TU collection's one-way edges made
    # both ways): said wherever the file is loaded, by the CLI's summary and the app's status bar
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.graphs) != len(self.meta):
            raise ValueError("graphs and meta must have the same length")

    def __len__(self) -> int:
        return len(self.graphs)

    @property
    def labels(self) -> list[str | None]:
        """Each graph's label (None: unlabelled), in order."""
        return [m.label for m in self.meta]

    @property
    def kind_words(self) -> str:
        """What the set holds, in words for messages: "molecules" or "a graph collection"."""
        return {"molecule": "molecules", "graph": "a graph collection"}.get(self.kind, self.kind)

    @property
    def has_labels(self) -> bool:
        """True when at least one graph has a label."""
        return any(m.label is not None for m in self.meta)

    @property
    def is_molecular(self) -> bool:
        """True when graphs can be drawn as molecules (SMILES known, or TU labels name elements)."""
        return self.kind == "molecule" or _names_elements(self.node_label_names)

    def label_counts(self) -> dict[str, int]:
        """Count the graphs of each label.

        Returns:
            Label to number of graphs, sorted by label; unlabelled graphs are not counted.
        """
        counts: dict[str, int] = {}
        for label in self.labels:
            if label is not None:
                counts[label] = counts.get(label, 0) + 1
        return dict(sorted(counts.items()))

    def labels_note(self) -> str:
        """Say when the labels read look like a measurement rather than classes: more than
        :data:`MAX_CLASSES` values, at least one graph in two the only one with its value (a
        column of IC50s or scores taken for the labels). Training on a "normal" label then trains
        on one or two graphs, and an evaluation's anomaly class is one value of many.

        Returns:
            The note, for a person; "" for labels that read as classes, or none.
        """
        counts = self.label_counts()
        if len(counts) <= MAX_CLASSES:
            return ""
        alone = sum(1 for n in counts.values() if n == 1)
        if 2 * alone < sum(counts.values()):
            return ""
        return (f"the labels take {len(counts):,} different values, {alone:,} of them on one graph each: they "
                "read as a measurement, not as classes (training on a normal label, or evaluating against an "
                "anomalous one, needs a column of classes such as active/inactive)")

    def labels_case_note(self) -> str:
        """Say when labels differ only in case (``Inactive``, ``inactive``, ``INACTIVE``): each is a
        label of its own, so training on the normal label ``inactive`` trains on its rows only.

        Returns:
            The note, for a person; "" when no two labels differ only in case.
        """
        groups: dict[str, list[str]] = {}
        for label in self.label_counts():
            groups.setdefault(label.casefold(), []).append(label)
        alike = [names for names in groups.values() if len(names) > 1]
        if not alike:
            return ""
        shown = "; ".join(", ".join(names) for names in alike[:3]) + ("; ..." if len(alike) > 3 else "")
        return (f"labels that differ only in case are different labels here ({shown}): a normal or anomalous "
                "label names the rows of that spelling only; write each class one way in the file")

    def repeated_ids(self) -> dict[str, list[int]]:
        """Find the IDs that name more than one graph (a table's ID column with repeats, an SDF's titles).

        Every such row is kept and scored; the note only warns that the ID alone does not say
        which row is meant (the app's review marks are put back by ID and SMILES for that reason).

        Returns:
            Each repeated ID with its graphs' input lines (positions from 1 where no line is
            known), in file order; empty when every ID is unique.
        """
        where: dict[str, list[int]] = {}
        for i, m in enumerate(self.meta):
            where.setdefault(m.id, []).append(m.line if m.line is not None else i + 1)
        return {gid: lines for gid, lines in where.items() if len(lines) > 1}

    def repeated_ids_note(self, shown: int = 3) -> str:
        """Say which IDs name more than one graph, for a person.

        Args:
            shown: how many of them to name, with their lines.

        Returns:
            For example ``"2 IDs name more than one row: CHEMBL25 (lines 4, 9), X (lines 5, 6)"``;
            "" when every ID is unique.
        """
        repeated = self.repeated_ids()
        if not repeated:
            return ""
        named = ", ".join(f"{gid} (lines {', '.join(map(str, lines[:4]))}{', ...' if len(lines) > 4 else ''})"
                          for gid, lines in list(repeated.items())[:shown])
        more = f" and {len(repeated) - shown:,} more" if len(repeated) > shown else ""
        several = len(repeated) > 1
        return f"{len(repeated):,} ID{'s name' if several else ' names'} more than one row: {named}{more}"

    def subset(self, indices: Iterable[int]) -> GraphSet:
        """The graphs at ``indices``, with their metadata and all the set says of its file (source, format,
        kind, label names, notes).

        Args:
            indices: positions in this set, in the order wanted (repeats allowed).

        Returns:
            A new set without rejects (they are kept only by the full set).

        Raises:
            IndexError: a position that is not a whole number (``True`` picked graph 1, and a
                boolean mask failed inside numpy) or not one of this set's.
        """
        n = len(self.graphs)
        if isinstance(indices, np.ndarray) and indices.dtype.kind in "iu":  # checked at once, not one by one
            idx = indices.ravel().tolist()
            bad = [] if not idx else [i for i in (min(idx), max(idx)) if not -n <= i < n]
        else:
            idx = list(indices)
            for i in idx:
                if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
                    raise IndexError(f"GraphSet.subset takes positions (whole numbers), not {i!r}: for a mask "
                                     "of booleans, pass np.flatnonzero(mask)")
            idx = [int(i) for i in idx]
            bad = [i for i in idx if not -n <= i < n][:1]
        if bad:
            raise IndexError(f"position {bad[0]} is not one of this set's {n:,} graphs")
        # everything said of the file (its source, label names, notes) holds for a part of it too
        return replace(self, graphs=[self.graphs[i] for i in idx], meta=[self.meta[i] for i in idx], rejects=[],
                       as_read=None, notes=list(self.notes))

    def with_label(self, label: str) -> GraphSet:
        """The graphs of one label.

        Args:
            label: the label, compared after :func:`normalize_label` (``1.0`` finds ``1``).

        Returns:
            The subset of graphs whose label equals it (possibly empty; always empty for a label
            that means "no label", such as ``NA`` or ``nan``: unlabelled graphs have no label, and
            ``--normal-label NA`` trained on them while every count said no graph had it).
        """
        wanted = normalize_label(label)
        if wanted is None:
            return self.subset([])
        return self.subset(i for i, m in enumerate(self.meta) if m.label == wanted)

    @property
    def num_nodes(self) -> int:
        """The nodes of all graphs together."""
        return sum(int(g.num_nodes) for g in self.graphs)

    def node_ptr(self) -> np.ndarray:
        """Where each graph's nodes start when all graphs' nodes are laid end to end.

        Returns:
            int64 offsets of shape (graphs + 1,): graph i's nodes are ``ptr[i]:ptr[i + 1]``, the
            last entry is the total.
        """
        return np.concatenate([[0], np.cumsum([int(g.num_nodes) for g in self.graphs], dtype=np.int64)])


def normalize_label(value: object) -> str | None:
    """Write a label as the text it is compared by: ``1``, ``1.0`` and ``"1"`` are the same label.

    Args:
        value: a label as read (number, text or None).

    Returns:
        The label's text (whole numbers without ".0", other numbers as ``repr`` of the float),
        or None for a blank, "nan", "none", "na" or "n/a".
    """
    if value is None:
        return None
    text = str(value).strip()
    if text == "" or text.lower() in {"nan", "none", "na", "n/a"}:
        return None
    try:
        number = float(text)
    except ValueError:
        return text
    if number.is_integer():
        return str(int(number))
    return repr(number)


_ELEMENTS = {
    "H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S", "Cl",
    "Ar", "K", "Ca", "Sc", "Ti", "V", "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge", "As",
    "Se", "Br", "Kr", "Rb", "Sr", "Y", "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In",
    "Sn", "Sb", "Te", "I", "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb",
    "Dy", "Ho", "Er", "Tm", "Yb", "Lu", "Hf", "Ta", "W", "Re", "Os", "Ir", "Pt", "Au", "Hg", "Tl",
    "Pb", "Bi", "Po", "At", "Rn", "Fr", "Ra", "Ac", "Th", "Pa", "U",
}


def _names_elements(names: dict[int, str] | None) -> bool:
    return bool(names) and all(v in _ELEMENTS for v in names.values())


def element_symbols(names: dict[int, str] | None) -> dict[int, str]:
    """The node-label-to-element map of a TU dataset whose labels are chemical elements.

    Args:
        names: node label to its name, as the dataset's readme gives it (None: unknown).

    Returns:
        A copy of ``names`` when every name is an element symbol, else an empty dict.
    """
    return dict(names) if _names_elements(names) else {}

