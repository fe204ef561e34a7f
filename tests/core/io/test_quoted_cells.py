"""A quoted table cell is kept byte for byte: a line inside it that starts with ``#`` or is blank
belongs to the cell (it is not a comment line or a row break), and its line endings are its own."""
from __future__ import annotations

import csv

import pytest

from core import load
from core.io.molecules import table_rows


def _rows(path):
    rows, _ = table_rows(path)
    return list(rows)


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_a_quoted_cell_keeps_hash_lines_and_blank_lines(tmp_path, ending):
    cells = ["first\n# not a comment\nlast", "x\n\ny", "#starts with a hash", "two\n\n\nblanks", "plain"]
    text = ending.join(["smiles,id", "# a real comment", "",
                        *(f'CC{"C" * k}O,"{cell.replace(chr(10), ending)}"' for k, cell in enumerate(cells)),
                        "# another comment", "CCN,last", ""])
    (tmp_path / "t.csv").write_bytes(text.encode())
    rows = _rows(tmp_path / "t.csv")
    assert [r.problem for r in rows] == [None] * 6
    assert [r.name for r in rows] == [cell.replace("\n", ending) for cell in cells] + ["last"]
    assert [r.line for r in rows] == [4, 7, 10, 11, 15, 17]
    graphs = load(tmp_path / "t.csv")
    assert len(graphs) == 6 and not graphs.rejects


def test_what_the_csv_module_writes_reads_back_the_same(tmp_path):
    names = ["a\n#b", "c\n\nd", "e\r\nf", 'g "quoted"\n# h', "i,j\n\n\nk"]
    with open(tmp_path / "w.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["smiles", "name"])
        writer.writerows([("CCO", n) for n in names])
    rows = _rows(tmp_path / "w.csv")
    assert [r.name for r in rows] == names and all(r.problem is None for r in rows)


def test_the_fields_of_a_row_are_the_cells_as_written(tmp_path):
    from core.io.molecules import _csv_rows
    from core.io.text import read_lines_and_endings

    (tmp_path / "r.csv").write_bytes(b'smiles,id\r\nCCO,"\r\n\r\n# lead\r\n "\r\n')
    rows = list(_csv_rows(read_lines_and_endings(tmp_path / "r.csv"), ","))
    assert rows[1] == (2, ["CCO", "\r\n\r\n# lead\r\n "], None, None)  # (no problem, so no line as written)


def test_a_stray_quote_still_rejects_only_its_own_line(tmp_path):
    (tmp_path / "s.csv").write_text('smiles,id\nCCO,"open\n# comment\nCCN,b\n\nCCC,c\n')
    rows = _rows(tmp_path / "s.csv")
    assert rows[0].problem == 'unmatched quote (") in this row' and rows[0].line == 2
    assert [(r.line, r.smiles, r.problem) for r in rows[1:]] == [(4, "CCN", None), (6, "CCC", None)]


def test_a_report_gives_back_its_cells_as_they_were(tmp_path):
    from core import GLocalKD, read_report, write_report

    table = tmp_path / "t.csv"
    ids = ["a\r\nb", "c\n\nd", "e\rf", "#g\n# h", "plain"]
    with open(table, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["smiles", "id"])
        writer.writerows([("CCO", i) for i in ids])
    graphs = load(table)
    assert [m.id for m in graphs.meta] == ids
    write_report(tmp_path / "r.csv", graphs, GLocalKD(epochs=2, hidden_dim=16, out_dim=8).fit(graphs).score(graphs))
    assert sorted(read_report(tmp_path / "r.csv").ids) == sorted(ids)
