"""Do the largest node errors lie in structural alerts, beside chance and an atom-rarity baseline?"""
import json

import numpy as np
import pytest

from core.cli.main import main
from core.data.chem import mol_to_graph, parse_smiles
from core.data.graphset import GraphMeta, GraphSet
from core.data.scores import Scores
from core.evaluation.alert_agreement import alert_agreement, top_share
from tests.conftest import RESOURCES


def graphset(smiles):
    return GraphSet([mol_to_graph(parse_smiles(s)[0]) for s in smiles],
                    [GraphMeta(id=str(k), name="", smiles=s) for k, s in enumerate(smiles)],
                    source="t", format="smiles", kind="molecule")


def scores_with(errors):
    ptr = np.cumsum([0] + [len(e) for e in errors])
    n = len(errors)
    return Scores(np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32),
                  np.concatenate(errors).astype(np.float32), ptr)


def test_ties_count_as_the_expected_hit_of_a_random_order():
    inside = np.array([True, False, False, True])
    assert top_share(np.array([1.0, 1.0, 0.0, 0.0]), inside, 1) == 0.5
    assert top_share(np.array([1.0, 1.0, 0.0, 0.0]), inside, 3) == pytest.approx((1 + 0.5) / 3)
    assert top_share(np.array([0.0, 0.0, 0.0, 0.0]), inside, 1) == 0.5
    assert top_share(np.array([3.0, 2.0, 1.0, 4.0]), inside, 1) == 1.0


def test_agreement_beside_chance_and_rarity_and_without_rare_element_alerts():
    train = graphset(["CCO", "CCN", "CC(=O)N", "c1ccccc1", "CCCC"] * 20)
    acrylamide = "C=CC(=O)NCc1ccccc1"  # Brenk Michael acceptor on atoms 0-3 of 12
    iodo = "Ic1ccccc1CCO"  # Brenk iodine on atom 0 alone (of 10), iodine absent from training
    library = graphset([acrylamide, iodo, "CCO"])
    errors = [np.r_[0.1, 0.9, 0.2, 0.1, np.full(8, 0.05)], np.r_[0.8, np.full(9, 0.1)], np.full(3, 0.1)]
    result = alert_agreement(train, library, scores_with(errors))
    assert result.scored == 3 and result.with_alerts == 2 and result.rare_elements == ["I"]
    every = {r.group: r for r in result.all_molecules}
    both = every["all alerts"]
    assert both.molecules == 2 and both.top1 == 1.0
    assert both.chance == pytest.approx((4 / 12 + 1 / 10) / 2)
    assert both.top3 == pytest.approx((1 + 1 / 3) / 2)  # the iodo molecule's next two are ties outside the alert
    # the rarest (element, degree): N with two neighbours in the acrylamide (no hit), iodine in the other
    assert both.rarity_top1 == pytest.approx((0 + 1) / 2)
    assert both.claim
    without = {r.group: r for r in result.without_rare}
    assert without["all alerts"].molecules == 1 and without["alert Brenk: iodine"].molecules == 0
    assert not without["alert Brenk: iodine"].claim
    assert every["alert Brenk: Michael_acceptor_1"].top1 == 1.0


def test_scores_without_node_errors_are_refused():
    library = graphset(["C=CC(=O)NCc1ccccc1"])
    with pytest.raises(ValueError, match="no node errors"):
        alert_agreement(library, library, Scores.graph_only(np.zeros(1), np.array([0, 10])))


@pytest.fixture
def library(tmp_path):
    path = tmp_path / "library.smi"
    path.write_text("C=CC(=O)NCc1ccccc1 a\nO=C1NC(=S)SC1=Cc1ccccc1 b\nIc1ccccc1CCO c\nCCO d\n")
    return path


def test_cli_alerts_writes_json_through_the_atomic_writer_into_a_new_folder(tmp_path, library, capsys):
    out = tmp_path / "new" / "alerts.json"
    assert main(["evaluate-explanations", str(RESOURCES / "moses_sample.csv.gz"), "--alerts", str(library),
                 "--train", "60", "--epochs", "1", "--detector", "glocalkd", "--device", "cpu",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "without molecules whose alert is a rare element alone" in printed and "family PAINS_A" in printed
    # the iodine alert has no molecule left without its rare element: a row of "-", never of "nan"
    assert "nan" not in printed
    assert any(line.startswith("alert Brenk: iodine") and line.split()[3:9] == ["0", "-", "-", "-", "-", "-"]
               for line in printed.splitlines())
    saved = json.loads(out.read_text())
    assert saved["train"] == 60 and saved["scored"] == 4 and saved["with_alerts"] == 3
    assert saved["all_molecules"][0]["group"] == "all alerts" and "rarity_top1" in saved["without_rare"][0]


def test_cli_alerts_refuses_to_write_over_its_library(library, capsys):
    before = library.read_text()
    assert main(["evaluate-explanations", str(RESOURCES / "moses_sample.csv.gz"), "--alerts", str(library),
                 "--train", "60", "--epochs", "1", "--json", str(library)]) == 2
    assert "is an input of this command" in capsys.readouterr().err and library.read_text() == before


def test_first_molecules_skips_rows_that_do_not_parse(tmp_path):
    from core.evaluation.alert_agreement import first_molecules

    path = tmp_path / "train.smi"
    path.write_text("CCO a\nC1CC broken\nCCN b\nc1ccccc1 c\n")
    train = first_molecules(str(path), 2)
    assert [m.smiles for m in train.meta] == ["CCO", "CCN"] and len(train.graphs) == 2
    assert [(r.line, r.id) for r in train.rejects] == [(2, "broken")]  # listed, not lost


def test_evaluate_explanations_lists_rejected_rows_and_refuses_too_few_molecules_in_one_line(tmp_path, capsys):
    """A file too short for the counts asked ended in a traceback; negative counts ran and printed
    NaN; rows that did not parse vanished without a word."""
    import json

    from core.cli.main import main

    data = tmp_path / "few.smi"
    data.write_text("CCO a\nnot_a_smiles b\nCCN c\nc1ccccc1 d\n")
    assert main(["evaluate-explanations", str(data), "--train", "100", "--normal", "20", "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{data}: 3 molecules read" in err and "line 2:" in err
    with pytest.raises(SystemExit) as refused:  # argparse's refusal, as for --epochs
        main(["evaluate-explanations", str(data), "--train", "-5"])
    assert refused.value.code == 2 and "must be 1 or more, not -5" in capsys.readouterr().err
    library = tmp_path / "lib.smi"
    library.write_text("CCO a\nC1CC broken\nc1ccccc1N b\n")
    out = tmp_path / "alerts.json"
    assert main(["evaluate-explanations", str(RESOURCES / "moses_sample.csv.gz"), "--alerts", str(library),
                 "--train", "60", "--epochs", "1", "--detector", "glocalkd", "--json", str(out)]) == 0
    assert "line 2: " in capsys.readouterr().err
    rejected = json.loads(out.read_text())["rejected"]
    assert [(r["file"], r["line"], r["id"]) for r in rejected] == [(str(library), 2, "broken")]
