"""What the score, p, q, the flag and the heatmap mean, in a chemist's words, where they are shown:
the table's column header tooltips, a p-value cell's tooltip, one line under the table and one
beside the heatmap. Plain text only (no Qt), so tests read the words themselves."""
from __future__ import annotations

import math

COLUMN_TIPS = {
    "Rank": "1 is the compound least like the normal compounds the model learned from (rows you reviewed come "
            "first).",
    "Review": "Your mark: ● anomaly or ○ not anomaly. Marked rows come first; the others are ranked again by them.",
    "Score": "How unlike the normal compounds this compound is: higher is more unusual. Scores compare "
             "compounds scored by the same model; the number itself has no unit.",
    "p-value": "p = 0.05: about 1 in 20 normal compounds scores this high. The smaller p, the rarer such a "
               "score is among normal compounds.",
    "q-value": "q: the share of false alarms expected among the rows flagged up to here (ranked by score). "
               "Flagging every row with q ≤ 0.1 means about 1 in 10 of them are normal compounds.",
    "Flag": "▲ flagged: the score is above the flag rule chosen in the filter bar (a percentile of the training "
            "compounds' scores, or a p- or q-value cut-off).",
    "Graph term": "The part of the score from the whole molecule's shape and make-up.",
    "Node term": "The part of the score from single atoms that differ most from what the model learned.",
    "Nodes": "Heavy atoms (nodes of the graph).",
    "SMILES": "The structure as read (the standardised form when the model standardises its molecules).",
}

TABLE_LEGEND = ("Higher score = less like the normal compounds.  p = 0.05: 1 in 20 normal compounds scores this "
                "high.  q: the share of false alarms among the rows flagged up to here.")

HEATMAP_LEGEND = ("Red atoms differ most from what the model learned from the normal compounds; pale atoms look "
                  "like them.")


def p_value_text(p: float) -> str:
    """A p-value in words: how many normal compounds score as high.

    Args:
        p: a p-value (NaN when the model gives none).

    Returns:
        e.g. ``"p = 0.05: about 1 in 20 normal compounds scores this high"``; "" for NaN.
    """
    if not math.isfinite(p):
        return ""
    if p <= 0:
        return f"p = {p:.3g}: no normal compound scored this high"
    one_in = max(1, round(1 / p))
    if one_in == 1:
        return f"p = {p:.3g}: most normal compounds score this high (nothing unusual)"
    return f"p = {p:.3g}: about 1 in {one_in:,} normal compounds scores this high"


def q_value_text(q: float) -> str:
    """A q-value in words: the share of false alarms if this row and every higher one are flagged.

    Args:
        q: a q-value (NaN when the model gives none).

    Returns:
        e.g. ``"q = 0.1: flag down to here and about 10% of the flagged rows are false alarms"``; "" for NaN.
    """
    if not math.isfinite(q):
        return ""
    return f"q = {q:.3g}: flag down to here and about {q:.0%} of the flagged rows are false alarms"


__all__ = ["COLUMN_TIPS", "TABLE_LEGEND", "HEATMAP_LEGEND", "p_value_text", "q_value_text"]
