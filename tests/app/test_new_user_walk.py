"""What a new user met walking through the demo (train, menus, filters, export, score a file),
each fixed and held here: a graph collection scored with a molecule model names the file, the
loss curve counts whole epochs, a long title is not cut off on a narrow panel, and a small
molecule is not drawn with giant symbols."""
from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from app import tasks
from app.widgets.plots import LossPlot
from core import GLocalKD, GLocalKDError, draw_heatmap, load


@pytest.fixture(scope="module")
def molecules(tmp_path_factory):
    path = tmp_path_factory.mktemp("walk") / "mols.smi"
    path.write_text("smiles id\n" + "".join(f"{s} m{k}\n" for k, s in enumerate(
        ["CCO", "CCN", "CCCO", "c1ccccc1O", "Nc1ccncc1", "CC(=O)O", "CCOC", "OCCO"])))
    graphs = load(str(path))
    return graphs, GLocalKD(epochs=1, hidden_dim=16, out_dim=8).fit(graphs)


def test_scoring_a_graph_collection_with_a_molecule_model_names_the_file_and_what_to_do(molecules, tu_folder,
                                                                                     tmp_path):
    _, model = molecules
    with pytest.raises(GLocalKDError) as caught:
        tasks.screen_file(model, str(tu_folder), str(tmp_path / "r.csv"), tasks.Job())
    text = str(caught.value)
    assert text.startswith(f"{tu_folder.name} cannot be scored with this model")
    assert "atom features" in text and "train on this one" in text
    assert not (tmp_path / "r.csv").exists()


def test_the_loss_curve_counts_whole_epochs(qtbot):
    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.show_losses([118.0, 105.2, 99.0])
    plot.figure.canvas.draw()
    ticks = [t for t in plot.ax.get_xticks() if plot.ax.get_xlim()[0] <= t <= plot.ax.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks


def test_a_long_title_fits_a_narrow_heatmap_and_a_small_molecule_keeps_text_sized_symbols(molecules):
    graphs, model = molecules
    scores = model.score(graphs)
    fig = Figure(figsize=(2.6, 6.0), dpi=100)  # a scored file's tab: the drawing beside the table is narrow
    FigureCanvasAgg(fig)
    title = "4,4'-DIFLUOROBENZHYDROL · score 11.39"
    drawing = draw_heatmap(fig, graphs, 4, scores.node_errors_of(4), title=title)
    fig.canvas.draw()
    shown = [t for t in fig.texts if t.get_text() == title]
    assert shown
    renderer = fig.canvas.get_renderer()
    box = shown[0].get_window_extent(renderer=renderer)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width + 1  # wrapped inside the figure, nothing cut off
    bar = [a for a in fig.axes if a is not drawing.ax][0]
    label = bar.xaxis.label.get_window_extent(renderer=renderer)  # under the drawing on a tall narrow panel
    assert 0 <= label.x0 and label.x1 <= fig.bbox.width and label.y0 >= 0
    assert bar.get_window_extent().y1 < drawing.ax.get_window_extent().y0

    wide = Figure(figsize=(12.0, 6.0), dpi=100)  # a big panel: ethanol is not drawn with 200-pixel bonds
    FigureCanvasAgg(wide)
    drawing = draw_heatmap(wide, graphs, 0, scores.node_errors_of(0))
    x0, x1 = drawing.ax.get_xlim()
    assert drawing.bond * drawing.ax.get_window_extent().width / abs(x1 - x0) <= 61.0
    assert np.ptp(drawing.xy[:, 0]) > 0  # and it is drawn


def test_the_maps_colour_bar_is_labelled_within_a_short_canvas(qtbot, molecules):
    from types import SimpleNamespace

    from app.widgets.map_view import MapView

    graphs, model = molecules
    scores = model.score(graphs)
    view = MapView()
    qtbot.addWidget(view)
    view.resize(400, 300)  # beside the table in a 1280x800 window
    view.show()
    n = len(graphs)
    space_map = SimpleNamespace(coords=np.random.default_rng(0).normal(size=(n, 2)), indices=np.arange(n),
                                space="predictor", method="tsne", note="t-SNE of all graphs")
    view.set_map(space_map, graphs, scores, np.zeros(n, dtype=bool))
    fig = view.canvas.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bar_axes = [a for a in fig.axes if a is not view.ax]
    assert bar_axes
    label = bar_axes[0].yaxis.label
    assert label.get_text()
    box = label.get_window_extent(renderer=renderer)
    assert box.y0 >= 0 and box.y1 <= fig.bbox.height, (box, fig.bbox)
