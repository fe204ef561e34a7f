"""The statistics a user computes by hand from the library: ROC-AUC, p-values and q-values give
an answer or a clear error, never a silent wrong one (reproductions of a hostile hunt)."""
from __future__ import annotations

import numpy as np
import pytest

from core import GLocalKDError, benjamini_hochberg, empirical_p_values, roc_auc, write_report


def test_roc_auc_refuses_flags_that_are_labels_instead_of_returning_nan():
    """GraphSet.labels are text: ``roc_auc(["0", "1", ...])`` read every flag as True and said NaN."""
    scores = [0.1, 0.9, 0.2, 0.8]
    assert roc_auc([0, 1, 0, 1], scores) == 1.0 == roc_auc(np.array([False, True, False, True]), scores)
    for flags in (["0", "1", "0", "1"], [-1, 1, -1, 1]):
        with pytest.raises(GLocalKDError, match="anomaly flags are True/False"):
            roc_auc(flags, scores)
    with pytest.raises(GLocalKDError, match="finite scores"):
        roc_auc([0, 1], [np.nan, 0.2])
    with pytest.raises(GLocalKDError, match="one score per flag"):
        roc_auc([0, 1, 1], [0.1, 0.2])


def test_p_values_are_one_formula_and_a_nan_score_has_none():
    """empirical_p_values gave a NaN score the most significant p-value, 1/(n+1)."""
    p = empirical_p_values(np.array([np.nan, 0.15, 0.5]), np.array([0.1, 0.2]))
    assert np.isnan(p[0]) and p[1:].tolist() == [2 / 3, 1 / 3]


def test_q_values_keep_any_shape_and_refuse_negative_p_values():
    grid = np.array([[0.01, 0.2], [0.03, 0.9]])
    assert benjamini_hochberg(grid).shape == (2, 2)
    assert np.allclose(benjamini_hochberg(grid).ravel(), benjamini_hochberg(grid.ravel()))
    assert float(benjamini_hochberg(0.03)) == 0.03
    with pytest.raises(GLocalKDError, match="at least 0"):
        benjamini_hochberg([-0.1, 0.2])


def test_a_report_refuses_p_values_of_another_set(herg_path, tmp_path):
    """Too few p-values escaped as an IndexError; too many were silently cut to fit."""
    from core import load, make_detector

    graphs = load(herg_path).subset(range(5))
    scores = make_detector("size").fit(graphs).score(graphs)
    for n in (3, 9):
        with pytest.raises(GLocalKDError, match=f"5 graphs, but {n} p-values"):
            write_report(tmp_path / "r.csv", graphs, scores, p_values=np.full(n, 0.5))
    assert not (tmp_path / "r.csv").exists()
