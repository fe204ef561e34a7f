"""What a detector can do is a field of its registry entry, and its defaults are its signature's:
front ends ask the registry instead of keeping lists of names or copies of numbers."""
from __future__ import annotations

import dataclasses
import inspect

import pytest

from core import DETECTORS, detector_defaults, detector_info, make_detector
from core.detectors.glocalkd import GLocalKD


@pytest.mark.parametrize("name", list(DETECTORS))
def test_savable_is_what_the_detector_can_save(name):
    assert detector_info(name).savable == make_detector(name).can_save


@pytest.mark.parametrize("name", list(DETECTORS))
def test_molecules_only_is_what_the_detector_can_read(name, tu_folder, aids_zip):
    """A detector flagged molecules-only refuses graphs that are not molecules; the others read them."""
    from core import load
    from core.errors import NotApplicableError

    small = {"epochs": 1, "hidden_dim": 8, "out_dim": 4}
    params = {"glocalkd": small, "ocgcn": small, "consensus": {"component_params": {"glocalkd": small}}}.get(name, {})
    graphs = load(str(tu_folder)).subset(list(range(12)) * 4)
    if detector_info(name).molecules_only:
        with pytest.raises(NotApplicableError, match="reads molecules"):
            make_detector(name, **params).fit(graphs)
        assert len(make_detector(name, **params).fit(load(aids_zip).subset(range(40))).train_scores_) == 40
    else:
        assert make_detector(name, **params).fit(graphs).score(graphs).score.shape == (48,)


def test_only_the_consensus_calibrates_itself_weighs_views_and_is_built_on_glocalkd():
    for field in ("calibrates_itself", "weighable", "needs_glocalkd"):
        assert [n for n, info in DETECTORS.items() if getattr(info, field)] == ["consensus"], field
    assert callable(make_detector("consensus").weigh_views)


def test_a_self_calibrating_detector_is_fitted_as_it_is(monkeypatch, tu_folder):
    """fit_with_calibration asks the registry, not an attribute of the detector."""
    from core import fit_with_calibration, load
    from core.detectors import catalog

    graphs = load(str(tu_folder)).subset(list(range(12)) * 4)  # 48 graphs: enough to hold out a share
    size = catalog.SINGLE_DETECTORS["size"]
    monkeypatch.setitem(catalog.SINGLE_DETECTORS, "size", dataclasses.replace(size, calibrates_itself=True))
    from core.detectors import registry

    monkeypatch.setitem(registry.DETECTORS, "size", catalog.SINGLE_DETECTORS["size"])
    model = make_detector("size")
    assert not fit_with_calibration(model, graphs)  # fitted on every graph: it would calibrate itself
    assert len(model.train_scores_) == 48


def test_defaults_are_read_from_the_signature():
    signature = inspect.signature(GLocalKD)
    assert detector_defaults("glocalkd") == {n: p.default for n, p in signature.parameters.items()}
    assert "kernel" not in detector_defaults("wl-lesinn")  # fixed by its name


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_the_command_line_leaves_the_gcn_settings_to_the_detector(command):
    from core.cli.main import build_parser
    from core.cli.options import parameter_of

    args = build_parser().parse_args([command, "data", *(["-o", "m.pt"] if command == "train" else [])])
    gcn = {"epochs", "lr", "batch_size", "hidden", "out_dim", "layers", "lam", "features"}
    assert {option: getattr(args, option) for option in gcn} == dict.fromkeys(gcn)  # no numbers of its own
    assert {parameter_of(option) for option in gcn} <= set(detector_defaults("glocalkd"))
