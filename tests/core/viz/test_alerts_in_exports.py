"""The SDF export and the HTML report name each molecule's structural alerts."""
import numpy as np
from rdkit import Chem

from core import alerts_text, html_report, structural_alerts, write_sdf
from core.data.chem import mol_to_graph, parse_smiles
from core.data.graphset import GraphMeta, GraphSet
from core.data.scores import Scores

SMILES = ["C=CC(=O)NCc1ccccc1", "CCO"]  # a Michael acceptor, and a molecule with no alert


def scored():
    graphs = GraphSet([mol_to_graph(parse_smiles(s)[0]) for s in SMILES],
                      [GraphMeta(id=f"m{k}", name="", smiles=s) for k, s in enumerate(SMILES)],
                      source="t.smi", format="smiles", kind="molecule")
    errors = [np.r_[0.1, 0.9, 0.2, 0.1, np.full(8, 0.05)], np.full(3, 0.1)]
    ptr = np.cumsum([0] + [len(e) for e in errors])
    scores = Scores(np.array([2.0, 1.0], np.float32), np.ones(2, np.float32), np.ones(2, np.float32),
                    np.concatenate(errors).astype(np.float32), ptr)
    return graphs, scores


def test_alerts_text_lists_family_name_and_atoms():
    text = alerts_text(structural_alerts(SMILES[0], families=("Brenk",)))
    assert text == "Brenk Michael_acceptor_1 [0 1 2 3]"
    assert alerts_text([]) == ""


def test_sdf_has_an_alerts_property_where_a_molecule_has_alerts(tmp_path):
    graphs, scores = scored()
    assert write_sdf(tmp_path / "out.sdf", graphs, scores) == 2
    first, second = Chem.SDMolSupplier(str(tmp_path / "out.sdf"))
    assert first.GetProp("alerts") == alerts_text(structural_alerts(SMILES[0]))
    assert "Brenk Michael_acceptor_1 [0 1 2 3]" in first.GetProp("alerts")
    assert not second.HasProp("alerts")
    write_sdf(tmp_path / "plain.sdf", graphs, scores, alerts=False)
    assert not any(m.HasProp("alerts") for m in Chem.SDMolSupplier(str(tmp_path / "plain.sdf")))


def test_html_report_names_the_alerts_and_the_top_atoms_in_them(tmp_path):
    graphs, scores = scored()
    html_report(tmp_path / "r.html", graphs, scores, settings={})
    text = (tmp_path / "r.html").read_text()
    assert "alerts: Brenk Michael acceptor 1" in text
    assert "C1, C2 and C0: Brenk Michael acceptor 1" in text  # the three top-error atoms, largest first
