"""FeatureSchema: how node features are made, fitted on training data and reused unchanged.

It is saved inside every model file, so held-out data (even a TU split whose files lack
some label values) is featurized exactly as the training data was.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import torch

from core.data.chem import ATOM_FEATURE_DIMS, ATOM_FEATURE_VERSION
from core.errors import DataError, SchemaMismatchError
from core.data.feature_modes import MODES
from core.data.graphset import GraphSet
from core.data.label_coding import check_label_coding, label_coding

if TYPE_CHECKING:
    from torch_geometric.data import Data

MAX_DEGREE_CAP = 64
CODED_MODES = ("labels", "both", "degree")  # the recipes whose features depend on what the node labels mean


@dataclass
class FeatureSchema:
    """Node-feature recipe.

    ``atom``: RDKit atom features (molecules; fixed vocabulary, the ``atom_version`` of it
    decides the columns: 1, the default, without ring sizes; 2, asked for as ``atom-rings``,
    with them). Ring sizes find strained rings planted in drug-like molecules
    (docs/explanations.md) but cost AUC on hERG (docs/results.md), so they are an option. ``labels``: one-hot TU node
    labels over the training vocabulary plus one "unseen label" slot. ``attributes``: TU node
    attributes. ``both``: attributes then labels. ``degree``: one-hot node degree up to the
    largest training degree (capped at 64), the last slot meaning "that or more" (the paper's
    choice for plain graphs).

    ``coding`` records what the training graphs' node labels meant
    (:func:`core.data.label_coding.label_coding`) for the recipes that read labels or their absence
    (``labels``, ``both``, ``degree``), and :meth:`apply` refuses graphs whose labels mean something
    else: Tox21's label 0 is oxygen where AIDS's is carbon, and a model scored one with the other's
    features silently. Empty (model files from before it): not checked.
    """

    mode: str
    label_values: list[int] = field(default_factory=list)
    attr_dim: int = 0
    max_degree: int = 0
    atom_version: int = 1
    coding: dict = field(default_factory=dict)  # what the training graphs' node labels meant (label_coding)

    @property
    def dim(self) -> int:
        """The width of the node-feature matrix this schema makes."""
        if self.mode == "atom":
            return ATOM_FEATURE_DIMS[self.atom_version]
        if self.mode == "degree":
            return self.max_degree + 1
        width = 0
        if self.mode in ("attributes", "both"):
            width += self.attr_dim
        if self.mode in ("labels", "both"):
            width += len(self.label_values) + 1
        return width

    def describe(self) -> str:
        """Say in words which features this schema makes, for reports and the app.

        Returns:
            A short phrase such as "one-hot node labels (7 values + unseen)".
        """
        return {
            "atom": f"RDKit atom features ({self.dim}{', with ring sizes' if self.atom_version >= 2 else ''})",
            "labels": f"one-hot node labels ({len(self.label_values)} values + unseen)",
            "attributes": f"node attributes ({self.attr_dim})",
            "both": f"node attributes ({self.attr_dim}) + one-hot labels ({len(self.label_values)} + unseen)",
            "degree": f"one-hot node degree (0..{self.max_degree - 1}, {self.max_degree}+)",
        }[self.mode]

    @classmethod
    def fit(cls, graphs: GraphSet, mode: str = "auto") -> FeatureSchema:
        """Choose and size the features from training graphs.

        Args:
            graphs: the training graphs; their first graph says which raw features the data has.
            mode: one of ``MODES``: ``auto`` picks what the data has (atom features, then labels
                and attributes, labels, attributes, else degree); ``atom-rings`` is ``atom`` with
                the ring-size columns (version 2 of the vocabulary).

        Returns:
            The fitted schema (label vocabulary, attribute width or largest degree recorded).

        Raises:
            ValueError: ``mode`` is not one of ``MODES``.
            DataError: there are no graphs, or the data lacks the features ``mode`` asks for.
        """
        if mode not in MODES:
            raise ValueError(f"features must be one of {', '.join(MODES)}, not {mode!r}")
        if len(graphs) == 0:
            raise DataError("no graphs to fit node features on", graphs.source)
        first = graphs.graphs[0]
        has_x = "x" in first
        has_labels = "node_label" in first
        has_attr = "node_attr" in first
        if mode == "auto":
            mode = ("atom" if has_x else "both" if has_labels and has_attr else "labels" if has_labels
                    else "attributes" if has_attr else "degree")
        asked, rings = mode, mode == "atom-rings"
        if rings:
            mode = "atom"
        need = {"atom": has_x, "labels": has_labels, "attributes": has_attr, "both": has_labels and has_attr}
        lacks = {"atom": "atom features (it is not molecules)", "labels": "node labels",
                 "attributes": "node attributes",
                 "both": " or ".join(n for n, there in (("node labels", has_labels), ("node attributes", has_attr))
                                     if not there)}
        if not need.get(mode, True):  # said of the mode asked for ("atom-rings" was said as 'atom')
            raise DataError(f"features {asked!r} asked for, but the data has no {lacks[mode]}", graphs.source)
        schema = cls(mode=mode, atom_version=ATOM_FEATURE_VERSION if rings else 1)
        if mode in ("labels", "both"):
            values = torch.unique(torch.cat([g.node_label for g in graphs.graphs]))
            schema.label_values = [int(v) for v in values]
        if mode in ("attributes", "both"):
            schema.attr_dim = int(first.node_attr.shape[1])
        if mode == "degree":
            top = max((int(_degrees(g).max()) if g.num_nodes else 0) for g in graphs.graphs)
            schema.max_degree = max(1, min(top, MAX_DEGREE_CAP))
        if mode in CODED_MODES:
            schema.coding = label_coding(graphs)
        return schema

    def transform(self, data: Data) -> torch.Tensor:
        """The node-feature matrix of one graph under this schema.

        Node labels the training data did not have go to the "unseen label" slot.

        Args:
            data: one graph as a loader made it (``x``, ``node_label``, ``node_attr``, ``edge_index``).

        Returns:
            A float tensor of shape (nodes, :attr:`dim`).

        Raises:
            SchemaMismatchError: the graph lacks the raw features the schema was fitted on (or
                has another number of attributes).
        """
        n = int(data.num_nodes)
        if self.mode == "atom":
            if "x" not in data:
                raise SchemaMismatchError("the model was trained on molecules (atom features) but "
                                          "this data is a graph collection without them")
            return data.x[:, :self.dim].float()
        if self.mode == "degree":
            deg = _degrees(data).clamp(max=self.max_degree)
            return torch.nn.functional.one_hot(deg, self.max_degree + 1).float()
        parts = []
        if self.mode in ("attributes", "both"):
            attr = data.get("node_attr")
            if attr is None or attr.shape[1] != self.attr_dim:
                got = "none" if attr is None else str(attr.shape[1])
                raise SchemaMismatchError(f"the model expects {self.attr_dim} node attributes per node, "
                                          f"this data has {got}")
            parts.append(attr.float())
        if self.mode in ("labels", "both"):
            labels = data.get("node_label")
            if labels is None:
                raise SchemaMismatchError("the model expects node labels, this data has none")
            lookup = torch.tensor(self.label_values, dtype=torch.long)
            pos = torch.searchsorted(lookup, labels)
            pos_clamped = pos.clamp(max=len(self.label_values) - 1)
            known = lookup[pos_clamped] == labels
            slot = torch.where(known, pos_clamped, torch.full_like(pos, len(self.label_values)))
            onehot = torch.zeros(n, len(self.label_values) + 1)
            onehot[torch.arange(n), slot] = 1.0
            parts.append(onehot)
        return torch.cat(parts, dim=1)

    def apply(self, graphs: GraphSet) -> list[Data]:
        """Model-ready graphs (``x``, ``edge_index``) for every graph of a set.

        Args:
            graphs: the graphs to featurize.

        Returns:
            One torch-geometric ``Data`` per graph, in order, with ``x`` from :meth:`transform`.

        Raises:
            DataError: a graph has NaN or infinite node features (naming the graph and its line).
            SchemaMismatchError: as :meth:`transform`, or the graphs' node labels mean something
                else than the training graphs' did (:func:`core.data.label_coding.check_label_coding`).
        """
        from torch_geometric.data import Data  # here: scoring arrays (screening) never needs it

        if self.mode in CODED_MODES:
            check_label_coding(self.coding, label_coding(graphs))
        out = []
        for i, g in enumerate(graphs.graphs):
            x = self.transform(g)
            if not torch.isfinite(x).all():
                meta = graphs.meta[i]
                raise DataError(f"graph {meta.id} has NaN or infinite node features", graphs.source, meta.line)
            out.append(Data(x=x, edge_index=g.edge_index, num_nodes=int(g.num_nodes)))
        return out

    def to_dict(self) -> dict:
        """The schema as plain values, for the model file.

        Returns:
            The dataclass fields by name (the inverse of :meth:`from_dict`); an empty ``coding`` is
            left out, so a model file from before it keeps its fingerprint.
        """
        d = asdict(self)
        if not d["coding"]:
            del d["coding"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> FeatureSchema:
        """Read a schema saved by :meth:`to_dict`.

        Args:
            d: the saved fields; a missing ``atom_version`` (files from before versions) means 1.

        Returns:
            The schema.

        Raises:
            ValueError: the atom feature version is one this version of the product does not know,
                the label values are not sorted and distinct, or the label coding is unknown.
        """
        version = int(d.get("atom_version", 1))  # files from before versions were version 1
        if version not in ATOM_FEATURE_DIMS:
            raise ValueError(f"atom feature version {version} is not one this GLocalKD Studio knows "
                             f"({', '.join(map(str, ATOM_FEATURE_DIMS))}); update it")
        values = [int(v) for v in d.get("label_values", [])]
        if values != sorted(set(values)):  # transform looks them up by binary search
            raise ValueError(f"node label values {values} are not sorted and distinct")
        coding = d.get("coding") or {}
        if not isinstance(coding, dict) or (coding and coding.get("kind") not in ("labels", "elements", "degrees")):
            raise ValueError(f"the node label coding {coding!r} is not one this version writes")
        return cls(mode=str(d["mode"]), label_values=values, attr_dim=int(d.get("attr_dim", 0)),
                   max_degree=int(d.get("max_degree", 0)), atom_version=version, coding=coding)


def _degrees(data: Data) -> torch.Tensor:
    """Each node's number of edges (as sources)."""
    return torch.bincount(data.edge_index[0], minlength=int(data.num_nodes))
