"""IDs that name more than one graph: found with their input lines, said in one sentence."""
from __future__ import annotations

from core import load


def test_repeated_ids_are_found_with_their_lines_and_a_unique_file_has_none(tmp_path):
    path = tmp_path / "m.smi"
    path.write_text("CCO x\nCCN y\n\nCCC x\nC1CC1 z\nCCCC y\nCCCCC x\nCCCCCC x\nCCCCCCC x\n")
    graphs = load(path)
    assert graphs.repeated_ids() == {"x": [1, 4, 7, 8, 9], "y": [2, 6]}  # file lines: line 3 is blank
    assert graphs.repeated_ids_note(shown=1) == "2 IDs name more than one row: x (lines 1, 4, 7, 8, ...) and 1 more"
    assert graphs.subset([0, 1, 3]).repeated_ids() == {}
    assert graphs.subset([0, 1, 3]).repeated_ids_note() == ""
