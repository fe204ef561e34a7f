"""Molecule files as chemists really have them: every molecule is read with its own id, or
rejected naming its line, never merged into another row (reproductions of a hostile hunt)."""
from __future__ import annotations

import csv

import pytest

from core import load
from core.cli.main import main
from core.errors import DataError


def _molblock(smiles: str, title: str, fields: dict[str, str] | None = None) -> str:
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    mol.SetProp("_Name", title)
    return Chem.MolToMolBlock(mol) + "".join(f">  <{k}>\n{v}\n\n" for k, v in (fields or {}).items())


def _read(path) -> tuple[list[tuple[str, str]], list[int]]:
    graphs = load(path)
    return [(m.id, m.smiles) for m in graphs.meta], [r.line for r in graphs.rejects]


def test_a_record_without_its_separator_and_concatenated_mol_files_give_every_molecule(tmp_path):
    """A forgotten ``$$$$`` merged two records: benzene took ethylamine's id and ethylamine was lost;
    ``cat *.mol > all.sdf`` read as its first molecule only."""
    blocks = [_molblock(s, t, {"ID": t}) for s, t in (("CCO", "E1"), ("c1ccccc1", "E2"), ("CCN", "E3"))]
    (tmp_path / "missing.sdf").write_text(blocks[0] + "$$$$\n" + blocks[1] + blocks[2] + "$$$$\n")
    assert _read(tmp_path / "missing.sdf") == ([("E1", "CCO"), ("E2", "c1ccccc1"), ("E3", "CCN")], [])
    catted = tmp_path / "catted.sdf"
    catted.write_text("".join(_molblock(s, t) for s, t in (("CCO", "ethanol"), ("c1ccccc1", "benzene"),
                                                                 ("CCN", "ethylamine"))))
    assert _read(catted)[0] == [("ethanol", "CCO"), ("benzene", "c1ccccc1"), ("ethylamine", "CCN")]
    untitled = tmp_path / "untitled.sdf"  # molblocks with blank title lines, as many tools write them
    untitled.write_text("".join(_molblock(s, "") for s in ("CCO", "c1ccccc1", "CCN")))
    assert [smiles for _, smiles in _read(untitled)[0]] == ["CCO", "c1ccccc1", "CCN"]


@pytest.mark.parametrize("title", ["A", ""])
def test_a_molblock_without_its_m_end_is_rejected_alone_not_with_the_molecule_after_it(tmp_path, title):
    """In concatenated molblocks, one that lacked its ``M  END`` swallowed the next, valid one: both
    became one reject under the second's id, and the first was never named."""
    first = _molblock("CCO", title).replace("M  END\n", "")
    path = tmp_path / "cat.sdf"
    path.write_text(first + _molblock("c1ccccc1", "B", {"ID": "idB"}) + _molblock("CCN", "C") + "$$$$\n")
    graphs = load(path)
    assert [(m.id, m.smiles) for m in graphs.meta] == [("idB", "c1ccccc1"), ("C", "CCN")]
    assert [(r.line, r.reason) for r in graphs.rejects] == [(1, "record 1 has no 'M  END' line")]
    streamed = tmp_path / "r.csv"  # the streamed reader of screening splits it alike
    (tmp_path / "m.smi").write_text("CCO a\nCCN b\nc1ccccc1 c\n")
    assert main(["train", str(tmp_path / "m.smi"), "-o", str(tmp_path / "m.pt"), "--detector", "size"]) == 0
    assert main(["score", str(tmp_path / "m.pt"), str(path), "-o", str(streamed)]) == 0
    from core import read_report

    report = read_report(streamed)
    assert sorted(report.ids) == ["C", "idB"] and [r.reason for r in report.rejects] == [
        "line 1: record 1 has no 'M  END' line"]


def test_a_stray_quote_rejects_its_own_line_and_the_lines_after_it_are_read(tmp_path):
    """The quote of line 2 was "closed" by the quote of ``"benzene, pure"`` three lines on: three
    molecules vanished into one id."""
    path = tmp_path / "stray.csv"
    path.write_text('smiles,name\nCCO,"ethanol\nCCN,ethylamine\nCCC,propane\nc1ccccc1,"benzene, pure"\nCO,methanol\n')
    rows, rejects = _read(path)
    assert rows == [("ethylamine", "CCN"), ("propane", "CCC"), ("benzene, pure", "c1ccccc1"), ("methanol", "CO")]
    assert rejects == [2]
    assert "unmatched quote" in load(path).rejects[0].reason
    one_line = tmp_path / "one_line.csv"  # the csv module read '"CC"O' as CCO: another molecule than written
    one_line.write_text('id,smiles\na,"CC"O\nb,CCN\nc,"CCO"\n')
    graphs = load(one_line)
    assert [m.id for m in graphs.meta] == ["b", "c"] and [(r.line, r.id) for r in graphs.rejects] == [(2, "a")]
    assert "closes a field that text follows" in graphs.rejects[0].reason
    ok = tmp_path / "ok.csv"  # a quoted cell that does span lines is still one cell
    ok.write_text('smiles,name\nCCO,"ethanol\nabsolute"\nCCN,ethylamine\n')
    assert _read(ok) == ([("ethanol\nabsolute", "CCO"), ("ethylamine", "CCN")], [])


def test_a_row_with_more_fields_than_the_header_is_rejected_not_shifted(tmp_path, capsys):
    """An unquoted comma in "2,4-dinitrophenol" read the name's tail as the id and the id as the label."""
    path = tmp_path / "extra.csv"
    path.write_text("smiles,name,id,activity\nOc1ccc(cc1[N+](=O)[O-])[N+](=O)[O-],2,4-dinitrophenol,C1,1\n"
                    "CCO,ethanol,C2,0\nCCN,ethylamine,C3,0,\n")  # a trailing empty field is harmless
    graphs = load(path)
    assert [(m.id, m.label) for m in graphs.meta] == [("C2", "0"), ("C3", "0")]
    assert [r.line for r in graphs.rejects] == [2] and "row has 5 fields, the header 4" in graphs.rejects[0].reason
    model = tmp_path / "m.pt"
    assert main(["train", str(path), "-o", str(model), "--detector", "size", "--calibration", "0"]) == 0
    assert main(["score", str(model), str(path), "-o", str(tmp_path / "r.csv")]) == 0
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert {r["id"] for r in rows if r["status"] == "ok"} == {"C2", "C3"}
    assert [r["id"] for r in rows if r["status"].startswith("rejected: line 2: row has 5 fields")] == ["2"]


def test_an_sdf_files_named_fields_match_as_table_columns_do(tmp_path):
    """``--id-column compound_id`` on an SDF field ``Compound_ID`` was ignored (ids fell back to titles)."""
    path = tmp_path / "fields.sdf"
    path.write_text(_molblock("CCO", "ethanol", {"Compound_ID": "CMP-001", "Activity": "1"}) + "$$$$\n"
                    + _molblock("CCN", "", {"Compound_ID": "CMP-002", "Activity": "0"}) + "$$$$\n")
    graphs = load(path, id_column="compound_id", label_column="activity")
    assert [(m.id, m.label) for m in graphs.meta] == [("CMP-001", "1"), ("CMP-002", "0")]
    with pytest.raises(DataError, match=r"no id field named 'CompoundID' .*Compound_ID, Activity"):
        load(path, id_column="CompoundID")


def test_a_cxsmiles_extension_in_a_smiles_list_stays_with_its_smiles(tmp_path):
    """In a .smi file the extension became the start of the name; in a CSV it was kept."""
    smi = tmp_path / "cx.smi"
    smi.write_text("C[C@H](N)C(=O)O |&1:1| ALA-rac\nc1ccccc1* |$;;;;;;R1$| R-phenyl\nCCO ethanol\n")
    table = tmp_path / "cx.csv"
    table.write_text("smiles,id\nC[C@H](N)C(=O)O |&1:1|,ALA-rac\nc1ccccc1* |$;;;;;;R1$|,R-phenyl\nCCO,ethanol\n")
    assert _read(smi) == _read(table)
    assert _read(smi)[0][0] == ("ALA-rac", "C[C@H](N)C(=O)O |&1:1|")


def test_a_name_without_its_smiles_is_rejected_as_such_not_as_a_broken_smiles(tmp_path):
    """`` mol20`` (the SMILES missing before its name) was rejected as "invalid SMILES syntax:
    mol20"; indented molecules, alone or named, still read."""
    smi = tmp_path / "gap.smi"
    smi.write_text("CCO a\n mol20\n  CCN b\n c1ccccc1\nxyz q\n")
    graphs = load(smi)
    assert [(m.id, m.smiles) for m in graphs.meta] == [("a", "CCO"), ("b", "CCN"), ("4", "c1ccccc1")]
    assert [(r.line, r.id, r.reason) for r in graphs.rejects] == [
        (2, "mol20", "no SMILES before the name 'mol20' (the line begins with a space)"),
        (5, "q", "invalid SMILES syntax: xyz")]


def test_a_zipped_molecule_file_is_called_one_not_a_broken_graph_collection(tmp_path):
    """``lib.csv.zip`` was answered with "no DS_A.txt file found: a TU collection needs ...";
    a chemist who zipped a CSV is told what it holds and what to open instead."""
    import zipfile

    table = tmp_path / "lib.csv"
    table.write_text("smiles,id\nCCO,a\n")
    with zipfile.ZipFile(tmp_path / "lib.csv.zip", "w") as archive:
        archive.write(table, "lib.csv")
    with pytest.raises(DataError, match="holds lib.csv, not a TU graph collection .*open the molecule file itself"):
        load(tmp_path / "lib.csv.zip")


def test_a_row_missing_its_id_or_label_field_is_rejected_not_read_as_unlabelled(tmp_path):
    """"CCN,b" under "smiles,id,label" was scored as an unlabelled molecule, and "CCC" took its line
    number for an id, without a word; an empty cell ("c1ccccc1,d,") is a label not known, and kept."""
    path = tmp_path / "short.csv"
    path.write_text("smiles,id,label\nCCO,a,1\nCCN,b\nCCC\nc1ccccc1,d,\n")
    graphs = load(path)
    assert [(m.id, m.label) for m in graphs.meta] == [("a", "1"), ("d", None)]
    reasons = {r.line: (r.id, r.reason) for r in graphs.rejects}
    assert reasons[3] == ("b", "row has 2 fields, the header 3: no 'label' field")
    assert reasons[4][1] == "row has 1 field, the header 3: no 'id' and no 'label' field"


def test_a_report_read_as_data_gives_its_molecules_and_its_rejects_not_its_end_row(tmp_path):
    """Scoring an earlier report again listed its end row as "rejected: line 11: empty SMILES" and
    its rejected rows as empty SMILES: a report's end row is no row of molecules, and a row it
    rejected stays rejected for the report's own reason (loading and streamed scoring alike)."""
    from core import read_report

    (tmp_path / "lib.smi").write_text("CCO a\nC1CC b\nc1ccccc1 c\nCCN d\n")
    assert main(["train", str(tmp_path / "lib.smi"), "-o", str(tmp_path / "m.pt"), "--detector", "size"]) == 0
    first, again = tmp_path / "first.csv", tmp_path / "again.csv"
    assert main(["score", str(tmp_path / "m.pt"), str(tmp_path / "lib.smi"), "-o", str(first)]) == 0
    graphs = load(first)
    assert sorted(m.id for m in graphs.meta) == ["a", "c", "d"]
    assert [r.reason for r in graphs.rejects] == ["rejected in the report: line 2: invalid SMILES syntax: C1CC"]
    assert main(["score", str(tmp_path / "m.pt"), str(first), "-o", str(again)]) == 0
    report = read_report(again)
    assert sorted(report.ids) == ["a", "c", "d"] and len(report.rejects) == 1
    assert report.rejects[0].id == "b" and "rejected in the report" in report.rejects[0].reason


def test_a_broken_rows_reject_keeps_its_id_field_and_its_text_as_written(tmp_path):
    """An SD record without ``M  END`` was rejected under its title, not its ``<id>`` field, and a
    table row ``f,"CC"O`` was listed as ``f,CCO"``: the rejects say the row as the file has it."""
    from core import load

    table = tmp_path / "q.csv"
    table.write_text('id,smiles\na,CCO\nf,"CC"O\nb,CCN\n')
    assert [(r.line, r.id, r.text) for r in load(table).rejects] == [(3, "f", 'f,"CC"O')]
    good = ("ok1\n  RDKit          2D\n\n  2  1  0  0  0  0  0  0  0  0999 V2000\n"
            "    0.0000    0.0000    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0\n"
            "    1.2990    0.7500    0.0000 O   0  0  0  0  0  0  0  0  0  0  0  0\n  1  2  1  0\nM  END\n"
            ">  <id>\nA1\n\n$$$$\n")
    broken = good.replace("ok1", "eth").replace("M  END\n", "").replace("A1", "A2")
    sdf = tmp_path / "q.sdf"
    sdf.write_text(good + broken)
    graphs = load(sdf)
    assert [m.id for m in graphs.meta] == ["A1"]
    assert [(r.id, r.reason) for r in graphs.rejects] == [("A2", "record 2 has no 'M  END' line")]
