"""Screening under fault: dead workers, huge fields, interruptions. Never a hang, never a lost row."""
import csv
import multiprocessing as mp
import os
import signal
import threading

import pytest

from core import GLocalKD, load
from core.screening import executors, merge
from core.screening.merge import merge_reports
from core.screening.pipeline import screen


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    from tests.conftest import moses_library

    return moses_library(tmp_path_factory.mktemp("lib") / "lib.smi", 120, {7: "C1CC"})


@pytest.fixture(scope="module")
def model(library):
    return GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(load(library))


def _in_thread(target, timeout=90):
    """Run ``target`` in a thread; fail (instead of hanging the suite) when it does not return."""
    out = {}

    def run():
        try:
            out["value"] = target()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"still running after {timeout} s: it hangs"
    if "error" in out:
        raise out["error"]
    return out["value"]


def _text(path):
    return path.read_text(encoding="utf-8")


@pytest.fixture(params=["whole", "parts"])
def workers(request, monkeypatch):
    """Two workers, which parse each chunk whole, or three, which parse each in two parts
    (see core.screening.executors.part_count)."""
    if request.param == "parts":
        monkeypatch.setattr(executors, "MIN_PART", 4)
        return 3
    return 2


def test_a_worker_killed_mid_run_loses_no_row(library, model, tmp_path, workers):
    screen(model, library, tmp_path / "clean.csv", chunk_size=16, workers=2)
    killed = []

    def kill_a_worker(read, scored):
        if not killed:
            child = mp.active_children()[0]
            os.kill(child.pid, signal.SIGKILL)
            killed.append(child.pid)

    summary = _in_thread(lambda: screen(model, library, tmp_path / "r.csv", chunk_size=16, workers=workers,
                                        on_progress=kill_a_worker))
    assert killed and (summary.rows, summary.scored, summary.rejected) == (120, 119, 1)
    assert _text(tmp_path / "r.csv") == _text(tmp_path / "clean.csv")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".screen-")]


def test_a_row_that_kills_its_worker_is_rejected_alone(library, model, tmp_path, monkeypatch, workers):
    import core.io.molecules as molecules

    parse = molecules.parse_smiles

    def crashing(smiles):  # as RDKit crashing, or the kernel's OOM killer, on one molecule
        if smiles == "C[Kill]":
            os.kill(os.getpid(), signal.SIGKILL)
        return parse(smiles)

    monkeypatch.setattr(molecules, "parse_smiles", crashing)  # the forked workers inherit it
    data = tmp_path / "lib.smi"
    lines = library.read_text().splitlines()
    lines[50] = "C[Kill] killer"
    data.write_text("\n".join(lines) + "\n")
    summary = _in_thread(lambda: screen(model, data, tmp_path / "r.csv", chunk_size=16, workers=workers))
    assert (summary.rows, summary.scored, summary.rejected) == (120, 118, 2)
    with open(tmp_path / "r.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:-1]  # the end row last
    assert len(rows) == 120
    assert rows[-1]["id"] == "killer" and rows[-1]["status"] == f"rejected: line 51: {executors.WORKER_DIED}"


def test_a_batch_that_runs_out_of_memory_costs_its_one_row_not_the_run(library, model, tmp_path, monkeypatch,
                                                                        workers):
    """A MemoryError past the per-row guard (featurizing a batch of huge molecules, within every
    per-row limit) came back from the worker and ended the run with a traceback and no report."""
    from core.screening import featurize

    batch = featurize._featurize_batch

    def out_of_memory(mols, smiles, cells):  # as a worker past its memory ceiling, on one molecule
        if "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCO" in smiles:
            raise MemoryError
        return batch(mols, smiles, cells)

    monkeypatch.setattr(featurize, "_featurize_batch", out_of_memory)  # the forked workers inherit it
    data = tmp_path / "lib.smi"
    lines = library.read_text().splitlines()
    lines[50] = "C" * 40 + "O hungry"
    data.write_text("\n".join(lines) + "\n")
    summary = _in_thread(lambda: screen(model, data, tmp_path / "r.csv", chunk_size=16, workers=workers))
    assert (summary.rows, summary.scored, summary.rejected) == (120, 118, 2)
    with open(tmp_path / "r.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:-1]
    assert rows[-1]["id"] == "hungry" and rows[-1]["status"] == f"rejected: line 51: {executors.WORKER_DIED}"


def test_a_batch_is_featurized_in_parts_of_at_most_so_many_atoms(library, monkeypatch):
    """1,024 molecules of 10,000 atoms were featurized at once, past a worker's memory ceiling: a
    batch now ends at FEATURIZE_ATOMS atoms too, and gives the same arrays."""
    import numpy as np

    from core.io.molecules import smiles_rows
    from core.screening import featurize

    rows = list(smiles_rows(library))
    whole = featurize.featurize_chunk(rows)
    sizes = []
    batch = featurize._featurize_batch

    def counted(mols, smiles, cells):
        sizes.append(sum(m.GetNumAtoms() for m in mols))
        return batch(mols, smiles, cells)

    monkeypatch.setattr(featurize, "_featurize_batch", counted)
    monkeypatch.setattr(featurize, "FEATURIZE_ATOMS", 100)
    parted = featurize.featurize_chunk(rows)
    assert len(sizes) > 10 and max(sizes) < 100 + 60  # each batch ends at the molecule that passes 100 atoms
    for key, value in whole.items():
        assert np.array_equal(value, parted[key]) if isinstance(value, np.ndarray) else value == parted[key], key


def test_fields_past_csvs_default_limit_keep_the_run(model, tmp_path):
    """A 200,000-character id (or quoted cell) is read, screened, merged and merged again; a SMILES
    past the per-row limit is rejected with its reason."""
    from core.data.chem import MAX_SMILES_CHARS
    from core.io.ranked_report import read_report

    big_id = "x" * 200_000
    data = tmp_path / "lib.csv"
    data.write_text(f'id,smiles,note\n{big_id},CCO,"{"a,b" * 60_000}"\nb,{"C" * (MAX_SMILES_CHARS + 1)},\nc,CCN,\n')
    previous = csv.field_size_limit(131_072)  # as in a fresh process
    try:
        summary = screen(model, data, tmp_path / "r.csv", chunk_size=2, workers=1)
        assert (summary.rows, summary.scored, summary.rejected) == (3, 2, 1)
        csv.field_size_limit(131_072)
        assert merge_reports([tmp_path / "r.csv"], tmp_path / "m.csv") == 3
    finally:
        csv.field_size_limit(previous)
    report = read_report(tmp_path / "m.csv")
    assert big_id in list(report.ids)
    assert "more than the limit" in report.rejects[0].reason


def test_ctrl_c_during_the_final_merge_keeps_every_row(library, model, tmp_path, monkeypatch):
    merge_group = merge._merge_group

    def interrupted(files, out, with_rank, **options):
        os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl+C while the bar sits at 100%
        return merge_group(files, out, with_rank, **options)

    monkeypatch.setattr(merge, "_merge_group", interrupted)
    try:
        summary = screen(model, library, tmp_path / "r.csv", chunk_size=16, workers=1)
    except KeyboardInterrupt:
        pytest.fail("Ctrl+C during the merge lost every scored row")
    assert summary.interrupted and summary.stopped and summary.written
    with open(tmp_path / "r.csv", newline="", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 121  # and the end row
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".screen-")]
