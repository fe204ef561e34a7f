"""Per-node error heatmaps: molecules drawn by RDKit with atoms coloured by error, other
graphs drawn with networkx; both onto a matplotlib Figure with a colour bar (no Qt here)."""
from __future__ import annotations

import io
from dataclasses import dataclass, field

import matplotlib
import numpy as np
from matplotlib import colormaps
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure

from core.data.graph_molecules import graph_molecule
from core.data.graphset import GraphSet

CMAP = "YlOrRd"
READABLE_BOND_PX = 36.0  # the shortest bond drawn on screen: element symbols are then about 12 px high
LARGEST_BOND_PX = 60.0  # a small molecule fills its box up to this bond length, its symbols no larger than text
NOTED_ATOMS = 5  # how many of the top-error atoms carry their index in the drawing (the others: on hover)
_MAX_SIDE = 4096  # the largest drawing of one molecule, in pixels per side


SCALES = ("robust", "linear", "log")  # how node errors map to colours; see node_error_norm


def node_error_norm(errors: np.ndarray, scale: str = "robust", vmax: float | None = None) -> Normalize:
    """Make the colour scale of a heatmap.

    Args:
        errors: the node errors of one graph, shape ``(nodes,)``.
        scale: ``robust`` (default) clips at the 90th percentile of the errors (with at least 4
            finite errors), so one extreme atom (a metal with error 56) does not wash every other
            atom out to the palest colour; ``linear`` runs from 0 to the largest error; ``log`` is
            logarithmic between the smallest positive error and the largest (linear when no error
            is positive).
        vmax: a fixed top of the scale (e.g. :func:`fixed_error_scale` of a whole data set), so
            colours compare across molecules; overrides ``scale``'s top.

    Returns:
        A clipping matplotlib norm: ``LogNorm`` for ``log``, else ``Normalize`` from 0 (its top is 1
        when the errors give none above 0).
    """
    errors = np.asarray(errors, dtype=np.float64)
    finite = errors[np.isfinite(errors)]
    top = float(finite.max()) if finite.size else 1.0
    if scale == "log":
        positive = finite[finite > 0]
        if positive.size:
            low = float(positive.min())
            high = float(vmax) if vmax is not None else top
            return LogNorm(vmin=low, vmax=max(high, low * 10), clip=True)
    if vmax is not None:
        top = float(vmax)
    elif scale == "robust" and finite.size >= 4:
        top = float(np.percentile(finite, 90))
    return Normalize(vmin=0.0, vmax=top if top > 0 else 1.0, clip=True)


def fixed_error_scale(node_errors: np.ndarray, percentile: float = 99.0) -> float:
    """Choose one top of scale for every molecule of a data set, so heatmap colours compare.

    Args:
        node_errors: all node errors of the data set, any shape; non-finite values are ignored.
        percentile: the percentile of the errors taken as the top.

    Returns:
        That percentile of the finite errors, or 1.0 when there are none.
    """
    finite = np.asarray(node_errors, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    return float(np.percentile(finite, percentile)) if finite.size else 1.0


def _colours(errors: np.ndarray, scale: str = "robust", vmax: float | None = None
             ) -> tuple[Normalize, list[tuple[float, float, float]]]:
    norm = node_error_norm(errors, scale, vmax)
    cmap = colormaps[CMAP]
    return norm, [tuple(cmap(norm(e))[:3]) for e in errors]


def relative_luminance(colour) -> float:
    """WCAG 2 relative luminance of an sRGB colour given as floats in [0, 1] (alpha ignored).

    Args:
        colour: (r, g, b) or (r, g, b, a).

    Returns:
        The luminance, 0 for black to 1 for white.
    """
    channels = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (float(v) for v in colour[:3])]
    return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]


def contrast_ratio(first, second) -> float:
    """WCAG 2 contrast ratio of two colours, from 1 (the same) to 21 (black on white).

    Args:
        first: an sRGB colour as a float tuple in [0, 1].
        second: another.

    Returns:
        (lighter + 0.05) / (darker + 0.05) of their relative luminances.
    """
    a, b = sorted((relative_luminance(first), relative_luminance(second)))
    return (b + 0.05) / (a + 0.05)


def label_colour(fill) -> tuple[float, float, float]:
    """Black or white, whichever contrasts more with ``fill`` (at least 4.58:1 for any fill, so a
    symbol or index on it meets WCAG's 4.5:1 for text).

    Args:
        fill: the colour under the text, as a float tuple in [0, 1].

    Returns:
        (0, 0, 0) or (1, 1, 1).
    """
    black, white = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)
    return white if contrast_ratio(white, fill) > contrast_ratio(black, fill) else black


def _spread_fragments(mol):
    """A copy of ``mol`` with 2D coordinates where its fragments (salts, counter-ions) sit side by
    side, largest first, instead of overlapping when their atoms are highlighted."""
    from rdkit import Chem
    from rdkit.Chem import rdDepictor

    mol = Chem.Mol(mol)
    rdDepictor.Compute2DCoords(mol)
    frags = sorted(Chem.GetMolFrags(mol), key=len, reverse=True)
    if len(frags) < 2:
        return mol
    conf = mol.GetConformer()
    xy = np.array([[conf.GetAtomPosition(a).x, conf.GetAtomPosition(a).y] for a in range(mol.GetNumAtoms())])
    widths = [float(np.ptp(xy[list(f), 0])) + 2.0 for f in frags]  # two bond lengths between fragments
    heights = [float(np.ptp(xy[list(f), 1])) + 2.0 for f in frags]
    limit = max(max(widths), sum(widths) / np.ceil(np.sqrt(len(frags))))  # wrap into a roughly square block
    left = top = row_height = 0.0
    for frag, width, height in zip(frags, widths, heights):
        if left > 0 and left + width > limit + 1e-6:
            left, top, row_height = 0.0, top - row_height, 0.0
        idx = list(frag)
        pts = xy[idx]
        shift = np.array([left - pts[:, 0].min(), top - pts[:, 1].max()])
        for a in idx:
            x, y = xy[a] + shift
            conf.SetAtomPosition(a, (float(x), float(y), 0.0))
        left += width
        row_height = max(row_height, height)
    return mol


@dataclass
class _Drawn:
    """An RDKit drawing and where its atoms ended up."""

    drawer: object
    size: tuple[int, int]  # pixels
    xy: np.ndarray  # the atoms' pixel coordinates, (atoms, 2)
    bond_px: float  # the median bond length in pixels
    fills: dict[int, tuple] = field(default_factory=dict)  # atom -> the colour of its disk
    labels: dict[int, tuple] = field(default_factory=dict)  # atom -> the colour of its symbol


def _median_bond(mol, xy: np.ndarray) -> float:
    lengths = [float(np.linalg.norm(xy[b.GetBeginAtomIdx()] - xy[b.GetEndAtomIdx()])) for b in mol.GetBonds()]
    return float(np.median(lengths)) if lengths else 1.5


def _has_symbol(atom) -> bool:
    """Whether RDKit writes a symbol at this atom (not a plain carbon of the skeleton)."""
    return (atom.GetAtomicNum() != 6 or atom.GetFormalCharge() != 0 or atom.GetIsotope() != 0
            or atom.GetDegree() == 0 or atom.GetNumRadicalElectrons() != 0)


def _bonds_between(mol, atoms) -> list[int]:
    hit = set(atoms)
    return [b.GetIdx() for b in mol.GetBonds() if b.GetBeginAtomIdx() in hit and b.GetEndAtomIdx() in hit]


def _draw(mol, errors, size, svg, scale="robust", vmax=None, highlight=None, highlight_bonds=None, legend="",
          min_bond_px: float | None = None) -> _Drawn:
    """Draw ``mol`` with RDKit: disks coloured by ``errors`` (or the ``highlight`` atoms in blue), the
    ``highlight_bonds`` (default: the bonds between ``highlight`` atoms) in blue, and every element
    symbol in black or white, whichever contrasts more with its disk (two passes on one canvas at
    one scale: the disks and highlighted bonds, then the structure with per-atom symbol colours).

    ``min_bond_px``: when fitting the molecule into ``size`` would draw bonds shorter than this,
    the canvas grows until they are this long (up to 4096 pixels a side)."""
    from rdkit import Geometry
    from rdkit.Chem.Draw import rdMolDraw2D

    n = mol.GetNumAtoms()
    mol = rdMolDraw2D.PrepareMolForDrawing(_spread_fragments(mol))  # kekulized, wedged (may add H on stereo centres)
    conf = mol.GetConformer()
    coords = np.array([[conf.GetAtomPosition(a).x, conf.GetAtomPosition(a).y] for a in range(mol.GetNumAtoms())])
    bond = _median_bond(mol, coords)
    pad = 0.8 * bond  # room for symbols such as NH2 and for the largest disks at the edges
    low, high = coords.min(axis=0) - pad, coords.max(axis=0) + pad
    span = np.maximum(high - low, bond)
    width, height = (int(v) for v in size)
    legend_share = 0.1 if legend else 0.0  # RDKit keeps this share of the height for the legend
    fit = min(width / span[0], height * (1 - legend_share) / span[1])  # pixels per coordinate unit
    fit = min(fit, LARGEST_BOND_PX / bond)  # ethanol is not drawn with 200-pixel bonds and giant symbols
    if min_bond_px and fit * bond < min_bond_px:
        fit = min_bond_px / bond
        width = min(_MAX_SIDE, max(width, int(np.ceil(span[0] * fit))))
        height = min(_MAX_SIDE, max(height, int(np.ceil(span[1] * fit / (1 - legend_share)))))
    drawer = rdMolDraw2D.MolDraw2DSVG(width, height) if svg else rdMolDraw2D.MolDraw2DCairo(width, height)
    opts = drawer.drawOptions()
    opts.prepareMolsBeforeDrawing = False
    opts.padding = 0.0
    opts.legendFontSize = 16
    opts.baseFontSize = 0.7  # RDKit's 0.6 writes symbols 8 px high on 28 px bonds
    opts.maxFontSize = 20  # and no larger than text on a small molecule's long bonds
    drawer.SetScale(width, height, Geometry.Point2D(*low), Geometry.Point2D(*high), mol)

    atoms = list(range(n))
    fills: dict[int, tuple] = {}
    radii: dict[int, float] = {}
    if errors is not None:
        norm, colours = _colours(errors, scale, vmax)
        top = float(norm.vmax) if norm.vmax else 1.0
        fills = {a: tuple(colours[a]) for a in atoms}
        radii = {a: (0.3 + 0.25 * float(min(1.0, max(0.0, errors[a] / top)))) * bond / 1.5 for a in atoms}
    elif highlight:
        fills = {a: (0.35, 0.6, 0.95) for a in sorted(set(highlight)) if a < n}
        radii = {a: 0.3 * bond / 1.5 for a in fills}
    if highlight_bonds is None:
        highlight_bonds = _bonds_between(mol, highlight or ())
    match_bonds = [b for b in highlight_bonds if b < mol.GetNumBonds()]
    blue = (0.2, 0.45, 0.95) if errors is not None else (0.35, 0.6, 0.95)
    shown = {a for a in fills if _has_symbol(mol.GetAtomWithIdx(a))}
    labels = {a: label_colour(fill) for a, fill in fills.items() if a in shown}
    if fills or match_bonds:  # pass 1: the disks and the highlighted bonds, every symbol and bond invisible
        opts.setAtomPalette({-1: (1.0, 1.0, 1.0, 0.0)})
        opts.setLegendColour((1.0, 1.0, 1.0, 0.0))  # the legend takes its room in both passes, drawn in the second
        drawer.DrawMolecule(mol, legend=legend, highlightAtoms=list(fills), highlightAtomColors=fills, highlightAtomRadii=radii,
                            highlightBonds=match_bonds, highlightBondColors={b: blue for b in match_bonds})
        opts.useDefaultAtomPalette()
        opts.setLegendColour((0.0, 0.0, 0.0))
        opts.clearBackground = False
        # pass 2: the structure; a highlight without disks colours only the symbols, bonds in one colour
        opts.circleAtoms = False
        opts.continuousHighlight = False
        opts.singleColourBonds = True
    drawer.DrawMolecule(mol, legend=legend, highlightAtoms=list(labels), highlightAtomColors=labels,
                        highlightBonds=[])  # no bond between two symbols drawn in the highlight colour
    drawer.FinishDrawing()
    xy = np.array([tuple(drawer.GetDrawCoords(a)) for a in range(n)], dtype=float).reshape(n, 2)
    return _Drawn(drawer, (width, height), xy, fit * bond, fills, labels)


def top_atoms(errors: np.ndarray | None, k: int = NOTED_ATOMS) -> list[int]:
    """The atoms with the largest errors, largest first (ties in atom order).

    Args:
        errors: the node errors, or None.
        k: how many.

    Returns:
        Up to ``k`` atom indices; none without errors.
    """
    if errors is None or k <= 0:
        return []
    return np.argsort(-np.asarray(errors, dtype=np.float64), kind="stable")[:k].tolist()


def molecule_image(mol, errors: np.ndarray | None, size: tuple[int, int] = (560, 460), svg: bool = False,
                   scale: str = "robust", vmax: float | None = None, highlight: list[int] | None = None,
                   legend: str = "", highlight_bonds: list[int] | None = None,
                   min_bond_px: float | None = None) -> bytes:
    """RDKit drawing of ``mol`` with each atom's disk in its error's colour (PNG or SVG bytes).

    Args:
        mol: an RDKit molecule, atoms in node order.
        errors: its node errors; None draws the plain structure (detectors without node scores).
        size: the canvas in pixels (grown for ``min_bond_px``).
        svg: SVG instead of PNG.
        scale: the colour scale, as in :func:`node_error_norm`.
        vmax: a fixed top of the colour scale, as in :func:`node_error_norm`.
        highlight: atoms to mark (a SMARTS match or an alert); their bonds are drawn in blue.
        legend: written under the drawing (e.g. the id and score).
        highlight_bonds: the bonds to draw in blue (a SMARTS match's own bonds, :func:`smarts_match`);
            default: every bond between ``highlight`` atoms.
        min_bond_px: the shortest bond to draw, in pixels; the canvas grows for large molecules.

    Returns:
        The picture's bytes. Element symbols are black or white, whichever contrasts more with
        their disk; in an SVG the :data:`NOTED_ATOMS` atoms with the largest errors carry their
        index on a white note (:func:`place_notes`).
    """
    drawn = _draw(mol, errors, size, svg, scale, vmax, highlight, highlight_bonds, legend, min_bond_px=min_bond_px)
    data = drawn.drawer.GetDrawingText()
    if svg:
        data = data.replace("</svg>", _svg_notes(mol, drawn, top_atoms(errors)) + "</svg>")
    if svg and legend:  # RDKit draws the legend as paths: say it as text too (searchable, read aloud)
        from xml.sax.saxutils import escape

        end = data.index(">", data.index("<svg")) + 1
        data = data[:end] + f"\n<title>{escape(legend)}</title>" + data[end:]
    return data.encode() if isinstance(data, str) else data


def _note_box(atoms, font: float) -> tuple[float, float]:
    """A note's width and height in pixels for the longest index among ``atoms``."""
    digits = max((len(str(a)) for a in atoms), default=1)
    return 0.62 * font * 1.4 * digits + 6, font * 1.4 + 4


def _svg_notes(mol, drawn: _Drawn, atoms: list[int]) -> str:
    """SVG elements writing each atom's index on a white note ringed in its disk's colour."""
    if not atoms:
        return ""
    font = 11.0
    w, h = _note_box(atoms, font)
    bonds = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()]
    out = []
    for a, (x, y) in place_notes(drawn.xy, bonds, atoms, (w, h), clearance=0.4 * drawn.bond_px).items():
        ring = matplotlib.colors.to_hex(drawn.fills.get(a, (0.47, 0.47, 0.47)))
        out.append(f"<g class='note atom-{a}'><rect x='{x - w / 2:.1f}' y='{y - h / 2:.1f}' width='{w:.1f}' "
                   f"height='{h:.1f}' rx='3' style='fill:#FFFFFF;stroke:{ring};stroke-width:1.5' />"
                   f"<text x='{x:.1f}' y='{y:.1f}' text-anchor='middle' dominant-baseline='central' "
                   f"style='font-family:sans-serif;font-size:{font:.0f}px;font-weight:bold;fill:#1A1A1A'>{a}</text></g>")
    return "\n".join(out) + "\n"


@dataclass
class HeatmapDrawing:
    """What :func:`draw_heatmap` drew, for views that zoom, pan and say what is under the mouse.

    Attributes:
        kind: ``molecule`` (RDKit) or ``graph`` (networkx).
        ax: the axes holding the drawing.
        xy: each node's position in ``ax``'s data coordinates, shape ``(nodes, 2)``.
        bond: the median bond (edge) length in data coordinates.
        extent: (left, right, bottom, top) of the whole drawing in data coordinates.
        notes: the nodes whose index is written in the drawing.
    """

    kind: str
    ax: object
    xy: np.ndarray
    bond: float
    extent: tuple[float, float, float, float]
    notes: list[int] = field(default_factory=list)


def place_notes(xy: np.ndarray, bonds: list[tuple[int, int]], atoms: list[int], box: tuple[float, float],
                clearance: float) -> dict[int, tuple[float, float]]:
    """Where to write the index of each of ``atoms``: beside its atom, on the side away from its
    bonds, clear of the other notes and of every atom's symbol.

    Args:
        xy: every atom's position (pixels), shape ``(atoms, 2)``.
        bonds: the bonds as (atom, atom) pairs.
        atoms: the atoms to note, most important first (they choose their place first).
        box: a note's width and height (pixels); an atom's symbol takes a box of the same height.
        clearance: how far from its atom's centre a note's edge stays (past its disk).

    Returns:
        atom -> the centre of its note.
    """
    xy = np.asarray(xy, dtype=float)
    w, h = box
    neighbours: dict[int, list[int]] = {}
    for u, v in bonds:
        neighbours.setdefault(u, []).append(v)
        neighbours.setdefault(v, []).append(u)
    angles = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    dirs = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    reach = clearance + 0.5 * np.abs(dirs[:, 0]) * w + 0.5 * np.abs(dirs[:, 1]) * h  # the box's edge at clearance
    symbol = np.array([h, h])  # an element symbol's box around each atom

    def overlap(c1, s1, c2, s2) -> float:
        d = np.maximum(0.0, (s1 + s2) / 2 - np.abs(np.asarray(c1) - np.asarray(c2)))
        return float(d[..., 0] * d[..., 1]) if d.ndim == 1 else (d[:, 0] * d[:, 1])

    placed: dict[int, tuple[float, float]] = {}
    for a in atoms:
        around = xy[neighbours.get(a, [])] - xy[a]
        free = -around.sum(axis=0) if len(around) else np.array([1.0, -1.0])
        if np.linalg.norm(free) < 1e-6 * max(w, 1.0):  # bonds all round: between two of them
            free = np.array([around[0, 1], -around[0, 0]]) if len(around) else np.array([1.0, -1.0])
        free = free / np.linalg.norm(free)
        best, best_cost = None, np.inf
        for d, r in zip(dirs, reach):
            c = xy[a] + d * r
            cost = 1000.0 * sum(overlap(c, np.array(box), p, np.array(box)) for p in placed.values())
            cost += 10.0 * float(np.sum(overlap(c, np.array(box), xy, symbol)))
            cost += 1.0 - float(d @ free)  # the free side first
            if cost < best_cost:
                best, best_cost = c, cost
        placed[a] = (float(best[0]), float(best[1]))
    return placed


def draw_heatmap(fig: Figure, graphs: GraphSet, i: int, errors: np.ndarray | None, title: str = "",
                 scale: str = "robust", vmax: float | None = None, highlight: list[int] | None = None,
                 highlight_bonds: list[int] | None = None, min_bond_px: float | None = None,
                 notes: int = NOTED_ATOMS) -> HeatmapDrawing:
    """Draw graph i's node-error heatmap on ``fig`` (cleared first).

    Args:
        fig: the figure to draw on; a molecule is drawn at the pixel size of its axes.
        graphs: the graph set.
        i: the graph's index.
        errors: graph i's node errors, shape ``(nodes,)``; None draws the plain structure,
            without colours or colour bar.
        title: a title over the drawing (the id and score, so a saved picture says what it shows).
        scale: the colour scale (:func:`node_error_norm`); default ``robust``.
        vmax: a fixed top of the colour scale (:func:`node_error_norm`).
        highlight: node indices to mark (a SMARTS match), drawn with blue bonds.
        highlight_bonds: the bonds to draw in blue (default: those between ``highlight`` atoms).
        min_bond_px: the shortest bond on screen, in figure pixels: a molecule that would be drawn
            smaller is drawn this large and the axes show the part around its largest error at one
            drawing pixel per figure pixel (:attr:`HeatmapDrawing.extent` is the whole of it).
        notes: how many of the largest-error nodes carry their index (on a white note placed
            clear of the symbols); the rest are for the view to say on hover.

    Returns:
        The :class:`HeatmapDrawing`.
    """
    fig.clear()
    plain = errors is None
    width_px, height_px = max(float(fig.bbox.width), 1.0), max(float(fig.bbox.height), 1.0)
    below = not plain and width_px < 420 and height_px > width_px  # a tall narrow panel: the colour bar under it
    right = 1.0 - (80.0 / width_px if not plain and not below else 0.0)  # or 80 pixels on the right for it
    bottom = 84.0 / height_px if below else 0.02
    ax = fig.add_axes((0.02, bottom, max(0.1, right - 0.04), 0.92 - bottom))
    ax.set_axis_off()
    n = int(graphs.graphs[i].num_nodes)
    norm, colours = _colours(np.zeros(n) if plain else errors, scale, vmax)
    if plain:
        colours = ["#d5dbdb"] * n
    mol = graph_molecule(graphs, i)
    noted = top_atoms(errors, notes)
    if mol is not None and mol.GetNumAtoms() == n:
        box = ax.get_window_extent()
        size = (max(200, int(box.width)), max(160, int(box.height)))
        drawn = _draw(mol, errors, size, False, scale, vmax, highlight, highlight_bonds, min_bond_px=min_bond_px)
        width, height = drawn.size
        ax.imshow(matplotlib.image.imread(io.BytesIO(drawn.drawer.GetDrawingText()), format="png"),
                  interpolation="antialiased")
        ax.set_adjustable("datalim")  # zooming and panning move the view, not the axes' box
        font = 8.5
        chip = _note_box(noted, font)
        bonds = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()]
        spots = place_notes(drawn.xy, bonds, noted, chip, clearance=0.4 * drawn.bond_px)
        for a, (x, y) in spots.items():  # dark on white, ringed in the atom's colour: legible on any fill
            ax.text(x, y, str(a), fontsize=font, fontweight="bold", ha="center", va="center", zorder=3,
                    color="#1a1a1a", clip_on=True,  # a note outside the view is not drawn over the title
                    bbox=dict(boxstyle="round,pad=0.2", fc="white", ec=colours[a] if not plain else "#777777",
                              lw=1.5))
        ax.set_xlim(0, width)
        ax.set_ylim(height, 0)
        if (width, height) != size and len(drawn.xy):  # enlarged: one drawing pixel per figure pixel, at the top atom
            cx, cy = drawn.xy[noted[0]] if noted else drawn.xy.mean(axis=0)
            half_w, half_h = size[0] / 2, size[1] / 2
            cx = min(max(cx, half_w), width - half_w)
            cy = min(max(cy, half_h), height - half_h)
            ax.set_xlim(cx - half_w, cx + half_w)
            ax.set_ylim(cy + half_h, cy - half_h)
        drawing = HeatmapDrawing("molecule", ax, drawn.xy, drawn.bond_px, (0.0, float(width), float(height), 0.0),
                                 sorted(spots))
    else:
        import networkx as nx

        g = graphs.graphs[i]
        nxg = nx.Graph()
        nxg.add_nodes_from(range(int(g.num_nodes)))
        edges = g.edge_index.t().tolist()
        nxg.add_edges_from(edges)
        pos = nx.spring_layout(nxg, seed=0) if g.num_nodes <= 500 else nx.random_layout(nxg, seed=0)
        nx.draw_networkx_edges(nxg, pos, ax=ax, alpha=0.4, width=0.8)
        edge = ["#1f5fd6" if highlight and k in highlight else "#555555" for k in range(n)]
        nx.draw_networkx_nodes(nxg, pos, ax=ax, node_color=colours, edgecolors=edge, linewidths=0.5,
                               node_size=max(20, 300 - int(g.num_nodes)))
        labelled = range(n) if g.num_nodes <= 60 else noted
        for k in labelled:
            x, y = pos[k]
            fill = (1.0, 1.0, 1.0) if plain else matplotlib.colors.to_rgb(colours[k])
            ax.text(x, y, str(k), fontsize=8, ha="center", va="center", color=label_colour(fill))
        xy = np.array([pos[k] for k in range(n)], dtype=float).reshape(n, 2)
        lengths = [float(np.linalg.norm(xy[u] - xy[v])) for u, v in edges if u != v]
        x0, x1 = ax.get_xlim()
        y0, y1 = ax.get_ylim()
        drawing = HeatmapDrawing("graph", ax, xy, float(np.median(lengths)) if lengths else 1.0,
                                 (x0, x1, y0, y1), list(labelled))
    if not plain:
        if below:
            cax = fig.add_axes((0.08, 48.0 / height_px, 0.84, 12.0 / height_px))
        else:
            cax = fig.add_axes((right, 0.12, 14.0 / width_px, 0.70))  # ticks and label fit on a narrow canvas
        label = {"robust": "node error (robust scale)", "log": "node error (log scale)"}
        text = "node error (shared scale)" if vmax is not None and scale != "log" else label.get(scale, "node error")
        fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=CMAP), cax=cax, label=text,
                     orientation="horizontal" if below else "vertical",
                     extend="max" if norm.vmax < float(np.max(errors, initial=0)) else "neither")
    if title:  # from the left edge, wrapped: a long name is never cut off on a narrow panel
        fig.text(0.02, 0.985, title, fontsize=10, ha="left", va="top", wrap=True)
    return drawing


def smarts_match(mol, smarts: str) -> tuple[list[int], list[int]]:
    """The atoms and bonds of ``mol`` in any match of a SMARTS pattern: each match's bonds are the
    query's own bonds mapped onto the molecule, so a bond between two matched atoms that the
    pattern does not name (the bond between the rings of biphenyl for ``c1ccccc1``) is left out.

    Args:
        mol: an RDKit molecule (None matches nothing).
        smarts: the pattern ("" or one that does not parse matches nothing).

    Returns:
        (sorted atom indices, sorted bond indices).
    """
    from rdkit import Chem

    pattern = Chem.MolFromSmarts(smarts) if smarts else None
    if mol is None or pattern is None:
        return [], []
    atoms: set[int] = set()
    bonds: set[int] = set()
    for match in mol.GetSubstructMatches(pattern, uniquify=False, maxMatches=10000):
        atoms.update(match)
        for qb in pattern.GetBonds():
            bond = mol.GetBondBetweenAtoms(match[qb.GetBeginAtomIdx()], match[qb.GetEndAtomIdx()])
            if bond is not None:
                bonds.add(bond.GetIdx())
    return sorted(atoms), sorted(bonds)


def smarts_atoms(mol, smarts: str) -> list[int]:
    """Find the atoms of ``mol`` in any match of a SMARTS pattern, to highlight a filter's match.

    Args:
        mol: the RDKit molecule, or None.
        smarts: the SMARTS pattern.

    Returns:
        The matched atom indices, sorted; empty when there is no molecule, no match, or the
        pattern is empty or does not parse (:func:`smarts_match` gives the bonds too).
    """
    return smarts_match(mol, smarts)[0]
