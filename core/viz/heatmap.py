"""Per-node error heatmaps: molecules drawn by RDKit with atoms coloured by error, other
graphs drawn with networkx; both onto a matplotlib Figure with a colour bar (no Qt here)."""
from __future__ import annotations

import io

import matplotlib
import numpy as np
from matplotlib import colormaps
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure

from core.data.graphset import GraphSet, element_symbols

CMAP = "YlOrRd"
_BOND_SYMBOLS = {"1": "SINGLE", "2": "DOUBLE", "3": "TRIPLE", "-": "SINGLE", "=": "DOUBLE", "#": "TRIPLE",
                 ":": "AROMATIC"}


def graph_molecule(graphs: GraphSet, i: int):
    """Make an RDKit molecule of graph i, in node order, for drawing and SD files.

    Args:
        graphs: the graph set.
        i: the graph's index.

    Returns:
        The molecule parsed from the graph's SMILES, or built from TU element labels (and bond
        labels when the readme names them, single bonds otherwise); None when the graph is not a
        molecule (no SMILES and no element labels, or labels RDKit cannot build).
    """
    from rdkit import Chem

    from core.data.chem import parse_smiles

    meta = graphs.meta[i]
    if meta.smiles:
        return parse_smiles(meta.smiles)[0]
    elements = element_symbols(graphs.node_label_names)
    g = graphs.graphs[i]
    labels = g.get("node_label")
    if not elements or labels is None:
        return None
    mol = Chem.RWMol()
    try:
        for v in labels.tolist():
            atom = Chem.Atom(elements.get(int(v), "*"))
            atom.SetNoImplicit(True)
            mol.AddAtom(atom)
        edge_labels = g.get("edge_label")
        names = graphs.edge_label_names or {}
        seen = set()
        for k, (u, v) in enumerate(g.edge_index.t().tolist()):
            if u == v or (v, u) in seen:
                continue
            seen.add((u, v))
            kind = "SINGLE"
            if edge_labels is not None:
                kind = _BOND_SYMBOLS.get(names.get(int(edge_labels[k]), ""), "SINGLE")
            mol.AddBond(u, v, getattr(Chem.BondType, kind))
        out = mol.GetMol()
        out.UpdatePropertyCache(strict=False)
        Chem.FastFindRings(out)
        return out
    except Exception:  # an odd label map or bond: fall back to a plain graph drawing
        return None


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


def _dark(colour) -> bool:
    """Whether text on this fill should be white (relative luminance below one half)."""
    r, g, b = colour[:3]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5


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


def _draw(mol, errors, size, svg, scale, vmax, highlight, legend, indices_on_atoms):
    """The RDKit drawer after drawing; returns (drawer, colours or None)."""
    from rdkit.Chem.Draw import rdMolDraw2D

    mol = _spread_fragments(mol)
    drawer = rdMolDraw2D.MolDraw2DSVG(*size) if svg else rdMolDraw2D.MolDraw2DCairo(*size)
    opts = drawer.drawOptions()
    opts.addAtomIndices = indices_on_atoms
    opts.annotationFontScale = 0.75
    opts.clearBackground = True
    opts.legendFontSize = 16
    match_bonds = []
    if highlight:
        hit = set(highlight)
        match_bonds = [b.GetIdx() for b in mol.GetBonds() if b.GetBeginAtomIdx() in hit and b.GetEndAtomIdx() in hit]
    if errors is None:
        atoms = sorted(set(highlight or ()))
        rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol, legend=legend, highlightAtoms=atoms,
                                           highlightAtomColors={a: (0.35, 0.6, 0.95) for a in atoms},
                                           highlightBonds=match_bonds,
                                           highlightBondColors={b: (0.35, 0.6, 0.95) for b in match_bonds})
        drawer.FinishDrawing()
        return drawer, None
    norm, colours = _colours(errors, scale, vmax)
    atoms = list(range(mol.GetNumAtoms()))
    top = float(norm.vmax) if norm.vmax else 1.0
    radii = {a: 0.3 + 0.25 * float(min(1.0, max(0.0, errors[a] / top))) for a in atoms}
    rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol, legend=legend, highlightAtoms=atoms,
                                       highlightAtomColors={a: colours[a] for a in atoms},
                                       highlightAtomRadii=radii, highlightBonds=match_bonds,
                                       highlightBondColors={b: (0.2, 0.45, 0.95) for b in match_bonds})
    drawer.FinishDrawing()
    return drawer, colours


def molecule_image(mol, errors: np.ndarray | None, size: tuple[int, int] = (560, 460), svg: bool = False,
                   scale: str = "robust", vmax: float | None = None, highlight: list[int] | None = None,
                   legend: str = "") -> bytes:
    """Draw ``mol`` with RDKit, each atom highlighted in its error's colour, as image bytes.

    Fragments (salts, counter-ions) are laid side by side; atom indices are written on the atoms.

    Args:
        mol: the RDKit molecule, atoms in node order (:func:`graph_molecule`).
        errors: the atoms' errors, shape ``(atoms,)``; None draws the plain structure (detectors
            without node scores).
        size: the image's (width, height) in pixels.
        svg: SVG text instead of a PNG; with a legend it carries a ``<title>`` too (searchable,
            read aloud).
        scale: the colour scale, as in :func:`node_error_norm`.
        vmax: a fixed top of the colour scale, as in :func:`node_error_norm`.
        highlight: atoms to mark (a SMARTS match); the bonds between them are drawn in blue.
        legend: text written under the drawing (e.g. the id and score).

    Returns:
        The PNG or SVG (UTF-8) bytes.
    """
    drawer, _ = _draw(mol, errors, size, svg, scale, vmax, highlight, legend, indices_on_atoms=True)
    data = drawer.GetDrawingText()
    if svg and legend:  # RDKit draws the legend as paths: say it as text too (searchable, read aloud)
        from xml.sax.saxutils import escape

        end = data.index(">", data.index("<svg")) + 1
        data = data[:end] + f"\n<title>{escape(legend)}</title>" + data[end:]
    return data.encode() if isinstance(data, str) else data


def draw_heatmap(fig: Figure, graphs: GraphSet, i: int, errors: np.ndarray | None, title: str = "",
                 scale: str = "robust", vmax: float | None = None, highlight: list[int] | None = None) -> str:
    """Draw graph i's node-error heatmap on a matplotlib figure, cleared first.

    Molecules are drawn by RDKit, other graphs (or molecules whose atoms do not match the nodes)
    with networkx. Atom indices are written large, in white on dark fills and black on light ones;
    a molecule of more than 40 atoms numbers only its 12 atoms with the largest errors.

    Args:
        fig: the figure to draw on.
        graphs: the graph set.
        i: the graph's index.
        errors: graph i's node errors, shape ``(nodes,)``; None draws the plain structure,
            without colours or colour bar.
        title: a title over the drawing (the id and score, so a saved picture says what it shows).
        scale: the colour scale (:func:`node_error_norm`); default ``robust``.
        vmax: a fixed top of the colour scale (:func:`node_error_norm`).
        highlight: node indices to mark (a SMARTS match), drawn with blue bonds (blue outlines on
            a plain graph).

    Returns:
        ``molecule`` when RDKit drew it, else ``graph``.
    """
    fig.clear()
    plain = errors is None
    ax = fig.add_axes((0.02, 0.02, 0.72, 0.90))
    ax.set_axis_off()
    n = int(graphs.graphs[i].num_nodes)
    norm, colours = _colours(np.zeros(n) if plain else errors, scale, vmax)
    if plain:
        colours = ["#d5dbdb"] * n
    mol = graph_molecule(graphs, i)
    kind = "graph"
    if mol is not None and mol.GetNumAtoms() == n:
        size = (560, 460)
        drawer, _ = _draw(mol, errors, size, False, scale, vmax, highlight, "", indices_on_atoms=False)
        ax.imshow(matplotlib.image.imread(io.BytesIO(drawer.GetDrawingText()), format="png"))
        labelled = range(n)
        if n > 40 and not plain:  # a large molecule: only the atoms with the largest errors are numbered
            labelled = np.argsort(-np.asarray(errors), kind="stable")[:12].tolist()
        for a in labelled:  # indices beside each atom, legible on any fill
            x, y = drawer.GetDrawCoords(a)
            fill = colours[a] if not plain else (1.0, 1.0, 1.0)
            ax.text(x + 10, y + 10, str(a), fontsize=8, fontweight="bold", ha="left", va="top", zorder=3,
                    color="white" if _dark(fill) else "#222222",  # on a chip of the atom's own colour
                    bbox=dict(boxstyle="round,pad=0.12", fc=fill, ec="none", alpha=0.9))
        ax.set_xlim(0, size[0])
        ax.set_ylim(size[1], 0)
        kind = "molecule"
    else:
        import networkx as nx

        g = graphs.graphs[i]
        nxg = nx.Graph()
        nxg.add_nodes_from(range(int(g.num_nodes)))
        nxg.add_edges_from(g.edge_index.t().tolist())
        pos = nx.spring_layout(nxg, seed=0) if g.num_nodes <= 500 else nx.random_layout(nxg, seed=0)
        nx.draw_networkx_edges(nxg, pos, ax=ax, alpha=0.4, width=0.8)
        edge = ["#1f5fd6" if highlight and k in highlight else "#555555" for k in range(n)]
        nx.draw_networkx_nodes(nxg, pos, ax=ax, node_color=colours, edgecolors=edge, linewidths=0.5,
                               node_size=max(20, 300 - int(g.num_nodes)))
        if g.num_nodes <= 60:
            font = {k: ("white" if not plain and _dark(colours[k]) else "black") for k in range(n)}
            for k, (x, y) in pos.items():
                ax.text(x, y, str(k), fontsize=8, ha="center", va="center", color=font[k])
    if not plain:
        cax = fig.add_axes((0.76, 0.12, 0.03, 0.70))  # room for its ticks and label on a narrow canvas
        label = {"robust": "node error (robust scale)", "log": "node error (log scale)"}
        text = "node error (shared scale)" if vmax is not None and scale != "log" else label.get(scale, "node error")
        fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=CMAP), cax=cax, label=text,
                     extend="max" if norm.vmax < float(np.max(errors, initial=0)) else "neither")
    if title:
        ax.set_title(title, fontsize=10)
    return kind


def smarts_atoms(mol, smarts: str) -> list[int]:
    """Find the atoms of ``mol`` in any match of a SMARTS pattern, to highlight a filter's match.

    Args:
        mol: the RDKit molecule, or None.
        smarts: the SMARTS pattern.

    Returns:
        The matched atom indices, sorted; empty when there is no molecule, no match, or the
        pattern is empty or does not parse.
    """
    from rdkit import Chem

    pattern = Chem.MolFromSmarts(smarts) if smarts else None
    if mol is None or pattern is None:
        return []
    return sorted({a for match in mol.GetSubstructMatches(pattern) for a in match})
