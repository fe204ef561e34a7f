"""Messy molecule files: every data row is either a graph or a reject with its line and reason;
whole-file problems are a DataError naming the file (and line where there is one)."""
import csv
import gzip

import pytest

from core import DataError, GLocalKD, load, write_report
from core.data.chem import ATOM_FEATURE_DIM, ELEMENTS, FEATURE_NAMES
from tests.conftest import sdf_ethanol

TINY = dict(epochs=1, hidden_dim=8, out_dim=4, seed=0, device="cpu")
OTHER = FEATURE_NAMES.index("element=other")


def _accounted(graphs):
    """(line -> 'ok'/'rejected') for every row the loader saw; fails on a line counted twice."""
    lines = [m.line for m in graphs.meta] + [r.line for r in graphs.rejects]
    assert len(lines) == len(set(lines))
    return sorted(lines)


def test_messy_table_every_row_is_scored_or_rejected(tmp_path):
    f = tmp_path / "lib.csv"
    f.write_text(
        "# exported by hand\n"          # 1 comment
        "id,smiles,label\n"             # 2 header
        "a,CCO,1\n"                     # 3 ok
        "\n"                            # 4 blank
        "b,C1CC,0\n"                    # 5 invalid SMILES
        "   \n"                         # 6 blank (spaces)
        "c,,1\n"                        # 7 empty SMILES
        "# a comment between rows\n"    # 8 comment
        "d\n"                           # 9 too few fields
        "e,N(C)(C)(C)(C)C,1\n"          # 10 valence
        "f,c1ccccc1,0\n"                # 11 ok
        "g,CCO ethanol,1\n"             # 12 a name in the SMILES field (RDKit would read just CCO)
    )
    graphs = load(f)
    assert [(m.id, m.line) for m in graphs.meta] == [("a", 3), ("f", 11)]
    reasons = {r.line: (r.id, r.reason) for r in graphs.rejects}
    assert _accounted(graphs) == [3, 5, 7, 9, 10, 11, 12]
    assert reasons[5][0] == "b" and "invalid SMILES syntax" in reasons[5][1]
    assert reasons[7] == ("c", "empty SMILES")
    assert reasons[9][0] == "d" and "SMILES column ('smiles') is field 2" in reasons[9][1]
    assert "valence" in reasons[10][1]
    assert "SMILES contains a space" in reasons[12][1]


def test_a_smiles_with_a_character_that_is_not_ascii_is_refused_not_cut_at_it(tmp_path):
    """RDKit reads "c1ccccc1™" as benzene and "Cé" as methane: the molecule scored is not the one written."""
    f = tmp_path / "lib.csv"
    f.write_text("id,smiles\na,c1ccccc1\u2122\nb,CCO\u00e9\nc,C\u00b7C\nd,CCN\n", encoding="utf-8")
    graphs = load(f)
    assert [m.id for m in graphs.meta] == ["d"]
    reasons = {r.id: r.reason for r in graphs.rejects}
    assert "'\u2122' (U+2122)" in reasons["a"] and "'\u00e9' (U+00E9)" in reasons["b"] and "U+00B7" in reasons["c"]


def test_bad_rows_are_kept_in_the_report_with_line_and_reason(tmp_path):
    f = tmp_path / "lib.smi"
    f.write_text("CCO good\nC1CC bad_ring\n\nCCN also_good\nXyz unknown\n")
    graphs = load(f)
    out = tmp_path / "r.csv"
    write_report(out, graphs, GLocalKD(**TINY).fit(graphs).score(graphs))
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines(keepends=True)))[:-1]  # less its end row
    assert [r["status"] for r in rows[:2]] == ["ok", "ok"]
    assert [(r["id"], r["smiles"], r["rank"], r["score"]) for r in rows[2:]] == [
        ("bad_ring", "C1CC", "", ""), ("unknown", "Xyz", "", "")]
    assert rows[2]["status"].startswith("rejected: line 2: invalid SMILES syntax")
    assert rows[3]["status"].startswith("rejected: line 5: ")


def test_wrong_smiles_column_is_an_error_that_says_so(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("id,smiles,name\n1,CCO,ethanol\n2,CCN,ethylamine\n")
    with pytest.raises(DataError, match=r"x.csv:2: no molecule could be read: all 2 rows were rejected "
                                        r"\(first: invalid SMILES syntax: ethanol\); is 'name' the SMILES column"):
        load(f, smiles_column="name")
    with pytest.raises(DataError, match=r"no SMILES column named 'structure' \(columns: id, smiles, name\)"):
        load(f, smiles_column="structure")
    g = tmp_path / "y.csv"
    g.write_text("id,formula\n1,C2H6O\n")
    with pytest.raises(DataError, match=r"y.csv:1: no SMILES column found \(columns: id, formula\)"):
        load(g)


def test_mixed_delimiters(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("id,smiles,label\nA,CCO,1\nB;CCN;0\nC\tCCC\t1\nD,CCCl,0\n")
    graphs = load(f)
    assert [m.id for m in graphs.meta] == ["A", "D"]
    reasons = {r.line: r.reason for r in graphs.rejects}
    assert "the file uses ',' between fields, this row has ';'" in reasons[3]
    assert "this row has '\\t'" in reasons[4]
    # A semicolon file named .csv (spreadsheet export in many locales) is read as such.
    g = tmp_path / "semi.csv"
    g.write_text("ID;SMILES;Y\nA;CCO;1\nB;CCN;0\n")
    assert [m.id for m in load(g).meta] == ["A", "B"]
    # When the most frequent character of the header is not the delimiter, the others are tried.
    h = tmp_path / "desc.csv"
    h.write_text("mol_id;smiles;note, with, commas\nA;CCO;x\n")
    assert load(h).meta[0].smiles == "CCO"


def test_stray_quote_does_not_swallow_the_rest_of_the_file(tmp_path):
    f = tmp_path / "x.csv"
    rows = ["id,smiles", '"A,CCO'] + [f"m{i},{'C' * (i % 5 + 1)}" for i in range(300)]
    f.write_text("\n".join(rows) + "\n")
    graphs = load(f)
    assert len(graphs) == 300 and graphs.meta[0].line == 3
    assert [(r.line, r.reason) for r in graphs.rejects] == [(2, 'unmatched quote (") in this row')]
    g = tmp_path / "y.csv"
    g.write_text('id,smiles\nA,CCO\nB,"CCN\n')  # the stray quote is on the last row
    graphs = load(g)
    assert [m.id for m in graphs.meta] == ["A"] and graphs.rejects[0].line == 3


def test_bom_utf16_cp1252_and_windows_line_endings(tmp_path):
    text = "id\tsmiles\r\ncafé\tCCO\r\nnaïve\tCCN\r\n"
    for encoding, data in (("utf-8-sig", text.encode("utf-8-sig")), ("utf-16", text.encode("utf-16")),
                           ("cp1252", text.encode("cp1252"))):
        f = tmp_path / f"x_{encoding}.tsv"
        f.write_bytes(data)
        graphs = load(f)
        assert [m.id for m in graphs.meta] == ["café", "naïve"], encoding
        assert [m.line for m in graphs.meta] == [2, 3]
    s = tmp_path / "crlf.smi"
    s.write_bytes(b"\xef\xbb\xbfsmiles name\r\nCCO a\r\n\r\n# note\r\nC1CC b\r\nCCN c")
    graphs = load(s)
    assert [(m.id, m.line) for m in graphs.meta] == [("a", 2), ("c", 6)]
    assert [(r.id, r.line) for r in graphs.rejects] == [("b", 5)]


def test_gzipped_files_and_a_damaged_gzip(tmp_path):
    f = tmp_path / "x.smi.gz"
    f.write_bytes(gzip.compress(b"CCO a\nC1CC b\n"))
    graphs = load(f)
    assert len(graphs) == 1 and graphs.rejects[0].line == 2
    s = tmp_path / "x.sdf.gz"
    s.write_bytes(gzip.compress((SDF_ETHANOL * 2).encode()))
    assert len(load(s)) == 2
    whole = gzip.compress(("\n".join(f"{'C' * (i % 7 + 1)} m{i}" for i in range(5000))).encode())
    for name, damaged in (("trunc.smi.gz", whole[: len(whole) // 2]),
                          ("garbled.smi.gz", whole[:30] + bytes(200) + whole[230:]),
                          ("notgzip.smi.gz", b"\x1f\x8b" + b"hello world" * 10)):
        bad = tmp_path / name
        bad.write_bytes(damaged)
        with pytest.raises(DataError, match=rf"{name}: cannot read file"):
            load(bad)


def test_salts_and_fragments_are_kept_whole(tmp_path):
    f = tmp_path / "x.smi"
    f.write_text("CC(=O)[O-].[Na+] sodium_acetate\nc1ccccc1.O benzene_hydrate\n[Cl-].[Cl-].[Ca+2] cacl2\n")
    graphs = load(f)
    assert [m.id for m in graphs.meta] == ["sodium_acetate", "benzene_hydrate", "cacl2"]
    assert [int(g.num_nodes) for g in graphs.graphs] == [5, 7, 3]
    assert graphs.graphs[2].edge_index.shape == (2, 0)
    scores = GLocalKD(**TINY).fit(graphs).score(graphs)
    assert len(scores.node_errors_of(0)) == 5


def test_charged_radical_and_unusual_atoms(tmp_path):
    f = tmp_path / "x.smi"
    f.write_text("[CH3] methyl_radical\nC[N+](C)(C)C tetramethylammonium\n[O-][O-] peroxide\n"
                 "[U] uranium\n[Xe] xenon\n[Gd+3] gadolinium\n* dummy\n[2H]C deuterated\n")
    graphs = load(f)
    assert len(graphs) == 8 and not graphs.rejects
    x = {m.id: g.x for m, g in zip(graphs.meta, graphs.graphs)}
    assert all(v.shape[1] == ATOM_FEATURE_DIM for v in x.values())
    assert x["methyl_radical"][0, FEATURE_NAMES.index("radical")] == 1
    assert x["tetramethylammonium"][1, FEATURE_NAMES.index("charge=+1")] == 1
    assert x["peroxide"][0, FEATURE_NAMES.index("charge=-1")] == 1
    assert x["gadolinium"][0, FEATURE_NAMES.index("charge>=+2")] == 1
    for ident in ("uranium", "xenon", "gadolinium", "dummy"):
        assert x[ident][0, OTHER] == 1 and x[ident][0, :len(ELEMENTS)].sum() == 0, ident
    assert x["deuterated"][0, FEATURE_NAMES.index("element=H")] == 1  # explicit isotope atom
    assert all(v.sum(dim=1).min() >= 5 for v in x.values())  # one value in each one-hot block


def test_single_atom_and_very_large_molecules_train_and_score(tmp_path):
    big = "C" * 300 + "(" + "N" * 150 + ")" + "O" * 100  # 550 heavy atoms
    f = tmp_path / "x.smi"
    f.write_text(f"C methane\n[Na+] sodium\n{big} big\nCCO ethanol\n")
    graphs = load(f)
    assert [int(g.num_nodes) for g in graphs.graphs] == [1, 1, 550, 3]
    assert graphs.graphs[0].edge_index.shape == (2, 0)
    model = GLocalKD(**{**TINY, "batch_size": 2}).fit(graphs)
    scores = model.score(graphs)
    assert len(scores) == 4 and len(scores.node_errors_of(2)) == 550
    out = tmp_path / "r.csv"
    write_report(out, graphs, scores, top_k=3)
    rows = {r["id"]: r for r in csv.DictReader(out.read_text(encoding="utf-8").splitlines(keepends=True))
            if not r["status"].startswith("end of report: ")}
    assert rows["big"]["num_nodes"] == "550" and len(rows["big"]["top_nodes"].split(";")) == 3
    assert rows["methane"]["top_nodes"].startswith("C0:")


def test_duplicate_ids_are_kept_apart_by_line(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("id,smiles\nX,CCO\nX,CCN\nX,C1CC\nX,CCC\n")
    graphs = load(f)
    assert [(m.id, m.line) for m in graphs.meta] == [("X", 2), ("X", 3), ("X", 5)]
    assert [(r.id, r.line) for r in graphs.rejects] == [("X", 4)]
    out = tmp_path / "r.csv"
    assert write_report(out, graphs, GLocalKD(**TINY).fit(graphs).score(graphs)) == 4


SDF_ETHANOL = sdf_ethanol(field="id", value="E-1")


def test_sdf_broken_records_among_good_ones_with_crlf(tmp_path):
    no_end = "no_end\n  x\n\n  1  0  0  0  0  0  0  0  0  0999 V2000\n$$$$\n"
    garbage = "garbage\nthis is not a molblock\nM  END\n$$$$\n"
    bad_valence = SDF_ETHANOL.replace("E-1", "pentavalent").replace(
        "  2  3  1  0", "  2  3  3  0")  # C-O triple bond: O valence 4
    text = SDF_ETHANOL + no_end + garbage + bad_valence + SDF_ETHANOL.replace("E-1", "E-2")
    f = tmp_path / "x.sdf"
    f.write_bytes(text.replace("\n", "\r\n").encode())
    graphs = load(f)
    assert [m.id for m in graphs.meta] == ["E-1", "E-2"]
    assert [r.id for r in graphs.rejects] == ["no_end", "garbage", "pentavalent"]
    reasons = [r.reason for r in graphs.rejects]
    assert "record 2 has no 'M  END' line" in reasons[0]
    assert reasons[1].startswith("record 3: broken molblock") and "record 4" in reasons[2]
    n = SDF_ETHANOL.count("\n")
    assert [r.line for r in graphs.rejects] == [n + 1, n + 6, n + 10]
    assert [m.line for m in graphs.meta] == [1, 2 * n + 10]


@pytest.mark.parametrize("name,text", [
    ("empty.smi", ""), ("empty.csv", ""), ("empty.sdf", ""), ("blank.smi", "\n\n  \n"),
    ("comments.smi", "# nothing here\n# at all\n"), ("header_only.csv", "id,smiles\n"),
    ("header_only.smi", "smiles name\n"), ("only_dollars.sdf", "$$$$\n$$$$\n"),
])
def test_empty_files_are_an_error(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(DataError, match=rf"{name}: file is empty"):
        load(f)


def test_binary_file_given_as_csv(tmp_path):
    import random

    rng = random.Random(0)
    for i, data in enumerate([bytes(rng.randrange(256) for _ in range(2000)),
                              b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(100),
                              b"id,smiles\nA,CCO\n\x00\x00\x00\x00"]):
        f = tmp_path / f"b{i}.csv"
        f.write_bytes(data)
        with pytest.raises(DataError, match=rf"b{i}.csv(:\d+)?: not a text file"):
            load(f)
        for suffix in (".smi", ".sdf"):
            g = f.with_suffix(suffix)
            g.write_bytes(data)
            with pytest.raises(DataError, match="not a text file"):
                load(g)


def test_errors_are_one_line_even_when_the_input_has_line_breaks(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text('id,smiles\n1,"C\nC"\n')  # a quoted SMILES field spanning two lines
    with pytest.raises(DataError) as info:
        load(f)
    assert "\n" not in str(info.value) and "C\\nC" in str(info.value)
    assert info.value.line == 2


def test_a_quote_inside_an_unquoted_field_is_just_a_character(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text('id,smiles\n6"-bromo,CCBr\nplain,CCO\n7"-chloro,CCCl\n"q ""x""",CCN\n"two\nlines",CC\n')
    graphs = load(f)
    assert [(m.id, m.line) for m in graphs.meta] == [('6"-bromo', 2), ("plain", 3), ('7"-chloro', 4),
                                                     ('q "x"', 5), ("two\nlines", 6)]
    assert not graphs.rejects
