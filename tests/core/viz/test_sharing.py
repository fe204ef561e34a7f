"""The SDF export: one record per molecule, whatever its id, name or label holds."""
from __future__ import annotations

import csv

import pytest

from core import GLocalKD, load, write_sdf
from core.viz.sharing import sd_text

HOSTILE = ["evil\n$$$$\nx", "$$$$", "  $$$$  ", "M  END", "> <id>", "two\n\nlines", "cr\ronly", "tail\n",
           "$$$$\n\n> <score>\n9"]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sdf")
    rows = [("CCO", f"m{i}", f"name {i}", "0") for i in range(12)]
    for k, text in enumerate(HOSTILE):
        smiles, _, _, label = rows[k]
        rows[k] = (smiles, text, f"name\n$$$$\n{k}", label if k % 2 else "1\n$$$$")
    table = folder / "lib.csv"
    with open(table, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["smiles", "id", "name", "label"])
        writer.writerows(rows)
    graphs = load(table)
    assert len(graphs) == 12 and [m.id for m in graphs.meta][:len(HOSTILE)] == [t.strip() for t in HOSTILE]
    model = GLocalKD(epochs=2, hidden_dim=16, out_dim=8, seed=0).fit(graphs)
    return folder, graphs, model.score(graphs)


def test_ids_names_and_labels_cannot_split_a_record(hostile):
    folder, graphs, scores = hostile
    out = folder / "out.sdf"
    assert write_sdf(out, graphs, scores) == 12
    back = load(out)
    assert len(back) == 12 and not back.rejects
    assert sorted(m.id for m in back.meta) == sorted(sd_text(m.id) for m in graphs.meta)
    from rdkit import Chem

    read = [m for m in Chem.SDMolSupplier(str(out))]
    assert len(read) == 12 and all(m is not None for m in read)
    assert sorted(m.GetProp("id") for m in read) == sorted(sd_text(m.id) for m in graphs.meta)


def test_sd_text_is_one_line_that_never_reads_as_an_end_or_a_header():
    for text in HOSTILE + ["plain", "", "a$$$$"]:
        line = sd_text(text)
        assert "\n" not in line and "\r" not in line
        assert not line.strip().startswith(("$$$$", ">", "M  END"))
    assert sd_text("plain id 7") == "plain id 7" and sd_text("a$$$$") == "a$$$$"


def test_both_sd_writers_fold_text_and_keep_every_row(hostile, tmp_path):
    """The report tab's SD writer wrote ids as they were (an id holding a line ``$$$$`` split the
    file into broken records), and both writers left rejected rows out of "every row" without a
    word. One way to write SD text and reject records serves both."""
    from rdkit import Chem

    from core import read_report, write_report_sdf
    from core.cli.main import main

    folder, graphs, _ = hostile
    table = tmp_path / "lib.csv"
    table.write_text((folder / "lib.csv").read_text(encoding="utf-8") + "C1CC,broken,broken name,0\n",
                     encoding="utf-8")
    model = tmp_path / "m.pt"
    assert main(["train", str(folder / "lib.csv"), "-o", str(model), "--detector", "size"]) == 0
    assert main(["score", str(model), str(table), "-o", str(tmp_path / "r.csv")]) == 0
    report = read_report(tmp_path / "r.csv")
    loaded = load(table)
    assert len(report) == len(loaded) == 12 and len(report.rejects) == len(loaded.rejects) == 1
    scores = GLocalKD(epochs=1, hidden_dim=8, out_dim=4, seed=0).fit(loaded).score(loaded)
    for name, write in (("report", lambda out: write_report_sdf(out, report)),
                        ("graphs", lambda out: write_sdf(out, loaded, scores))):
        out = tmp_path / f"{name}.sdf"
        assert write(out) == 13, name
        back = load(out)
        assert sorted(m.id for m in back.meta) == sorted(sd_text(m.id) for m in graphs.meta), name
        assert [(r.id, r.reason) for r in back.rejects] == [("broken", "record 13: molecule has no atoms")], name
        records = list(Chem.SDMolSupplier(str(out), sanitize=False))
        status = records[-1].GetProp("status")
        # the CSV report's status, line and all, in both (the training tab's SD file had no line)
        assert status == f"rejected: line {loaded.rejects[0].line}: invalid SMILES syntax: C1CC", name
