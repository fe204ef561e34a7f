"""A graph becomes one molecule, whoever asks: drawing, SD files, fingerprints and properties read
the same RDKit molecule, with the hydrogens a TU collection stripped put back as implicit ones."""
from __future__ import annotations

import numpy as np
import pytest

from core import Scores, load
from core.data.graph_molecules import graph_molecule, molecules


@pytest.fixture(scope="module")
def aids():
    from tests.conftest import DEMO_DATA

    return load(DEMO_DATA / "AIDS.zip").subset(range(120))


def test_drawing_and_detectors_read_the_same_molecule(aids):
    from rdkit import Chem

    strict = molecules(aids)
    assert [Chem.MolToSmiles(graph_molecule(aids, i)) for i in range(len(aids))] == \
        [Chem.MolToSmiles(m) for m in strict]
    assert all(m.GetNumAtoms() == int(g.num_nodes) for m, g in zip(strict, aids.graphs))  # node order is atom order


def test_a_tu_molecule_keeps_its_hydrogens_implicit(aids):
    """AIDS stores heavy atoms only: an oxygen with one single bond is a hydroxyl, not a radical."""
    from rdkit import Chem
    from rdkit.Chem import Descriptors

    hydroxyl = Chem.MolFromSmarts("[OX2H1]")
    mols = [graph_molecule(aids, i) for i in range(len(aids))]
    assert sum(len(m.GetSubstructMatches(hydroxyl)) for m in mols) > 20
    assert sum(Descriptors.NumRadicalElectrons(m) for m in mols) == 0


def test_an_sd_file_of_tu_molecules_reads_back_as_the_same_molecules(aids, tmp_path):
    """Through the export a user chooses: write_sdf, then RDKit's reader."""
    from rdkit import Chem
    from rdkit.Chem import Descriptors

    from core import write_sdf

    n = 30
    some = aids.subset(range(n))
    node_ptr = np.concatenate([[0], np.cumsum([int(g.num_nodes) for g in some.graphs])])
    write_sdf(tmp_path / "hits.sdf", some, Scores.graph_only(np.linspace(1, 0, n), node_ptr), alerts=False,
              properties=False)
    back = {m.GetProp("id"): m for m in Chem.SDMolSupplier(str(tmp_path / "hits.sdf"), sanitize=False)}
    assert len(back) == n
    compared = 0
    for meta, mol in zip(some.meta, molecules(some)):
        read = Chem.Mol(back[meta.id])
        mol = Chem.Mol(mol)  # in Kekule form, as the collection stores it; the reader perceives aromaticity
        if Chem.SanitizeMol(mol, catchErrors=True) != Chem.SanitizeFlags.SANITIZE_NONE:
            continue  # hypervalent as the collection stores it (a nitro group without charges): no reader can fix it
        Chem.SanitizeMol(read)
        assert Descriptors.NumRadicalElectrons(read) == 0, meta.id
        assert Chem.MolToSmiles(read) == Chem.MolToSmiles(mol), meta.id
        compared += 1
    assert compared >= 20
