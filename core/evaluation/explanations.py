"""Do the per-node heatmaps point at the right atoms? A benchmark with planted anomalies.

Normal molecules (e.g. a drug-like library such as MOSES) are copied and changed at known
atoms (locally-anomalous copies: an element never seen at that position, an unusual
functional group, a strained ring fused on, a chain of an uncommon element), or changed
as a whole with no single culprit atom (globally-anomalous copies: much larger, much
smaller, or ring-free). A model trained on other normal molecules then scores held-out
normals and the copies. Measured: graph-level ROC-AUC for each kind, and for the local
copies the node-level ROC-AUC of the node errors against the planted atoms (mean over
molecules) and the hit rate of planted atoms among the top-k atoms (k = atoms planted).
"""
from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from collections.abc import Callable, Sequence

import numpy as np
from rdkit import Chem

from core.errors import DataError
from core.data.chem import mol_to_graph, parse_smiles
from core.data.graphset import GraphMeta, GraphSet
from core.evaluation.metrics import roc_auc
from core.data.scores import READOUT_PARTS, READOUTS, combine_readouts

# Local edits: each takes a molecule and a random generator; returns (new molecule, planted atom indices)
# or None when the molecule offers no site for it.
Planter = Callable[[Chem.Mol, np.random.Generator], "tuple[Chem.Mol, list[int]] | None"]

GROUPS = {  # unusual groups attached through their first atom
    "sulfonyl fluoride": "S(=O)(=O)F",
    "boronic acid": "B(O)O",
    "trimethylsilyl": "[Si](C)(C)C",
    "azide": "N=[N+]=[N-]",
    "isothiocyanate": "N=C=S",
    "phosphonate": "P(=O)(O)O",
}


def _sanitised(mol: Chem.Mol) -> Chem.Mol | None:
    try:
        Chem.SanitizeMol(mol)
    except Exception:
        return None
    # round-trip through SMILES: the scored graph is built from the SMILES, so its atom order
    # must be the one the planted indices refer to
    smiles = Chem.MolToSmiles(mol)
    order = json.loads(mol.GetProp("_smilesAtomOutputOrder").replace(",]", "]"))
    again, _ = parse_smiles(smiles)
    if again is None or len(order) != mol.GetNumAtoms():
        return None
    again.SetProp("_old_to_new", json.dumps({int(old): new for new, old in enumerate(order)}))
    return again


def _renumber(mol: Chem.Mol, planted: list[int]) -> tuple[Chem.Mol, list[int]] | None:
    out = _sanitised(mol)
    if out is None:
        return None
    mapping = json.loads(out.GetProp("_old_to_new"))
    out.ClearProp("_old_to_new")
    return out, sorted(mapping[str(a)] for a in planted)


def plant_element(mol: Chem.Mol, rng: np.random.Generator):
    """Plant an element never seen at that position: an sp3 carbon becomes silicon, a two-connected O or S selenium.

    Args:
        mol: a sanitised normal molecule (left unchanged).
        rng: the random generator that picks the site.

    Returns:
        (the changed molecule, renumbered in its SMILES atom order; the planted atoms' indices
        in that order), or None when the molecule offers no site or the result does not sanitise.
    """
    sites = [a.GetIdx() for a in mol.GetAtoms()
             if (a.GetSymbol() == "C" and not a.GetIsAromatic() and a.GetHybridization() == Chem.HybridizationType.SP3)
             or (a.GetSymbol() in ("O", "S") and a.GetDegree() == 2 and not a.GetIsAromatic())]
    if not sites:
        return None
    i = int(rng.choice(sites))
    rw = Chem.RWMol(mol)
    rw.GetAtomWithIdx(i).SetAtomicNum(14 if rw.GetAtomWithIdx(i).GetSymbol() == "C" else 34)
    return _renumber(rw, [i])


def _attach(mol: Chem.Mol, rng: np.random.Generator, fragment: str):
    sites = [a.GetIdx() for a in mol.GetAtoms() if a.GetSymbol() == "C" and a.GetTotalNumHs() > 0]
    if not sites:
        return None
    i = int(rng.choice(sites))
    frag = Chem.MolFromSmiles(fragment)
    n = mol.GetNumAtoms()
    combo = Chem.RWMol(Chem.CombineMols(mol, frag))
    combo.AddBond(i, n, Chem.BondType.SINGLE)
    atom = combo.GetAtomWithIdx(i)
    atom.SetNoImplicit(False)
    atom.SetNumExplicitHs(0)
    return _renumber(combo, list(range(n, n + frag.GetNumAtoms())))


def plant_group(mol: Chem.Mol, rng: np.random.Generator):
    """Attach an unusual functional group (sulfonyl fluoride, boronic acid, silyl, azide, ...) to a C-H carbon.

    Args:
        mol: a sanitised normal molecule (left unchanged).
        rng: the random generator that picks the site and the group (``GROUPS``).

    Returns:
        (the changed molecule, renumbered in its SMILES atom order; the planted atoms' indices
        in that order), or None when the molecule offers no site or the result does not sanitise.
    """
    return _attach(mol, rng, list(GROUPS.values())[int(rng.integers(len(GROUPS)))])


def plant_chain(mol: Chem.Mol, rng: np.random.Generator):
    """Attach a chain of an uncommon element to a C-H carbon: a polysulfide or a silicon chain (4-5 atoms).

    Args:
        mol: a sanitised normal molecule (left unchanged).
        rng: the random generator that picks the site, the element and the length.

    Returns:
        (the changed molecule, renumbered in its SMILES atom order; the planted atoms' indices
        in that order), or None when the molecule offers no site or the result does not sanitise.
    """
    element = "S" if rng.random() < 0.5 else "[SiH2]"
    length = int(rng.integers(4, 6))
    return _attach(mol, rng, element * length)


def plant_ring(mol: Chem.Mol, rng: np.random.Generator):
    """Fuse a cyclopropane onto a chain C-C bond (a strained ring where none occurs).

    Args:
        mol: a sanitised normal molecule (left unchanged).
        rng: the random generator that picks the site (a single, non-ring C-C bond whose atoms carry hydrogens).

    Returns:
        (the changed molecule, renumbered in its SMILES atom order; the planted atoms' indices
        in that order), or None when the molecule offers no site or the result does not sanitise.
    """
    bonds = [b for b in mol.GetBonds()
             if b.GetBondType() == Chem.BondType.SINGLE and not b.IsInRing()
             and b.GetBeginAtom().GetSymbol() == "C" and b.GetEndAtom().GetSymbol() == "C"
             and b.GetBeginAtom().GetTotalNumHs() > 0 and b.GetEndAtom().GetTotalNumHs() > 0]
    if not bonds:
        return None
    b = bonds[int(rng.integers(len(bonds)))]
    u, v = b.GetBeginAtomIdx(), b.GetEndAtomIdx()
    rw = Chem.RWMol(mol)
    new = rw.AddAtom(Chem.Atom(6))
    rw.AddBond(u, new, Chem.BondType.SINGLE)
    rw.AddBond(v, new, Chem.BondType.SINGLE)
    for a in (u, v):
        rw.GetAtomWithIdx(a).SetNumExplicitHs(0)
        rw.GetAtomWithIdx(a).SetNoImplicit(False)
    return _renumber(rw, [u, v, new])


LOCAL_PLANTERS: dict[str, Planter] = {"element": plant_element, "group": plant_group, "chain": plant_chain,
                                      "ring": plant_ring}


def global_giant(mols: Sequence[Chem.Mol], rng: np.random.Generator) -> Chem.Mol | None:
    """Make a globally-anomalous molecule: three normal molecules joined into one.

    Every atom is locally normal; the whole is not.

    Args:
        mols: the donor molecules (sanitised normal molecules, none trained on).
        rng: the random generator that picks the three donors (at least three) and where they join.

    Returns:
        The molecule, renumbered in its SMILES atom order, or None when it could not be made.
    """
    picks = [mols[int(k)] for k in rng.choice(len(mols), size=3, replace=False)]
    out = picks[0]
    for other in picks[1:]:
        joined = _attach_mol(out, other, rng)
        if joined is None:
            return None
        out = joined
    return out


def _attach_mol(a: Chem.Mol, b: Chem.Mol, rng: np.random.Generator) -> Chem.Mol | None:
    sa = [x.GetIdx() for x in a.GetAtoms() if x.GetSymbol() == "C" and x.GetTotalNumHs() > 0]
    sb = [x.GetIdx() for x in b.GetAtoms() if x.GetSymbol() == "C" and x.GetTotalNumHs() > 0]
    if not sa or not sb:
        return None
    i, j = int(rng.choice(sa)), int(rng.choice(sb)) + a.GetNumAtoms()
    rw = Chem.RWMol(Chem.CombineMols(a, b))
    rw.AddBond(i, j, Chem.BondType.SINGLE)
    for k in (i, j):
        rw.GetAtomWithIdx(k).SetNumExplicitHs(0)
        rw.GetAtomWithIdx(k).SetNoImplicit(False)
    out = _sanitised(rw)
    return out


def global_tiny(mols: Sequence[Chem.Mol], rng: np.random.Generator) -> Chem.Mol | None:
    """Make a globally-anomalous molecule: a 3-5 atom connected piece of a normal molecule, made non-aromatic.

    The whole is far smaller than any normal molecule.

    Args:
        mols: the donor molecules (sanitised normal molecules, none trained on).
        rng: the random generator that picks the donor, the size and the first atom.

    Returns:
        The molecule, renumbered in its SMILES atom order, or None when it could not be made.
    """
    mol = mols[int(rng.integers(len(mols)))]
    size = int(rng.integers(3, 6))
    start = int(rng.integers(mol.GetNumAtoms()))
    keep, frontier = [start], [start]
    while frontier and len(keep) < size:
        nxt = [n.GetIdx() for a in frontier for n in mol.GetAtomWithIdx(a).GetNeighbors() if n.GetIdx() not in keep]
        frontier = []
        for n in nxt:
            if len(keep) < size and n not in keep:
                keep.append(n)
                frontier.append(n)
    smiles = Chem.MolFragmentToSmiles(mol, atomsToUse=keep, kekuleSmiles=True)
    piece = Chem.MolFromSmiles(smiles, sanitize=False)
    if piece is None:
        return None
    for atom in piece.GetAtoms():
        atom.SetIsAromatic(False)
        atom.SetNoImplicit(False)
        atom.SetNumExplicitHs(0)
    for bond in piece.GetBonds():
        if bond.GetBondType() == Chem.BondType.AROMATIC:
            bond.SetBondType(Chem.BondType.SINGLE)
        bond.SetIsAromatic(False)
    return _sanitised(piece)


def global_chain(mols: Sequence[Chem.Mol], rng: np.random.Generator) -> Chem.Mol | None:
    """Make a globally-anomalous molecule: a long ring-free chain of 25-35 atoms of C, N and O.

    No ring at all is a ring count that never occurs in drug-like sets.

    Args:
        mols: the donor molecules (not used: the chain is made from scratch; the makers share a signature).
        rng: the random generator that picks the length and the elements.

    Returns:
        The molecule, renumbered in its SMILES atom order, or None when it could not be made.
    """
    length = int(rng.integers(25, 36))
    atoms = rng.choice(["C", "C", "C", "C", "N", "O"], size=length)
    smiles = "".join(atoms).replace("OO", "OC")
    return _sanitised(Chem.MolFromSmiles(smiles))


GLOBAL_MAKERS = {"giant": global_giant, "tiny": global_tiny, "chain": global_chain}


@dataclass
class PlantedSet:
    """Molecules for the benchmark, with the planted atoms of the locally-anomalous ones."""

    train: GraphSet
    normal: GraphSet
    local: GraphSet
    local_planted: list[list[int]]
    local_kinds: list[str]
    global_: GraphSet
    global_kinds: list[str]


def _graphset(mols: list[Chem.Mol], tag: str, kinds: list[str] | None = None) -> GraphSet:
    meta = [GraphMeta(id=f"{tag}{k}", name=(kinds[k] if kinds else ""), smiles=Chem.MolToSmiles(m), label=tag)
            for k, m in enumerate(mols)]
    # graphs are built from the SMILES written in meta, so node order is the SMILES atom order
    graphs = [mol_to_graph(parse_smiles(m.smiles)[0]) for m in meta]
    return GraphSet(graphs, meta, source=f"planted:{tag}", format="smiles", kind="molecule")


def make_planted(smiles: Sequence[str], n_train: int, n_normal: int, n_local: int, n_global: int,
                 seed: int = 0) -> PlantedSet:
    """Build the benchmark's molecules from a list of normal SMILES.

    The SMILES that parse are shuffled and split into training molecules, held-out normals and
    donors; anomalies are planted in copies of donors (never in molecules the model trains on),
    the kinds taken in turn. A planter that finds no site is retried on another donor, up to 50
    tries per molecule asked for, so fewer may come back.

    Args:
        smiles: normal SMILES (e.g. a MOSES sample).
        n_train: how many molecules the model trains on.
        n_normal: how many held-out normal molecules it scores.
        n_local: how many locally-anomalous copies to make (``LOCAL_PLANTERS``).
        n_global: how many globally-anomalous molecules to make (``GLOBAL_MAKERS``).
        seed: the seed of every random choice.

    Returns:
        The training, normal, local and global sets with the planted atoms and kinds.

    Raises:
        DataError: there are not more than ``n_train + n_normal + 10`` valid SMILES.
    """
    rng = np.random.default_rng(seed)
    mols = [m for m in (parse_smiles(s)[0] for s in smiles) if m is not None]
    order = rng.permutation(len(mols))
    need = n_train + n_normal
    if len(mols) < need + 10:
        raise DataError(f"{len(mols):,} molecules read, and {n_train:,} to train on and {n_normal:,} held-out "
                        f"normals need at least {need + 10:,}")
    train = [mols[k] for k in order[:n_train]]
    normal = [mols[k] for k in order[n_train:need]]
    donors = [mols[k] for k in order[need:]]
    local, planted, kinds = [], [], []
    names = list(LOCAL_PLANTERS)
    attempts = 0
    while len(local) < n_local and attempts < 50 * n_local:
        attempts += 1
        kind = names[len(local) % len(names)]
        made = LOCAL_PLANTERS[kind](donors[int(rng.integers(len(donors)))], rng)
        if made is not None:
            local.append(made[0])
            planted.append(made[1])
            kinds.append(kind)
    glob, gkinds = [], []
    gnames = list(GLOBAL_MAKERS)
    attempts = 0
    while len(glob) < n_global and attempts < 50 * n_global:
        attempts += 1
        kind = gnames[len(glob) % len(gnames)]
        made = GLOBAL_MAKERS[kind](donors, rng)
        if made is not None:
            glob.append(made)
            gkinds.append(kind)
    return PlantedSet(train=_graphset(train, "train"), normal=_graphset(normal, "normal"),
                      local=_graphset(local, "local", kinds), local_planted=planted, local_kinds=kinds,
                      global_=_graphset(glob, "global", gkinds), global_kinds=gkinds)


@dataclass
class ExplanationResult:
    """Graph-level AUCs and node-level explanation quality (see the module docstring)."""

    graph_auc_local: float
    graph_auc_global: float
    node_auc: float
    topk_hit_rate: float
    by_kind: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)
    seconds_train: float = 0.0
    node_error: str = "raw"
    # graph-level ROC-AUCs of each GLocalKD readout combination (core.data.scores.READOUTS) of the
    # same model: {"readout": {"local": .., "global": .., "local:ring": .., ...}}
    readouts: dict = field(default_factory=dict)
    # the detector measured (``glocalkd`` or ``consensus``); for a consensus, each component's own
    # graph-level ROC-AUCs: {"size": {"local": .., "global": .., "local:ring": .., ...}}
    detector: str = "glocalkd"
    components: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The result as JSON-ready values.

        Returns:
            The dataclass fields by name, nested dicts included.
        """
        return asdict(self)


def node_explanation_quality(node_errors: Sequence[np.ndarray], planted: Sequence[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Measure how well node errors point at the planted atoms, molecule by molecule.

    Args:
        node_errors: each molecule's node errors, in node order.
        planted: each molecule's planted atom indices.

    Returns:
        (the ROC-AUC of the node errors against the planted atoms, per molecule; the share of
        planted atoms among the k atoms of largest error, k = atoms planted, per molecule).
    """
    aucs, hits = [], []
    for errors, atoms in zip(node_errors, planted):
        truth = np.zeros(len(errors), dtype=bool)
        truth[atoms] = True
        aucs.append(roc_auc(truth, errors))
        top = np.argsort(-errors, kind="stable")[: len(atoms)]
        hits.append(truth[top].mean())
    return np.array(aucs), np.array(hits)


def evaluate_explanations(planted: PlantedSet, model, node_errors: Sequence[str] = ("raw", "zscore"),
                          fit: bool = True) -> list[ExplanationResult]:
    """Train a detector on the benchmark's training molecules and measure graph- and node-level detection.

    Args:
        planted: the benchmark's molecules (:func:`make_planted`).
        model: a detector with node errors (GLocalKD, the consensus).
        node_errors: the ways of reading node errors, one result each: ``raw`` uses the
            model's per-node errors as they are; ``zscore`` subtracts the mean and divides by the
            spread of the training errors of atoms with identical features (how unusual an error
            is for that kind of atom).
        fit: train ``model`` on ``planted.train`` first (False: it is trained already).

    Returns:
        One result per entry of ``node_errors``: graph-level AUCs (local, global, by kind, by
        readout, by consensus component) and node-level AUC and top-k hit rate.

    Raises:
        ValueError: an entry of ``node_errors`` is neither ``raw`` nor ``zscore``.
    """
    start = time.perf_counter()
    if fit:
        model.fit(planted.train)
    seconds = time.perf_counter() - start
    s_norm = model.score(planted.normal)
    s_local = model.score(planted.local)
    s_glob = model.score(planted.global_)
    graph = _graph_aucs(planted, s_norm.score, s_local.score, s_glob.score)
    counts = Counter(f"local:{k}" for k in planted.local_kinds) + Counter(f"global:{k}" for k in planted.global_kinds)
    graph_by_kind = {key: {"graph_auc": graph[key], "count": counts[key]} for key in sorted(counts)}
    readouts = _readout_aucs(planted, model, s_norm, s_local, s_glob)
    components = _component_aucs(planted, s_norm, s_local, s_glob)
    results = []
    for mode in node_errors:
        errors = [s_local.node_errors_of(i) for i in range(len(s_local))]
        if mode == "zscore":
            errors = _atom_type_zscores(model, planted, errors)
        elif mode != "raw":
            raise ValueError(f"node_errors must be 'raw' or 'zscore', not {mode!r}")
        node_aucs, hits = node_explanation_quality(errors, planted.local_planted)
        by_kind = {k: dict(v) for k, v in graph_by_kind.items()}
        kinds = np.array(planted.local_kinds)
        for kind in sorted(set(planted.local_kinds)):
            mask = kinds == kind
            by_kind[f"local:{kind}"].update(node_auc=float(np.nanmean(node_aucs[mask])),
                                            topk_hit_rate=float(np.mean(hits[mask])))
        results.append(ExplanationResult(
            graph_auc_local=graph["local"], graph_auc_global=graph["global"],
            node_auc=float(np.nanmean(node_aucs)), topk_hit_rate=float(np.mean(hits)), by_kind=by_kind,
            sizes={"train": len(planted.train), "normal": len(planted.normal), "local": len(planted.local),
                   "global": len(planted.global_)},
            seconds_train=seconds, node_error=mode, readouts=readouts,
            detector=str(getattr(model, "name", type(model).__name__)), components=components))
    return results


def _graph_aucs(planted: PlantedSet, norm: np.ndarray, local: np.ndarray, glob: np.ndarray) -> dict:
    """Graph-level ROC-AUCs of one score of the normals and the copies: local, global and by kind."""
    row = {}
    for tag, kinds, scores in (("local", planted.local_kinds, local), ("global", planted.global_kinds, glob)):
        row[tag] = roc_auc(np.r_[np.zeros(len(norm)), np.ones(len(scores))], np.r_[norm, scores])
        kinds = np.array(kinds)
        for kind in sorted(set(kinds.tolist())):
            mask = kinds == kind
            row[f"{tag}:{kind}"] = roc_auc(np.r_[np.zeros(len(norm)), np.ones(mask.sum())], np.r_[norm, scores[mask]])
    return row


def _component_aucs(planted: PlantedSet, s_norm, s_local, s_glob) -> dict:
    """A consensus's components' own graph-level AUCs (empty for a single detector)."""
    parts = [s.component_scores() for s in (s_norm, s_local, s_glob)]
    return {name: _graph_aucs(planted, parts[0][name], parts[1][name], parts[2][name]) for name in parts[0]}


def _readout_aucs(planted: PlantedSet, model, s_norm, s_local, s_glob) -> dict:
    """Graph-level AUCs (local, global, by kind) of every readout combination of one trained model."""
    if not all(READOUT_PARTS <= set(s.parts) for s in (s_norm, s_local, s_glob)):
        return {}
    return {name: _graph_aucs(planted, *(combine_readouts(s.parts, model.lam, *flags) for s in (s_norm, s_local, s_glob)))
            for name, flags in READOUTS.items()}


def _atom_type_zscores(model, planted: PlantedSet, errors: list[np.ndarray]) -> list[np.ndarray]:
    """Scale each node error by the training spread of errors of atoms with identical features."""
    train_scores = model.score(planted.train)
    keys = lambda gs: [tuple(np.flatnonzero(row)) for g in gs.graphs for row in g.x.numpy()]  # noqa: E731
    stats: dict[tuple, list[float]] = {}
    for key, e in zip(keys(planted.train), train_scores.node_errors):
        stats.setdefault(key, []).append(float(e))
    fallback = float(np.std(train_scores.node_errors)) + 1e-12
    spread = {k: (np.mean(v), np.std(v) + 1e-12 if len(v) > 4 else fallback) for k, v in stats.items()}
    local_keys = keys(planted.local)
    out, pos = [], 0
    for e in errors:
        ks = local_keys[pos:pos + len(e)]
        pos += len(e)
        out.append(np.array([(err - spread.get(k, (0.0, fallback))[0]) / spread.get(k, (0.0, fallback))[1]
                             for err, k in zip(e, ks)]))
    return out
