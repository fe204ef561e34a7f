"""Per-node error heatmaps: molecules drawn by RDKit with atoms coloured by error, other
graphs drawn with networkx; both onto a matplotlib Figure with a colour bar (no Qt here)."""
from __future__ import annotations

import io

import matplotlib
import numpy as np
from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from core.data.graphset import GraphSet, element_symbols

CMAP = "YlOrRd"
_BOND_SYMBOLS = {"1": "SINGLE", "2": "DOUBLE", "3": "TRIPLE", "-": "SINGLE", "=": "DOUBLE", "#": "TRIPLE",
                 ":": "AROMATIC"}


def graph_molecule(graphs: GraphSet, i: int):
    """An RDKit molecule for graph i, in node order: parsed from its SMILES, or built from TU
    element labels (and bond labels when the readme names them); None when it is not a molecule."""
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


def _colours(errors: np.ndarray) -> tuple[Normalize, list[tuple[float, float, float]]]:
    top = float(errors.max()) if errors.size else 1.0
    norm = Normalize(vmin=0.0, vmax=top if top > 0 else 1.0)
    cmap = colormaps[CMAP]
    return norm, [tuple(cmap(norm(e))[:3]) for e in errors]


def molecule_image(mol, errors: np.ndarray | None, size: tuple[int, int] = (560, 460), svg: bool = False) -> bytes:
    """RDKit drawing of ``mol`` with each atom highlighted in its error's colour (PNG or SVG bytes);
    ``errors=None`` draws the plain structure (detectors without node scores)."""
    from rdkit.Chem.Draw import rdMolDraw2D

    drawer = rdMolDraw2D.MolDraw2DSVG(*size) if svg else rdMolDraw2D.MolDraw2DCairo(*size)
    opts = drawer.drawOptions()
    opts.addAtomIndices = True
    opts.clearBackground = True
    if errors is None:
        rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol)
        drawer.FinishDrawing()
        data = drawer.GetDrawingText()
        return data.encode() if isinstance(data, str) else data
    _, colours = _colours(errors)
    atoms = list(range(mol.GetNumAtoms()))
    radii = {a: 0.3 + 0.25 * float(errors[a] / errors.max()) if errors.max() > 0 else 0.3 for a in atoms}
    rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol, highlightAtoms=atoms,
                                       highlightAtomColors={a: colours[a] for a in atoms},
                                       highlightAtomRadii=radii, highlightBonds=[])
    drawer.FinishDrawing()
    data = drawer.GetDrawingText()
    return data.encode() if isinstance(data, str) else data


def draw_heatmap(fig: Figure, graphs: GraphSet, i: int, errors: np.ndarray | None, title: str = "") -> str:
    """Draw graph i's node-error heatmap on ``fig`` (cleared first); returns 'molecule' or 'graph'.
    ``errors=None`` draws the plain structure, without colours or colour bar."""
    fig.clear()
    plain = errors is None
    ax = fig.add_axes((0.02, 0.02, 0.80, 0.90))
    ax.set_axis_off()
    n = int(graphs.graphs[i].num_nodes)
    norm, colours = _colours(np.zeros(n) if plain else errors)
    if plain:
        colours = ["#d5dbdb"] * n
    mol = graph_molecule(graphs, i)
    kind = "graph"
    if mol is not None and mol.GetNumAtoms() == n:
        png = molecule_image(mol, errors)
        ax.imshow(matplotlib.image.imread(io.BytesIO(png), format="png"))
        kind = "molecule"
    else:
        import networkx as nx

        g = graphs.graphs[i]
        nxg = nx.Graph()
        nxg.add_nodes_from(range(int(g.num_nodes)))
        nxg.add_edges_from(g.edge_index.t().tolist())
        pos = nx.spring_layout(nxg, seed=0) if g.num_nodes <= 500 else nx.random_layout(nxg, seed=0)
        nx.draw_networkx_edges(nxg, pos, ax=ax, alpha=0.4, width=0.8)
        nx.draw_networkx_nodes(nxg, pos, ax=ax, node_color=colours, edgecolors="#555555", linewidths=0.5,
                               node_size=max(20, 300 - int(g.num_nodes)))
        if g.num_nodes <= 60:
            nx.draw_networkx_labels(nxg, pos, ax=ax, font_size=7)
    if not plain:
        cax = fig.add_axes((0.86, 0.12, 0.03, 0.70))
        fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=CMAP), cax=cax, label="node error")
    if title:
        ax.set_title(title, fontsize=10)
    return kind
