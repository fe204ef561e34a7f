"""Labels that read as a measurement (an IC50 column taken for the labels) are said to be one,
by the command line's summary and the window, instead of hundreds of values listed one by one."""
from __future__ import annotations

import numpy as np

from core import load
from core.cli.main import main

SMILES = ["C" * k + "O" for k in range(1, 16)] + ["C" * k + "N" for k in range(1, 16)]


def _table(path, labels):
    path.write_text("smiles,label\n" + "".join(f"{s},{y}\n" for s, y in zip(SMILES * 3, labels)))
    return path


def test_a_column_of_measurements_is_noted_and_classes_are_not(tmp_path):
    rng = np.random.default_rng(0)
    measured = load(_table(tmp_path / "ic50.csv", [f"{v:.3f}" for v in rng.uniform(0, 10, len(SMILES))]))
    note = measured.labels_note()
    assert "30 different values, 30 of them on one graph each" in note and "measurement" in note
    classes = load(_table(tmp_path / "classes.csv", ["active" if i % 3 else "inactive" for i in range(len(SMILES))]))
    assert classes.labels_note() == ""
    many_classes = load(_table(tmp_path / "many.csv", [str(i % 25) for i in range(3 * len(SMILES))]))
    assert many_classes.labels_note() == ""  # 25 classes of 3-4 graphs each: classes, not a measurement
    unlabelled = load(_table(tmp_path / "none.csv", [""] * len(SMILES)))
    assert unlabelled.labels_note() == ""


def test_info_counts_measured_labels_instead_of_listing_them(tmp_path, capsys):
    rng = np.random.default_rng(1)
    path = _table(tmp_path / "ic50.csv", [f"{v:.3f}" for v in rng.uniform(0, 10, len(SMILES))])
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "30 different labels" in out and "read as a measurement, not as classes" in out
    assert out.count(":") < 10  # not one "value: count" per graph
