"""The training form's defaults are the detector's signature's, and settings restored before they
are known are kept."""
from __future__ import annotations

from core import detector_defaults


def test_the_form_shows_glocalkds_defaults_once_activated_and_keeps_restored_values(qtbot):
    from app.widgets.settings_form import TrainSettings

    form = TrainSettings()
    qtbot.addWidget(form)
    before = form.params()
    assert before["epochs"] is None and before["lam"] is None  # not known before torch has loaded
    form.set_params({"epochs": "77", "lr": "not a number"})
    form.activate()
    defaults = detector_defaults("glocalkd")
    values = form.params()
    assert values["epochs"] == 77  # restored
    for key in ("lr", "batch_size", "hidden_dim", "out_dim", "num_layers", "lam", "normalize", "node_max",
                "size_term", "features", "seed", "device"):
        assert values[key] == defaults[key], key


def test_the_consensus_gets_the_gcn_rows_which_train_model_passes_to_its_glocalkd(qtbot):
    from app.widgets.settings_form import TrainSettings

    form = TrainSettings()
    qtbot.addWidget(form)
    form.activate()
    form.set_params({"detector": "consensus", "epochs": 3})
    params = form.detector_params()
    assert params["epochs"] == 3 and "component_params" not in params and params["seed"] == 0
    form.set_params({"detector": "wl-lesinn"})
    assert form.detector_params() == {"seed": 0}
    assert form.known_label() is None  # a single view: no known anomalies


def test_a_value_typed_before_activation_is_kept(qtbot):
    from app.widgets.settings_form import TrainSettings

    form = TrainSettings()
    qtbot.addWidget(form)
    form.lr.setValue(0.003)
    form.normalize.setChecked(True)
    assert form.params()["lr"] == 0.003 and form.params()["normalize"] is True and form.params()["epochs"] is None
    form.activate()
    assert form.params()["lr"] == 0.003 and form.params()["normalize"] is True
    assert form.params()["epochs"] == detector_defaults("glocalkd")["epochs"]


def test_detectors_that_read_molecules_only_are_offered_for_molecules_only(qtbot, window, tu_folder, herg_path):
    """Opened through the window: a TU collection of plain graphs greys out ECFP4 and the property
    view, saying why, and a choice of one gives way to the default; molecules bring them back."""
    from PySide6.QtCore import Qt

    from core import DEFAULT_DETECTOR, DETECTORS
    from tests.app.test_main_window import open_and_wait

    combo = window.form.detector
    only = [n for n, info in DETECTORS.items() if info.molecules_only]
    assert set(only) == {"ecfp-nn", "property-lesinn"}
    combo.setCurrentIndex(combo.findData("property-lesinn"))
    open_and_wait(qtbot, window, tu_folder)
    for name in DETECTORS:
        i = combo.findData(name)
        assert combo.model().item(i).isEnabled() == (name not in only), name
    i = combo.findData("ecfp-nn")
    assert "not molecules" in combo.itemData(i, Qt.ItemDataRole.ToolTipRole)
    assert window.form.detector_name() == DEFAULT_DETECTOR
    open_and_wait(qtbot, window, herg_path)
    assert all(combo.model().item(combo.findData(n)).isEnabled() for n in DETECTORS)
    assert "not molecules" not in combo.itemData(i, Qt.ItemDataRole.ToolTipRole)


def test_the_seed_takes_every_seed_the_command_line_takes(qtbot):
    """The seed box stopped at 2**31 - 1 (a QSpinBox's limit) where ``glocalkd train --seed`` takes
    up to 2**32 - 1: a session or settings file with a larger seed silently kept the old one."""
    from app.widgets.settings_form import TrainSettings
    from core import SEED_MAX

    form = TrainSettings()
    qtbot.addWidget(form)
    form.activate()
    form.set_params({"seed": 3_000_000_007})
    assert form.params()["seed"] == 3_000_000_007 and isinstance(form.params()["seed"], int)
    form.set_params({"seed": SEED_MAX})
    assert form.detector_params()["seed"] == SEED_MAX
    form.seed.setValue(SEED_MAX + 10)
    assert form.params()["seed"] == SEED_MAX
