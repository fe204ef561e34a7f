"""Model files of every detector that can be saved: scores survive the round trip, files are
read with the weights-only loader, and what cannot be saved says so."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core import GLocalKDError, ModelFileError, load, make_detector
from core.detectors.base import Detector
from core.detectors.conformal import fit_calibrated
from core.data.serialization import decode_state, encode_state
from core.detectors.model_file import load_detector
from tests.conftest import DEMO_DATA

SMALL = {"glocalkd": {"epochs": 2, "hidden_dim": 16, "out_dim": 8}, "wl-lesinn": {"ensemble_size": 8}}


@pytest.fixture(scope="module")
def herg():
    return load(DEMO_DATA / "herg.tab")


@pytest.mark.parametrize("name, params", [
    ("size", {}), ("wl-lesinn", {"ensemble_size": 8}), ("pk-lesinn", {"ensemble_size": 8}),
    ("consensus", {"component_params": SMALL})])
def test_a_saved_detector_scores_as_it_did(herg, tmp_path, name, params):
    train, other = herg.subset(range(0, 200)), herg.subset(range(400, 470))
    detector = make_detector(name, **params).fit(train)
    assert detector.can_save
    before = detector.score(other).score
    path = tmp_path / f"{name}.pt"
    detector.save(path)
    again = load_detector(path, device="cpu")
    assert type(again).load(path, device="cpu").get_params() == again.get_params()
    with pytest.raises(GLocalKDError, match="load_detector"):
        Detector.load(path)
    assert type(again) is type(detector) and again.get_params() == {**detector.get_params(), **(
        {"device": "cpu"} if "device" in detector.get_params() else {})}
    np.testing.assert_array_equal(again.score(other).score, before)
    np.testing.assert_array_equal(again.train_scores_, detector.train_scores_)
    torch.load(path, map_location="cpu", weights_only=True)  # nothing in the file needs code to load


def test_calibration_and_p_values_survive_the_file(herg, tmp_path):
    detector = fit_calibrated(make_detector("wl-lesinn", ensemble_size=8), herg.subset(range(300)), 0.2)
    detector.save(tmp_path / "wl.pt")
    again = load_detector(tmp_path / "wl.pt")
    s = detector.score(herg.subset(range(400, 450))).score
    np.testing.assert_array_equal(again.p_values(s), detector.p_values(s))


@pytest.mark.parametrize("name", ["wl-iforest", "ocgcn"])
def test_a_detector_that_cannot_be_saved_says_so(herg, tmp_path, name):
    params = {"epochs": 1, "hidden_dim": 8, "out_dim": 4} if name == "ocgcn" else {}
    detector = make_detector(name, **params).fit(herg.subset(range(60)))
    assert not detector.can_save
    with pytest.raises(GLocalKDError, match="cannot be saved"):
        detector.save(tmp_path / "x.pt")
    assert not (tmp_path / "x.pt").exists() and list(tmp_path.iterdir()) == []


def test_a_damaged_or_foreign_file_is_a_model_file_error(herg, tmp_path):
    detector = make_detector("size").fit(herg.subset(range(50)))
    detector.save(tmp_path / "s.pt")
    state = torch.load(tmp_path / "s.pt", weights_only=True)
    state["state"]["std"] = encode_state(np.array([-1.0, 1.0]))
    torch.save(state, tmp_path / "bad.pt")
    with pytest.raises(ModelFileError, match="damaged"):
        load_detector(tmp_path / "bad.pt")
    torch.save({"format": "someone-else"}, tmp_path / "foreign.pt")
    with pytest.raises(ModelFileError, match="not a GLocalKD Studio model file"):
        load_detector(tmp_path / "foreign.pt")
    (tmp_path / "text.pt").write_text("hello")
    with pytest.raises(ModelFileError):
        load_detector(tmp_path / "text.pt")
    from core.detectors.size import SizeBaseline
    from core.detectors.two_step import TwoStepDetector
    with pytest.raises(ModelFileError, match="holds a size model"):
        TwoStepDetector.load(tmp_path / "s.pt")
    assert isinstance(SizeBaseline.load(tmp_path / "s.pt"), SizeBaseline)


def test_the_state_encoding_round_trips_unsigned_sets_and_int_keys():
    state = {"a": np.array([2**63 + 5], dtype=np.uint64), "b": {3: "x"}, "c": {1, 2}, "d": [np.float32(1.5)]}
    back = decode_state(encode_state(state))
    assert back["a"].dtype == np.uint64 and int(back["a"][0]) == 2**63 + 5
    assert back["b"] == {3: "x"} and back["c"] == {1, 2} and back["d"] == [1.5]
    with pytest.raises(GLocalKDError):
        encode_state({"f": object()})


def test_saving_never_writes_through_a_link_or_a_predictable_temporary_name(herg, tmp_path):
    """A link planted at the old fixed temporary name, or at the target, is never written through."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "m.pt.tmp").symlink_to(victim)
    detector = make_detector("size").fit(herg.subset(range(50)))
    detector.save(tmp_path / "m.pt")
    assert victim.read_text() == "precious"
    (tmp_path / "link.pt").symlink_to(victim)
    detector.save(tmp_path / "link.pt")  # replaces the link itself
    assert victim.read_text() == "precious" and not (tmp_path / "link.pt").is_symlink()
    assert isinstance(load_detector(tmp_path / "link.pt"), type(detector))


def test_a_device_torch_cannot_use_is_said_as_such_not_as_a_damaged_file(tmp_path, herg):
    """A consensus read with ``--device bogus`` (or cuda on a machine without one) was called "a
    damaged model file": the device error of a component was wrapped as damage."""
    model = make_detector("consensus", component_params={"glocalkd": {"epochs": 1, "hidden_dim": 8, "out_dim": 4}},
                          device="cpu").fit(herg.subset(range(120)))
    path = tmp_path / "m.pt"
    model.save(path)
    with pytest.raises(GLocalKDError, match="device must be 'auto', 'cpu', 'cuda' or 'cuda:N', not 'bogus'") as info:
        load_detector(path, device="bogus")
    assert not isinstance(info.value, ModelFileError) and "damaged" not in str(info.value)
    assert load_detector(path, device="cpu").score(herg.subset(range(5))).score.shape == (5,)


def test_a_class_loader_given_another_detectors_file_says_what_the_file_holds(herg, tmp_path):
    """``GLocalKD.load`` called a graph-size model "not a GLocalKD Studio model file", and
    ``SizeBaseline.load`` read a WL-LESINN file as a graph-size model: every loader says which
    detector the file holds and which function reads it."""
    from core import GLocalKD
    from core.detectors.size import SizeBaseline

    train = herg.subset(range(60))
    files = {name: tmp_path / f"{name}.pt" for name in ("size", "wl-lesinn", "glocalkd")}
    for name, path in files.items():
        make_detector(name, **SMALL.get(name, {})).fit(train).save(path)
    for cls, name in ((GLocalKD, "size"), (SizeBaseline, "wl-lesinn"), (SizeBaseline, "glocalkd")):
        with pytest.raises(ModelFileError, match=f"a model of the {name} detector, not a {cls.__name__} one "
                                                 r"\(load it with load_detector\)"):
            cls.load(files[name])
        assert load_detector(files[name]).name == name
    assert isinstance(SizeBaseline.load(files["size"]), SizeBaseline)
