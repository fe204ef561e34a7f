"""Structural alerts from RDKit's FilterCatalog, named in the report's atom vocabulary."""
import pytest

from core import ALERT_FAMILIES, Alert, alerts_at_atoms, node_names, structural_alerts
from core.data import alerts as alerts_module
from core.data.chem import atom_symbols, mol_to_graph, parse_smiles
from core.data.graphset import GraphMeta, GraphSet

ACRYLAMIDE = "C=CC(=O)NCc1ccccc1"  # a Michael acceptor on atoms 0-3
RHODANINE = "O=C1NC(=S)SC1=Cc1ccccc1"  # an ene-rhodanine, PAINS family A


def test_michael_acceptor_is_a_brenk_alert_with_its_atoms():
    found = structural_alerts(ACRYLAMIDE)
    assert Alert("Brenk", "Michael_acceptor_1", (0, 1, 2, 3)) in found
    assert all(a.family in ALERT_FAMILIES and a.atoms for a in found)


def test_ene_rhodanine_is_a_pains_alert():
    found = structural_alerts(RHODANINE)
    pains = [a for a in found if a.family == "PAINS_A"]
    assert [a.name for a in pains] == ["ene_rhod_A(235)"]
    assert pains[0].atoms == (0, 1, 2, 3, 4, 5, 6, 7)  # the ring, its exocyclic C=C and the carbonyl O
    assert any(a.family == "Brenk" and a.name == "Thiocarbonyl_group" and a.atoms == (3, 4) for a in found)


def test_families_can_be_chosen_and_a_clean_or_broken_molecule_has_none():
    assert {a.family for a in structural_alerts(RHODANINE, families=("PAINS_A",))} == {"PAINS_A"}
    assert structural_alerts("CCO") == []
    assert structural_alerts("C1CC") == []  # does not parse
    with pytest.raises(ValueError, match="unknown alert family 'PAINS_D'"):
        structural_alerts(ACRYLAMIDE, families=("PAINS_D",))


def test_a_molecule_object_gives_the_same_alerts_as_its_smiles():
    assert structural_alerts(parse_smiles(RHODANINE)[0]) == structural_alerts(RHODANINE)


def test_top_atoms_are_named_in_their_alerts_as_the_report_names_them():
    found = structural_alerts(ACRYLAMIDE, families=("Brenk",))
    lines = alerts_at_atoms(found, [4, 1, 0], atom_symbols(ACRYLAMIDE))
    assert lines == ["C1 and C0: Brenk Michael acceptor 1"]  # N4 is in no alert; error order kept
    graphs = GraphSet([mol_to_graph(parse_smiles(ACRYLAMIDE)[0])], [GraphMeta(id="a", name="", smiles=ACRYLAMIDE)],
                      source="t", format="smiles", kind="molecule")
    names = node_names(graphs, 0)  # the report's top_nodes names: element and 0-based index
    assert names[1] == "C1" and names[0] == "C0" and names[4] == "N4"
    assert alerts_at_atoms(found, [4, 6], atom_symbols(ACRYLAMIDE)) == []


def test_each_catalog_is_built_once_per_process(monkeypatch):
    from rdkit.Chem import FilterCatalog

    built = []
    original = FilterCatalog.FilterCatalog
    monkeypatch.setattr(FilterCatalog, "FilterCatalog", lambda *a: built.append(a) or original(*a))
    alerts_module._catalog.cache_clear()
    try:
        for _ in range(3):
            structural_alerts(RHODANINE)
            structural_alerts(ACRYLAMIDE)
        assert len(built) == len(ALERT_FAMILIES)
    finally:
        alerts_module._catalog.cache_clear()
