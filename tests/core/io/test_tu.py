import shutil
import zipfile

import pytest
import torch

from core import DataError, load
from core.io.tu import load_tu
from tests.conftest import path, ring, write_tu


def test_folder_reads_graphs_labels_and_isolated_nodes(tu_folder):
    graphs = load(tu_folder)
    assert len(graphs) == 12 and graphs.format == "tu" and not graphs.rejects
    assert graphs.label_counts() == {"0": 4, "1": 8}
    last = graphs.graphs[-1]
    assert last.num_nodes == 6  # the isolated sixth node is kept
    assert last.edge_index.max() == 4
    assert graphs.graphs[0].node_attr.shape == (5, 2)
    assert graphs.graphs[0].node_label.tolist() == [0, 1, 2, 0, 1]
    assert graphs.meta[3].id == "4" and graphs.meta[3].label == "1"


def test_zip_gives_the_same_graphs_as_the_folder(tu_folder, tmp_path):
    archive = tmp_path / "TOY.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in tu_folder.iterdir():
            zf.write(f, f"TOY/{f.name}")
    a, b = load(tu_folder), load(archive)
    assert len(a) == len(b)
    for ga, gb in zip(a.graphs, b.graphs):
        assert torch.equal(ga.edge_index, gb.edge_index) and ga.num_nodes == gb.num_nodes


def test_real_aids_zip_with_element_names(aids_zip):
    graphs = load(aids_zip)
    assert len(graphs) == 2000 and graphs.label_counts() == {"0": 400, "1": 1600}
    assert graphs.num_nodes == 31385
    assert graphs.node_label_names[0] == "C" and graphs.is_molecular


def test_missing_required_file_is_named(tu_folder):
    (tu_folder / "TOY_graph_indicator.txt").unlink()
    with pytest.raises(DataError, match="TOY_graph_indicator.txt is missing"):
        load_tu(tu_folder)


def test_node_id_out_of_range_names_file_and_line(tu_folder):
    lines = (tu_folder / "TOY_A.txt").read_text().splitlines()
    lines[2] = "1, 999"
    (tu_folder / "TOY_A.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"TOY_A.txt:3: node id out of range") as info:
        load_tu(tu_folder)
    assert info.value.line == 3


def test_edge_across_graphs_and_not_a_number(tu_folder):
    a = tu_folder / "TOY_A.txt"
    original = a.read_text()
    a.write_text("1, 7\n" + original)
    with pytest.raises(DataError, match=r"TOY_A.txt:1: edge joins nodes of two different graphs"):
        load_tu(tu_folder)
    a.write_text(original + "x, 2\n")
    with pytest.raises(DataError, match=r"TOY_A.txt:\d+: not a number"):
        load_tu(tu_folder)


def test_line_counts_that_disagree(tu_folder):
    labels = tu_folder / "TOY_node_labels.txt"
    labels.write_text("\n".join(labels.read_text().split()[:-2]) + "\n")
    with pytest.raises(DataError, match="TOY_node_labels.txt: has .* lines but the collection has"):
        load_tu(tu_folder)


def test_graph_without_nodes_is_rejected_not_lost(tmp_path):
    folder = write_tu(tmp_path / "G", "G", [(3, path(3), 1), (3, ring(3), 1)])
    ind = folder / "G_graph_indicator.txt"
    ind.write_text(ind.read_text().replace("2\n", "3\n"))  # graph 2 now has no nodes
    (folder / "G_graph_labels.txt").write_text("1\n1\n1\n")
    graphs = load(folder)
    assert len(graphs) == 2 and len(graphs.rejects) == 1 and "no nodes" in graphs.rejects[0].reason


def test_not_a_collection(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no DS_A.txt"):
        load(tmp_path / "empty")
    shutil.rmtree(tmp_path / "empty")
    with pytest.raises(DataError, match="no such file"):
        load(tmp_path / "nothing.zip")


def test_a_folder_holding_a_collection_one_level_down_points_at_it(tmp_path):
    """A download unpacked into data/BZR/ and opened as data/ said only "no DS_A.txt file found"."""
    write_tu(tmp_path / "data" / "BZR", "BZR", [(3, ring(3), 1), (4, path(4), 0)])
    with pytest.raises(DataError, match=f"no DS_A.txt file here, but found BZR/BZR_A.txt: give that folder, "
                                        f"{tmp_path / 'data' / 'BZR'}"):
        load(tmp_path / "data")
    write_tu(tmp_path / "data" / "COX2", "COX2", [(3, ring(3), 1), (4, path(4), 0)])
    with pytest.raises(DataError, match="found BZR/BZR_A.txt, COX2/COX2_A.txt: give the folder of one of them"):
        load(tmp_path / "data")


def test_a_collection_that_lists_each_edge_once_reads_as_the_undirected_graphs_it_describes(tu_folder, tmp_path,
                                                                                            capsys):
    """A DS_A.txt that lists each edge one way only was read as directed graphs, and scored otherwise
    than the same collection listing both ways. The reverse edges are added (with their edge
    labels), and the set's notes say so, naming the file: a warning reached the CLI only, never
    the app (its loading runs in a worker thread). ``info`` says the note."""
    import warnings
    import numpy as np

    from core import GLocalKD
    from core.cli.main import main

    lines = (tu_folder / "TOY_A.txt").read_text().splitlines()
    (tu_folder / "TOY_edge_labels.txt").write_text("".join(f"{min(map(int, line.split(','))) % 4}\n" for line in lines))
    one_way = tmp_path / "ONE"
    shutil.copytree(tu_folder, one_way)
    kept = [k for k, line in enumerate(lines) if int(line.split(",")[0]) < int(line.split(",")[1])]
    (one_way / "TOY_A.txt").write_text("".join(lines[k] + "\n" for k in kept))
    labels = (tu_folder / "TOY_edge_labels.txt").read_text().splitlines()
    (one_way / "TOY_edge_labels.txt").write_text("".join(labels[k] + "\n" for k in kept))
    both = load(tu_folder)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # said as a note, not warned
        once = load(one_way)
    said = f"{one_way / 'TOY_A.txt'}: 63 edges listed one way only (a TU collection lists each edge both ways): " \
           "read as undirected, with the reverse added"
    assert once.notes == [said] and both.notes == []
    part = once.with_label(once.meta[0].label)  # what is said of the file holds for each part of it
    assert part.notes == [said] and part.notes is not once.notes and part.node_label_names == once.node_label_names
    assert main(["info", str(one_way)]) == 0
    assert f"\n  Note: {said}" in capsys.readouterr().out
    # evaluate reads the collection through its own protocol: it says the note too (it said nothing)
    assert main(["evaluate", str(one_way), "--method", "size", "--folds", "2", "--threads", "1"]) == 0
    printed = capsys.readouterr()
    assert f"note: {said}" in printed.out + printed.err

    def edges(g):
        return sorted(zip(g.edge_index[0].tolist(), g.edge_index[1].tolist(), g.edge_label.tolist()))

    assert [edges(g) for g in once.graphs] == [edges(g) for g in both.graphs]
    model = GLocalKD(epochs=2, hidden_dim=8, out_dim=4, seed=0, device="cpu").fit(both)
    a, b = model.score(once), model.score(both)
    assert np.array_equal(a.score, b.score) and np.array_equal(a.node_errors, b.node_errors)
