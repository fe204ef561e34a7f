"""Broken TU collections: a DataError naming the file and line, or (for one bad graph) a reject."""
import warnings
import zipfile

import pytest

from core import DataError, GLocalKD, load
from tests.conftest import path, ring, write_tu


@pytest.fixture
def toy(tmp_path):
    """Three graphs: a path, a triangle, and two nodes without edges; labels 1, 0, 1; 2 attributes."""
    return write_tu(tmp_path / "T", "T", [(3, path(3), 1), (3, ring(3), 0), (2, [], 1)], attributes=True)


def _write(folder, suffix, text):
    (folder / f"T_{suffix}").write_text(text)


def _fails(folder, pattern, line=None):
    with pytest.raises(DataError, match=pattern) as info:
        load(folder)
    assert info.value.line == line
    return info.value


@pytest.mark.parametrize("missing", ["A.txt", "graph_indicator.txt"])
def test_missing_required_file(toy, missing):
    (toy / f"T_{missing}").unlink()
    with pytest.raises(DataError, match=f"T_{missing}|DS_A.txt"):
        load(toy)


def test_line_counts_that_disagree(toy):
    _write(toy, "graph_labels.txt", "1\n0\n1\n0\n")
    error = _fails(toy, r"T_graph_labels.txt:4: has 4 lines but the collection has 3 graphs "
                        r"\(from T_graph_indicator.txt\)", line=4)
    assert error.path.endswith("T_graph_labels.txt")
    _write(toy, "graph_labels.txt", "1\n0\n1\n")
    _write(toy, "node_attributes.txt", "1,1\n" * 7)
    _fails(toy, r"T_node_attributes.txt: has 7 lines but the collection has 8 nodes")
    _write(toy, "node_attributes.txt", "1,1\n" * 8)
    _write(toy, "edge_labels.txt", "1\n")
    _fails(toy, r"T_edge_labels.txt: has 1 lines but the collection has 10 edges \(from T_A.txt\)")


@pytest.mark.parametrize("text,message,line", [
    ("1, 2\n2, 9\n", r"T_A.txt:2: node id out of range \(the graph indicator lists 8 nodes\)", 2),
    ("1, 2\n0, 1\n", r"T_A.txt:2: node id out of range", 2),
    ("1, 2\n2, x\n", r"T_A.txt:2: not a number: '2, x'", 2),
    ("1, 2\n2, 1.5\n", r"T_A.txt:2: not a whole number", 2),
    ("1, 2\n2, nan\n", r"T_A.txt:2: not a whole number", 2),
    ("1, 2\n2, 1e300\n", r"T_A.txt:2: number too large", 2),
    ("1, 2\n2, 99999999999999999999\n", r"T_A.txt:2: number too large", 2),
    ("1, 2\n2\n", r"T_A.txt:2: expected 2 values per line, found 1", 2),
    ("1, 2\n\n2, 1\n", r"T_A.txt:2: empty line", 2),
    ("1, 2\n3, 4\n", r"T_A.txt:2: edge joins nodes of two different graphs", 2),
])
def test_bad_adjacency_lines(toy, text, message, line):
    _write(toy, "A.txt", text)
    _fails(toy, message, line)


@pytest.mark.parametrize("suffix,text,message,line", [
    ("graph_indicator.txt", "1\n1\nx\n2\n2\n2\n3\n3\n", r"T_graph_indicator.txt:3: not a number", 3),
    ("graph_indicator.txt", "1\n1\n1\n2\n2\n2\n3\n0\n", r"T_graph_indicator.txt:8: graph ids must start at 1", 8),
    ("graph_indicator.txt", "1\n1\n2\n1\n2\n2\n3\n3\n", r"T_graph_indicator.txt:4: graph ids must not decrease", 4),
    ("graph_indicator.txt", "1\n1\n1\n2\n2\n2\n3\n4000000000\n",
     r"T_graph_indicator.txt:8: graph id 4000000000 is larger than the number of nodes", 8),
    ("graph_labels.txt", "1\nactive\n1\n", r"T_graph_labels.txt:2: not a number: 'active'", 2),
    ("graph_labels.txt", "1\n0.5\n1\n", r"T_graph_labels.txt:2: not a whole number", 2),
    ("node_labels.txt", "0\n1\n2\n0\nC\n2\n0\n1\n", r"T_node_labels.txt:5: not a number: 'C'", 5),
    ("node_attributes.txt", "1,1\n1,1\n1\n1,1\n1,1\n1,1\n1,1\n1,1\n", r"T_node_attributes.txt:3: expected 2 values", 3),
])
def test_bad_lines_in_other_files(toy, suffix, text, message, line):
    _write(toy, suffix, text)
    _fails(toy, message, line)


def test_bad_lines_inside_a_zip_name_the_member(toy, tmp_path):
    _write(toy, "A.txt", "1, 2\n2, x\n")
    archive = tmp_path / "T.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in toy.iterdir():
            zf.write(f, f"T/{f.name}")
    with pytest.raises(DataError, match=r"T.zip!T_A.txt:2: not a number"):
        load(archive)
    damaged = tmp_path / "damaged.zip"
    data = archive.read_bytes()
    damaged.write_bytes(data[:40] + bytes(60) + data[100:])
    with pytest.raises(DataError, match="damaged.zip"):
        load(damaged)


def test_empty_graphs_no_edges_and_isolated_nodes(toy):
    _write(toy, "graph_indicator.txt", "1\n1\n1\n3\n3\n3\n4\n4\n")  # graph 2 is empty
    _write(toy, "graph_labels.txt", "1\n0\n0\n1\n")
    _write(toy, "A.txt", "1, 2\n2, 1\n")  # graph 1: one edge and an isolated node; 3 and 4: no edges
    graphs = load(toy)
    assert [m.id for m in graphs.meta] == ["1", "3", "4"]
    assert [(r.line, r.id) for r in graphs.rejects] == [(2, "2")] and "no nodes" in graphs.rejects[0].reason
    assert [int(g.num_nodes) for g in graphs.graphs] == [3, 3, 2]
    assert [g.edge_index.shape[1] for g in graphs.graphs] == [2, 0, 0]
    scores = GLocalKD(epochs=2, hidden_dim=8, out_dim=4, device="cpu").fit(graphs).score(graphs)
    assert len(scores) == 3 and scores.node_ptr[-1] == 8


def test_a_collection_without_any_edge(toy):
    _write(toy, "A.txt", "")
    graphs = load(toy)
    assert len(graphs) == 3 and all(g.edge_index.shape == (2, 0) for g in graphs.graphs)


def test_nan_or_infinite_attributes_reject_their_graph(toy):
    _write(toy, "node_attributes.txt", "1,1\n1,1\n1,1\n1,nan\n1,1\n1,1\n1,1\n-inf,1\n")
    graphs = load(toy)
    assert [m.id for m in graphs.meta] == ["1"]
    assert [(r.line, r.id) for r in graphs.rejects] == [(2, "2"), (3, "3")]
    assert "T_node_attributes.txt line 4" in graphs.rejects[0].reason
    assert "NaN or infinite node attribute" in graphs.rejects[1].reason
    model = GLocalKD(epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(graphs)  # trains on the good one
    assert len(model.score(graphs)) == 1
    _write(toy, "node_attributes.txt", "1,1\n1,1\n1,1\n1,1e39\n1,1\n1,1\n1,1\n1,1\n")  # finite, past float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no stray "overflow encountered in cast"
        graphs = load(toy)
    assert [r.line for r in graphs.rejects] == [2] and "beyond ±3.4e38" in graphs.rejects[0].reason
    _write(toy, "node_attributes.txt", "nan,1\n" * 8)
    with pytest.raises(DataError, match="no graph could be read: all 3 graphs were rejected"):
        load(toy)


def test_single_class_labels(toy):
    _write(toy, "graph_labels.txt", "1\n1\n1\n")
    graphs = load(toy)
    assert graphs.label_counts() == {"1": 3}
    assert len(graphs.with_label("0")) == 0 and len(graphs.with_label("1")) == 3


def test_bom_crlf_and_tabs_are_fine(toy):
    a = toy / "T_A.txt"
    a.write_bytes(b"\xef\xbb\xbf" + a.read_bytes().replace(b", ", b"\t").replace(b"\n", b"\r\n"))
    assert len(load(toy)) == 3


def test_binary_data_in_a_tu_file(toy):
    (toy / "T_A.txt").write_bytes(bytes(range(256)) * 4)
    with pytest.raises(DataError, match=r"T_A.txt:1: not a number") as info:
        load(toy)
    assert len(str(info.value)) < 300 and "\n" not in str(info.value)


def test_a_folder_or_zip_of_two_collections_is_refused_not_read_in_part(toy, tmp_path):
    """A folder holding two collections read the first by name and dropped the other without a
    word; a zip with the same files in two folders mixed them (one folder's labels on the other's
    graphs). Both are refused, naming what they hold. macOS's zip metadata is no collection."""
    for f in list(toy.iterdir()):
        (toy / f.name.replace("T_", "U_")).write_bytes(f.read_bytes())
    _fails(toy, r"more than one TU collection \(T, U\)")
    for f in list(toy.glob("U_*")):
        f.unlink()
    mixed = tmp_path / "mixed.zip"
    with zipfile.ZipFile(mixed, "w") as zf:
        for f in toy.iterdir():
            zf.write(f, f"v1/{f.name}")
        zf.writestr("v2/T_graph_labels.txt", "0\n1\n0\n")
    with pytest.raises(DataError, match=r"holds T_graph_labels.txt twice \(v1/T_graph_labels.txt, v2/"):
        load(mixed)
    mac = tmp_path / "mac.zip"
    with zipfile.ZipFile(mac, "w") as zf:
        for f in toy.iterdir():
            zf.write(f, f"T/{f.name}")
            zf.writestr(f"__MACOSX/T/._{f.name}", b"\x00\x05\x16\x07")
    assert len(load(mac)) == 3
