"""The one set of training rules (core.training.plan), checked without fitting a model, and
train_model on tiny models."""
from __future__ import annotations

import numpy as np
import pytest

from core import ParameterError, TrainSpec, detector_defaults, load, train_model
from core.detectors.conformal import calibration_groups, calibration_split
from core.training import plan_training

SMALL = {"epochs": 2, "hidden_dim": 16, "out_dim": 8}


@pytest.fixture(scope="module")
def herg():
    from tests.conftest import DEMO_DATA

    return load(str(DEMO_DATA / "herg.tab"))  # 655 molecules: 451 of label 1, 204 of label 0


def test_without_a_detector_the_default_consensus_trains_when_it_can_calibrate(herg):
    plan = plan_training(herg, TrainSpec())
    assert plan.detector.name == "consensus" and plan.calibrated and not plan.fell_back


@pytest.mark.parametrize("calibration", [0.0, 0.2])
def test_without_a_detector_glocalkd_trains_when_the_default_cannot_calibrate(tu_folder, calibration):
    plan = plan_training(load(str(tu_folder)), TrainSpec(calibration=calibration))  # 12 graphs: too few
    assert plan.detector.name == "glocalkd" and plan.fell_back and not plan.calibrated


def test_a_named_detector_is_never_swapped(tu_folder):
    graphs = load(str(tu_folder))
    with pytest.raises(ParameterError) as too_few:
        plan_training(graphs, TrainSpec(detector="consensus"))
    assert too_few.value.param == "detector" and "12 normal graphs are too few" in str(too_few.value)
    with pytest.raises(ParameterError) as no_share:
        plan_training(graphs, TrainSpec(detector="consensus", calibration=0.0))
    assert no_share.value.param == "calibration"
    plan = plan_training(graphs, TrainSpec(detector="glocalkd"))  # a single detector: on every graph
    assert not plan.calibrated and not plan.fell_back


@pytest.mark.parametrize("share", [-0.1, 0.6, 1.0, 1.5])
def test_the_calibration_share_is_from_0_to_one_half(herg, share):
    """A share of 0.6 of 120 graphs was said as "120 graphs are too few to hold out a calibration
    share", and the consensus quietly replaced by GLocalKD: above one half, no number of graphs
    leaves as many to train on as it holds out."""
    with pytest.raises(ParameterError) as failure:
        plan_training(herg, TrainSpec(calibration=share))
    assert failure.value.param == "calibration" and "from 0 to 0.5" in str(failure.value)
    from core.detectors.conformal import can_calibrate

    assert not any(can_calibrate(n, 0.6) for n in range(1, 5000)) and can_calibrate(38, 0.5)


def test_a_known_label_without_a_normal_label_trains_on_every_other_graph(herg):
    """Every other graph but those that are known anomalies too: hERG lists 7 molecules with both
    labels (the same graphs to the model), which were trained on as normal and weighed the views
    as anomalous."""
    from core.data.graph_identity import graph_key

    plan = plan_training(herg, TrainSpec(known_label="0"))
    assert len(plan.known) == 204 and len(plan.normal) == 451 - 7 and plan.known_in_data == 7
    assert set(plan.normal.labels) == {"1"} and set(plan.known.labels) == {"0"}
    assert not {graph_key(g) for g in plan.normal.graphs} & {graph_key(g) for g in plan.known.graphs}
    with_normal = plan_training(herg, TrainSpec(normal_label="1", known_label="0"))
    assert len(with_normal.normal) == 451 - 7 and len(with_normal.known) == 204


@pytest.mark.parametrize("spec, params", [
    (TrainSpec(normal_label="1", known_label="1.0"), ("known_label", "normal_label")),  # the same label
    (TrainSpec(known_label="7"), ("known_label",)),  # no graph has it
    (TrainSpec(normal_label="7"), ("normal_label",)),
    (TrainSpec(detector="glocalkd", known_label="0"), ("detector", "known_anomalies", "known_label")),
    (TrainSpec(calibration=0.0, known_label="0"), ("calibration", "known_anomalies", "known_label")),  # no share
    (TrainSpec(params={"epochz": 3}), ("epochz",)),  # no detector takes it
    (TrainSpec(params={"seed": 3}), ("seed",)),  # a field of the spec
])
def test_settings_that_break_a_rule_name_their_parameters(herg, spec, params):
    with pytest.raises(ParameterError) as failure:
        plan_training(herg, spec)
    assert failure.value.params == params
    assert all(p in str(failure.value) for p in params)  # str() writes the Python names


def test_known_anomalies_come_as_graphs_or_as_a_label_not_both(herg):
    with pytest.raises(ParameterError) as failure:
        plan_training(herg, TrainSpec(known_label="0", known_anomalies=herg.subset(range(5))))
    assert failure.value.params == ("known_anomalies", "known_label")


def test_gcn_settings_reach_the_glocalkd_of_a_consensus_and_other_detectors_settings_are_ignored(herg):
    plan = plan_training(herg, TrainSpec(detector="consensus", params={**SMALL, "weight_decay": 1e-3},
                                         seed=4, device="cpu", calibration=0.3))
    gcn = {**detector_defaults("glocalkd"), **SMALL, "seed": 4, "device": "cpu"}  # as its model file records it
    assert plan.params == {"component_params": {"glocalkd": gcn}, "seed": 4, "device": "cpu", "calibration": 0.3}
    assert list(plan.params["component_params"]["glocalkd"]) == list(detector_defaults("glocalkd"))
    single = plan_training(herg, TrainSpec(detector="glocalkd", params={**SMALL, "weight_decay": 1e-3}, seed=4))
    assert single.params == {**SMALL, "seed": 4, "device": "auto"}  # OCGCN's weight decay: not GLocalKD's
    kernel = plan_training(herg, TrainSpec(detector="wl-lesinn", params=SMALL, seed=4))
    assert kernel.params == {"seed": 4}


def test_the_settings_a_detector_does_not_use_are_named_by_the_plan_notes(herg):
    """`train --detector wl-lesinn --epochs 5 --lr 0.5 --node-max` dropped the GCN settings unsaid."""
    from core import plan_notes

    plan = plan_training(herg, TrainSpec(detector="wl-lesinn", params={"epochs": 5, "lr": 0.5, "node_max": True},
                                         device="cpu"))
    assert plan.ignored == ("epochs", "lr", "node_max") and plan.params == {"seed": 0}
    assert plan_notes(plan, 0.2)[-1] == "WL-LESINN does not use epochs, lr, node_max: ignored"
    assert plan_notes(plan, 0.2, setting_name=lambda key: "--" + key.replace("_", "-"))[-1] == (
        "WL-LESINN does not use --epochs, --lr, --node-max: ignored")
    used = plan_training(herg, TrainSpec(detector="consensus", params={"epochs": 5}, device="cpu"))
    assert used.ignored == () and not any("does not use" in note for note in plan_notes(used, 0.2))


def test_a_single_detector_is_calibrated_on_whole_scaffolds_drawn_with_the_spec_seed(herg):
    """Molecules are held out for calibration scaffold by scaffold (calibration_groups), with the
    spec's seed: the model's calibration scores are those of that share, not of a share drawn
    molecule by molecule."""
    normal = herg.with_label("1")
    trained = train_model(herg, TrainSpec(detector="glocalkd", params=SMALL,
                                          normal_label="1", seed=3, device="cpu"))
    groups = calibration_groups(normal)
    _, held_out = calibration_split(len(normal), 0.2, seed=3, groups=groups)
    expected = trained.model.score(normal.subset(held_out)).score
    assert np.array_equal(np.sort(trained.model.calibration_scores_), np.sort(expected.astype(np.float64)))
    assert trained.n_calibration == len(held_out) and trained.n_fit == len(normal) - len(held_out)
    one_by_one = calibration_split(len(normal), 0.2, seed=3)[1]
    assert not np.array_equal(held_out, one_by_one)
    split = {groups[i] for i in held_out} & {groups[i] for i in np.setdiff1d(np.arange(len(normal)), held_out)}
    assert len(split) <= 1  # every scaffold on one side but the one cut to fill the share


def test_the_consensus_calibrates_every_view_on_the_same_whole_scaffolds(herg):
    """The default detector's views are calibrated on one share drawn scaffold by scaffold: the
    graph-size view's calibration scores are those of that share's molecules."""
    normal = herg.with_label("1")
    trained = train_model(herg, TrainSpec(params=SMALL, normal_label="1", seed=5, device="cpu"))
    _, held_out = calibration_split(len(normal), 0.2, seed=5, groups=calibration_groups(normal))
    size = trained.model.components_["size"]
    expected = size.score(normal.subset(held_out)).score.astype(np.float64)
    assert np.array_equal(np.sort(trained.model.component_calibration_["size"]), np.sort(expected))


def test_train_model_weighs_a_consensus_by_the_known_anomalies_and_says_its_plan_first(herg):
    seen = []
    trained = train_model(herg, TrainSpec(params=SMALL, normal_label="1", known_label="0", device="cpu"),
                          on_plan=seen.append)
    assert seen == [trained.plan] and trained.model.name == "consensus"
    assert set(trained.model.known_anomaly_auc_) == set(trained.model.views)


def test_known_anomalies_of_another_kind_are_refused_naming_their_file(tu_folder, herg_path):
    """A TU collection given as known anomalies to a molecule consensus said only "the model was
    trained on molecules…", naming no file (scoring a file names it)."""
    from core import SchemaMismatchError, load, make_detector, weigh_known_anomalies

    model = make_detector(component_params={"glocalkd": {"epochs": 1, "hidden_dim": 8, "out_dim": 4}},
                          device="cpu").fit(load(herg_path).subset(range(120)))
    with pytest.raises(SchemaMismatchError, match=f"{tu_folder}: these known anomalies cannot weigh"):
        weigh_known_anomalies(model, load(tu_folder).with_label("1"))


def test_too_few_known_anomalies_are_refused_before_any_training(herg, tmp_path, monkeypatch):
    """The minimum was checked by the weighing, after the whole training had run."""
    from core import DataError
    from core.detectors.consensus import Consensus

    monkeypatch.setattr(Consensus, "fit", lambda *a, **k: pytest.fail("trained before the known anomalies were checked"))
    actives = [m.smiles for m in herg.meta if m.label == "0"]
    (tmp_path / "two.smi").write_text("\n".join(actives[:2]) + "\n")
    two = load(str(tmp_path / "two.smi"))
    with pytest.raises(DataError, match="two.smi.*at least 3 known anomalies, not 2"):
        train_model(herg.with_label("1"), TrainSpec(known_anomalies=two))
    (tmp_path / "again.smi").write_text("\n".join([actives[0]] * 3 + [actives[1]]) + "\n")  # one of them thrice
    with pytest.raises(DataError, match=r"again.smi.*at least 3 known anomalies, not 2 \(4 rows, some the same"):
        train_model(herg.with_label("1"), TrainSpec(known_anomalies=load(str(tmp_path / "again.smi"))))
    labelled = herg.subset([*range(60), *[i for i, m in enumerate(herg.meta) if m.label == "0"][:2]])
    labelled = labelled.subset([i for i, m in enumerate(labelled.meta) if m.label == "1" or i >= 60])
    with pytest.raises(ParameterError) as by_label:
        plan_training(labelled, TrainSpec(known_label="0"))
    assert by_label.value.param == "known_label" and "at least 3 known anomalies" in str(by_label.value)


@pytest.mark.parametrize("spec, param", [
    (TrainSpec(params={"epochs": 0}), "epochs"),  # the default consensus's GLocalKD, and the fallback
    (TrainSpec(detector="consensus", params={"lr": -1.0}), "lr"),  # a consensus's component's setting
    (TrainSpec(detector="glocalkd", params={"hidden_dim": 1.5}), "hidden_dim"),  # the kind, as fit checks it
    (TrainSpec(detector="ocgcn", params={"num_layers": 0}), "num_layers"),
    (TrainSpec(calibration=1.0), "calibration"),
])
def test_settings_are_checked_without_any_graph(spec, param):
    """``glocalkd train --epochs 0`` read the whole data file, said what it would train, and only
    then refused the setting (when the GLocalKD inside the consensus was fitted): the rules that
    need no graphs are one function that every front end calls before reading the data."""
    from core.training import check_settings

    with pytest.raises(ParameterError) as refused:
        check_settings(spec)
    assert param in refused.value.params


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_a_setting_is_refused_before_the_data_is_read(tmp_path, capsys, command):
    from core.cli.main import main

    data = tmp_path / "d.smi"
    data.write_text("CCO a\nnot a smiles b\n" * 50)
    more = ["-o", str(tmp_path / "m.pt")] if command == "train" else []
    assert main([command, str(data), *more, "--epochs", "0"]) == 2
    err = capsys.readouterr().err
    assert "--epochs must be a whole number of at least 1, not 0" in err
    assert "d.smi" not in err  # neither its summary nor its rejects: it was not read


def test_known_anomalies_of_another_kind_are_refused_by_the_plan_before_any_training(herg, tu_folder, aids_zip):
    """``train herg.tab --known-anomalies T4`` trained every epoch, then refused the graph
    collection and saved nothing: the kind is part of the plan's rules now."""
    from core import SchemaMismatchError

    tu = load(tu_folder)
    tu = tu.subset([i for i, m in enumerate(tu.meta) if m.label == tu.meta[0].label])
    with pytest.raises(SchemaMismatchError, match="cannot weigh this model's views: the model is trained on "
                                                  "molecules and these are a graph collection"):
        plan_training(herg, TrainSpec(known_anomalies=tu))
    import dataclasses

    aids = load(aids_zip)
    with pytest.raises(SchemaMismatchError, match="trained on a graph collection and these are molecules"):
        plan_training(aids, TrainSpec(known_anomalies=herg.with_label("1").subset(range(5))))
    names = dict(aids.node_label_names)
    swapped = dataclasses.replace(aids.subset(range(40)), node_label_names={**names, 0: names[1], 1: names[0]},
                                  source="other.zip")
    with pytest.raises(SchemaMismatchError, match=r"labelled by TU node labels \(C, O"):
        plan_training(aids, TrainSpec(known_anomalies=swapped.with_label(swapped.meta[0].label)))


@pytest.mark.parametrize("label", ["NA", "nan", ""])
def test_a_label_that_means_no_label_finds_no_graph(tmp_path, label):
    """``--normal-label NA`` trained on the unlabelled rows while ``info`` and ``evaluate`` said no
    graph had that label: a label that means "none" names no graph, everywhere."""
    path = tmp_path / "lab.csv"
    path.write_text("smiles,label\nC,nan\nCC,\nCCC,1\nCCCC,NaN\nCCO,1\nCCN,1\n")
    graphs = load(path)
    assert len(graphs.with_label(label)) == 0 and len(graphs.with_label("1")) == 3
    with pytest.raises(ParameterError) as failure:
        plan_training(graphs, TrainSpec(normal_label=label, detector="size"))
    assert failure.value.param == "normal_label"


def test_known_anomalies_given_as_graphs_are_never_trained_on(herg, tmp_path, capsys):
    """Known anomalies that the data also holds were fitted and calibrated as normal (only a
    known label left them out): their views' scores came out low, and the views that saw them
    best were weighed to 0. The data's copies are left out of the normal graphs, whatever the
    order their atoms were written in, and the command line says so."""
    from rdkit import Chem

    from core.cli.main import main
    from core.data.graph_identity import graph_key
    from tests.conftest import DEMO_DATA

    demo = DEMO_DATA / "herg.tab"

    actives = [i for i, label in enumerate(herg.labels) if label == "1"][:6]
    known_file = tmp_path / "actives.smi"  # the same molecules, written from another atom
    known_file.write_text("".join(f"{Chem.MolToSmiles(Chem.MolFromSmiles(herg.meta[i].smiles), rootedAtAtom=1)} "
                                  f"k{i}\n" for i in actives))
    known = load(str(known_file))
    assert [m.smiles for m in known.meta] != [herg.meta[i].smiles for i in actives]
    plan = plan_training(herg, TrainSpec(known_anomalies=known))
    keys = {graph_key(g) for g in known.graphs}
    assert plan.known_in_data >= len(actives)  # and their stereoisomers: one graph to the model
    assert len(plan.normal) == len(herg) - plan.known_in_data
    assert not [g for g in plan.normal.graphs if graph_key(g) in keys]
    assert plan_training(herg, TrainSpec(known_anomalies=load(str(known_file)).subset(range(3)))).known_in_data >= 3
    assert main(["train", str(demo), "-o", str(tmp_path / "m.pt"), "--known-anomalies", str(known_file),
                 "--epochs", "1", "--hidden", "8", "--out-dim", "4", "--device", "cpu"]) == 0
    assert f"{plan.known_in_data} graphs of the data are known anomalies too" in capsys.readouterr().err


@pytest.mark.parametrize("spec, param", [(TrainSpec(detector="size", calibration="0.2"), "calibration"),
                                         (TrainSpec(detector="size", params=None), "params"),
                                         (TrainSpec(params={"component_params": "x"}), "component_params"),
                                         (TrainSpec(params={"component_params": {"glocalkd": {"bogus": 1}}}),
                                          "component_params")])
def test_a_spec_of_the_wrong_kind_is_a_parameter_error(herg, spec, param):
    """Each escaped as a Python TypeError, AttributeError or ValueError from inside the plan."""
    with pytest.raises(ParameterError) as refused:
        train_model(herg, spec)
    assert param in refused.value.params


@pytest.mark.parametrize("n", [20, 30, 37])
def test_a_consensus_is_never_fitted_on_fewer_graphs_than_it_holds_out(herg, n):
    """A named consensus of 20 molecules was fitted on 1 and calibrated on 19 (only the split was
    asked for), while the default fell back to GLocalKD for the same graphs: the rule that chooses
    the default refuses the named one, and the consensus's own fit applies it too."""
    from core import GLocalKDError, make_detector

    few = herg.subset(range(n))
    with pytest.raises(ParameterError, match=f"{n} normal graphs are too few for the Consensus") as refused:
        plan_training(few, TrainSpec(detector="consensus"))
    assert refused.value.param == "detector"
    plan = plan_training(few, TrainSpec())
    assert plan.detector.name == "glocalkd" and plan.fell_back
    from core import plan_notes

    assert plan_notes(plan, 0.2) == [
        f"training GLocalKD: the default consensus needs a calibration share ({n} graphs are too few to calibrate)",
        f"{n} graphs are too few to hold out a calibration share: training on all of them, so the model gives no "
        "p-values"]
    with pytest.raises(GLocalKDError, match=f"{n} graphs are too few for a consensus"):
        make_detector("consensus", component_params={"glocalkd": SMALL}).fit(few)
    assert plan_training(herg.subset(range(38)), TrainSpec(detector="consensus")).calibrated


def test_known_anomalies_that_leave_too_few_normal_graphs_say_so_not_choose_the_consensus(herg, tmp_path):
    """Every data graph a known anomaly: "GLocalKD has one view: choose the consensus", and with the
    consensus chosen, "0 normal graphs are too few": the cause is said at once, with what to do."""
    few = herg.subset(range(30))
    actives = tmp_path / "actives.smi"
    actives.write_text("".join(f"{'C' * k}N{'C' * k} a{k}\n" for k in range(1, 6)))
    with pytest.raises(ParameterError, match=r"but 30 normal graphs are left once the known anomalies are left out: "
                                             r"too few .* give more normal graphs"):
        plan_training(few, TrainSpec(known_anomalies=load(actives)))
    with pytest.raises(ParameterError, match=r"but calibration is 0, .* set it above 0") as zero:
        plan_training(herg, TrainSpec(normal_label="1", known_label="0", calibration=0.0))
    assert zero.value.param == "calibration"


@pytest.mark.parametrize("mode, lacks", [("atom-rings", "'atom-rings' asked for, but the data has no atom features"),
                                         ("both", "'both' asked for, but the data has no node attributes")])
def test_a_feature_recipe_the_data_cannot_give_is_said_by_its_own_name(tmp_path, mode, lacks):
    """``atom-rings`` was said as 'atom', and ``both`` on data without attributes as "no node both"."""
    from core import DataError, FeatureSchema
    from tests.conftest import ring, write_tu

    labelled = write_tu(tmp_path, "L", [(5, ring(5), 0), (6, ring(6), 0)])  # node labels, no attributes
    with pytest.raises(DataError, match=lacks):
        FeatureSchema.fit(load(labelled), mode)


def test_known_anomalies_with_a_graph_without_edges_are_checked_not_a_traceback(tmp_path):
    """A TU molecule without bonds (a salt's ion: edge labels of length 0) made the known-anomaly
    checks fail with numpy's bare "cannot reshape array of size 0" (Tox21 p53 holds 11 of them)."""
    from core.data.graph_identity import graph_key
    from tests.conftest import write_tu

    def collection(name, graphs):
        folder = write_tu(tmp_path / name, name, graphs)
        edges = sum(2 * len(e) for _, e, _ in graphs)
        (folder / f"{name}_edge_labels.txt").write_text("".join("0\n" for _ in range(edges)))
        return load(folder)

    normal = collection("T_training", [(n, [(j, (j + 1) % n) for j in range(n)], 0) for n in [5, 6, 7, 8] * 20])
    known = collection("T_testing", [(1, [], 1), (2, [], 1), (3, [(0, 1)], 1), (4, [(0, 1), (1, 2)], 1)])
    assert known.graphs[0].edge_label.shape == (0,)
    assert graph_key(known.graphs[0]) != graph_key(known.graphs[1])
    plan = plan_training(normal, TrainSpec(known_anomalies=known))
    assert plan.known_in_data == 0


def test_weighing_leaves_out_known_anomalies_the_model_was_trained_on(herg, tmp_path):
    """Known anomalies are never trained on: weighing a trained consensus by graphs it was fitted or
    calibrated on as normal (their scores in-sample) leaves them out, listed with the reason; too
    few left is refused."""
    from core import make_detector
    from core.errors import DataError
    from core.training import weigh_known_anomalies
    from core.training.use_case import SEEN_AS_NORMAL

    normal, anomalies = herg.with_label("1"), herg.with_label("0")
    model = make_detector("consensus", components=["wl-lesinn", "size"]).fit(normal)
    rows = [*anomalies.meta[:10], *normal.meta[:4]]  # ten anomalies, four graphs it was trained on
    (tmp_path / "k.smi").write_text("".join(f"{m.smiles} {m.id}\n" for m in rows))
    known = load(tmp_path / "k.smi")
    seen = model.seen_graphs(known)
    assert {10, 11, 12, 13} <= set(seen.tolist())
    used = weigh_known_anomalies(model, known)
    assert len(used) == len(known) - len(seen)
    assert [r.id for r in used.rejects if r.reason == SEEN_AS_NORMAL] == [known.meta[i].id for i in seen]
    with pytest.raises(DataError, match="are graphs the model was trained or calibrated on as normal, which leaves"):
        weigh_known_anomalies(model, normal.subset(range(5)))
