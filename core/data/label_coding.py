"""What a graph set's node labels mean: a TU collection's label numbers (with their names, when
its readme gives them), a molecule's elements, or no labels (node degrees). Every model that reads
node labels records its training graphs' coding and refuses graphs of another (the WL views, the
rare-substructure view, and GLocalKD's node features), so a label is never compared with one that
means something else.
"""
from __future__ import annotations

import re

from core.data.chem import ELEMENTS
from core.data.graphset import GraphSet
from core.errors import SchemaMismatchError


def label_coding(graphs: GraphSet) -> dict:
    """Say what the node labels of these graphs mean (as a model that reads them records it).

    Args:
        graphs: the graphs.

    Returns:
        ``{"kind": "labels", "names": {label: name}, "collection": name}`` for a TU collection's
        node labels (names as its readme gives them, when it does; the collection's name without
        a split's ``_training``/``_testing``/``_evaluation``), ``{"kind": "elements"}`` for
        molecules' elements, ``{"kind": "degrees"}`` for graphs without labels; ``{}`` for no graphs.
    """
    if not len(graphs):
        return {}
    first = graphs.graphs[0]
    if first.get("node_label") is not None:
        return {"kind": "labels", "names": {str(k): str(v) for k, v in (graphs.node_label_names or {}).items()},
                "collection": _SPLIT.sub("", graphs.collection)}
    x = first.get("x")
    return {"kind": "elements"} if x is not None and x.shape[1] > len(ELEMENTS) else {"kind": "degrees"}


# TU's split files of one collection (Tox21_HSE_training, Tox21_HSE_testing) number labels alike
_SPLIT = re.compile(r"_(training|testing|evaluation)$", re.IGNORECASE)


def _coding_text(coding: dict) -> str:
    if coding.get("kind") == "labels":
        names = list(coding.get("names", {}).values())
        if names:
            return f"TU node labels ({', '.join(names[:6])}{', ...' if len(names) > 6 else ''})"
        collection = coding.get("collection")
        return f"{collection}'s TU node labels (numbers its files do not name)" if collection else "TU node labels"
    return {"elements": "molecules' elements", "degrees": "node degrees (graphs without labels)"}.get(
        coding.get("kind", ""), "unknown labels")


def check_label_coding(fitted: dict | None, now: dict) -> None:
    """Refuse graphs whose node labels mean something other than the fitted graphs' did: a
    molecule's element and a TU collection's label number are both small integers (carbon is 0 in
    both, but AIDS's 1 is oxygen where a molecule's 1 is nitrogen; Tox21's 0 is oxygen where
    AIDS's is carbon), so a model would compare them silently.

    Args:
        fitted: the fitted graphs' :func:`label_coding` (None or ``{}``: a model file older than
            the record, not checked).
        now: the scored graphs' :func:`label_coding` (``{}``: no graphs).

    Raises:
        SchemaMismatchError: another kind of label, TU labels whose names differ, or TU labels
            of another collection where either side's are unnamed (NCI1's numbers are not
            ENZYMES's, nor BZR's AIDS's named elements: the unnamed say nothing of what they mean).
    """
    if not fitted or not now:
        return
    same = fitted["kind"] == now["kind"]
    if same and fitted["kind"] == "labels":
        a, b = fitted.get("names") or {}, now.get("names") or {}
        same = all(a[k] == b[k] for k in a.keys() & b.keys())
        # unnamed labels on either side (BZR's) are their collection's own numbers: one named side
        # (AIDS's C, O, N) says nothing about them, so only the same collection is the same coding
        if same and not (a and b) and fitted.get("collection") and now.get("collection"):
            same = fitted["collection"] == now["collection"]
    if not same:
        raise SchemaMismatchError(f"the model was fitted on graphs labelled by {_coding_text(fitted)}, but these "
                                  f"are labelled by {_coding_text(now)}: the labels would be compared as if they "
                                  "meant the same")
