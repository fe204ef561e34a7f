import gzip

import pytest

from core import DataError, load
from core.data.chem import ATOM_FEATURE_DIM
from tests.conftest import sdf_ethanol


def test_smiles_file_scores_good_rows_and_lists_bad_ones(smiles_file):
    graphs = load(smiles_file)
    assert [m.name for m in graphs.meta] == ["ethanol", "benzene", "acetic acid", ""]
    assert [m.line for m in graphs.meta] == [2, 5, 7, 9]
    assert graphs.meta[3].id == "9"  # no name: the line number identifies the row
    assert {(r.line, r.id) for r in graphs.rejects} == {(6, "broken_ring"), (8, "bad_valence")}
    reasons = {r.line: r.reason for r in graphs.rejects}
    assert "SMILES syntax" in reasons[6] and "valence" in reasons[8]
    assert graphs.graphs[1].x.shape == (6, ATOM_FEATURE_DIM)
    assert graphs.graphs[1].edge_index.shape == (2, 12)


def test_herg_table_columns_are_found_by_name(herg_path):
    graphs = load(herg_path)
    assert len(graphs) == 655 and not graphs.rejects
    assert graphs.label_counts() == {"0": 204, "1": 451}
    assert graphs.meta[0].id == "DEMETHYLASTEMIZOLE"
    assert graphs.meta[0].smiles.startswith("Oc1ccc(")
    assert graphs.kind == "molecule" and graphs.is_molecular


def test_csv_named_columns_gzip_bom_and_crlf(tmp_path):
    text = '\ufeffcompound,structure,activity\r\nA1,CCO,1\r\n"B, 2",c1ccccc1,0\r\nC3,not_a_smiles,1\r\n'
    plain = tmp_path / "x.csv"
    plain.write_text(text, encoding="utf-8")
    zipped = tmp_path / "x.csv.gz"
    zipped.write_bytes(gzip.compress(text.encode("utf-8")))
    for f in (plain, zipped):
        graphs = load(f, id_column="compound")
        assert [m.id for m in graphs.meta] == ["A1", "B, 2"]
        assert [m.label for m in graphs.meta] == ["1", "0"]
        assert graphs.rejects[0].line == 4 and graphs.rejects[0].id == "C3"


def test_missing_smiles_column_is_a_clear_error(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("a,b\n1,2\n")
    with pytest.raises(DataError, match=r"x.csv:1: no SMILES column found \(columns: a, b\)"):
        load(f)
    with pytest.raises(DataError, match="no SMILES column named 'smi'"):
        load(f, smiles_column="smi")


def test_cp1252_text_and_quoted_newline(tmp_path):
    f = tmp_path / "x.tsv"
    f.write_bytes('id\tsmiles\n"caf\xe9\nline two"\tCCO\nz\tCCN\n'.encode("cp1252"))
    graphs = load(f)
    assert graphs.meta[0].id == "café\nline two" and graphs.meta[0].line == 2
    assert graphs.meta[1].line == 4


def test_a_few_cp1252_rows_leave_the_utf8_rows_as_written(tmp_path):
    """Rows pasted from a legacy export into a UTF-8 file: the UTF-8 rows before the first cp1252
    byte (in the same 8 KB block) came out as mojibake ("cafÃ©-0"), the cp1252 row right."""
    f = tmp_path / "mixed.csv"
    f.write_bytes(("id,smiles\n" + "".join(f"café-{i},CCO\n" for i in range(5))).encode("utf-8")
                  + "caf\xe9-legacy,CCN\n".encode("cp1252") + "naïve,CCC\n".encode())
    assert [m.id for m in load(f).meta] == [*(f"café-{i}" for i in range(5)), "café-legacy", "naïve"]


SDF_GOOD = sdf_ethanol()
SDF_BROKEN = """broken
  RDKit          2D

  2  1  0  0  0  0  0  0  0  0999 V2000
    0.0000    0.0000    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0
  1  2  1  0
M  END
$$$$
"""


def test_sdf_broken_record_among_good_ones(tmp_path):
    f = tmp_path / "x.sdf"
    f.write_text(SDF_GOOD + SDF_BROKEN + SDF_GOOD.replace("ethanol", "second"))
    graphs = load(f)
    assert [m.id for m in graphs.meta] == ["ethanol", "second"]
    assert graphs.meta[0].smiles == "CCO" and graphs.meta[0].label == "1"
    assert len(graphs.rejects) == 1
    reject = graphs.rejects[0]
    assert reject.id == "broken" and reject.line == 15 and "record 2" in reject.reason


def test_unknown_extension(tmp_path):
    f = tmp_path / "x.xyz"
    f.write_text("x")
    with pytest.raises(DataError, match="unknown file type"):
        load(f)


def test_a_column_named_smiles_that_holds_no_molecule_is_told_apart(tmp_path, herg_path):
    """smiles_column_reads: the column chooser asks when the column named like SMILES holds none."""
    from core import smiles_column_reads

    assert smiles_column_reads(herg_path, "Drug")
    ids = tmp_path / "ids.csv"
    ids.write_text("smiles,structure\n" + "".join(f"ZINC{k:08d}xx,CCO\n" for k in range(30)))
    assert not smiles_column_reads(ids, "smiles") and smiles_column_reads(ids, "structure")
    assert not smiles_column_reads(ids, "nowhere")
    late = tmp_path / "late.csv"  # only the first 20 rows are tried
    late.write_text("smiles\n" + "xx(\n" * 25 + "CCO\n")
    assert not smiles_column_reads(late, "smiles") and smiles_column_reads(late, "smiles", rows=30)
    header_only = tmp_path / "header.csv"
    header_only.write_text("smiles,id\n")
    assert smiles_column_reads(header_only, "smiles")  # no row to tell by: loading then says it is empty


def test_column_options_for_a_file_without_columns_are_refused_not_ignored(tmp_path):
    """``--smiles-column`` or ``--id-column`` on a SMILES list (or a SMILES column on an SDF file)
    was silently ignored: the user meant something by it. Both readers refuse it by name."""
    from core.errors import DataError
    from core.io.load import molecule_rows

    smi = tmp_path / "a.smi"
    smi.write_text("CCO a\nCCN b\n")
    sdf = tmp_path / "a.sdf"
    sdf.write_text(SDF_GOOD)
    for reader in (load, molecule_rows):
        with pytest.raises(DataError, match="a SMILES list has no columns") as error:
            reader(smi, id_column="name")
        assert error.value.params == ("id_column",)
        with pytest.raises(DataError, match="an SDF file holds its molecules, not a SMILES column"):
            reader(sdf, smiles_column="smiles")
    # an SDF file's id and label are data fields: one it does not have is refused as a missing column is
    with pytest.raises(DataError, match="no id field named 'no such field' in the first record") as error:
        load(sdf, id_column="no such field")
    assert error.value.params == ("id_column",)


@pytest.mark.parametrize("suffix", [".smi", ".csv", ".sdf"])
def test_a_molecule_file_reports_its_rows_and_stops_when_asked(tmp_path, suffix):
    """The one reader of molecule files polls ``should_stop`` before each row and reports every
    thousand: asked to stop after 2,500 rows, it raises Stopped naming the file, having reported
    1,000 and 2,000."""
    from rdkit import Chem

    from core import Stopped

    smiles = [f"{'C' * (1 + i % 7)}O" for i in range(4000)]
    path = tmp_path / f"many{suffix}"
    if suffix == ".smi":
        path.write_text("".join(f"{s} m{i}\n" for i, s in enumerate(smiles)))
    elif suffix == ".csv":
        path.write_text("smiles,id\n" + "".join(f"{s},m{i}\n" for i, s in enumerate(smiles)))
    else:
        with Chem.SDWriter(str(path)) as writer:
            for s in smiles:
                writer.write(Chem.MolFromSmiles(s))
    seen: list[int] = []
    asked = iter(range(10**6))
    with pytest.raises(Stopped, match="many"):
        load(path, on_progress=seen.append, should_stop=lambda: next(asked) >= 2500)
    assert seen == [1000, 2000]
    assert len(load(path, should_stop=lambda: False)) == 4000


@pytest.mark.parametrize("text, columns", [
    ("Name;SMILES;IC50 (uM, 24h, pH 7,4)\nethanol;CCO;5,2\nbenzene;c1ccccc1;6,1\n",
     ["Name", "SMILES", "IC50 (uM, 24h, pH 7,4)"]),  # more commas than semicolons in a European header
    ("# made by hand\n\nid,smiles\na,CCO\n", ["id", "smiles"]),  # a comment and a blank line first
    ("id|struct|y\na|CCO|1\n", ["id", "struct", "y"]),
])
def test_the_column_chooser_offers_the_columns_loading_reads(tmp_path, text, columns):
    """The app's column chooser split the header by the delimiter it uses most, while loading also
    tries the others until the SMILES column is found: for ``Name;SMILES;IC50 (uM, 24h, pH 7,4)``
    it offered 'Name;SMILES;IC50 (uM', ' 24h', ... and every choice failed. Both split it in one place."""
    from core.io.columns import table_columns

    path = tmp_path / "t.csv"
    path.write_text(text)
    chosen = table_columns(path)
    assert chosen.header == columns
    smiles = chosen.smiles or "struct"
    graphs = load(path, smiles_column=smiles, id_column=chosen.id)
    assert len(graphs) >= 1 and not graphs.rejects and graphs.meta[0].smiles == "CCO"


@pytest.mark.parametrize("name, text, ids", [
    ("list.txt", "CCO\nc1ccccc1\nCCN\n", ["1", "2", "3"]),
    ("list.csv", "CCO,ethanol\nc1ccccc1,benzene\nCCN,amine\n", ["ethanol", "benzene", "amine"]),
    ("list.txt", "CCO ethanol\nc1ccccc1 benzene\nCCN\n", ["ethanol", "benzene", "3"]),
    # a name holding a comma: the line was split as a table's, "CCO ethanol" no molecule, and the file refused
    ("names.txt", "CCO ethanol, absolute\nc1ccccc1 benzene\nCCN\n", ["ethanol, absolute", "benzene", "3"]),
    ("names.csv", "CCO ethanol, absolute\nc1ccccc1 benzene, pure\n", ["ethanol, absolute", "benzene, pure"]),
    # RDKit's SmilesWriter: "no SMILES column found (columns: SMILES Name)", while as .smi it read
    ("rdkit.txt", "SMILES Name\nCCO ethanol\nc1ccccc1 benzene\nCCN\n", ["ethanol", "benzene", "4"]),
    ("rdkit.csv", "SMILES Name\nCCO ethanol\nc1ccccc1 benzene\n", ["ethanol", "benzene"]),
])
def test_a_smiles_list_under_a_tables_name_loses_no_molecule(tmp_path, capsys, name, text, ids):
    """``list.txt`` of bare SMILES failed with "no SMILES column found (columns: CCO); name it
    with --smiles-column", and following that advice scored the rest with CCO, the first molecule,
    taken for the header and listed nowhere. A table whose first lines begin with a molecule has no
    header: every line is a row (loading, streamed scoring and the column chooser alike)."""
    from core.cli.main import main
    from core.io.columns import table_columns

    path = tmp_path / name
    path.write_text(text)
    graphs = load(path)
    assert [m.id for m in graphs.meta] == ids and graphs.meta[0].smiles == "CCO" and not graphs.rejects
    assert table_columns(path).headerless  # the app's chooser then asks nothing
    model = tmp_path / "m.pt"
    assert main(["train", str(path), "-o", str(model), "--detector", "size"]) == 0
    assert main(["score", str(model), str(path), "-o", str(tmp_path / "r.csv")]) == 0
    from core import read_report

    assert sorted(read_report(tmp_path / "r.csv").ids) == sorted(ids)


def test_a_header_of_element_names_is_still_a_header(tmp_path):
    """``C,N,O`` parses as molecules, but a count table's rows do not: it is a header, refused as
    naming no SMILES column, rather than read as methane."""
    from core import DataError
    from core.io.columns import table_columns

    path = tmp_path / "counts.csv"
    path.write_text("C,N,O\n12,1,2\n")
    assert not table_columns(path).headerless
    with pytest.raises(DataError, match="no SMILES column found"):
        load(path)


@pytest.mark.parametrize("column", ["Compound", "Compound Name", "compound id"])
def test_a_compound_column_gives_the_ids(tmp_path, column):
    """A table whose id column is "Compound" (as many assay exports name it) got line numbers as ids."""
    path = tmp_path / "t.csv"
    path.write_text(f"{column};SMILES;pIC50\nethanol;CCO;5\nbenzene;c1ccccc1;6\n")
    assert [m.id for m in load(path).meta] == ["ethanol", "benzene"]


def test_chembl_and_pubchem_exports_are_read_with_their_ids(tmp_path):
    """A ChEMBL activity export's ids ("Molecule ChEMBL ID") became line numbers, and a PubChem
    download's SMILES column ("isosmiles") was not found."""
    chembl = tmp_path / "chembl.csv"
    chembl.write_text('"Molecule ChEMBL ID";"Molecule Name";"Smiles"\n"CHEMBL25";"";"CC(=O)Oc1ccccc1C(=O)O"\n'
                      '"CHEMBL112";"";"CC(=O)Nc1ccc(O)cc1"\n')
    assert [m.id for m in load(chembl).meta] == ["CHEMBL25", "CHEMBL112"]
    pubchem = tmp_path / "pubchem.csv"
    pubchem.write_text("cid,cmpdname,isosmiles\n2244,aspirin,CC(=O)OC1=CC=CC=C1C(=O)O\n")
    graphs = load(pubchem)
    assert [m.id for m in graphs.meta] == ["2244"] and graphs.graphs[0].num_nodes == 13


def test_labels_that_differ_only_in_case_are_said_to_be_apart(tmp_path, capsys):
    """``--normal-label inactive`` trained on the rows spelt so, a third of the inactive rows
    (Inactive and INACTIVE were other labels), without a word."""
    from core.cli.main import main

    path = tmp_path / "lab.csv"
    path.write_text("id,smiles,activity\n" + "".join(f"x{i},{'C' * (1 + i % 4)}O,{('inactive', 'Inactive', 'active')[i % 3]}\n"
                                                      for i in range(12)))
    graphs = load(path)
    assert graphs.labels_case_note().startswith("labels that differ only in case are different labels here "
                                                "(Inactive, inactive)")
    assert main(["info", str(path)]) == 0
    assert "Labels that differ only in case" in capsys.readouterr().out
    path.write_text("id,smiles,activity\nx1,CCO,inactive\nx2,CCN,active\n")
    assert load(path).labels_case_note() == ""


def test_a_commented_out_row_is_listed_not_scored_nor_dropped(tmp_path):
    """A ``#`` line in a table's body that holds the delimiter is a row the user commented out:
    skipped as a comment, ``#1,CCO,0`` (an id that starts with ``#``) was lost without a word; read
    as a row, ``#m2,CCN,1`` was trained on, label and all. It is neither: it is listed among the
    rejected rows with its line and how to read it as data (quote its first cell), by loading and
    streamed scoring alike. A ``#`` line without the delimiter, and any before the header (or
    before a headerless table's first row), is a comment; a quoted ``"#1"`` is data."""
    from core.io.load import molecule_rows

    said = "starts with '#': read as a commented-out row, not scored (quote its first cell, \"{}\", to read it as data)"
    path = tmp_path / "commented.csv"
    path.write_text('# made, by hand\nid,smiles,label\nm1,CCO,0\n#m2,CCN,1\n# a note\n"#3",CCC,1\nm4,CCCl,0\n')
    graphs = load(path)
    assert [(m.id, m.line, m.label) for m in graphs.meta] == [("m1", 3, "0"), ("#3", 6, "1"), ("m4", 7, "0")]
    assert [(r.id, r.line, r.reason, r.text) for r in graphs.rejects] == [("#m2", 4, said.format("#m2"), "#m2,CCN,1")]
    rows, _ = molecule_rows(path)
    assert [(row.line, row.problem) for row in rows] == [(3, None), (4, said.format("#m2")), (6, None), (7, None)]
    noted = tmp_path / "noted.csv"  # a note that holds the delimiter is listed too: nothing lost unseen
    noted.write_text("smiles,id\nCCO,a\n# generated by tool, v2\nCCN,b\n")
    graphs = load(noted)
    assert [m.id for m in graphs.meta] == ["a", "b"]
    assert [(r.line, r.reason) for r in graphs.rejects] == [(3, said.format("# generated by tool"))]
    headerless = tmp_path / "list.csv"  # no header: a comment before the first row is still one
    headerless.write_text("# made, by hand\nCCO,a\nCCC,b\n#c,CCN\n")
    graphs = load(headerless)
    assert [m.id for m in graphs.meta] == ["a", "b"]
    assert [(r.line, r.reason) for r in graphs.rejects] == [(4, said.format("#c"))]


def test_a_commented_header_is_the_header(tmp_path):
    """Several tools write a table's header as a comment, ``#smiles,id,label``. Skipped as one, the
    file read as a list without a header: ids and labels became ``column 3``, lost without a word.
    A ``#`` line before the first data line that names the SMILES column is the header, for
    loading, streamed scoring and the app's column chooser alike, when it heads the first data line
    (as many fields, a molecule in its SMILES column); other comments stay comments."""
    from core.io.load import molecule_rows
    from core.io.molecules import headerless, table_header

    path = tmp_path / "hashed.csv"
    path.write_text("# exported, by hand\n#smiles,id,label\nCCO,a,0\nc1ccccc1,b,1\nCCN,c,0\n")
    graphs = load(path)
    assert [(m.id, m.line, m.label) for m in graphs.meta] == [("a", 3, "0"), ("b", 4, "1"), ("c", 5, "0")]
    assert not graphs.rejects and graphs.label_counts() == {"0": 2, "1": 1}
    assert table_header(path) == (["smiles", "id", "label"], ",") and not headerless(path)
    rows, _ = molecule_rows(path)
    assert [(row.line, row.id) for row in rows] == [(3, "a"), (4, "b"), (5, "c")]
    tabbed = tmp_path / "hashed.tsv"
    tabbed.write_text("# SMILES\tName\tactivity\nCCO\tethanol\t1\nCCC\tpropane\t0\n")
    assert [(m.id, m.label) for m in load(tabbed).meta] == [("ethanol", "1"), ("propane", "0")]
    named = tmp_path / "named.csv"  # a named SMILES column is found in a commented header too
    named.write_text("#structure,id\nCCO,a\nCCN,b\n")
    assert [m.id for m in load(named, smiles_column="structure").meta] == ["a", "b"]
    noted = tmp_path / "noted.csv"  # a header row of its own wins over a comment that names a column
    noted.write_text("# smiles\nsmiles,id\nCCO,a\nCCN,b\n")
    assert [(m.id, m.line) for m in load(noted).meta] == [("a", 3), ("b", 4)]
    noted.write_text("# smiles\nCCO,a,1\nc1ccccc1,b,0\n")  # a note above a list: it heads no row
    assert [(m.id, m.line) for m in load(noted).meta] == [("a", 2), ("b", 3)]
    noted.write_text("# smiles\nID,Ligand,pIC50\nx,CCO,5\ny,CCN,6\n")  # nor a table's own header
    assert table_header(noted) == (["ID", "Ligand", "pIC50"], ",")
    assert [m.id for m in load(noted, smiles_column="Ligand").meta] == ["x", "y"]


def test_no_column_means_none_not_found_by_name(tmp_path):
    """The app's "(none)" for the id and label columns came to the loader as None, "find one by its
    common name": ids were read from ``name`` and labels from ``activity``. ``NO_COLUMN`` ("")
    names no column, in a table, a SMILES list under a table's name and an SDF file alike."""
    from core import NO_COLUMN

    path = tmp_path / "nolabel.csv"
    path.write_text("SMILES_CANONICAL,activity,name\nCCO,1,a\nCCC,0,b\nCCN,1,c\n")
    found = load(path, smiles_column="SMILES_CANONICAL")
    assert [m.id for m in found.meta] == ["a", "b", "c"] and found.label_counts() == {"0": 1, "1": 2}
    graphs = load(path, smiles_column="SMILES_CANONICAL", id_column=NO_COLUMN, label_column=NO_COLUMN)
    assert [(m.id, m.name, m.label) for m in graphs.meta] == [("2", "", None), ("3", "", None), ("4", "", None)]
    listed = tmp_path / "list.txt"
    listed.write_text("CCO ethanol\nCCC propane\n")
    assert [m.id for m in load(listed, id_column=NO_COLUMN).meta] == ["1", "2"]
    sdf = tmp_path / "m.sdf"
    sdf.write_text(sdf_ethanol(title="eth", field="activity", value="1"))
    assert [(m.id, m.label) for m in load(sdf).meta] == [("eth", "1")]
    assert [(m.id, m.label) for m in load(sdf, id_column=NO_COLUMN, label_column=NO_COLUMN).meta] == [("eth", None)]


def test_a_column_picked_by_a_name_two_columns_share_is_refused_others_may_share_one(tmp_path):
    """``smiles,id,smiles``: naming the second 'smiles' read the first, an empty one, and every row
    was rejected. Loading, streamed scoring and the column chooser's check refuse a column they pick
    (named, or found by its common name) that two columns match, naming it, unless an exact name
    singles one out; columns never picked may share a name (``note,note`` refused the whole file),
    and the column chooser still opens such a file, offering no guess for the shared name."""
    from core import NO_COLUMN
    from core.io.columns import table_columns
    from core.io.load import molecule_rows

    notes = tmp_path / "notes.csv"  # neither 'note' is read: the file reads as it did
    notes.write_text("smiles,id,note,note\nCCO,a,x,y\nCCN,b,x,y\n")
    assert [m.id for m in load(notes).meta] == ["a", "b"]
    cols = table_columns(notes)
    assert (cols.smiles, cols.id, cols.repeated) == ("smiles", "id", [])

    path = tmp_path / "dup.csv"
    path.write_text("# made by hand\nsmiles,id,smiles\n,a,CCO\n,b,CCC\n,c,CCN\n")
    said = r"dup.csv:2: the header names the SMILES column 'smiles' twice \(columns 1 and 3\): rename one"
    for read in (lambda: load(path), lambda: load(path, smiles_column="smiles"), lambda: molecule_rows(path),
                 lambda: molecule_rows(path, smiles_column="smiles")):
        with pytest.raises(DataError, match=said):
            read()
    cols = table_columns(path)
    assert cols.header == ["smiles", "id", "smiles"] and cols.smiles is None and cols.repeated == ["smiles"]

    cased = tmp_path / "cased.csv"  # an exact name picks its column; found by its common name, neither is
    cased.write_text("SMILES,id,smiles\nCCO,a,OCC\nCCN,b,NCC\n")
    assert [m.smiles for m in load(cased, smiles_column="smiles").meta] == ["OCC", "NCC"]
    assert [m.smiles for m in load(cased, smiles_column="SMILES").meta] == ["CCO", "CCN"]
    with pytest.raises(DataError, match=r"cased.csv:1: the header has 2 SMILES columns by their names, SMILES, "
                                        r"smiles \(columns 1 and 3\): name the one to read, by its exact name, with smiles_column"):
        load(cased)
    with pytest.raises(DataError, match=r"the SMILES column named 'Smiles' is columns 1 and 3 in any case"):
        load(cased, smiles_column="Smiles")
    assert table_columns(cased).smiles is None

    ids = tmp_path / "ids.csv"  # an id column found by its name, twice: refused unless no id column is read
    ids.write_text("smiles,id,id\nCCO,a,b\nCCN,c,d\n")
    with pytest.raises(DataError, match=r"the header names the id column 'id' twice \(columns 2 and 3\)"):
        load(ids)
    assert [m.id for m in load(ids, id_column=NO_COLUMN).meta] == ["2", "3"]
    assert table_columns(ids).repeated == ["id"]

    blanks = tmp_path / "blanks.csv"
    blanks.write_text("smiles,id,,\nCCO,a,,\nCCC,b,,\n")
    assert [m.id for m in load(blanks).meta] == ["a", "b"] and table_columns(blanks).header == ["smiles", "id", "", ""]
    first_row = tmp_path / "list.csv"
    first_row.write_text("CCO,1,1\nCCC,2,2\n")
    assert [m.id for m in load(first_row).meta] == ["1", "2"] and table_columns(first_row).headerless
def test_a_smiles_column_named_by_a_molecule_of_line_1_is_refused_not_read_as_a_header(tmp_path):
    """``m1<TAB>CCO`` first, no header row, and ``--smiles-column CCO`` (the name the error before
    it offered): line 1 was taken for the header and its molecule lost without a word. The
    SMILES column's name being a molecule says the file has no header row: it is refused."""
    from core.io.load import molecule_rows

    path = tmp_path / "idfirst.tsv"
    path.write_text("m1\tCCO\nm2\tCCC\nm3\tCCN\n")
    said = r"idfirst.tsv:1: the SMILES column named, 'CCO', is a molecule in line 1: the file seems to have no header"
    with pytest.raises(DataError, match=said):
        load(path, smiles_column="CCO")
    with pytest.raises(DataError, match=said):
        molecule_rows(path, smiles_column="CCO")
    path.write_text("name\tstruct\nm1\tCCO\nm2\tCCC\n")
    assert [m.id for m in load(path, smiles_column="struct", id_column="name").meta] == ["m1", "m2"]
