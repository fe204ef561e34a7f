"""Heatmaps that read on every molecule: element symbols contrast with their disks (WCAG 4.5:1,
read back from the drawing), indices only on the top-error atoms and clear of the symbols, large
molecules drawn at a readable bond length, and a SMARTS match highlighted by its own bonds."""
import re

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from rdkit import Chem

from core import READABLE_BOND_PX, draw_heatmap, load, molecule_image, smarts_match
from core.viz.heatmap import contrast_ratio, label_colour, place_notes

# a 77-atom peptide and hERG's largest compound (74 atoms: three cations and a phosphate)
PEPTIDE = ("CC(C)C[C@H](NC(=O)[C@@H](Cc1ccccc1)NC(=O)[C@H](CCC(N)=O)NC(=O)[C@@H](CC(C)C)NC(=O)[C@H](Cc1ccc(O)cc1)"
           "NC(=O)[C@@H](N)CO)C(=O)N[C@@H](CCCNC(N)=N)C(=O)N1CCC[C@H]1C(=O)NCC(N)=O")
CLOFILIUM = ".".join(["CCCCCCC[N+](CC)(CC)CCCCc1ccc(Cl)cc1"] * 3 + ["O=P([O-])([O-])[O-]"])
SMALL = "Clc1ccccc1C(c1ccccc1)(c1ccccc1)n1ccnc1"  # clotrimazole, 25 atoms


def _hex(text: str) -> tuple[float, float, float]:
    return tuple(int(text[k:k + 2], 16) / 255 for k in (1, 3, 5))


def _symbol_and_disk_colours(svg: str) -> dict[int, tuple[tuple, tuple]]:
    """atom -> (its symbol's colour, its disk's colour), read from RDKit's SVG (the last opaque
    symbol drawn is the one seen)."""
    disks = {int(a): _hex(c) for a, c in re.findall(r"<ellipse [^>]*class='atom-(\d+)'\s+style='fill:(#[0-9A-F]{6})",
                                                     svg)}
    symbols = {}
    for a, colour in re.findall(r"<path class='atom-(\d+)' d='[^']*' fill='(#[0-9A-F]{6,8})'", svg):
        if len(colour) == 7 or colour.endswith("FF"):
            symbols[int(a)] = _hex(colour)
    return {a: (symbols[a], disks[a]) for a in symbols if a in disks}


@pytest.mark.parametrize("smiles, planted", [("CCN(C)c1ccccc1", 2), ("OC(=O)c1ccccc1Cl", 9), (SMALL, 0)])
def test_every_symbol_contrasts_with_its_disk_even_on_a_planted_maximum_error_atom(smiles, planted):
    mol = Chem.MolFromSmiles(smiles)
    errors = np.linspace(0.0, 30.0, mol.GetNumAtoms())
    errors[planted] = 500.0  # far above the shared scale's top: the darkest red
    svg = molecule_image(mol, errors, svg=True, scale="linear", vmax=40.0).decode()
    seen = _symbol_and_disk_colours(svg)
    assert planted in seen, "the planted heteroatom's symbol is drawn on its disk"
    symbol, disk = seen[planted]
    assert disk == pytest.approx(_hex("#800026"), abs=0.01)  # YlOrRd's darkest
    for atom, (symbol, disk) in seen.items():
        assert contrast_ratio(symbol, disk) >= 4.5, (atom, symbol, disk)


def test_black_or_white_meets_wcag_on_every_colour_of_the_scale_where_the_old_rule_did_not():
    from matplotlib import colormaps

    cmap = colormaps["YlOrRd"]
    fills = [cmap(x)[:3] for x in np.linspace(0, 1, 256)]
    assert min(contrast_ratio(label_colour(f), f) for f in fills) >= 4.5
    old_rule = [(1.0,) * 3 if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5 else (0.13,) * 3 for r, g, b in fills]
    assert min(contrast_ratio(t, f) for t, f in zip(old_rule, fills)) < 4.5  # white on mid orange-red


def _graphs(tmp_path, *smiles):
    path = tmp_path / "m.smi"
    path.write_text("smiles id\n" + "".join(f"{s} m{k}\n" for k, s in enumerate(smiles)))
    return load(str(path))


def _figure(width_px=830, height_px=330):
    fig = Figure(figsize=(width_px / 100, height_px / 100), dpi=100)
    FigureCanvasAgg(fig)
    return fig


@pytest.mark.parametrize("smiles", [PEPTIDE, CLOFILIUM])
def test_a_large_molecule_is_drawn_at_a_readable_bond_length_and_a_small_one_fitted(tmp_path, smiles):
    graphs = _graphs(tmp_path, smiles, SMALL)
    n = int(graphs.graphs[0].num_nodes)
    assert n >= 60
    errors = np.random.default_rng(0).gamma(2.0, 10.0, n)
    fig = _figure()
    drawing = draw_heatmap(fig, graphs, 0, errors, min_bond_px=READABLE_BOND_PX)
    ax = drawing.ax
    x0, x1 = ax.get_xlim()
    on_screen = drawing.bond * ax.get_window_extent().width / abs(x1 - x0)
    assert on_screen >= READABLE_BOND_PX - 0.5  # the view shows it at the readable length
    fitted = draw_heatmap(_figure(), graphs, 0, errors)  # without the floor: squeezed into the box
    fx0, fx1 = fitted.ax.get_xlim()
    assert fitted.bond * fitted.ax.get_window_extent().width / abs(fx1 - fx0) < READABLE_BOND_PX
    left, right, bottom, top = drawing.extent
    assert right - left > abs(x1 - x0) or bottom - top > abs(ax.get_ylim()[0] - ax.get_ylim()[1])  # a part shown
    top_atom = int(np.argmax(errors))
    tx, ty = drawing.xy[top_atom]
    assert min(x0, x1) <= tx <= max(x0, x1)  # around the largest error

    small = draw_heatmap(_figure(), graphs, 1, np.ones(int(graphs.graphs[1].num_nodes)),
                         min_bond_px=READABLE_BOND_PX)
    sx0, sx1 = small.ax.get_xlim()
    assert (sx0, sx1) == (small.extent[0], small.extent[1])  # fitted whole
    assert small.bond * small.ax.get_window_extent().width / abs(sx1 - sx0) >= READABLE_BOND_PX


def test_only_the_top_error_atoms_carry_an_index_and_notes_overlap_no_symbol_nor_each_other(tmp_path):
    graphs = _graphs(tmp_path, PEPTIDE)
    n = int(graphs.graphs[0].num_nodes)
    errors = np.random.default_rng(1).gamma(2.0, 10.0, n)
    drawing = draw_heatmap(_figure(1200, 900), graphs, 0, errors, notes=5)
    written = sorted(int(t.get_text()) for t in drawing.ax.texts)
    assert written == sorted(np.argsort(-errors)[:5].tolist()) == drawing.notes

    mol = Chem.MolFromSmiles(PEPTIDE)
    from core.viz.heatmap import _draw

    drawn = _draw(mol, errors, (900, 700), False, min_bond_px=READABLE_BOND_PX)
    bonds = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()]
    atoms = np.argsort(-errors)[:12].tolist()
    box = (22.0, 16.0)
    spots = place_notes(drawn.xy, bonds, atoms, box, clearance=0.4 * drawn.bond_px)
    centres = np.array([spots[a] for a in atoms])
    for k in range(len(atoms)):  # no two notes overlap
        others = np.delete(centres, k, axis=0)
        assert np.all((np.abs(others[:, 0] - centres[k, 0]) >= box[0] - 1e-6)
                      | (np.abs(others[:, 1] - centres[k, 1]) >= box[1] - 1e-6)), atoms[k]
    for a, (x, y) in spots.items():  # no note covers an atom's symbol (a box of the note's height around it)
        near = (np.abs(drawn.xy[:, 0] - x) < (box[0] + box[1]) / 2) & (np.abs(drawn.xy[:, 1] - y) < box[1])
        assert not near.any(), (a, np.flatnonzero(near))


def _highlighted_bonds(svg: str) -> set[int]:
    """The bonds RDKit drew as highlights (a filled band) in an SVG."""
    return {int(b) for b in re.findall(r"<path class='bond-(\d+) atom-\d+ atom-\d+' d='[^']*Z' style='fill:#", svg)}


def _bonds(mol, rule) -> set[int]:
    return {b.GetIdx() for b in mol.GetBonds() if rule(b)}


def _elements(b) -> set[int]:
    return {b.GetBeginAtom().GetAtomicNum(), b.GetEndAtom().GetAtomicNum()}


@pytest.mark.parametrize("smiles, smarts, rule", [
    ("c1ccccc1-c1ccccc1", "c1ccccc1", lambda b: b.IsInRing()),  # not the bond between the rings
    ("CC(=O)OCC(=O)O", "C(=O)O", lambda b: b.GetIdx() in {1, 2, 5, 6}),  # C=O and C-O of both, not O-CH2
    ("CCN(C)C(=O)Nc1ccncc1", "[#6]~[#7]", lambda b: _elements(b) == {6, 7}),  # every C-N bond, no C-C or C=O
    ("C1CC1", "C~C~C", lambda b: True),  # each ordering of the match brings its own bonds: all three
])
def test_a_smarts_highlight_is_exactly_the_bonds_of_its_matches(smiles, smarts, rule):
    mol = Chem.MolFromSmiles(smiles)
    atoms, bonds = smarts_match(mol, smarts)
    expected = _bonds(mol, rule)
    assert set(bonds) == expected
    assert set(atoms) == {a for b in expected for a in (mol.GetBondWithIdx(b).GetBeginAtomIdx(),
                                                        mol.GetBondWithIdx(b).GetEndAtomIdx())}
    for errors in (None, np.linspace(0, 10, mol.GetNumAtoms())):  # plain and heatmap drawings alike
        svg = molecule_image(mol, errors, svg=True, highlight=atoms, highlight_bonds=bonds).decode()
        assert _highlighted_bonds(svg) == expected
