"""2-D structure pictures for tables and clipboards (RDKit's Cairo drawer: PNG bytes or raw pixels), and a
molecule beside its nearest neighbour with their maximum common substructure marked.

Pictures are bytes rather than toolkit images, so that a worker process can draw them and
any front end can show them."""
from __future__ import annotations

import io
from collections.abc import Sequence

SHARED_COLOUR = (0.55, 0.80, 0.55)  # atoms and bonds both molecules share (green)
DIFFERENT_COLOUR = (0.98, 0.62, 0.35)  # atoms only this molecule has (orange)


def _molecule(smiles: str):
    """The molecule of ``smiles``, laid out for drawing; None when it does not parse."""
    from rdkit.Chem import rdDepictor

    from core.data.chem import parse_smiles

    mol = parse_smiles(smiles)[0] if smiles else None
    if mol is None:
        return None
    rdDepictor.Compute2DCoords(mol)
    return mol


def _drawer(width: int, height: int, panel: tuple[int, int] | None = None):
    from rdkit.Chem.Draw import rdMolDraw2D

    drawer = (rdMolDraw2D.MolDraw2DCairo(width, height) if panel is None
              else rdMolDraw2D.MolDraw2DCairo(width, height, panel[0], panel[1]))
    options = drawer.drawOptions()
    options.clearBackground = True
    options.padding = 0.05
    options.fixedFontSize = -1
    options.minFontSize = 7 if width < 200 and panel is None else 10
    return drawer


def structure_png(smiles: str, width: int, height: int) -> bytes:
    """The 2-D structure of ``smiles`` as a PNG of ``width`` x ``height`` pixels.

    Args:
        smiles: the molecule.
        width: picture width in pixels.
        height: picture height in pixels.

    Returns:
        PNG bytes; empty when ``smiles`` is empty or does not parse (nothing to draw).
    """
    mol = _molecule(smiles)
    if mol is None:
        return b""
    drawer = _drawer(width, height)
    try:
        drawer.DrawMolecule(mol)
    except (RuntimeError, ValueError):  # an odd valence RDKit parses but cannot draw
        return b""
    drawer.FinishDrawing()
    return drawer.GetDrawingText()


def structure_pixels(smiles: Sequence[str], width: int, height: int) -> list[bytes]:
    """:func:`structure_png` of each SMILES, decoded to raw pixels: one call for a batch, what a
    drawing worker process runs, so that the window only wraps the pixels (decoding a small PNG
    took about 0.23 ms of the window's thread, wrapping its pixels 0.01 ms).

    Args:
        smiles: the molecules.
        width: picture width in pixels.
        height: picture height in pixels.

    Returns:
        Per SMILES, in order: ``height`` rows of ``width`` pixels, 4 bytes each in the order red,
        green, blue, alpha (whatever the machine's byte order); ``b""`` for one that cannot be drawn.
    """
    from PIL import Image

    pictures = []
    for s in smiles:
        png = structure_png(s, width, height)
        pictures.append(Image.open(io.BytesIO(png)).convert("RGBA").tobytes() if png else b"")
    return pictures


def structure_grid_png(smiles: Sequence[str], legends: Sequence[str], per_row: int = 4,
                       cell: tuple[int, int] = (260, 220)) -> bytes:
    """The structures of ``smiles`` in a grid, each with its legend (e.g. ID and score).

    Molecules that do not parse take an empty cell with their legend, so the grid keeps the order.

    Args:
        smiles: the molecules, in order.
        legends: one line under each molecule.
        per_row: molecules per row.
        cell: each molecule's width and height in pixels.

    Returns:
        PNG bytes; empty when ``smiles`` is empty.
    """
    from rdkit import Chem

    if not smiles:
        return b""
    mols = [_molecule(s) or Chem.Mol() for s in smiles]
    per_row = max(1, min(per_row, len(mols)))
    rows = (len(mols) + per_row - 1) // per_row
    drawer = _drawer(cell[0] * per_row, cell[1] * rows, cell)
    drawer.drawOptions().legendFontSize = 14
    drawer.DrawMolecules(mols, legends=[str(t) for t in legends])
    drawer.FinishDrawing()
    return drawer.GetDrawingText()


def common_substructure(smiles_a: str, smiles_b: str, timeout: int = 2) -> tuple[list[int], list[int]]:
    """The atoms of two molecules in their maximum common substructure (RDKit's FMCS: rings
    matched as rings, any bond order, element by element).

    Args:
        smiles_a: the first molecule.
        smiles_b: the second molecule.
        timeout: seconds FMCS may search; on time-out the largest substructure found so far.

    Returns:
        (atoms of a, atoms of b) in the common substructure, matched position by position;
        two empty lists when either does not parse or they share nothing.
    """
    from rdkit import Chem
    from rdkit.Chem import rdFMCS

    a, b = _molecule(smiles_a), _molecule(smiles_b)
    if a is None or b is None:
        return [], []
    params = rdFMCS.MCSParameters()
    params.Timeout = int(timeout)
    params.AtomTyper = rdFMCS.AtomCompare.CompareElements
    params.BondTyper = rdFMCS.BondCompare.CompareOrder
    params.BondCompareParameters.RingMatchesRingOnly = True
    params.BondCompareParameters.CompleteRingsOnly = True
    result = rdFMCS.FindMCS([a, b], params)
    if not result.numAtoms:
        return [], []
    query = Chem.MolFromSmarts(result.smartsString)
    match_a, match_b = a.GetSubstructMatch(query), b.GetSubstructMatch(query)
    if not match_a or not match_b:
        return [], []
    return list(match_a), list(match_b)


def same_molecule(smiles_a: str, smiles_b: str) -> bool:
    """Whether two SMILES write the same molecule: the same canonical SMILES, stereochemistry
    included (a Tanimoto similarity of 1 does not say it: fingerprints can collide).

    Args:
        smiles_a: one molecule.
        smiles_b: the other.

    Returns:
        True when both parse to the same molecule; False otherwise.
    """
    from rdkit import Chem

    from core.data.chem import parse_smiles

    a, b = parse_smiles(smiles_a)[0] if smiles_a else None, parse_smiles(smiles_b)[0] if smiles_b else None
    return a is not None and b is not None and Chem.MolToSmiles(a) == Chem.MolToSmiles(b)


def pair_png(smiles_a: str, smiles_b: str, legends: tuple[str, str] = ("", ""), cell: tuple[int, int] = (380, 300),
             timeout: int = 2) -> bytes:
    """Two molecules side by side, the atoms and bonds of their maximum common substructure in
    green (:data:`SHARED_COLOUR`) and every other atom in orange (:data:`DIFFERENT_COLOUR`).

    Args:
        smiles_a: the left molecule (e.g. the selected one).
        smiles_b: the right molecule (e.g. its nearest training molecule).
        legends: a line under each.
        cell: each molecule's width and height in pixels.
        timeout: seconds the common substructure search may take (:func:`common_substructure`).

    Returns:
        PNG bytes; empty when either molecule does not parse.
    """
    a, b = _molecule(smiles_a), _molecule(smiles_b)
    if a is None or b is None:
        return b""
    shared_a, shared_b = common_substructure(smiles_a, smiles_b, timeout)
    atoms, atom_colours, bonds, bond_colours = [], [], [], []
    for mol, shared in ((a, set(shared_a)), (b, set(shared_b))):
        atoms.append(list(range(mol.GetNumAtoms())))
        atom_colours.append({k: SHARED_COLOUR if k in shared else DIFFERENT_COLOUR for k in range(mol.GetNumAtoms())})
        inside = [bond.GetIdx() for bond in mol.GetBonds()
                  if bond.GetBeginAtomIdx() in shared and bond.GetEndAtomIdx() in shared]
        bonds.append(inside)
        bond_colours.append({k: SHARED_COLOUR for k in inside})
    drawer = _drawer(cell[0] * 2, cell[1], cell)
    drawer.drawOptions().legendFontSize = 15
    drawer.DrawMolecules([a, b], legends=list(legends), highlightAtoms=atoms, highlightAtomColors=atom_colours,
                         highlightBonds=bonds, highlightBondColors=bond_colours)
    drawer.FinishDrawing()
    return drawer.GetDrawingText()
