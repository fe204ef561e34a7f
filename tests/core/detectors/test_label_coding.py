"""Detectors that read discrete node labels (WL, PK, rare substructures, the classifier view)
refuse graphs whose labels mean something else than their training graphs' did: a molecule's
element and a TU collection's label number are both small integers, and were compared silently."""
from __future__ import annotations

import numpy as np
import pytest

from core import NotApplicableError, SchemaMismatchError, load, load_detector, make_detector
from core.detectors.registry import DETECTORS
from core.cli.main import main

LABELLED = ["wl-lesinn", "wl-count-lesinn", "pk-lesinn", "rare-substructure"]


@pytest.mark.parametrize("name", LABELLED)
def test_a_model_of_molecules_refuses_a_tu_collection_and_the_other_way_round(name, herg_path, aids_zip, tmp_path):
    herg, aids = load(herg_path).subset(range(60)), load(aids_zip).subset(range(100))
    with pytest.raises(SchemaMismatchError, match="fitted on graphs labelled by molecules' elements"):
        make_detector(name).fit(herg).score(aids.subset(range(5)))
    model = make_detector(name).fit(aids)
    model.save(tmp_path / "m.pt")  # the record travels with the model file
    back = load_detector(tmp_path / "m.pt")
    assert np.array_equal(back.score(aids.subset(range(5))).score, model.score(aids.subset(range(5))).score)
    with pytest.raises(SchemaMismatchError, match=r"TU node labels \(C, O, N"):
        back.score(herg.subset(range(5)))


def test_screening_a_molecule_library_with_a_model_of_a_tu_collection_is_refused(aids_zip, herg_path, tmp_path, capsys):
    model = tmp_path / "tu.pt"
    assert main(["train", str(aids_zip), "-o", str(model), "--detector", "wl-lesinn"]) == 0
    capsys.readouterr()
    assert main(["screen", str(model), str(herg_path), "-o", str(tmp_path / "r.csv")]) == 2
    assert "labelled by TU node labels" in capsys.readouterr().err
    assert not (tmp_path / "r.csv").exists()


def test_the_consensus_classifier_view_and_review_read_the_same_check(herg_path, aids_zip):
    """Known anomalies of another kind are refused before they train the classifier view."""
    from core import weigh_known_anomalies

    herg = load(herg_path)
    model = make_detector("consensus", components=["wl-lesinn", "size"], reserve_views=[]).fit(herg.subset(range(80)))
    with pytest.raises(SchemaMismatchError):
        weigh_known_anomalies(model, load(aids_zip).with_label("0").subset(range(10)))


@pytest.mark.parametrize("name", ["glocalkd", "ocgcn"])
def test_a_gcn_refuses_graphs_whose_node_labels_mean_other_elements(name, aids_zip, herg_path, tu_folder, tmp_path):
    """A GLocalKD model of Tox21 (label 0 oxygen, 1 carbon) scored AIDS (0 carbon, 1 oxygen) and
    wrote a report of swapped elements, while the consensus refused the same data: the GCN's node
    features read the labels without the record the WL views keep. Its feature schema keeps it now,
    in the model file too, and a model of unlabelled graphs (node degrees) refuses labelled ones."""
    import dataclasses

    aids = load(aids_zip).subset(range(60))
    names = dict(aids.node_label_names)
    swapped = dataclasses.replace(aids, node_label_names={**names, 0: names[1], 1: names[0]})
    model = make_detector(name, epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(swapped)
    saved = []
    if model.can_save:  # (OCGCN has no model file)
        model.save(tmp_path / "m.pt")
        saved = [load_detector(tmp_path / "m.pt")]
    for m in [model, *saved]:
        with pytest.raises(SchemaMismatchError, match=r"labelled by TU node labels \(O, C"):
            m.score(aids.subset(range(5)))
        assert np.isfinite(m.score(swapped.subset(range(5))).score).all()
    unlabelled = load(tu_folder)
    unlabelled = dataclasses.replace(unlabelled, graphs=[g.clone() for g in unlabelled.graphs])
    for g in unlabelled.graphs:
        del g.node_label
        if "node_attr" in g:
            del g.node_attr
    degrees = make_detector(name, epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(unlabelled)
    assert degrees.schema_.mode == "degree"
    with pytest.raises(SchemaMismatchError, match="node degrees"):
        degrees.score(aids.subset(range(5)))


@pytest.mark.parametrize("name", ["wl-lesinn", "glocalkd"])
def test_unnamed_labels_of_another_collection_are_refused_but_a_splits_files_are_one(name, tmp_path):
    """An NCI1 model scored ENZYMES without a word: neither readme names its label numbers, so the
    check of names passed two numberings of different things. Unnamed labels are the collection's
    own: another collection's are refused, while TU's split files of one collection (Tox21_HSE_training
    and _testing) and a subset of the training collection are scored."""
    from tests.conftest import write_tu

    rings = [(5, [(j, (j + 1) % 5) for j in range(5)], 0) for _ in range(12)]
    train = load(write_tu(tmp_path / "a", "ALPHA_training", rings))
    model = make_detector(name, **({"epochs": 1, "hidden_dim": 8, "out_dim": 4, "device": "cpu"}
                                   if name == "glocalkd" else {})).fit(train)
    model.save(tmp_path / "m.pt")
    for m in (model, load_detector(tmp_path / "m.pt")):
        with pytest.raises(SchemaMismatchError, match=r"ALPHA's TU node labels .* BETA's TU node labels"):
            m.score(load(write_tu(tmp_path / "b", "BETA", rings)))
        assert len(m.score(load(write_tu(tmp_path / "c", "ALPHA_testing", rings[:3])))) == 3
        assert len(m.score(train.subset(range(4)))) == 4


def _small(name: str) -> dict:
    """Settings that fit in a second, for the registry-wide tests below."""
    net = {"epochs": 1, "hidden_dim": 8, "out_dim": 4, "device": "cpu"}
    if name in ("glocalkd", "ocgcn"):
        return net
    return {"component_params": {"glocalkd": net}} if name == "consensus" else {}


@pytest.mark.parametrize("name", sorted(DETECTORS))
def test_every_detector_refuses_graphs_of_another_kind_than_it_was_trained_on(name, herg_path, tu_folder):
    """A graph-size model of molecules scored a TU collection and plain networks without a word,
    while every other view refused them: each view kept its own check, and the size view, which
    reads no labels, had none. Every detector of the registry, scored as the app and the CLI score
    (``score_graphs``), now refuses another kind of graph, so a new view without the check fails here."""
    from core.detectors.stoppable_scoring import score_graphs
    from tests.conftest import write_tu

    molecules = load(herg_path).subset(range(40))
    networks = load(write_tu(tu_folder.parent / "NET", "NET", [(6, [(j, (j + 1) % 6) for j in range(6)], 0)] * 4,
                             node_labels=False))
    model = make_detector(name, **_small(name)).fit(molecules)
    for other in (load(tu_folder), networks):
        with pytest.raises((SchemaMismatchError, NotApplicableError)):
            score_graphs(model, other)


def test_a_size_model_keeps_its_record_in_its_file_and_screening_refuses_another_kind(tu_folder, herg_path, tmp_path,
                                                                                      capsys):
    model = tmp_path / "size.pt"
    assert main(["train", str(tu_folder), "-o", str(model), "--detector", "size"]) == 0
    back = load_detector(model)
    assert back.coding_["kind"] == "labels"
    assert len(back.score(load(tu_folder).subset(range(3)))) == 3
    with pytest.raises(SchemaMismatchError, match="TOY's TU node labels"):
        back.score(load(herg_path).subset(range(3)))
    capsys.readouterr()
    assert main(["screen", str(model), str(herg_path), "-o", str(tmp_path / "r.csv")]) == 2
    assert "labelled by TOY's TU node labels" in capsys.readouterr().err
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.parametrize("name", ["wl-lesinn", "size"])
def test_unnamed_labels_and_another_collections_named_ones_are_refused_both_ways(name, aids_zip, tmp_path):
    """A model of BZR (labels its readme does not name) scored AIDS (labels named C, O, N, ...) and
    the other way round without a word, while BZR against DHFR was refused: names on one side
    said nothing about the unnamed side's numbers."""
    from tests.conftest import write_tu

    rings = [(5, [(j, (j + 1) % 5) for j in range(5)], 0) for _ in range(12)]
    unnamed, aids = load(write_tu(tmp_path / "a", "ALPHA", rings)), load(aids_zip).subset(range(60))
    with pytest.raises(SchemaMismatchError, match=r"ALPHA's TU node labels .* TU node labels \(C, O, N"):
        make_detector(name).fit(unnamed).score(aids.subset(range(3)))
    with pytest.raises(SchemaMismatchError, match=r"TU node labels \(C, O, N.* ALPHA's TU node labels"):
        make_detector(name).fit(aids).score(unnamed.subset(range(3)))
