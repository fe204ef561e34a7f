"""A chemist's properties beside the score (RDKit descriptors), NaN where a graph is no molecule."""
from __future__ import annotations

import numpy as np
import pytest

from core import PROPERTY_COLUMNS, load, molecular_properties, property_text

ASPIRIN = "CC(=O)Oc1ccccc1C(=O)O"


def test_aspirin_has_its_known_properties():
    values = {name: column[0] for name, column in molecular_properties([ASPIRIN]).items()}
    assert set(values) == set(PROPERTY_COLUMNS)
    assert values["mw"] == pytest.approx(180.16, abs=0.01)
    assert values["clogp"] == pytest.approx(1.31, abs=0.01)  # Crippen
    assert values["tpsa"] == pytest.approx(63.6, abs=0.05)
    # rdMolDescriptors.CalcNumHBD / CalcNumHBA (Lipinski-style counts: the ester's O and both carbonyl O)
    assert (values["hbd"], values["hba"]) == (1, 3)
    assert values["rotatable_bonds"] in (2, 3)
    assert (values["heavy_atoms"], values["rings"], values["formal_charge"]) == (13, 1, 0)


def test_charges_rings_and_size_tell_molecules_apart():
    values = molecular_properties(["C[N+](C)(C)C", "CC(=O)[O-]", "c1ccc2ccccc2c1", "CCO"])
    assert list(values["formal_charge"]) == [1, -1, 0, 0]
    assert list(values["rings"]) == [0, 0, 2, 0]
    assert list(values["heavy_atoms"]) == [5, 4, 10, 3]
    assert values["mw"][2] == pytest.approx(128.17, abs=0.01)  # naphthalene


def test_no_molecule_gives_nan_not_an_error():
    values = molecular_properties([None, "", "not_a_smiles", "CCO"])
    for name in PROPERTY_COLUMNS:
        assert np.isnan(values[name][:3]).all() and np.isfinite(values[name][3])


def test_a_graphset_of_molecules_and_a_tu_set(smiles_file, tu_folder):
    graphs = load(smiles_file)
    values = molecular_properties(graphs)
    assert len(values["mw"]) == len(graphs)
    assert list(values["heavy_atoms"]) == [int(g.num_nodes) for g in graphs.graphs]
    tu = load(tu_folder)
    assert np.isnan(molecular_properties(tu)["mw"]).all()  # a TU collection has no SMILES


def test_property_text_writes_counts_as_integers():
    assert property_text("mw", 180.159) == "180.16"
    assert property_text("formal_charge", -1.0) == "-1"
    assert property_text("hbd", float("nan")) == ""
