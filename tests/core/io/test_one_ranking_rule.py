"""Every path that ranks scored rows ranks them alike and gives them the same q-values: the
in-memory writers (``write_report``, the SD file, the app's tables) and the streamed report of
``score`` and ``screen``, whose chunks and shards know the scores and p-values as written only."""
from __future__ import annotations

import csv

import numpy as np

from core import load, make_detector, report_q_values, write_report
from core.data.pvalues import bh_q_table, format_p
from core.data.scores import Scores
from core.screening.pipeline import screen
from tests.conftest import DEMO_DATA


def test_scores_written_alike_keep_input_order_in_every_ranking():
    """121.48061 and 121.48052 are both written 121.481: the streamed report kept them in input
    order, the in-memory writers put the larger float32 first (34 of 1,500 MOSES rows apart)."""
    score = np.array([121.48052, 121.48061, 5.0, 121.5], dtype=np.float32)
    scores = Scores.graph_only(score, np.arange(5))
    assert scores.ranking().tolist() == [3, 0, 1, 2]


def test_q_values_are_the_written_p_values_q_values():
    p = np.array([1 / 61] * 3 + [5 / 61, 20 / 61, np.nan, 1.0])
    q = report_q_values(p)
    table = bh_q_table({format_p(v): int((p == v).sum()) for v in p[np.isfinite(p)]})
    assert [format_p(v) for v in q] == [table[format_p(v)] if np.isfinite(v) else "" for v in p]
    assert np.isnan(q[5]) and q.shape == p.shape


def test_an_in_memory_report_and_a_streamed_one_are_the_same_rows(tmp_path):
    """The same model and file gave q-values apart in the sixth digit (0.0622951 and 0.0622949)
    and near-tied rows in other orders, so a training tab's export and ``glocalkd score``'s report
    of one file disagreed."""
    herg = load(DEMO_DATA / "herg.tab")
    model = make_detector("glocalkd", epochs=1, hidden_dim=16, out_dim=8, device="cpu")
    from core.detectors.conformal import fit_calibrated

    fit_calibrated(model, herg.subset(range(0, 655, 2)), 0.3, seed=0)
    scored = herg.subset(range(1, 655, 2))
    scores = model.score(scored)
    write_report(tmp_path / "memory.csv", scored, scores, p_values=model.p_values(scores.score))
    data = tmp_path / "rows.csv"
    with open(data, "w", newline="") as fh:
        csv.writer(fh).writerows([("id", "smiles", "label"), *((m.id, m.smiles, m.label) for m in scored.meta)])
    screen(model, data, tmp_path / "streamed.csv", workers=1)
    def rows(name):  # every column but the name (a table's rows are named by their id when read back)
        with open(tmp_path / name, newline="") as fh:
            return [row[:2] + row[3:] for row in csv.reader(fh)]

    memory, streamed = rows("memory.csv")[:-1], rows("streamed.csv")[:-1]  # less their end rows
    assert len(memory) == len(streamed) == len(scored) + 1
    assert memory == streamed
