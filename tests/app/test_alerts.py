"""The structural alerts beside the heatmap: listed for the selected molecule, and picking one
highlights exactly its atoms in the drawing (through the heatmap's highlight path)."""
from __future__ import annotations

import pytest

import core
from app.widgets.heatmap import HeatmapPanel
from core import GLocalKD, load, structural_alerts

MOLECULES = ["C=CC(=O)C", "O=[N+]([O-])c1ccccc1", "CCO", "CCN", "CCCO", "CCOC", "CC(C)O", "CCCC", "CCCN", "OCCO"]


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    path = tmp_path_factory.mktemp("alerts") / "mols.smi"
    path.write_text("smiles id\n" + "".join(f"{s} m{k}\n" for k, s in enumerate(MOLECULES)))
    graphs = load(str(path))
    model = GLocalKD(epochs=2, hidden_dim=16, out_dim=8).fit(graphs)
    return graphs, model.score(graphs)


@pytest.fixture
def panel(qtbot, monkeypatch):
    panel = HeatmapPanel()
    qtbot.addWidget(panel)
    panel.drawn = []
    real = core.draw_heatmap

    def spy(figure, graphs, i, errors, **kwargs):  # what reaches core's drawing
        panel.drawn.append(kwargs.get("highlight"))
        return real(figure, graphs, i, errors, **kwargs)

    monkeypatch.setattr(core, "draw_heatmap", spy, raising=False)
    return panel


def test_the_list_shows_a_michael_acceptors_and_a_nitro_aromatics_alerts_and_none_for_ethanol(panel, scored):
    graphs, scores = scored
    panel.show_graph(graphs, 0, scores)
    labels = [panel.alerts.list.item(k).text() for k in range(panel.alerts.list.count())]
    assert any(t.startswith("Brenk Michael acceptor 1: C0 C1 C2 O3") for t in labels), labels
    assert len(labels) == len(structural_alerts("C=CC(=O)C"))
    top = [j for j, _ in scores.top_nodes(0, 3)]
    inside = panel.alerts.inside.text()
    assert "Michael acceptor 1" in inside and f"C{top[0]}" in inside  # every atom of this molecule is in the alert

    panel.show_graph(graphs, 1, scores)
    labels = [panel.alerts.list.item(k).text() for k in range(panel.alerts.list.count())]
    assert any(t.startswith("Brenk nitro group: ") for t in labels), labels

    panel.show_graph(graphs, 2, scores)
    assert panel.alerts.list.count() == 0 and panel.alerts.label.text() == "Structural alerts: none"
    assert not panel.alerts.isHidden()  # a molecule: the list says it has none

    panel.clear()
    assert panel.alerts.isHidden()


def test_picking_an_alert_highlights_exactly_its_atoms_and_unpicking_restores_the_smarts_match(panel, scored):
    graphs, scores = scored
    panel.show_graph(graphs, 1, scores, highlight=[0])  # a SMARTS match on atom 0
    assert panel.drawn[-1] == [0]
    nitro = next(a for a in panel.alerts.alerts() if a.name == "nitro_group")
    row = panel.alerts.alerts().index(nitro)
    panel.alerts.pick(row)
    assert panel.drawn[-1] == list(nitro.atoms) == [0, 1, 2]
    assert panel.highlighted_atoms() == [0, 1, 2]
    panel.alerts.pick(None)
    assert panel.drawn[-1] == [0]
    panel.alerts.pick(row)
    panel.show_graph(graphs, 0, scores)  # another molecule: no alert picked
    assert panel.drawn[-1] is None


def test_each_molecule_is_searched_once(panel, scored, monkeypatch):
    graphs, scores = scored
    calls = []
    real = core.structural_alerts
    monkeypatch.setattr(core, "structural_alerts", lambda m: calls.append(m) or real(m), raising=False)
    for i in (0, 1, 0, 1, 0):
        panel.show_graph(graphs, i, scores)
    assert calls == [MOLECULES[0], MOLECULES[1]]


def test_clearing_the_alerts_sets_no_negative_size(qtbot, qtlog):
    """An empty note has no height for its width (Qt answers -1): clearing the panel, as opening
    data does, must not ask Qt for a negative minimum size (a warning printed at start)."""
    from app.widgets.alerts import AlertList

    alerts = AlertList()
    qtbot.addWidget(alerts)
    alerts.clear()
    alerts.set_top_atoms([])
    assert alerts.inside.minimumHeight() == 0
    assert not [r for r in qtlog.records if "Negative sizes" in r.message]


def test_a_tu_molecule_lists_the_alerts_its_report_and_sd_file_carry(panel, aids_zip):
    """AIDS's graphs have no SMILES: the list hid itself, though the reports list their alerts."""
    from core import alerts_text, graph_alerts

    graphs = load(aids_zip).subset(range(40))
    scores = GLocalKD(epochs=1, hidden_dim=8, out_dim=4).fit(graphs).score(graphs)
    with_alerts = [i for i in range(40) if graph_alerts(graphs, i)]
    assert with_alerts
    for i in with_alerts[:3]:
        panel.show_graph(graphs, i, scores)
        assert not panel.alerts.isHidden()
        assert alerts_text(panel.alerts.alerts()) == alerts_text(graph_alerts(graphs, i))
