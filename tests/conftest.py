"""Shared fixtures: small graph collections and molecule files made on the fly."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # the command's and the app's policy (core/runtime/threads.py)

ROOT = Path(__file__).resolve().parents[1]
RESOURCES = ROOT / "resources"  # data only the tests use
DEMO_DATA = ROOT / "app" / "demo_data"  # the demos the app installs with (hERG, AIDS); tests use them too


def write_tu(folder: Path, name: str, graphs: list[tuple[int, list[tuple[int, int]], int]],
             node_labels: bool = True, attributes: bool = False) -> Path:
    """Write a TU collection: each graph is (number of nodes, undirected edges, graph label)."""
    folder.mkdir(parents=True, exist_ok=True)
    a, ind, glab, nlab, attr = [], [], [], [], []
    offset = 0
    for g, (n, edges, label) in enumerate(graphs, start=1):
        for u, v in edges:
            a.append(f"{u + offset + 1}, {v + offset + 1}")
            a.append(f"{v + offset + 1}, {u + offset + 1}")
        for j in range(n):
            ind.append(str(g))
            nlab.append(str(j % 3))
            attr.append(f"{j * 0.5}, {g * 0.1}")
        glab.append(str(label))
        offset += n
    (folder / f"{name}_A.txt").write_text("\n".join(a) + "\n")
    (folder / f"{name}_graph_indicator.txt").write_text("\n".join(ind) + "\n")
    (folder / f"{name}_graph_labels.txt").write_text("\n".join(glab) + "\n")
    if node_labels:
        (folder / f"{name}_node_labels.txt").write_text("\n".join(nlab) + "\n")
    if attributes:
        (folder / f"{name}_node_attributes.txt").write_text("\n".join(attr) + "\n")
    return folder


def sdf_ethanol(title: str = "ethanol", field: str = "label", value: str = "1") -> str:
    """One SDF record of ethanol (3 heavy atoms) with one data field; 14 lines."""
    return f"""{title}
  RDKit          2D

  3  2  0  0  0  0  0  0  0  0999 V2000
    0.0000    0.0000    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0
    1.2990    0.7500    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0
    2.5981   -0.0000    0.0000 O   0  0  0  0  0  0  0  0  0  0  0  0
  1  2  1  0
  2  3  1  0
M  END
> <{field}>
{value}

$$$$
"""


def moses_library(path: Path, rows: int, bad: dict[int, str]) -> Path:
    """A SMILES list of the first ``rows`` bundled MOSES molecules, named mol0, mol1, ..., with
    the rows in ``bad`` (index -> text) replaced by bad SMILES."""
    import gzip

    with gzip.open(RESOURCES / "moses_sample.csv.gz", "rt") as fh:
        smiles = [line.strip() for line in fh][1:rows + 1]
    for k, text in bad.items():
        smiles[k] = text
    path.write_text("smiles name\n" + "\n".join(f"{s} mol{k}" for k, s in enumerate(smiles)) + "\n")
    return path


def ring(n: int) -> list[tuple[int, int]]:
    return [(i, (i + 1) % n) for i in range(n)]


def path(n: int) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(n - 1)]


@pytest.fixture
def tu_folder(tmp_path: Path) -> Path:
    """12 graphs: rings (label 1) and paths with an isolated node (label 0)."""
    graphs = [(5 + i % 3, ring(5 + i % 3), 1) for i in range(8)]
    graphs += [(6, path(5), 0) for _ in range(4)]  # node 5 is isolated
    return write_tu(tmp_path / "TOY", "TOY", graphs, node_labels=True, attributes=True)


@pytest.fixture
def smiles_file(tmp_path: Path) -> Path:
    path_ = tmp_path / "mols.smi"
    path_.write_text(
        "smiles name\n"
        "CCO ethanol\n"
        "# a comment\n"
        "\n"
        "c1ccccc1 benzene\n"
        "C1CC broken_ring\n"
        "CC(=O)O acetic acid\n"
        "N(C)(C)(C)(C)C bad_valence\n"
        "CCN\n"
    )
    return path_


@pytest.fixture
def herg_path() -> Path:
    return DEMO_DATA / "herg.tab"


@pytest.fixture
def aids_zip() -> Path:
    return DEMO_DATA / "AIDS.zip"


@pytest.fixture
def no_hang():
    """A test that hangs ends the test process after 300 s (with every thread's stack) instead of hanging."""
    import faulthandler

    faulthandler.dump_traceback_later(300, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="module")
def client():
    """A Dask cluster of 2 single-threaded worker processes on loopback, for the whole module."""
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as cluster, distributed.Client(cluster, timeout=30) as c:
        c.wait_for_workers(2, timeout=60)
        yield c


def pytest_collection_modifyitems(config, items):
    """Tests marked ``cuda`` run where torch sees a GPU and are skipped, saying so, elsewhere."""
    cuda_tests = [item for item in items if item.get_closest_marker("cuda") is not None]
    if not cuda_tests:
        return
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU: torch sees none on this machine")
    for item in cuda_tests:
        item.add_marker(skip)
