"""Standardised input: the steps, the loaders, the model file's choice, scoring and screening that follow it."""
import csv

import pytest

import core.data.standardise as standardise_module
from core import GLocalKD, load, load_detector, prepare_molecules, read_report, row_graphs, standardise_smiles
from core.cli.main import main
from core.screening.merge import merge_reports
from core.screening.pipeline import screen

LIBRARY = "id,smiles\nsalt,CC(=O)[O-].[Na+]\ntaut,Oc1ccccn1\nbenz,c1ccccc1\nbad,C1=CC(\ncharged,C[NH3+]\n"


def test_the_three_steps():
    assert standardise_smiles("CC(=O)[O-].[Na+]") == ("CC(=O)O", "")  # salt gone, acid neutral
    assert standardise_smiles("C[NH3+].[Cl-]") == ("CN", "")
    assert standardise_smiles("Oc1ccccn1") == ("O=c1cccc[nH]1", "")  # the canonical tautomer
    assert standardise_smiles("C1=CC(")[0] is None


def test_standardising_keeps_stereochemistry():
    """RDKit's tautomer defaults erased the stereo next to a tautomeric site: L-alanine came out as
    ``CC(N)C(=O)O``, one molecule with D-alanine, and an E-enone lost its E, in the report, the SDF
    export and the drawing. Both are kept."""
    assert standardise_smiles("C[C@H](N)C(=O)O") == ("C[C@H](N)C(=O)O", "")
    assert standardise_smiles("C[C@@H](N)C(=O)O") == ("C[C@@H](N)C(=O)O", "")
    assert standardise_smiles("C/C=C/C(=O)C") == ("C/C=C/C(C)=O", "")
    assert standardise_smiles("C[C@H](N)C(=O)[O-].[Na+]") == ("C[C@H](N)C(=O)O", "")  # salt and charge still go


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("std")
    (folder / "lib.csv").write_text(LIBRARY)
    graphs = load(folder / "lib.csv", standardise=True)
    model = GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(graphs)
    model.save(folder / "std.pt")
    plain = GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(load(folder / "lib.csv"))
    plain.save(folder / "plain.pt")
    return folder


def test_load_keeps_the_input_and_scores_the_standard_form(files):
    graphs = load(files / "lib.csv", standardise=True)
    by_id = {m.id: m for m in graphs.meta}
    assert graphs.standardised and by_id["salt"].smiles == "CC(=O)O"
    assert by_id["salt"].input_smiles == "CC(=O)[O-].[Na+]"
    assert int(graphs.graphs[[m.id for m in graphs.meta].index("salt")].num_nodes) == 4  # no sodium
    assert [r.id for r in graphs.rejects] == ["bad"]
    plain = load(files / "lib.csv")
    assert not plain.standardised and plain.meta[0].smiles == "CC(=O)[O-].[Na+]" and plain.meta[0].input_smiles == ""


def test_a_molecule_standardisation_fails_on_is_rejected_with_its_reason(files, monkeypatch):
    real = standardise_module.standardise_mol

    def failing(mol):
        if mol.GetNumAtoms() == 2:  # C[NH3+]
            return None, "standardisation failed (test)"
        return real(mol)

    monkeypatch.setattr(standardise_module, "standardise_mol", failing)
    graphs = load(files / "lib.csv", standardise=True)
    reasons = {r.id: (r.line, r.reason, r.text) for r in graphs.rejects}
    assert reasons["charged"] == (6, "standardisation failed (test)", "C[NH3+]")
    assert len(graphs) + len(graphs.rejects) == 5  # every row scored or listed


def test_prepare_molecules_goes_both_ways(files):
    plain = load(files / "lib.csv")
    std = prepare_molecules(plain, True)
    assert std.standardised and [m.smiles for m in std.meta] == [m.smiles for m in load(files / "lib.csv",
                                                                                        standardise=True).meta]
    assert prepare_molecules(std, False) is plain and prepare_molecules(plain, False) is plain


def test_the_model_file_keeps_the_choice_and_older_files_read_as_off(files):
    import torch

    std, plain = load_detector(files / "std.pt"), load_detector(files / "plain.pt")
    assert std.standardises and not plain.standardises
    assert "standardise" not in torch.load(files / "plain.pt", weights_only=True)  # as files before it
    twin = load_detector(files / "std.pt")
    twin.standardises = False
    assert twin.fingerprint() != std.fingerprint()  # a report says which way its molecules were read


def test_screening_follows_the_model(files, tmp_path):
    model = load_detector(files / "std.pt")
    summary = screen(model, files / "lib.csv", tmp_path / "r.csv", workers=1)
    assert (summary.scored, summary.rejected) == (4, 1)
    with open(tmp_path / "r.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][-1] == "standardised_smiles" and all(len(r) == len(rows[0]) for r in rows)
    report = read_report(tmp_path / "r.csv")
    i = list(report.ids).index("salt")
    assert report.smiles[i] == "CC(=O)[O-].[Na+]" and report.standardised_smiles[i] == "CC(=O)O"
    assert row_graphs(report, i).meta[0].smiles == "CC(=O)O"  # redrawn and rescored as scored
    assert merge_reports([tmp_path / "r.csv"], tmp_path / "m.csv") == 5
    assert list(read_report(tmp_path / "m.csv").standardised_smiles) == list(report.standardised_smiles)
    plain = screen(load_detector(files / "plain.pt"), files / "lib.csv", tmp_path / "p.csv", workers=1)
    assert plain.scored == 4 and read_report(tmp_path / "p.csv").standardised_smiles is None
    with pytest.raises(Exception, match="optional columns .none. differ"):
        merge_reports([tmp_path / "r.csv", tmp_path / "p.csv"], tmp_path / "x.csv")


def test_score_refuses_standardising_with_a_model_trained_without(files, tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["score", str(files / "plain.pt"), str(files / "lib.csv"), "-o", str(out), "--standardise"]) != 0
    assert "--standardise" in capsys.readouterr().err and not out.exists()
    assert main(["score", str(files / "std.pt"), str(files / "lib.csv"), "-o", str(out)]) == 0  # the model decides
    assert read_report(out).standardised_smiles is not None


@pytest.mark.parametrize("scheduler", [[], ["--scheduler", "local:1"]], ids=["one machine", "cluster"])
def test_screen_refuses_standardising_with_a_model_trained_without_on_every_path(files, tmp_path, capsys, scheduler):
    out = tmp_path / "s.csv"
    rc = main(["screen", str(files / "plain.pt"), str(files / "lib.csv"), "-o", str(out), "--standardise", *scheduler])
    assert rc == 2 and "--standardise" in capsys.readouterr().err and not out.exists()


def test_train_standardise_writes_a_standardising_model(files, tmp_path):
    assert main(["train", str(files / "lib.csv"), "-o", str(tmp_path / "m.pt"), "--standardise", "--epochs", "1",
                 "--detector", "glocalkd", "--calibration", "0"]) in (0, None)
    assert load_detector(tmp_path / "m.pt").standardises


def test_the_library_scores_a_standardising_model_as_the_command_does(files, tmp_path):
    """``load_detector("std.pt").score(load("lib.csv"))`` scored the molecules as read (a salt got
    another score than ``glocalkd score`` gave it, with no warning): every scoring entry point reads
    the graphs as the model reads them, and refuses standardised molecules for a model trained on
    molecules as read."""
    from core import DataError, score_graphs

    model = load_detector(files / "std.pt", device="cpu")
    assert main(["score", str(files / "std.pt"), str(files / "lib.csv"), "-o", str(tmp_path / "s.csv")]) == 0
    report = read_report(tmp_path / "s.csv")
    by_cli = dict(zip(report.ids, report.score.tolist()))
    plain = load(files / "lib.csv")
    for scores in (model.score(plain).score, score_graphs(model, plain).score):
        assert dict(zip([m.id for m in plain.meta], scores.tolist())) == pytest.approx(by_cli, rel=1e-5)
    with pytest.raises(DataError, match="trained on molecules as read") as refused:
        load_detector(files / "plain.pt", device="cpu").score(load(files / "lib.csv", standardise=True))
    assert str(files / "lib.csv") in str(refused.value)


def test_a_standardising_consensus_read_back_from_its_file_scores_as_it_did(tmp_path):
    """The views of a consensus read from its model file read the graphs their consensus hands them."""
    from core import make_detector
    from tests.conftest import moses_library

    path = moses_library(tmp_path / "train.csv", 40, {0: "CC(=O)[O-].[Na+]"})
    model = make_detector("consensus", components=("size",), reserve_views=(), seed=0).fit(load(path, standardise=True))
    model.save(tmp_path / "c.pt")
    again = load_detector(tmp_path / "c.pt", device="cpu")
    assert again.standardises and again.components_["size"].standardises
    expected = model.score(load(path, standardise=True)).score
    assert again.score(load(path, standardise=True)).score.tolist() == expected.tolist()
    assert again.score(load(path)).score.tolist() == expected.tolist()


def test_a_standardising_models_fingerprint_names_its_rules(files, monkeypatch):
    """The rules changed (stereo kept, so another tautomer may be chosen): a report scored by the
    rules before must not pass for one of this model's, or a resume or a merge would mix them."""
    from core import make_detector

    models = [load_detector(files / "std.pt"), make_detector("size").fit(load(files / "lib.csv", standardise=True))]
    now = [m.fingerprint() for m in models]
    assert [m.fingerprints() for m in models] == [(f,) for f in now]  # no earlier name of the same scores
    monkeypatch.setattr(standardise_module, "RULES", 1)
    assert all(m.fingerprint() != f for m, f in zip(models, now))
