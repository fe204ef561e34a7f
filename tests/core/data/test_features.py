import pytest
import torch
from torch_geometric.data import Data

from core import FeatureSchema, SchemaMismatchError, load
from core.data.graphset import GraphMeta, GraphSet


def _set(graphs):
    return GraphSet(graphs, [GraphMeta(id=str(i)) for i in range(len(graphs))])


def test_auto_picks_what_the_data_has(tu_folder, smiles_file):
    assert FeatureSchema.fit(load(tu_folder)).mode == "both"
    assert FeatureSchema.fit(load(smiles_file)).mode == "atom"
    plain = _set([Data(edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=3)])
    assert FeatureSchema.fit(plain).mode == "degree"


def test_both_is_attributes_then_one_hot_labels(tu_folder):
    graphs = load(tu_folder)
    schema = FeatureSchema.fit(graphs, "both")
    x = schema.transform(graphs.graphs[0])
    assert schema.dim == 2 + 3 + 1 and x.shape == (5, 6)
    assert torch.equal(x[:, :2], graphs.graphs[0].node_attr)
    assert x[:, 2:].sum(dim=1).tolist() == [1.0] * 5
    assert x[1, 2 + 1] == 1.0  # node label 1 -> second label slot


def test_unseen_label_goes_to_its_own_slot():
    train = _set([Data(edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=2,
                       node_label=torch.tensor([3, 7]))])
    schema = FeatureSchema.fit(train, "labels")
    held_out = Data(edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=3, node_label=torch.tensor([7, 5, 99]))
    x = schema.transform(held_out)
    assert x.tolist() == [[0, 1, 0], [0, 0, 1], [0, 0, 1]]


def test_degree_one_hot_caps_at_training_maximum():
    star = Data(edge_index=torch.tensor([[0, 0, 0, 1, 2, 3], [1, 2, 3, 0, 0, 0]]), num_nodes=5)
    schema = FeatureSchema.fit(_set([star]), "degree")
    assert schema.max_degree == 3 and schema.dim == 4
    bigger = Data(edge_index=torch.tensor([[0] * 5 + [1, 2, 3, 4, 5], [1, 2, 3, 4, 5] + [0] * 5]), num_nodes=6)
    assert schema.transform(bigger)[0].tolist() == [0, 0, 0, 1]  # degree 5 -> "3 or more"
    assert schema.transform(star)[4].tolist() == [1, 0, 0, 0]  # the isolated node


def test_round_trip_and_mismatch(tu_folder, smiles_file):
    schema = FeatureSchema.fit(load(tu_folder))
    assert FeatureSchema.from_dict(schema.to_dict()) == schema
    with pytest.raises(SchemaMismatchError, match="labelled by molecules' elements"):  # the labels' record, first
        schema.apply(load(smiles_file))
    with pytest.raises(SchemaMismatchError, match="node attributes"):  # each graph's own features
        schema.transform(load(smiles_file).graphs[0])
    with pytest.raises(SchemaMismatchError, match="molecules"):
        FeatureSchema.fit(load(smiles_file)).apply(load(tu_folder))


def test_non_finite_attributes_are_refused(tu_folder):
    graphs = load(tu_folder)
    graphs.graphs[2].node_attr[0, 0] = float("nan")
    with pytest.raises(Exception, match="NaN or infinite"):
        FeatureSchema.fit(graphs).apply(graphs)
