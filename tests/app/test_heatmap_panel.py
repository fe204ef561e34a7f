"""The heatmap panel on a large molecule (readable bonds, pan and zoom, hover), and the side
panel's text fitting its width after the demo loads (pytest-qt, offscreen)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QAbstractButton, QLabel

from app.widgets.heatmap import HeatmapPanel
from core import READABLE_BOND_PX, GLocalKD, load, node_names
from tests.app.test_main_window import open_and_wait

PEPTIDE = ("CC(C)C[C@H](NC(=O)[C@@H](Cc1ccccc1)NC(=O)[C@H](CCC(N)=O)NC(=O)[C@@H](CC(C)C)NC(=O)[C@H](Cc1ccc(O)cc1)"
           "NC(=O)[C@@H](N)CO)C(=O)N[C@@H](CCCNC(N)=N)C(=O)N1CCC[C@H]1C(=O)NCC(N)=O")  # 77 atoms
MOLECULES = [PEPTIDE, "Clc1ccccc1C(c1ccccc1)(c1ccccc1)n1ccnc1", "CCO", "CCN", "CCCO", "c1ccccc1O",
             "O=[N+]([O-])c1ccccc1C=CC(=O)C"]  # the last with two alerts


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    path = tmp_path_factory.mktemp("panel") / "mols.smi"
    path.write_text("smiles id\n" + "".join(f"{s} m{k}\n" for k, s in enumerate(MOLECULES)))
    graphs = load(str(path))
    model = GLocalKD(epochs=2, hidden_dim=16, out_dim=8).fit(graphs)
    return graphs, model.score(graphs)


@pytest.fixture
def panel(qtbot):
    panel = HeatmapPanel()
    qtbot.addWidget(panel)
    panel.resize(1200, 420)  # the panel's size in a 1600x1000 window
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def test_a_large_molecule_is_shown_at_a_readable_bond_length_and_zooms_between_fit_and_readable(panel, scored):
    graphs, scores = scored
    panel.show_graph(graphs, 0, scores)
    assert panel.drawing.kind == "molecule"
    assert panel.screen_bond_px() >= READABLE_BOND_PX - 0.5  # not squeezed into the box
    assert not panel.zoom_in.isHidden() and panel.fit.isEnabled()
    panel.fit_view()  # the whole molecule: smaller than readable, as the user asked
    whole = panel.screen_bond_px()
    assert whole < READABLE_BOND_PX
    panel.zoom(1.25)
    assert panel.screen_bond_px() == pytest.approx(whole * 1.25, rel=0.02)
    panel.fit_view()
    panel.zoom(1 / 1.25)  # never smaller than the whole molecule
    assert panel.screen_bond_px() == pytest.approx(whole, rel=0.02)
    panel.readable_view()
    assert panel.screen_bond_px() == pytest.approx(READABLE_BOND_PX, rel=0.02)

    panel.show_graph(graphs, 1, scores)  # a small molecule: fitted whole, bonds longer than the floor
    assert panel.screen_bond_px() >= READABLE_BOND_PX
    left, right, _, _ = panel.drawing.extent
    assert tuple(panel.drawing.ax.get_xlim()) == (left, right)


def test_hovering_an_atom_names_it_with_its_error_and_rank(panel, scored):
    graphs, scores = scored
    panel.show_graph(graphs, 1, scores)
    errors = scores.node_errors_of(1)
    top = int(np.argmax(errors))
    x, y = panel.drawing.xy[top]
    name = node_names(graphs, 1)[top]
    assert panel.atom_under(x + 0.1 * panel.drawing.bond, y) == f"{name}: error {errors[top]:.4g} (rank 1 of {len(errors)})"
    far = panel.drawing.extent[1] + 100.0
    assert panel.atom_under(far, far) == ""


def test_saving_a_zoomed_view_saves_the_whole_molecule(panel, scored, tmp_path):
    graphs, scores = scored
    panel.show_graph(graphs, 0, scores)
    view = panel.drawing.ax.get_xlim()
    panel.save_to(str(tmp_path / "h.png"))
    assert (tmp_path / "h.png").stat().st_size > 1000
    assert panel.drawing.ax.get_xlim() == view  # the view is back where the user left it


def test_the_side_column_scrolls_instead_of_overlapping_its_parts_on_a_short_panel(qtbot, scored):
    graphs, scores = scored
    panel = HeatmapPanel()
    qtbot.addWidget(panel)
    panel.resize(860, 330)  # the heatmap tab of a 1280x800 window
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_graph(graphs, 6, scores)
    panel.set_neighbours([(1, "m1", 0.5, 1.0), (2, "m2", 0.4, 2.0), (3, "m3", 0.3, 3.0)])
    qtbot.wait(50)
    assert panel.alerts.list.count() >= 2 and panel.alerts.inside.isVisible()
    assert panel.height() == 330  # the column does not force the panel taller than the window gives it
    column = panel.side_column.widget()
    parts = [panel.scale, panel.top_label, panel.top, panel.alerts.label, panel.alerts.list, panel.alerts.inside,
             panel.neighbours_label, panel.neighbours, panel.save_button]
    rects = [(w, w.geometry().translated(w.parentWidget().mapTo(column, QPoint(0, 0)))) for w in parts]
    for k, (a, ra) in enumerate(rects):
        assert a.isVisible()
        for b, rb in rects[k + 1:]:
            assert not ra.intersects(rb), (a, b, ra, rb)


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 800)])
def test_the_side_panel_wraps_its_text_instead_of_clipping_it(qtbot, window, herg_path, size):
    window.resize(*size)
    open_and_wait(qtbot, window, herg_path)
    window.form.detector.setCurrentIndex(window.form.detector.findData("glocalkd"))  # its rows all shown
    qtbot.wait(50)
    side = window.side
    viewport = side.viewport()
    assert not side.horizontalScrollBar().isVisible()
    checked = 0
    for widget in side.widget().findChildren(QLabel) + side.widget().findChildren(QAbstractButton):
        if not widget.isVisible() or not (widget.text() if hasattr(widget, "text") else ""):
            continue
        right = widget.mapTo(viewport, QPoint(widget.width(), 0)).x()
        assert right <= viewport.width(), (widget.text()[:40], right, viewport.width())
        assert widget.width() >= widget.minimumSizeHint().width() or (isinstance(widget, QLabel)
                                                                       and widget.wordWrap()), widget.text()[:40]
        checked += 1
    assert checked >= 8
