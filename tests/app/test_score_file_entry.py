"""The app's *Score another file* and ``glocalkd score`` are one entry (core.score_file): the same
file gives the same report byte for byte, whatever its kind, with the model's standardising and
p-values. The app once loaded SDF files whole on a path of its own, which neither standardised
them nor wrote p-values."""
from __future__ import annotations

import numpy as np
import pytest
from rdkit import Chem

from app import tasks
from core import load_detector
from core.cli.main import main
from tests.conftest import write_tu, ring, path as chain

SMALL = ["--epochs", "1", "--hidden", "8", "--out-dim", "4", "--device", "cpu", "--detector", "glocalkd"]
SALTS = ["CC(=O)[O-].[Na+]", "c1ccccc1C(=O)O.Cl", "C[N+](C)(C)C.[Cl-]", "CCO", "Oc1ccccc1", "CCN", "CCCO",
         "OCCO", "CC(C)O", "c1ccncc1"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A standardising molecule model and a TU model, and a file of each kind to score."""
    folder = tmp_path_factory.mktemp("entry")
    train = folder / "train.smi"
    train.write_text("".join(f"{s} t{k}\n" for k, s in enumerate(SALTS * 10)))
    assert main(["train", str(train), "-o", str(folder / "mol.pt"), "--standardise", *SMALL]) == 0
    smi = folder / "lib.smi"
    smi.write_text("".join(f"{s} m{k}\n" for k, s in enumerate(SALTS + ["xx("])))
    table = folder / "lib.csv"
    table.write_text("name,structure\n" + "".join(f"m{k},{s}\n" for k, s in enumerate(SALTS)))
    sdf = folder / "lib.sdf"
    writer = Chem.SDWriter(str(sdf))
    for k, s in enumerate(SALTS):
        mol = Chem.MolFromSmiles(s)
        mol.SetProp("_Name", f"m{k}")
        writer.write(mol)
    writer.close()
    tu = write_tu(folder / "T", "T", [(5, ring(5), 0), (4, chain(4), 0), (6, ring(6), 0), (5, chain(5), 1)] * 25)
    assert main(["train", str(tu), "-o", str(folder / "tu.pt"), *SMALL]) == 0
    return folder, {"SMILES list": (smi, "mol.pt"), "table": (table, "mol.pt"), "SDF": (sdf, "mol.pt"),
                    "TU collection": (tu, "tu.pt")}


@pytest.mark.parametrize("kind", ["SMILES list", "table", "SDF", "TU collection"])
def test_score_another_file_writes_the_report_glocalkd_score_writes(files, kind, tmp_path):
    folder, cases = files
    data, model_name = cases[kind]
    assert main(["score", str(folder / model_name), str(data), "-o", str(tmp_path / "cli.csv"), "--properties"]) == 0
    model = load_detector(folder / model_name, device="cpu")
    report, summary = tasks.screen_file(model, str(data), str(tmp_path / "app.csv"), tasks.Job(), workers=1)
    assert (tmp_path / "app.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    assert (summary is None) == (kind == "TU collection")  # molecule files stream through the pipeline
    assert report.p_value is not None and len(report) and not np.isnan(report.p_value).any()  # calibrated
    if model_name == "mol.pt":  # the model standardises: the salts were scored as their parent molecules
        scored_as = dict(zip(report.ids, report.standardised_smiles))
        assert scored_as["m0"] == "CC(=O)O" and scored_as["m1"] == "O=C(O)c1ccccc1"  # SALTS[0], SALTS[1]


def test_counting_a_files_rows_reads_it_as_core_reads_it(tmp_path):
    """The row count behind the progress bar opened files by their name: a gzipped library named
    ``.smi`` counted 6 rows for 3,000, and a truncated ``.smi.gz`` raised EOFError out of the
    count, before core could say the file was damaged. It now opens them as core's readers do."""
    import gzip

    body = "".join(f"CC{'C' * (i % 10)}O m{i}\n" for i in range(3000)).encode()
    hidden = tmp_path / "library.smi"
    hidden.write_bytes(gzip.compress(body))
    assert tasks.count_rows(str(hidden)) == 3000 - 1  # lines less a header
    packed = gzip.compress(body)
    cut = tmp_path / "cut.smi.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    assert tasks.count_rows(str(cut)) is None  # the scoring that follows names the damaged file


def test_score_another_file_on_a_truncated_gzip_names_the_file(qtbot, window, herg_path, tmp_path):
    """A library cut short in download: the message names the file and says it is damaged, as
    opening it does (it was "Unexpected error" and a traceback)."""
    import gzip

    from tests.app.test_main_window import _idle, open_and_wait, train_and_wait

    w = window
    open_and_wait(qtbot, w, herg_path)
    train_and_wait(qtbot, w)
    packed = gzip.compress("".join(f"CC{'C' * (i % 10)}O m{i}\n" for i in range(3000)).encode())
    cut = tmp_path / "library.smi.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    w.feedback.last_warning = ""
    w.score_file(str(cut), {})
    qtbot.waitUntil(lambda: _idle(w) and bool(w.feedback.last_warning), timeout=60000)
    said = w.feedback.last_warning
    assert "library.smi.gz" in said and "damaged or truncated" in said
    assert "Unexpected error" not in said and "Traceback" not in said
