"""glocalkd train: any savable detector, calibrated on a held-out share unless told otherwise."""
from __future__ import annotations

import numpy as np
import pytest

from core.cli.main import main
from core.detectors.model_file import load_detector

TINY = ["--epochs", "2", "--hidden", "16", "--out-dim", "8", "--device", "cpu"]


@pytest.mark.parametrize("detector", ["glocalkd", "consensus", "wl-lesinn", "size", "ecfp-nn"])
def test_train_writes_a_calibrated_model_of_the_chosen_detector(herg_path, tmp_path, capsys, detector):
    out = tmp_path / "m.pt"
    assert main(["train", str(herg_path), "-o", str(out), "--detector", detector, *TINY]) == 0
    model = load_detector(out, device="cpu")
    assert model.name == detector and model.is_calibrated
    assert len(model.calibration_scores_) == 131  # a fifth of hERG's 655 molecules
    assert "calibrated on 131 held out (whole scaffolds)" in capsys.readouterr().err


def test_train_and_evaluate_say_the_settings_the_detector_does_not_use(tu_folder, tmp_path, capsys):
    """The GCN options given to a detector without them were dropped without a word; those not
    given are not named."""
    assert main(["train", str(tu_folder), "-o", str(tmp_path / "m.pt"), "--detector", "wl-lesinn", "--epochs", "5",
                 "--lr", "0.5", "--node-max", "--hidden", "8"]) == 0
    assert "WL-LESINN does not use --epochs, --lr, --hidden, --node-max: ignored" in capsys.readouterr().err
    assert main(["evaluate", str(tu_folder), "--method", "size", "--features", "attributes", "--folds", "2"]) == 0
    err = capsys.readouterr().err
    assert "does not use features: ignored" in err and "epochs" not in err and "device" not in err


def test_train_says_how_its_calibration_share_was_drawn(tu_folder, tmp_path, capsys):
    """Molecules are held out whole scaffolds at a time and the message says so (above); a TU
    collection's graphs one by one, and a set too small to hold a share out says it has no p-values."""
    from tests.conftest import write_tu

    rings = write_tu(tmp_path / "rings", "RINGS", [(n, [(i, (i + 1) % n) for i in range(n)], 0)
                                                   for n in range(3, 103)])
    assert main(["train", str(rings), "-o", str(tmp_path / "r.pt"), "--detector", "size"]) == 0
    err = capsys.readouterr().err
    assert "calibrated on 20 held out," in err and "scaffold" not in err
    assert main(["train", str(tu_folder), "-o", str(tmp_path / "m.pt"), "--detector", "size"]) == 0
    err = capsys.readouterr().err
    assert "not calibrated (no p-values)" in err and "scaffold" not in err


def test_the_default_is_a_consensus_whose_glocalkd_gets_the_gcn_options_and_score_reads_it(herg_path, tmp_path,
                                                                                             capsys):
    import csv

    out, report = tmp_path / "m.pt", tmp_path / "r.csv"
    assert main(["train", str(herg_path), "-o", str(out), "--lr", "0.001", "--layers", "2", *TINY]) == 0
    model = load_detector(out, device="cpu")
    assert model.name == "consensus" and model.is_calibrated
    gcn = model.components_["glocalkd"]
    assert (gcn.epochs, gcn.hidden_dim, gcn.out_dim, gcn.lr, gcn.num_layers) == (2, 16, 8, 0.001, 2)
    assert len(gcn.loss_history_) == 2
    assert main(["score", str(out), str(herg_path), "-o", str(report)]) == 0
    rows = [r for r in csv.DictReader(report.open()) if r["rank"]]
    assert len(rows) == 655 and all(r["status"] == "ok" and r["p_value"] for r in rows)
    assert rows[0]["top_nodes"]  # GLocalKD's node errors, through the consensus


def test_glocalkd_keeps_the_papers_model_and_score(herg_path, tmp_path):
    out = tmp_path / "m.pt"
    assert main(["train", str(herg_path), "-o", str(out), "--detector", "glocalkd", "--lam", "0.5", *TINY]) == 0
    model = load_detector(out, device="cpu")
    assert type(model).__name__ == "GLocalKD" and (model.epochs, model.hidden_dim, model.lam) == (2, 16, 0.5)
    assert not model.node_max and not model.size_term


def test_calibration_zero_trains_on_every_graph_as_the_paper(herg_path, tmp_path, capsys):
    out = tmp_path / "m.pt"
    assert main(["train", str(herg_path), "-o", str(out), "--calibration", "0", *TINY]) == 0
    model = load_detector(out)
    assert model.name == "glocalkd" and not model.is_calibrated and len(model.train_scores_) == 655
    assert "training GLocalKD: the default consensus needs a calibration share (--calibration 0)" in \
        capsys.readouterr().err
    assert main(["train", str(herg_path), "-o", str(out), "--detector", "consensus", "--calibration", "0",
                 *TINY]) == 2
    assert "--calibration must be above 0" in capsys.readouterr().err


def test_too_few_graphs_train_on_all_and_say_there_are_no_p_values(tu_folder, tmp_path, capsys):
    out = tmp_path / "m.pt"
    assert main(["train", str(tu_folder), "-o", str(out), *TINY]) == 0
    err = capsys.readouterr().err
    assert "too few to calibrate" in err and "too few to hold out a calibration share" in err
    assert load_detector(out).name == "glocalkd" and not load_detector(out).is_calibrated


def test_known_anomalies_weigh_the_consensus_and_are_never_trained_on(herg_path, tmp_path, capsys):
    """hERG's 0-labelled molecules as known anomalies: the model trains on the others only, and
    its file keeps each view's weight; a file of known anomalies works the same way."""
    from core import load

    out = tmp_path / "m.pt"
    assert main(["train", str(herg_path), "-o", str(out), "--known-label", "0", *TINY]) == 0
    err = capsys.readouterr().err
    model = load_detector(out, device="cpu")
    herg = load(herg_path)
    n_known = sum(label == "0" for label in herg.labels)
    assert f"views weighed by {n_known} known anomalies" in err
    assert "a classifier of their WL substructures joins the weighed views" in err
    # 7 label-1 molecules are label-0 ones to the model (listed twice): a label's known anomalies are
    # never trained on either (they were, and weighed the views by in-sample scores)
    assert "7 graphs of the data are known anomalies too" in err
    assert len(model.calibration_scores_) + len(model.train_scores_) == len(herg) - n_known - 7
    assert set(model.known_anomaly_auc_) == {"glocalkd", "wl-lesinn", "size", "wl-count-lesinn"}
    assert model.view_weights_ is None or sum(model.view_weights_.values()) == pytest.approx(4.0)

    known = tmp_path / "known.smi"
    known.write_text("".join(f"{m.smiles} {m.id}\n" for m, label in zip(herg.meta, herg.labels) if label == "0"))
    assert main(["train", str(herg_path), "-o", str(out), "--normal-label", "1", "--known-anomalies", str(known),
                 *TINY]) == 0
    # hERG holds label-1 molecules that are label-0 ones to the model (stereoisomers): never trained on
    from core import TrainSpec
    from core.training import plan_training

    shared = plan_training(herg, TrainSpec(normal_label="1", known_anomalies=load(known))).known_in_data
    assert shared > 0 and f"{shared} graphs of the data are known anomalies too" in capsys.readouterr().err
    from_file = load_detector(out, device="cpu")
    assert len(from_file.calibration_scores_) + len(from_file.train_scores_) == len(herg) - n_known - shared
    assert set(from_file.known_anomaly_auc_) == set(model.known_anomaly_auc_)


def test_known_anomalies_need_the_consensus_and_one_source(herg_path, tmp_path, capsys):
    out = tmp_path / "m.pt"
    assert main(["train", str(herg_path), "-o", str(out), "--known-label", "0", "--detector", "glocalkd", *TINY]) == 2
    assert "known anomalies weigh the consensus's views" in capsys.readouterr().err
    assert main(["train", str(herg_path), "-o", str(out), "--known-label", "nope", *TINY]) == 2
    assert "no graphs of" in capsys.readouterr().err
    assert main(["train", str(herg_path), "-o", str(out), "--known-label", "0", "--known-anomalies",
                 str(herg_path), *TINY]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["train", str(herg_path), "-o", str(out), "--known-label", "1", "--normal-label", "1", *TINY]) == 2
    assert "cannot be both" in capsys.readouterr().err
    assert not out.exists()


def test_weigh_gives_a_trained_consensus_the_weights_training_with_known_anomalies_gives(herg_path, tmp_path, capsys):
    from core import load
    from core.data.graph_identity import shared_graphs

    plain, weighed, direct = tmp_path / "plain.pt", tmp_path / "weighed.pt", tmp_path / "direct.pt"
    assert main(["train", str(herg_path), "-o", str(plain), "--normal-label", "1", *TINY]) == 0
    # 7 molecules are listed with both labels: trained on as normal, they are left out, as training
    # leaves them out of the normal graphs (their in-sample scores would weigh the views)
    assert main(["weigh", str(plain), str(herg_path), "--label", "0", "-o", str(weighed)]) == 0
    err = capsys.readouterr().err
    assert "views weighed by 197 known anomalies" in err
    assert "7 known anomalies left out: the model was trained or calibrated on them as normal" in err
    by_label = load_detector(weighed, device="cpu").known_anomaly_auc_
    herg = load(herg_path)
    zero = herg.with_label("0")
    twice = set(shared_graphs(zero, herg.with_label("1")))
    known = tmp_path / "known.smi"
    known.write_text("".join(f"{m.smiles} k{i}\n" for i, m in enumerate(zero.meta) if i not in twice))
    assert main(["weigh", str(plain), str(known), "-o", str(weighed)]) == 0
    err = capsys.readouterr().err
    assert "views weighed by 197 known anomalies" in err and "left out" not in err
    assert load_detector(weighed, device="cpu").known_anomaly_auc_ == by_label  # the same 197
    assert main(["train", str(herg_path), "-o", str(direct), "--normal-label", "1", "--known-anomalies", str(known),
                 *TINY]) == 0
    a, b = load_detector(weighed, device="cpu"), load_detector(direct, device="cpu")
    assert a.view_weights_ == b.view_weights_ and a.known_anomaly_auc_ == b.known_anomaly_auc_
    # the reserve view is weighed too, and the known anomalies' classifier view joins, the same both ways
    assert a.view_weights_ is not None and a.scored_views() == [*a.views, "known-classifier"]
    np.testing.assert_array_equal(a.known_classifier_.coef_, b.known_classifier_.coef_)
    # screening a weighed consensus (each view on its array path) gives score's report
    reports = tmp_path / "score.csv", tmp_path / "screen.csv"
    assert main(["score", str(weighed), str(herg_path), "-o", str(reports[0]), "--device", "cpu"]) == 0
    assert main(["screen", str(weighed), str(herg_path), "-o", str(reports[1]), "--workers", "1",
                 "--device", "cpu"]) == 0
    assert reports[0].read_text() == reports[1].read_text()
    assert load_detector(plain, device="cpu").view_weights_ is None  # the input model is left as it was
    capsys.readouterr()
    assert main(["weigh", str(plain), str(herg_path), "-o", str(plain)]) == 2  # would overwrite its input
    assert "is an input of this command" in capsys.readouterr().err
    # known anomalies are one kind of graph, from a file of their own: the rule the app keeps too
    # (core.training.plan.check_known_anomalies), here for weigh and for train --known-anomalies
    assert main(["weigh", str(plain), str(herg_path), "-o", str(tmp_path / "both.pt")]) == 2
    assert "holds graphs of 2 labels (0: 204, 1: 451): name the anomalous one with --label LABEL" \
        in capsys.readouterr().err  # this command can choose them: it says how, not to edit the file
    assert main(["train", str(herg_path), "-o", str(tmp_path / "own.pt"), "--known-anomalies", str(herg_path),
                 *TINY]) == 2
    assert "is the data file itself" in capsys.readouterr().err
    assert not (tmp_path / "both.pt").exists() and not (tmp_path / "own.pt").exists()
    gcn = tmp_path / "gcn.pt"
    assert main(["train", str(herg_path), "-o", str(gcn), "--detector", "glocalkd", *TINY]) == 0
    assert main(["weigh", str(gcn), str(herg_path), "-o", str(tmp_path / "x.pt")]) == 2
    assert "known anomalies weigh a consensus's views" in capsys.readouterr().err
