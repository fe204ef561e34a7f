"""A table whose label column holds a measurement opens with a note saying so, and the data
summary counts its values instead of listing each one."""
import numpy as np

from .test_main_window import open_and_wait


def test_opening_measured_labels_says_they_are_not_classes(qtbot, window, tmp_path):
    smiles = ["C" * k + "O" for k in range(1, 31)]
    path = tmp_path / "ic50.csv"
    path.write_text("smiles,label\n" + "".join(f"{s},{v:.2f}\n" for s, v in zip(smiles, np.linspace(4.0, 9.0, 30))))
    messages = []
    window.statusBar().messageChanged.connect(messages.append)
    open_and_wait(qtbot, window, path)
    assert any("read as a measurement, not as classes" in m for m in messages)
    summary = " ".join(window.state.summary_lines())
    assert "30 different values (a measurement, not classes)" in summary
