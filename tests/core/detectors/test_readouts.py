"""GLocalKD's extra readouts (node_max, size_term), the ring-size atom features, and old model files."""
import numpy as np
import pytest
import torch
from rdkit import Chem
from torch_geometric.data import Data

from core import GLocalKD, load
from core.errors import DataError
from core.data.chem import ATOM_FEATURE_DIMS, FEATURE_NAMES, atom_features
from core.data.features import FeatureSchema
from core.data.graphset import GraphMeta, GraphSet
from core.io.ranked_report import read_report
from core.data.scores import READOUTS, combine_readouts
from core.screening.pipeline import screen

SMALL = dict(hidden_dim=32, out_dim=16, batch_size=4, lr=1e-2, seed=3, device="cpu")


def _copies(g: Data, k: int) -> Data:
    """k disjoint copies of ``g`` as one graph (no edges between the copies)."""
    n = int(g.num_nodes)
    edges = torch.cat([g.edge_index + c * n for c in range(k)], dim=1)
    out = Data(edge_index=edges, num_nodes=n * k)
    for key in ("node_label", "node_attr"):
        if key in g:
            out[key] = torch.cat([g[key]] * k)
    return out


def _with(gs: GraphSet, graphs: list[Data]) -> GraphSet:
    return GraphSet(graphs, [GraphMeta(id=str(i)) for i in range(len(graphs))], source="made", format="tu",
                    kind="graph")


@pytest.fixture
def toy(tu_folder):
    return load(tu_folder)


def test_readouts_are_parts_of_the_score(toy):
    model = GLocalKD(epochs=3, lam=0.5, node_max=True, size_term=True, **SMALL).fit(toy)
    s = model.score(toy)
    assert set(s.parts) == {"graph", "node_mean", "node_max", "size"}
    for i in range(len(toy)):
        assert np.isclose(s.parts["node_max"][i], s.node_errors_of(i).max(), rtol=1e-5)
        assert np.isclose(s.parts["node_mean"][i], s.node_errors_of(i).mean(), rtol=1e-5)
    assert np.allclose(s.graph_term, s.parts["graph"] + s.parts["size"], rtol=1e-5)
    assert np.allclose(s.node_term, s.parts["node_mean"] + s.parts["node_max"], rtol=1e-5)
    assert np.allclose(s.score, s.graph_term + 0.5 * s.node_term, rtol=1e-5)
    assert np.allclose(s.score, combine_readouts(s.parts, 0.5, True, True), rtol=1e-5)
    # the same trained networks: the paper's readout of this model is the paper model's score
    paper = GLocalKD(epochs=3, lam=0.5, **SMALL).fit(toy).score(toy)
    assert np.allclose(paper.score, combine_readouts(s.parts, 0.5, *READOUTS["paper"]), rtol=1e-5)
    assert model.mean_nodes_ == pytest.approx(toy.num_nodes / len(toy))


def test_size_term_finds_a_graph_made_of_normal_copies(toy):
    """Three disjoint copies of a training graph look exactly like one copy to the paper's
    readouts (max-pool, mean node error); the size term grows with the square of the count."""
    model = GLocalKD(epochs=20, size_term=True, **SMALL).fit(toy)
    one, three = toy.graphs[0], _copies(toy.graphs[0], 3)
    s = model.score(_with(toy, [one, three]))
    for key in ("graph", "node_mean", "node_max"):
        assert s.parts[key][1] == pytest.approx(s.parts[key][0], rel=1e-4)
    assert s.parts["size"][1] == pytest.approx(9 * s.parts["size"][0], rel=1e-3)
    assert s.score[1] > s.score[0]
    paper = combine_readouts(s.parts, model.lam, *READOUTS["paper"])
    assert paper[1] == pytest.approx(paper[0], rel=1e-4)


def test_readout_settings_are_checked_and_saved(toy, tmp_path):
    with pytest.raises(Exception, match="node_max"):
        GLocalKD(node_max="yes", **SMALL).fit(toy)
    model = GLocalKD(epochs=2, node_max=True, size_term=True, **SMALL).fit(toy)
    model.save(tmp_path / "m.pt")
    again = GLocalKD.load(tmp_path / "m.pt", device="cpu")
    assert again.node_max and again.size_term and again.mean_nodes_ == model.mean_nodes_
    assert np.array_equal(again.score(toy).score, model.score(toy).score)


def test_ring_size_flags():
    names = list(FEATURE_NAMES)
    # spiro-fused cyclopropane on a cyclohexane, an ethyl chain, and a naphthalene
    mol = Chem.MolFromSmiles("C1CC12CCCCC2CCc1ccc2ccccc2c1")
    x = atom_features(mol)
    ring3 = x[:, names.index("ring_size=3")].astype(bool)
    ring6 = x[:, names.index("ring_size=6")].astype(bool)
    in_ring = x[:, names.index("in_ring")].astype(bool)
    assert ring3.sum() == 3 and ring3[[0, 1, 2]].all()
    assert ring3[2] and ring6[2]  # the spiro atom is in both rings
    assert (ring6 | ring3)[in_ring].all() and not (ring6 | ring3)[~in_ring].any()
    assert x[:, names.index("ring_size>=8")].sum() == 0
    macro = atom_features(Chem.MolFromSmiles("C1CCCCCCCCCCC1"))
    assert macro[:, names.index("ring_size>=8")].all()


def test_models_of_the_first_atom_vocabulary_still_load_and_score(smiles_file, tmp_path):
    """A model file written before ring sizes and readouts existed (file version 1, no
    ``atom_version``, no readout settings) reads the first columns only and scores as before."""
    mols = load(smiles_file)
    model = GLocalKD(epochs=2, **SMALL).fit(mols)
    assert model.schema_.atom_version == 1 and model.schema_.dim == ATOM_FEATURE_DIMS[1]  # the default
    expected = model.score(mols).score
    model.save(tmp_path / "m.pt")
    state = torch.load(tmp_path / "m.pt", weights_only=True)
    state["version"] = 1
    del state["digest"]  # version 1 files had none
    del state["mean_nodes"], state["params"]["node_max"], state["params"]["size_term"]
    del state["schema"]["atom_version"]
    torch.save(state, tmp_path / "old.pt")
    old = GLocalKD.load(tmp_path / "old.pt", device="cpu")
    assert old.schema_.atom_version == 1 and not old.node_max and not old.size_term
    assert np.allclose(old.score(mols).score, expected, rtol=1e-6)
    report = read_report(screen(old, smiles_file, tmp_path / "r.csv", workers=1).report)
    assert len(report) == len(mols)
    assert np.allclose(np.sort(report.score), np.sort(expected), rtol=1e-4)


def test_ring_sizes_are_an_option_kept_in_the_model_file(smiles_file, tu_folder, tmp_path):
    mols = load(smiles_file)
    model = GLocalKD(epochs=2, features="atom-rings", **SMALL).fit(mols)
    assert model.schema_.atom_version == 2 and model.schema_.dim == ATOM_FEATURE_DIMS[2]
    assert "ring sizes" in model.schema_.describe()
    model.save(tmp_path / "m.pt")
    again = GLocalKD.load(tmp_path / "m.pt", device="cpu")
    assert again.schema_ == model.schema_
    expected = model.score(mols).score
    assert np.array_equal(again.score(mols).score, expected)
    report = read_report(screen(again, smiles_file, tmp_path / "r.csv", workers=1).report)
    assert np.allclose(np.sort(report.score), np.sort(expected), rtol=1e-4)
    with pytest.raises(DataError, match="atom features"):
        FeatureSchema.fit(load(tu_folder), "atom-rings")
