"""The detector contract: abstract fit/score, parameters read from the constructor, one error path."""
from __future__ import annotations

import numpy as np
import pytest

from core import DETECTORS, Detector, GLocalKDError, Scores, make_detector
from tests.conftest import ring, write_tu


def test_the_base_cannot_be_instantiated_without_fit_and_score():
    with pytest.raises(TypeError):
        Detector()  # abstract: _fit, score and graph_embeddings are missing

    class Half(Detector):
        def _fit(self, graphs, on_epoch, should_stop):
            pass

    with pytest.raises(TypeError):
        Half()


@pytest.mark.parametrize("name", list(DETECTORS))
def test_get_params_round_trips_through_the_constructor(name):
    detector = make_detector(name)
    params = detector.get_params()
    assert set(params) == set(type(detector).param_names())
    again = type(detector)(**params)
    assert again.get_params() == params
    assert repr(detector).startswith(type(detector).__name__ + "(")


def test_set_params_changes_a_parameter_and_rejects_unknown_ones():
    detector = make_detector("size")
    assert detector.set_params(seed=3).get_params()["seed"] == 3
    with pytest.raises(GLocalKDError, match="does not take"):
        detector.set_params(no_such=1)


@pytest.mark.parametrize("name, change", [("ecfp-nn", {"radius": 1}), ("ecfp-nn", {"n_bits": 1024}),
                                          ("wl-lesinn", {"wl_iterations": 1}), ("glocalkd", {"lam": 5.0}),
                                          ("glocalkd", {"hidden_dim": 32})])
def test_a_fitted_detector_whose_settings_change_forgets_its_fit(herg_path, tmp_path, name, change):
    """Scores, p-values and model files never mix one setting's fit with another setting: ECFP at
    radius 1 compared its queries with radius-2 training fingerprints, and a GLocalKD saved after
    ``hidden_dim`` changed was refused on loading as a damaged file."""
    from core import fit_with_calibration, load, load_detector

    herg = load(herg_path)
    small = {"epochs": 2, "hidden_dim": 16, "out_dim": 8} if name == "glocalkd" else {}
    detector = make_detector(name, **small)
    fit_with_calibration(detector, herg.subset(range(60)))
    detector.set_params(**{k: getattr(detector, k) for k in change}, device="cpu") if name == "glocalkd" else \
        detector.set_params(**{k: getattr(detector, k) for k in change})
    assert detector.is_calibrated  # the same values (and the device) keep the fit
    detector.set_params(**change)
    with pytest.raises(GLocalKDError, match="not trained"):
        detector.score(herg.subset(range(60, 70)))
    with pytest.raises(GLocalKDError):
        detector.save(tmp_path / "m.pt")
    assert not (tmp_path / "m.pt").exists() and not detector.is_calibrated
    detector.fit(herg.subset(range(60)))  # fitted again with the new setting, it saves and loads
    detector.save(tmp_path / "m.pt")
    assert load_detector(tmp_path / "m.pt").get_params()[next(iter(change))] == next(iter(change.values()))


def test_a_refused_refit_leaves_no_fit_beside_the_refused_setting(herg_path):
    from core import ParameterError, load

    graphs = load(herg_path).subset(range(30))
    detector = make_detector("glocalkd", epochs=1, hidden_dim=16, out_dim=8).fit(graphs)
    detector.hidden_dim = 0  # set directly, past set_params
    with pytest.raises(ParameterError):
        detector.fit(graphs)
    with pytest.raises(GLocalKDError, match="not trained"):
        detector.score(graphs)


class _Exploding(Detector):
    """A detector whose training fails inside numerical code after setting part of its state."""

    name = "exploding"
    FITTED = ("half_", "train_scores_", "loss_history_", "stopped_early_")

    def __init__(self, seed: int = 0):
        self.seed = seed

    def _fit(self, graphs, on_epoch, should_stop):
        self.half_ = 1
        raise RuntimeError("CUDA out of memory")

    def score(self, graphs, on_progress=None) -> Scores:
        self._check_fitted()
        return Scores.graph_only(np.zeros(len(graphs)), graphs.node_ptr())

    def graph_embeddings(self, graphs, network="predictor"):
        return np.zeros((len(graphs), 1), dtype=np.float32)


def test_a_failed_fit_is_one_error_and_leaves_nothing_fitted(tmp_path):
    from core import load

    graphs = load(write_tu(tmp_path, "T", [(4, ring(4), 0), (5, ring(5), 0)]))
    detector = _Exploding()
    with pytest.raises(GLocalKDError, match="training failed \\(out of memory\\)"):
        detector.fit(graphs)
    assert not hasattr(detector, "half_")
    with pytest.raises(GLocalKDError, match="not trained"):
        detector.score(graphs)


def test_a_custom_detectors_arithmetic_error_is_a_failed_fit_and_a_code_mistake_passes_as_it_is(tmp_path,
                                                                                                  monkeypatch):
    """A custom detector's ZeroDivisionError reached the caller raw, though fit promises one
    GLocalKDError for a numerical failure; a TypeError (a mistake in the code) still passes."""
    from core import load

    graphs = load(write_tu(tmp_path, "T", [(4, ring(4), 0), (5, ring(5), 0)]))
    for error, expected in ((ZeroDivisionError("division by zero"), GLocalKDError),
                            (OverflowError("math range error"), GLocalKDError), (TypeError("oops"), TypeError)):
        def failing(self, graphs, on_epoch, should_stop, error=error):
            self.half_ = 1
            raise error

        monkeypatch.setattr(_Exploding, "_fit", failing)
        detector = _Exploding()
        with pytest.raises(expected):
            detector.fit(graphs)
        assert not hasattr(detector, "half_")


def test_a_callback_error_reaches_the_caller_unchanged(tmp_path):
    from core import load

    graphs = load(write_tu(tmp_path, "T", [(4, ring(4), 0), (5, ring(5), 0), (6, ring(6), 0)]))
    model = make_detector("glocalkd", epochs=2, hidden_dim=8, out_dim=4)

    class Stop(Exception):
        pass

    def on_epoch(info):
        raise Stop()

    with pytest.raises(Stop):
        model.fit(graphs, on_epoch=on_epoch)
    assert not hasattr(model, "predictor_")


@pytest.mark.parametrize("name", list(DETECTORS))
def test_every_setting_of_the_wrong_kind_is_refused_by_name_before_training(name, tu_folder):
    """For every detector alike, from its signature: ``normalize="False"`` turned normalisation on,
    ``ensemble_size=1.5`` and ``seed=None`` escaped as numpy's and torch's own errors."""
    import inspect

    from core import ParameterError, load

    graphs = load(tu_folder)
    defaults = {k: p.default for k, p in inspect.signature(type(make_detector(name)).__init__).parameters.items()
                if k != "self"}
    wrong = {"seed": [None, -1, 1.5, "0"]}
    for key, default in defaults.items():
        if key in wrong:
            continue
        if isinstance(default, bool):
            wrong[key] = ["False", 1]
        elif isinstance(default, int):
            wrong[key] = [1.5, "3", True]
        elif isinstance(default, float):
            wrong[key] = ["0.1", None]
        elif isinstance(default, str):
            wrong[key] = [3]
    for key, values in wrong.items():
        if key not in defaults:
            continue
        for value in values:
            detector = make_detector(name)
            setattr(detector, key, value)  # as set_params would, past the registry's own checks
            with pytest.raises(ParameterError, match=f"{key} must be"):
                detector.fit(graphs)


@pytest.mark.parametrize("name", [n for n in DETECTORS if "device" in make_detector(n).get_params()])
def test_a_device_that_is_no_device_is_refused_as_a_setting_before_training(name):
    """``device="gpu"`` was taken, and training failed later with a bare GLocalKDError that named
    no setting, so a front end could not point at its field."""
    from core import ParameterError

    with pytest.raises(ParameterError, match=r"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', not 'gpu'") as info:
        make_detector(name, device="gpu").check_params()
    assert info.value.params == ("device",)


def test_a_position_or_percentile_outside_the_scores_is_refused_not_read_as_another(herg_path):
    """``node_errors_of(-1)`` gave no nodes (the slice ran backwards), so ``top_nodes(-1)`` said the
    last graph had none; ``threshold(200)`` raised numpy's error naming no setting."""
    from core import ParameterError, load

    graphs = load(herg_path).subset(range(40))
    model = make_detector("glocalkd", epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(graphs)
    scores = model.score(graphs.subset(range(5)))
    assert np.array_equal(scores.node_errors_of(-1), scores.node_errors_of(4))
    assert len(scores.node_errors_of(-1)) == graphs.graphs[4].num_nodes
    assert scores.top_nodes(-1) == scores.top_nodes(4) != []
    for bad in (5, -6):
        with pytest.raises(IndexError, match=f"position {bad} is not one of these 5 graphs"):
            scores.node_errors_of(bad)
    with pytest.raises(TypeError):
        scores.node_errors_of(1.5)
    for bad in (200, -1, float("nan"), "95"):
        with pytest.raises(ParameterError, match="percentile must be a number from 0 to 100"):
            model.threshold(bad)
    assert model.threshold(100) == pytest.approx(float(model.train_scores_.max()))


@pytest.mark.parametrize("name", ["glocalkd", "ocgcn", "consensus"])
def test_a_numpy_whole_number_seed_trains_as_its_int_does(name, herg_path):
    """``seed=np.int64(3)`` passed the settings check and then failed inside torch ("an integer is
    required"), while WL-LESINN took it; a calibration share of np.float32 was refused."""
    from core import TrainSpec, load, train_model

    graphs = load(herg_path).subset(range(60))
    small = {"epochs": 1, "hidden_dim": 8, "out_dim": 4}
    params = {"component_params": {"glocalkd": small}} if name == "consensus" else small
    runs = [make_detector(name, seed=seed, device="cpu", **params).fit(graphs).score(graphs).score
            for seed in (np.int64(3), 3)]
    assert np.array_equal(*runs)
    trained = train_model(graphs, TrainSpec(detector="size", seed=np.int64(3), calibration=np.float32(0.25)))
    assert trained.n_calibration > 0
