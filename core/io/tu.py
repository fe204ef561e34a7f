"""TU Dortmund graph collections, from a folder or a .zip.

Files (``DS`` is the collection's name): ``DS_A.txt`` and ``DS_graph_indicator.txt``
are required; ``DS_graph_labels.txt``, ``DS_node_labels.txt``, ``DS_node_attributes.txt``
and ``DS_edge_labels.txt`` are optional. Node ids are 1-based and global. Isolated
nodes are kept. A readme that maps node labels to elements (AIDS, Tox21) is read so
the app can draw those graphs as molecules.
"""
from __future__ import annotations

import math
import re
import zipfile
from pathlib import Path

import numpy as np
import torch

from core.errors import ZIP_ERRORS, DataError
from core.wording import counted
from core.io.text import strip_compression
from core.data.graphset import GraphMeta, GraphSet, Reject, normalize_label


# The largest file of a collection read, uncompressed (REDDIT-MULTI-12K's DS_A.txt is about 60 MB).
# Reading a collection takes several times its size in memory: a 1 GB member would take 5 GB.
MAX_FILE_BYTES = 256 * 2**20


def _is_mac_metadata(member: str) -> bool:
    """Whether a zip member is macOS's metadata (``__MACOSX/``, ``._name``), not a file of the collection."""
    return member.startswith("__MACOSX/") or Path(member).name.startswith("._")


MOLECULE_SUFFIXES = {".smi", ".smiles", ".csv", ".tsv", ".tab", ".sdf", ".sd", ".mol"}


def _listed(names: list[str], shown: int = 3) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _collections_below(folder: Path) -> list[str]:
    """The DS_A.txt files one folder down (``BZR/BZR_A.txt``), for a folder that holds none itself."""
    try:
        return sorted(f"{sub.name}/{a.name}" for sub in folder.iterdir() if sub.is_dir()
                      for a in sub.iterdir() if a.is_file() and a.name.endswith("_A.txt") and not a.name.startswith("._"))
    except OSError:
        return []


class _Files:
    """Text files of one collection, read from a folder or a zip archive."""

    def __init__(self, path: Path):
        self.path = path
        if path.is_dir():
            self.names = {p.name: p for p in path.iterdir() if p.is_file()}
            self._zip = None
        elif zipfile.is_zipfile(path):
            try:
                self._zip = zipfile.ZipFile(path)
            except ZIP_ERRORS as exc:
                raise DataError(f"damaged zip archive: {exc}", path) from None
            self.names = {}
            for member in self._zip.namelist():
                name = Path(member).name
                if member.endswith("/") or _is_mac_metadata(member):
                    continue
                if name in self.names:  # two folders inside: reading by name would mix their files
                    raise DataError(f"holds {name} twice ({self.names[name]}, {member}): more than one TU "
                                    "collection; open a zip or folder of one collection", path)
                self.names[name] = member
        else:
            raise DataError("not a folder or a zip archive of a TU graph collection", path)
        a_files = sorted(n for n in self.names if n.endswith("_A.txt") and not n.startswith("._"))
        if not a_files:
            molecule_files = sorted(n for n in self.names
                                    if Path(strip_compression(n)).suffix.lower() in MOLECULE_SUFFIXES)
            if molecule_files:  # a zipped (or foldered) molecule file, not a graph collection
                raise DataError(f"holds {_listed(molecule_files)}, not a TU graph collection (no DS_A.txt): open the "
                                "molecule file itself (gzip reads directly: name.csv.gz, name.sdf.gz)", path)
            below = _collections_below(path) if self._zip is None else []
            if below:  # a folder holding the collection's folder (BZR/BZR_A.txt): point at it
                give = (f"that folder, {path / below[0].split('/')[0]}" if len(below) == 1
                        else "the folder of one of them")
                raise DataError(f"no DS_A.txt file here, but found {_listed(below)}: give {give}", path)
            raise DataError("no DS_A.txt file found: a TU collection needs DS_A.txt and "
                            "DS_graph_indicator.txt", path)
        if len(a_files) > 1:  # reading one of them would drop the others without a word
            names = ", ".join(n[: -len("_A.txt")] for n in a_files)
            raise DataError(f"holds more than one TU collection ({names}): open the folder or zip of one of them",
                            path)
        self.ds = a_files[0][: -len("_A.txt")]

    def display(self, name: str) -> str:
        return f"{self.path}/{name}" if self._zip is None else f"{self.path}!{name}"

    def has(self, suffix: str) -> bool:
        return f"{self.ds}_{suffix}" in self.names

    def text(self, name: str) -> str:
        ref = self.names[name]
        try:
            if self._zip is not None:  # read at most the limit: a zip's declared sizes can lie
                with self._zip.open(ref) as member:
                    raw = member.read(MAX_FILE_BYTES + 1)
            else:
                with open(ref, "rb") as fh:
                    raw = fh.read(MAX_FILE_BYTES + 1)
        except ZIP_ERRORS as exc:
            raise DataError(f"cannot read file (damaged?): {exc}", self.display(name)) from None
        if len(raw) > MAX_FILE_BYTES:
            raise DataError(f"file larger than {MAX_FILE_BYTES // 2**20:,} MB (uncompressed): more than any TU "
                            "collection holds, and more than reading it in memory would allow", self.display(name))
        return raw.decode("utf-8-sig", errors="replace")

    def table(self, suffix: str, dtype: type, columns: int | None = None,
              allow_empty: bool = False) -> np.ndarray:
        """Parse ``DS_suffix`` as a comma/space separated numeric table, naming the bad line.

        Whole numbers must fit comfortably in 64 bits (|v| < 2**53); an empty file is an error
        unless ``allow_empty`` (then a (0, columns) table).
        """
        name = f"{self.ds}_{suffix}"
        if name not in self.names:
            raise DataError(f"required file {name} is missing", self.path)
        text = self.text(name)
        lines = text.splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        fast = _fast_table(lines, dtype, columns)
        if fast is not None:
            return fast
        rows = []
        width = None
        for number, line in enumerate(lines, start=1):
            parts = [p for p in re.split(r"[,\s]+", line.strip()) if p]
            if not parts:
                raise DataError("empty line", self.display(name), number)
            try:
                values = [float(p) for p in parts]
            except ValueError:
                raise DataError(f"not a number: {_clip(line)}", self.display(name), number) from None
            if dtype is int and not all(math.isfinite(v) and v.is_integer() for v in values):
                raise DataError(f"not a whole number: {_clip(line)}", self.display(name), number)
            if dtype is int and not all(abs(v) < _MAX_INT for v in values):
                raise DataError(f"number too large: {_clip(line)}", self.display(name), number)
            if width is None:
                width = len(values)
                if columns is not None and width != columns:
                    raise DataError(f"expected {columns} values per line, found {width}",
                                    self.display(name), number)
            elif len(values) != width:
                raise DataError(f"expected {width} values per line, found {len(values)}",
                                self.display(name), number)
            rows.append(values)
        if not rows:
            if allow_empty:
                return np.zeros((0, columns or 1), dtype=np.int64 if dtype is int else np.float32)
            raise DataError("file is empty", self.display(name))
        with np.errstate(over="ignore"):  # beyond float32's range: inf, as in _fast_table
            return np.asarray(rows, dtype=np.int64 if dtype is int else np.float32)

    def label_names(self) -> tuple[dict[int, str] | None, dict[int, str] | None]:
        """Node- and edge-label names from a readme's 'converted to integer values' maps."""
        readmes = [n for n in self.names if "readme" in n.lower()]
        for name in readmes:
            text = self.text(name)
            node = _readme_map(text, "Node labels were converted")
            edge = _readme_map(text, "Edge labels were converted")
            if node or edge:
                return node, edge
        return None, None


def _fast_table(lines: list[str], dtype: type, columns: int | None) -> np.ndarray | None:
    """Vectorised parse of a well-formed table; None when anything is off (the slow path then names the line)."""
    if not lines:
        return None
    width = len(lines[0].replace(",", " ").split())
    if width == 0 or (columns is not None and width != columns):
        return None
    tokens = " ".join(lines).replace(",", " ").split()
    if len(tokens) != width * len(lines):
        return None
    try:
        values = np.array(tokens, dtype=np.float64)
    except ValueError:
        return None
    if dtype is int:
        if not np.all(np.isfinite(values)) or np.any(values != np.round(values)) \
                or np.any(np.abs(values) >= _MAX_INT):
            return None
        return values.astype(np.int64).reshape(len(lines), width)
    with np.errstate(over="ignore"):  # beyond float32's range: inf, which rejects its graph naming the line
        return values.astype(np.float32).reshape(len(lines), width)


_MAX_INT = 2.0 ** 53


def _clip(line: str, limit: int = 60) -> str:
    text = line.strip()
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _readme_map(text: str, heading: str) -> dict[int, str] | None:
    start = text.find(heading)
    if start < 0:
        return None
    mapping: dict[int, str] = {}
    started = False
    for line in text[start:].splitlines()[1:]:
        match = re.match(r"^\s*(\d+)\s+(\S+)\s*$", line)
        if match:
            mapping[int(match.group(1))] = match.group(2)
            started = True
        elif started and line.strip() == "":
            break
        elif started and not line.strip().startswith("Component"):
            break
    return mapping or None


def load_tu(path: str | Path) -> GraphSet:
    """Read a TU collection (folder or .zip) into a GraphSet.

    Graphs without nodes, or with a NaN or infinite node attribute, are rejected with their
    reason; the others keep their raw ``node_label``, ``node_attr`` and ``edge_label``. An edge
    ``DS_A.txt`` lists one way only gets its reverse (the graphs are undirected), and the set's
    ``notes`` say so (the CLI and the app say its notes as the file loads).

    Args:
        path: the collection's folder or .zip archive.

    Returns:
        The graphs (ids 1, 2, ...; graph labels as labels), the rejected graphs, and the node and
        edge label names a readme gives.

    Raises:
        DataError: a required file is missing or a file is malformed (ids out of range or
            decreasing, line counts that do not match, an edge joining two graphs, no graph
            readable), naming the file and line.
    """
    files = _Files(Path(path))
    ds = files.ds
    indicator = files.table("graph_indicator.txt", int, columns=1)[:, 0]
    n = indicator.shape[0]
    if indicator.min() < 1:
        raise DataError("graph ids must start at 1",
                        files.display(f"{ds}_graph_indicator.txt"), int(np.argmin(indicator)) + 1)
    if np.any(np.diff(indicator) < 0):
        bad = int(np.nonzero(np.diff(indicator) < 0)[0][0]) + 2
        raise DataError("graph ids must not decrease (nodes of one graph must be contiguous)",
                        files.display(f"{ds}_graph_indicator.txt"), bad)
    num_graphs = int(indicator.max())
    graph_labels = None
    if files.has("graph_labels.txt"):
        graph_labels = files.table("graph_labels.txt", int, columns=1)[:, 0]
    if num_graphs > n and (graph_labels is None or num_graphs > len(graph_labels)):
        raise DataError(f"graph id {num_graphs} is larger than the number of nodes ({n}): graph ids "
                        "must be 1, 2, 3, ... (one per graph)",
                        files.display(f"{ds}_graph_indicator.txt"), int(np.argmax(indicator)) + 1)
    if graph_labels is not None:
        _check_count(files, "graph_labels.txt", len(graph_labels), num_graphs, "graphs")

    edges = files.table("A.txt", int, columns=2, allow_empty=True) - 1
    bad = np.nonzero((edges < 0) | (edges >= n))[0]
    if bad.size:
        raise DataError(f"node id out of range (the graph indicator lists {n} nodes)",
                        files.display(f"{ds}_A.txt"), int(bad[0]) + 1)
    crossing = np.nonzero(indicator[edges[:, 0]] != indicator[edges[:, 1]])[0]
    if crossing.size:
        raise DataError("edge joins nodes of two different graphs",
                        files.display(f"{ds}_A.txt"), int(crossing[0]) + 1)

    node_labels = None
    if files.has("node_labels.txt"):
        node_labels = files.table("node_labels.txt", int)[:, 0]
        _check_count(files, "node_labels.txt", len(node_labels), n, "nodes")
    node_attr = None
    if files.has("node_attributes.txt"):
        node_attr = files.table("node_attributes.txt", float)
        _check_count(files, "node_attributes.txt", len(node_attr), n, "nodes")
    # Non-finite attributes reject their graph (not the whole file): it cannot be trained on or scored.
    bad_attr_rows = np.nonzero(~np.isfinite(node_attr).all(axis=1))[0] if node_attr is not None else []
    bad_attr = {}
    for row in bad_attr_rows:
        bad_attr.setdefault(int(indicator[row]) - 1, int(row) + 1)
    edge_labels = None
    if files.has("edge_labels.txt"):
        edge_labels = files.table("edge_labels.txt", int)[:, 0]
        _check_count(files, "edge_labels.txt", len(edge_labels), len(edges), "edges")
    edges, edge_labels, both_ways = _both_ways(edges, edge_labels, n, files.display(f"{ds}_A.txt"))

    # Slice nodes and edges per graph without a Python loop over nodes.
    counts = np.bincount(indicator - 1, minlength=num_graphs)
    node_ptr = np.concatenate([[0], np.cumsum(counts)])
    edge_graph = indicator[edges[:, 0]] - 1
    order = np.argsort(edge_graph, kind="stable")
    edges, edge_graph = edges[order], edge_graph[order]
    if edge_labels is not None:
        edge_labels = edge_labels[order]
    edge_ptr = np.concatenate([[0], np.cumsum(np.bincount(edge_graph, minlength=num_graphs))])

    from torch_geometric.data import Data  # here, not at the top: scoring molecules never needs it

    graphs, meta, rejects = [], [], []
    for g in range(num_graphs):
        lo, hi = node_ptr[g], node_ptr[g + 1]
        if hi == lo:
            rejects.append(Reject(line=g + 1, id=str(g + 1), reason=f"graph {g + 1} has no nodes "
                                  "(its id does not occur in the graph indicator)"))
            continue
        if g in bad_attr:
            rejects.append(Reject(line=g + 1, id=str(g + 1), reason=f"graph {g + 1} has a NaN or infinite "
                                  "node attribute, or one beyond ±3.4e38, the largest float32 "
                                  f"({ds}_node_attributes.txt line {bad_attr[g]})"))
            continue
        e_lo, e_hi = edge_ptr[g], edge_ptr[g + 1]
        data = Data(edge_index=torch.from_numpy(edges[e_lo:e_hi].T - lo).contiguous(), num_nodes=int(hi - lo))
        if node_labels is not None:
            data.node_label = torch.from_numpy(node_labels[lo:hi])
        if node_attr is not None:
            data.node_attr = torch.from_numpy(node_attr[lo:hi])
        if edge_labels is not None:
            data.edge_label = torch.from_numpy(edge_labels[e_lo:e_hi])
        graphs.append(data)
        label = normalize_label(graph_labels[g]) if graph_labels is not None else None
        meta.append(GraphMeta(id=str(g + 1), name=f"{ds} #{g + 1}", label=label, line=g + 1))

    if not graphs:
        raise DataError(f"no graph could be read: all {len(rejects)} graphs were rejected "
                        f"(first: {rejects[0].reason})", path)
    node_names, edge_names = files.label_names()
    return GraphSet(graphs=graphs, meta=meta, rejects=rejects, source=str(path), format="tu", kind="graph",
                    node_label_names=node_names, edge_label_names=edge_names, collection=ds,
                    notes=[both_ways] if both_ways else [])


def _both_ways(edges: np.ndarray, edge_labels: np.ndarray | None, n: int,
               where: str) -> tuple[np.ndarray, np.ndarray | None, str]:
    """Add the reverse of each edge that ``DS_A.txt`` lists one way only (with its edge label).

    TU collections are undirected graphs whose ``DS_A.txt`` lists each edge both ways; a file that
    lists some once was read as directed graphs, and scored otherwise than the graphs it describes.

    Returns:
        (the edges, their labels, the note that says so, naming the file: "" when none was added).
        The note goes into the GraphSet's ``notes``: a warning reached the CLI's stderr only, never
        the app, whose loading runs in a worker thread.
    """
    keys = edges[:, 0] * n + edges[:, 1]
    one_way = ~np.isin(edges[:, 1] * n + edges[:, 0], keys)
    if not one_way.any():
        return edges, edge_labels, ""
    note = (f"{where}: {counted(int(one_way.sum()), 'edge')} listed one way only (a TU collection lists each edge "
            "both ways): read as undirected, with the reverse added")
    edges = np.concatenate([edges, edges[one_way][:, ::-1]])
    if edge_labels is not None:
        edge_labels = np.concatenate([edge_labels, edge_labels[one_way]])
    return edges, edge_labels, note


def _check_count(files: _Files, suffix: str, found: int, expected: int, what: str) -> None:
    """One line per graph/node/edge; too many lines names the first extra one."""
    if found != expected:
        source = "A.txt" if what == "edges" else "graph_indicator.txt"
        raise DataError(f"has {found} lines but the collection has {expected} {what} "
                        f"(from {files.ds}_{source}); one line per {what[:-1]}",
                        files.display(f"{files.ds}_{suffix}"), expected + 1 if found > expected else None)
