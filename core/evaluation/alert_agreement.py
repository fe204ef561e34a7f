"""Do the atoms with the largest errors lie in chemists' structural alerts?

For each scored molecule that matches an alert (``core.data.alerts``) not covering all its atoms,
and for each group of alerts (all alerts, one family, one alert name), this measures:

- ``top1``: the share of molecules whose largest-error atom lies in the group's atoms;
- ``top3``: the mean share of the three largest-error atoms that lie in them;
- ``chance``: the mean share of the molecule's atoms that lie in them (what a random atom scores,
  for both measures);
- ``rarity_top1`` and ``rarity_top3``: the same two measures for a baseline that ranks the atoms by
  the rarity of their (element, heavy-atom degree) among the training atoms.

Ties (equal errors, or equal rarity) count fractionally, as the expected hit of a random order
among the tied atoms. A group's result is a claim only where ``top1`` beats both chance and the
rarity baseline. The ``without_rare`` rows leave out the molecules with an alert made of a rare
element alone (its atoms other than carbon are all of elements below ``RARE_SHARE`` of the
training atoms: iodine, phosphorus, metals in a MOSES-trained model).
"""
from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from collections.abc import Sequence

import numpy as np

from core.data.alerts import Alert, structural_alerts
from core.data.graphset import GraphMeta, GraphSet, Reject
from core.data.scores import Scores

RARE_SHARE = 1e-3  # an element is rare below this share of the training atoms
TOP_NAMES = 12  # alert names reported one by one (the most frequent)


@dataclass
class GroupResult:
    """The agreement of one group of alerts over the molecules that match it."""

    group: str
    molecules: int
    top1: float
    top3: float
    chance: float
    rarity_top1: float
    rarity_top3: float

    @property
    def claim(self) -> bool:
        """Whether the top-1 atom is in the alerts more often than chance and the rarity baseline."""
        return self.molecules > 0 and self.top1 > self.chance and self.top1 > self.rarity_top1

    def to_dict(self) -> dict:
        """The result as JSON-ready values.

        Returns:
            The fields by name, plus ``top1_over_chance`` (None when chance is 0) and ``claim``.
        """
        return {"group": self.group, "molecules": self.molecules, "top1": self.top1, "top3": self.top3,
                "chance": self.chance, "rarity_top1": self.rarity_top1, "rarity_top3": self.rarity_top3,
                "top1_over_chance": self.top1 / self.chance if self.chance else None, "claim": self.claim}


@dataclass
class AlertAgreement:
    """Results over a library: per group, for all molecules and without rare-element-only alerts."""

    scored: int
    with_alerts: int
    rare_elements: list[str]  # the rare elements in the scored molecules with alerts
    all_molecules: list[GroupResult] = field(default_factory=list)
    without_rare: list[GroupResult] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The results as JSON-ready values.

        Returns:
            The counts, the rare elements and each group's :meth:`GroupResult.to_dict`, for all
            molecules and without rare-element-only alerts.
        """
        return {"scored": self.scored, "with_alerts": self.with_alerts, "rare_elements": self.rare_elements,
                "all_molecules": [r.to_dict() for r in self.all_molecules],
                "without_rare": [r.to_dict() for r in self.without_rare]}


def first_molecules(path: str, n: int) -> GraphSet:
    """The first ``n`` molecules of a SMILES list or table that parse, and the rows read before the
    last of them that do not (each in ``rejects`` with its line and reason, so none is lost).

    Args:
        path: a molecule file, read as ``core.load`` reads it (optionally gzipped).
        n: how many molecules to keep.

    Returns:
        The molecules, with their SMILES, in file order; fewer when the file holds fewer.
    """
    from core.data.chem import mol_to_graph, parse_smiles
    from core.io.load import molecule_rows

    graphs, meta, rejects = [], [], []
    rows, _ = molecule_rows(path)
    for row in rows:
        if len(graphs) >= n:
            break
        mol, reason = parse_smiles(row.smiles) if row.problem is None else (None, row.problem)
        if mol is None:
            rejects.append(Reject(row.line, row.id, reason, row.smiles))
            continue
        graphs.append(mol_to_graph(mol))
        meta.append(GraphMeta(id=row.id or str(len(meta)), name=row.name, smiles=row.smiles, line=row.line))
    return GraphSet(graphs, meta, source=str(path), format="smiles", kind="molecule", rejects=rejects)


def measure_alert_agreement(model, train: GraphSet, library: GraphSet,
                            top_names: int = TOP_NAMES) -> tuple[AlertAgreement, float]:
    """Train ``model`` on ``train``, score ``library`` and measure the agreement with alerts.

    Args:
        model: a detector whose scores carry node errors (GLocalKD, the consensus).
        train: the normal molecules it trains on.
        library: the molecules it scores.
        top_names: how many of the most frequent alert names get a row of their own.

    Returns:
        The agreement (:func:`alert_agreement`) and the training time in seconds.
    """
    start = time.perf_counter()
    model.fit(train)
    seconds = time.perf_counter() - start
    return alert_agreement(train, library, model.score(library), top_names), seconds


def atom_types(smiles: str) -> list[tuple[str, int]]:
    """The atom types the rarity baseline counts: (element, heavy-atom degree) of each atom.

    Args:
        smiles: one SMILES string.

    Returns:
        One (element symbol, degree) pair per atom, in node order; [] if it does not parse.
    """
    from core.data.chem import parse_smiles

    mol = parse_smiles(smiles)[0]
    return [] if mol is None else [(a.GetSymbol(), a.GetDegree()) for a in mol.GetAtoms()]


def top_share(values: np.ndarray, inside: np.ndarray, k: int) -> float:
    """Expected share of the ``k`` largest ``values`` that are ``inside``, ties in a random order.

    Args:
        values: one value per atom (larger first).
        inside: one boolean per atom.
        k: how many of the largest are taken (at most the number of atoms).

    Returns:
        The expected share, from 0 to 1.
    """
    k = min(k, len(values))
    if k == 0:
        return float("nan")
    hits, left = 0.0, k
    for value in np.unique(values)[::-1]:
        tied = values == value
        n = int(tied.sum())
        take = min(left, n)
        hits += take * float(inside[tied].sum()) / n
        left -= take
        if left == 0:
            break
    return hits / k


def _rare_alert(alert: Alert, types: Sequence[tuple[str, int]], rare: set[str]) -> bool:
    """Whether the alert is a rare element alone: its non-carbon atoms are all of rare elements."""
    others = [types[a][0] for a in alert.atoms if types[a][0] != "C"]
    return bool(others) and all(e in rare for e in others)


def alert_agreement(train: GraphSet, library: GraphSet, scores: Scores, top_names: int = TOP_NAMES) -> AlertAgreement:
    """Measure whether the largest node errors of ``scores`` lie in structural alerts.

    Args:
        train: the molecules the detector trained on (the rarity baseline's counts).
        library: the scored molecules (with their SMILES).
        scores: the detector's scores of ``library``, with node errors.
        top_names: how many of the most frequent alert names get a row of their own.

    Returns:
        Per group (all alerts, each family, each frequent name) the top-1 and top-3 shares beside
        chance and the rarity baseline, over all molecules and without rare-element-only alerts.

    Raises:
        ValueError: ``scores`` and ``library`` differ in length, or the scores have no node errors.
    """
    if len(scores) != len(library):
        raise ValueError(f"{len(scores)} scores for {len(library)} molecules")
    if not scores.has_node_scores:
        raise ValueError("these scores have no node errors (the detector scores whole graphs only)")
    counts: Counter = Counter()
    for meta in train.meta:
        counts.update(atom_types(meta.smiles or ""))
    total = sum(counts.values()) or 1
    elements: Counter = Counter()
    for (element, _), n in counts.items():
        elements[element] += n
    rare_of = lambda e: elements[e] < RARE_SHARE * total  # noqa: E731 (absent elements are rare)

    rows = []  # (errors, rarity, alerts, has_rare_alert)
    rare_seen: set[str] = set()
    for i, meta in enumerate(library.meta):
        types = atom_types(meta.smiles or "")
        errors = scores.node_errors_of(i)
        if not types or len(types) != len(errors):
            continue
        alerts = structural_alerts(meta.smiles)
        if not alerts:
            continue
        rarity = np.array([-math.log((counts[t] + 1) / (total + 1)) for t in types])
        rare = {t[0] for t in types if rare_of(t[0])}
        rare_seen |= rare
        rows.append((np.asarray(errors, dtype=np.float64), rarity, alerts,
                     any(_rare_alert(a, types, rare) for a in alerts)))
    name_counts = Counter(name for _, _, alerts, _ in rows for name in {f"{a.family}: {a.name}" for a in alerts})
    families = sorted({a.family for _, _, alerts, _ in rows for a in alerts})
    groups = [("all alerts", lambda a: True)]
    groups += [(f"family {f}", lambda a, f=f: a.family == f) for f in families]
    groups += [(f"alert {n}", lambda a, n=n: f"{a.family}: {a.name}" == n) for n, _ in name_counts.most_common(top_names)]
    result = AlertAgreement(scored=len(library), with_alerts=len(rows), rare_elements=sorted(rare_seen))
    for label, keep in groups:
        result.all_molecules.append(_group(label, rows, keep, drop_rare=False))
        result.without_rare.append(_group(label, rows, keep, drop_rare=True))
    return result


def _group(label: str, rows: list, keep, drop_rare: bool) -> GroupResult:
    """One group's measures over the molecules that match it with atoms not covering the molecule."""
    sums = np.zeros(5)
    n = 0
    for errors, rarity, alerts, has_rare in rows:
        if drop_rare and has_rare:
            continue
        atoms = {a for alert in alerts if keep(alert) for a in alert.atoms}
        if not atoms or len(atoms) >= len(errors):
            continue
        inside = np.zeros(len(errors), dtype=bool)
        inside[list(atoms)] = True
        sums += [top_share(errors, inside, 1), top_share(errors, inside, 3), inside.mean(),
                 top_share(rarity, inside, 1), top_share(rarity, inside, 3)]
        n += 1
    means = sums / n if n else np.full(5, np.nan)
    return GroupResult(label, n, *(float(x) for x in means))
