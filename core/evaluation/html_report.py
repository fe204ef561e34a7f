"""A one-file HTML report of a ranked result: the data summary, the model settings, the top
molecules with their heatmaps (inline SVG), the score histogram and, with labels, the ROC curve.
It opens in any browser, with no server and no other file."""
from __future__ import annotations

import io
from collections.abc import Mapping
from html import escape
from pathlib import Path

import numpy as np

from core.data.alerts import alerts_at_atoms, structural_alerts
from core.data.properties import properties_line
from core.data.graphset import GraphSet
from core.data.scores import Scores, ranking_of
from core.evaluation.metrics import roc_auc, roc_points
from core.runtime.files import atomic_output


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _histogram(scores: np.ndarray, is_anomaly: np.ndarray | None, threshold: float | None) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 3.2))
    ax = fig.add_subplot()
    positive = scores[scores > 0]
    log = positive.size == scores.size and scores.size > 1 and positive.max() > 100 * np.median(positive)
    bins = np.geomspace(positive.min(), positive.max(), 41) if log else np.histogram_bin_edges(scores, bins=40)
    if log:
        ax.set_xscale("log")
    if is_anomaly is None:
        ax.hist(scores, bins=bins, color="#2e86c1")
    else:
        ax.hist(scores[~is_anomaly], bins=bins, alpha=0.6, color="#2e86c1", label="normal")
        ax.hist(scores[is_anomaly], bins=bins, alpha=0.6, color="#c0392b", label="anomalous")
        ax.legend(fontsize=8)
    if threshold is not None:
        ax.axvline(threshold, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("anomaly score")
    ax.set_ylabel("graphs")
    return _svg(fig)


def _roc(fpr: np.ndarray, tpr: np.ndarray, auc: float) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3.4, 3.2))
    ax = fig.add_subplot()
    ax.plot(fpr, tpr, color="#c0392b")
    ax.plot([0, 1], [0, 1], color="#999999", linestyle=":")
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel("true-positive rate")
    ax.set_title(f"ROC-AUC {auc:.3f}", fontsize=10)
    ax.set_aspect("equal")
    return _svg(fig)


def _colour_legend(vmax: float) -> str:
    """The heatmaps' colour scale as a horizontal colour bar (SVG): node error from 0 to ``vmax``."""
    import matplotlib
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    from core.viz.heatmap import CMAP

    fig = Figure(figsize=(4.2, 0.75))
    cax = fig.add_axes((0.05, 0.55, 0.9, 0.3))
    bar = fig.colorbar(matplotlib.cm.ScalarMappable(norm=Normalize(0.0, vmax), cmap=CMAP), cax=cax,
                       orientation="horizontal", extend="max")
    bar.solids.set_rasterized(False)  # vector, like the rest: no embedded image
    cax.set_xlabel("node error (atoms above the top of the scale: darkest red)", fontsize=8)
    cax.tick_params(labelsize=8)
    return _svg(fig)


def _alerts_cell(mol, top: list[int]) -> str:
    """The molecule's structural alerts, and which of the ``top`` (top-error) atoms lie in them."""
    found = structural_alerts(mol) if mol is not None else []
    if not found:
        return ""
    names = sorted({a.label for a in found})
    where = alerts_at_atoms(found, top, [a.GetSymbol() for a in mol.GetAtoms()])
    return ("<br>alerts: " + escape(", ".join(names)) +
            "".join(f"<br><i>{escape(line)}</i>" for line in where))


def html_report(path: str | Path, graphs: GraphSet, scores: Scores, settings: dict, top_n: int = 25,
                anomaly_label: str | None = None, threshold: float | None = None,
                p_values: np.ndarray | None = None, title: str = "", vmax: float | None = None,
                review: Mapping[int, str] | None = None, rank: np.ndarray | None = None) -> int:
    """Write a self-contained HTML report (histogram, ROC curve, top molecules with heatmaps) to ``path`` atomically.

    Args:
        path: the HTML file to write.
        graphs: the scored graphs.
        scores: their scores.
        settings: the model's settings to list (name -> value), e.g. ``model.get_params()``.
        top_n: how many of the top-ranked graphs to show with their heatmaps.
        anomaly_label: the anomalous class, for the class histogram and the ROC curve (with labels).
        threshold: the flag threshold, drawn on the histogram and used for the flag column.
        p_values: shape ``(graphs,)``, listed beside each score when given.
        title: the report's title (default: the data file's name).
        vmax: the top of the heatmaps' colour scale, shared by every molecule (e.g. a high
            percentile of the training graphs' node errors); default the 99th percentile of all
            the graphs' node errors (:func:`core.viz.heatmap.fixed_error_scale`).
        review: an analyst's marks, graph index -> ``"anomaly"`` or ``"not anomaly"``: listed in
            the summary, beside each top molecule and in a table of the reviewed graphs.
        rank: each graph's rank (1 = top) when it is not the scores' own, e.g. an analyst's
            review's: the top molecules and the ranks shown follow it.

    Returns:
        The number of molecules drawn.

    Raises:
        GLocalKDError: ``path`` is the graphs' own file (:func:`core.runtime.files.check_outputs`).
    """
    from core.data.graph_molecules import graph_molecule
    from core.runtime.files import check_outputs
    from core.viz.heatmap import fixed_error_scale, molecule_image

    check_outputs([path], [graphs.source] if graphs.source else [])  # first: never over the data it reports on

    if scores.has_node_scores and vmax is None:
        vmax = fixed_error_scale(scores.node_errors)

    n = len(graphs)
    ranking = ranking_of(scores, rank)
    labels = graphs.label_counts()
    is_anomaly = None
    roc = ""
    if anomaly_label is not None and len(labels) >= 2:
        known = np.array([lab is not None for lab in graphs.labels])
        y = np.array([lab == anomaly_label for lab in graphs.labels])
        auc = roc_auc(y[known], scores.score[known])
        fpr, tpr = roc_points(y[known], scores.score[known])
        if len(fpr):
            roc = _roc(fpr, tpr, auc)
        is_anomaly = y
    name = Path(graphs.source).name
    flagged = int((scores.score > threshold).sum()) if threshold is not None else None
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title or name)} — GLocalKD report"
             "</title><style>body{font-family:sans-serif;margin:2em;max-width:1200px}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}"
             ".mol svg{width:300px;height:250px}.plots{display:flex;gap:2em;flex-wrap:wrap}"
             "th{background:#f4f4f4;text-align:left}tt{word-break:break-all}</style></head><body>",
             f"<h1>{escape(title or name)}</h1><h2>Data</h2><table>",
             f"<tr><th>File</th><td>{escape(str(graphs.source))}</td></tr>",
             f"<tr><th>Graphs</th><td>{n:,} ({graphs.num_nodes:,} nodes); {len(graphs.rejects):,} rows rejected</td></tr>",
             f"<tr><th>Labels</th><td>{escape(', '.join(f'{k}: {v}' for k, v in labels.items()) or 'none')}</td></tr>"]
    if flagged is not None:
        parts.append(f"<tr><th>Flagged</th><td>{flagged:,} above the threshold {threshold:.4g}</td></tr>")
    parts.append("</table><h2>Model</h2><table>")
    parts += [f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>" for k, v in settings.items()]
    parts.append("</table><h2>Scores</h2><div class='plots'>")
    parts.append(_histogram(scores.score, is_anomaly, threshold))
    if roc:
        parts.append(roc)
    parts.append(f"</div><h2>Top {min(top_n, n)} of {n:,}</h2>")
    if scores.has_node_scores:
        parts.append(f"<p>Atoms are coloured by their node error on one colour scale shared by every molecule "
                     f"(0 to {vmax:.4g}), so a colour means the same error in every drawing:</p>{_colour_legend(vmax)}")
    parts.append("<table><tr><th>Rank</th><th>Molecule</th><th>Id, score</th></tr>")
    drawn = 0
    for rank, i in enumerate(ranking[:top_n].tolist(), start=1):
        meta = graphs.meta[i]
        mol = graph_molecule(graphs, i)
        errors = scores.node_errors_of(i) if scores.has_node_scores else None
        picture = ""
        if mol is not None and mol.GetNumAtoms() == int(graphs.graphs[i].num_nodes):
            picture = molecule_image(mol, errors, size=(360, 300), svg=True, scale="linear", vmax=vmax).decode()
            picture = picture[picture.index("<svg"):]
            drawn += 1
        p = f"<br>p-value {p_values[i]:.3g}" if p_values is not None else ""
        label = f"<br>label {escape(str(meta.label))}" if meta.label is not None else ""
        flag = "<br><b>flagged</b>" if threshold is not None and scores.score[i] > threshold else ""
        flag += f"<br>review: <b>{escape(review[i])}</b>" if review and i in review else ""
        top = [j for j, _ in scores.top_nodes(i, 3)] if picture and errors is not None else []
        alerts = _alerts_cell(mol, top)
        props = properties_line(mol)
        props = f"<br><small>{escape(props)}</small>" if props else ""
        parts.append(f"<tr><td>{rank}</td><td class='mol'>{picture}</td><td><b>{escape(meta.id)}</b> "
                     f"{escape(meta.name if meta.name != meta.id else '')}<br>score {scores.score[i]:.4g}{p}{label}"
                     f"{flag}{props}{alerts}<br><tt>{escape(meta.smiles)}</tt></td></tr>")
    if review:
        parts.append(f"</table><h2>Reviewed ({len(review):,})</h2><table><tr><th>Rank</th><th>Id</th><th>Review</th>"
                     "<th>Score</th></tr>")
        rank_of = np.empty(n, dtype=np.int64)
        rank_of[ranking] = np.arange(1, n + 1)
        for i in sorted(review, key=lambda j: rank_of[j]):
            parts.append(f"<tr><td>{rank_of[i]}</td><td>{escape(graphs.meta[i].id)}</td><td>{escape(review[i])}</td>"
                         f"<td>{scores.score[i]:.4g}</td></tr>")
    scale_note = (f"Heatmaps: atoms coloured by node error, colour scale shared by every molecule (0 to {vmax:.4g})."
                  if scores.has_node_scores else "This detector scores whole graphs: the molecules are drawn plain.")
    parts.append(f"</table><p style='color:#777'>Written by GLocalKD Studio. {scale_note}</p></body></html>")
    with atomic_output(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(parts))
    return drawn
