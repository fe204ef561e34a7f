"""Sharing ranked results: an SDF file with the scores as SD properties (as DataWarrior users
exchange compound sets)."""
from __future__ import annotations

from pathlib import Path
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from core.data.graph_molecules import NOT_MOLECULES
from core.data.graphset import GraphSet
from core.data.pvalues import report_q_values
from core.data.scores import Scores, ranking_of, score_text
from core.data.sd_records import reject_records, sd_text  # noqa: F401 (sd_text: the writer's own name)
from core.errors import GLocalKDError, raise_if_stopped
from core.runtime.files import atomic_output


def write_sdf(path: str | Path, graphs: GraphSet, scores: Scores, rows: Sequence[int] | None = None,
              flagged: np.ndarray | None = None, p_values: np.ndarray | None = None, top_k: int = 5,
              alerts: bool = True, review: Mapping[int, str] | None = None, properties: bool = True,
              rank: np.ndarray | None = None, should_stop: Callable[[], bool] | None = None) -> int:
    """Write molecules in rank order to an SDF file, the scores as SD properties (as DataWarrior users share sets).

    The properties are ``id``, ``name`` (when it differs from the id), ``rank``, ``score``,
    ``p_value`` and its Benjamini-Hochberg ``q_value`` over all graphs (when given), ``flagged``
    (when given), ``label``, ``top_atoms`` (``C3:0.52;...``) and ``alerts`` (the structural alerts
    it matches, :func:`core.data.alerts.alerts_text`; when any), ``review`` (an analyst's mark,
    when marks are given) and the chemist's properties (``mw``, ``clogp``, ...
    :data:`core.data.properties.PROPERTY_COLUMNS`). The file is written atomically.

    Args:
        path: the SDF file to write.
        graphs: the scored graphs.
        scores: their scores.
        rows: graph indices to write (e.g. the rows a filter shows); default all. They are
            written in rank order whatever their order here.
        flagged: shape ``(graphs,)`` booleans, written as 0/1.
        p_values: shape ``(graphs,)``, e.g. :func:`core.evaluation.metrics.empirical_p_values`.
        top_k: how many of a molecule's highest-error atoms ``top_atoms`` lists.
        alerts: write the ``alerts`` property (about 20 ms a molecule on a busy 2-core machine).
        review: an analyst's marks, graph index -> ``"anomaly"`` or ``"not anomaly"``: the
            ``review`` property of the marked molecules (when given, every molecule has it, empty
            when unmarked).
        properties: write the chemist's properties (about 1 ms a molecule).
        rank: each graph's rank (1 = top) when it is not the scores' own, e.g. an analyst's
            review's; the ``rank`` property and the order follow it.
        should_stop: polled before each molecule; True stops the writing and raises
            :class:`core.errors.Stopped` (nothing is written).

    Returns:
        The number of records written: the molecules (graphs without one are skipped) and, with
        every row (``rows`` None), each rejected row as a record without atoms
        (:func:`core.data.sd_records.reject_records`).

    Raises:
        GLocalKDError: rows are chosen but the graphs are not molecules (an SD file of them would
            be empty), or ``path`` is the graphs' own file: nothing is written.
        Stopped: ``should_stop`` returned True.
    """
    from rdkit import Chem

    from core.data.alerts import alerts_text, structural_alerts
    from core.data.properties import set_sd_properties
    from core.data.graph_molecules import graph_molecule
    from core.runtime.files import check_outputs

    check_outputs([path], [graphs.source] if graphs.source else [])  # first: never over the data it reports on
    q_values = report_q_values(p_values) if p_values is not None else None
    ranking = ranking_of(scores, rank)
    rank = np.empty(len(ranking), dtype=np.int64)
    rank[ranking] = np.arange(1, len(ranking) + 1)
    chosen = np.arange(len(ranking)) if rows is None else np.asarray(list(rows), dtype=np.int64)
    chosen = chosen[np.argsort(rank[chosen], kind="stable")]
    if len(chosen) and not graphs.is_molecular:
        raise GLocalKDError(NOT_MOLECULES.format(path=Path(path).name))
    written = 0
    with atomic_output(path, "w", encoding="utf-8") as fh, Chem.SDWriter(fh) as writer:
        for i in chosen.tolist():
            raise_if_stopped(should_stop, path)
            mol = graph_molecule(graphs, i)
            if mol is None:
                continue
            meta = graphs.meta[i]
            mol = Chem.Mol(mol)
            mol.SetProp("_Name", sd_text(meta.id))
            mol.SetProp("id", sd_text(meta.id))
            if meta.name and meta.name != meta.id:
                mol.SetProp("name", sd_text(meta.name))
            mol.SetIntProp("rank", int(rank[i]))
            mol.SetProp("score", score_text(float(scores.score[i])))
            if p_values is not None:
                mol.SetProp("p_value", f"{float(p_values[i]):.4g}")
                mol.SetProp("q_value", f"{float(q_values[i]):.4g}")
            if flagged is not None:
                mol.SetIntProp("flagged", int(bool(flagged[i])))
            if meta.label is not None:
                mol.SetProp("label", sd_text(str(meta.label)))
            if review is not None:
                mol.SetProp("review", sd_text(review.get(i, "")))
            top = scores.top_nodes(i, top_k)
            if top:
                symbol = [a.GetSymbol() for a in mol.GetAtoms()]  # node order is atom order (graph_molecule)
                mol.SetProp("top_atoms", ";".join(f"{symbol[j]}{j}:{err:.4g}" for j, err in top))
            if properties:
                set_sd_properties(mol)
            found = alerts_text(structural_alerts(mol)) if alerts else ""
            if found:
                mol.SetProp("alerts", found)
            writer.write(mol)
            written += 1
        if rows is None:  # every row: the rejected ones too, as records without atoms (none is lost)
            written += reject_records(writer, graphs.rejects)
    return written
