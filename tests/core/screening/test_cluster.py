"""Screening on a Dask cluster: the same report as one machine, shards, --top, Ctrl+C, a killed worker."""
from __future__ import annotations

import csv
import gzip
import json
import os
import signal

import pytest

distributed = pytest.importorskip("distributed")

from core import GLocalKD, load
from core.cli.main import main
from core.errors import GLocalKDError
from core.runtime.scheduler import parse_scheduler
from core.screening.cluster import keep_top, library_files, screen_on_cluster
from core.screening.pipeline import screen

CHUNK = 37


pytestmark = pytest.mark.usefixtures("no_hang")



@pytest.fixture(scope="module")
def smiles():
    from tests.conftest import RESOURCES

    with gzip.open(RESOURCES / "moses_sample.csv.gz", "rt") as fh:
        rows = [line.strip() for line in fh][1:601]
    rows[10] = "C1CC"  # unclosed ring
    rows[200] = "not_a_molecule"
    return rows


@pytest.fixture(scope="module")
def library(tmp_path_factory, smiles):
    path = tmp_path_factory.mktemp("lib") / "lib.smi"
    path.write_text("smiles name\n" + "\n".join(f"{s} mol{k}" for k, s in enumerate(smiles)) + "\n")
    return path


@pytest.fixture(scope="module")
def model_file(tmp_path_factory, library):
    path = tmp_path_factory.mktemp("model") / "model.pt"
    GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(load(library)).save(path)
    return path


@pytest.fixture(scope="module")
def single(tmp_path_factory, model_file, library):
    """The single-machine report of the library."""
    out = tmp_path_factory.mktemp("single") / "single.csv"
    summary = screen(GLocalKD.load(model_file, device="cpu"), library, out, chunk_size=CHUNK, workers=2)
    assert (summary.rows, summary.scored, summary.rejected) == (600, 598, 2)
    return out


def _rows(path):
    """The report's rows without its end row."""
    with open(path, newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if not r["status"].startswith("end of report")]


def test_the_cluster_report_is_the_single_machine_report(client, model_file, library, single, tmp_path):
    progress = []
    summary = screen_on_cluster(model_file, [library], tmp_path / "cluster.csv", client, chunk_size=CHUNK,
                                on_progress=lambda read, scored: progress.append(scored))
    assert (summary.rows, summary.scored, summary.rejected, summary.stopped) == (600, 598, 2, False)
    assert progress[-1] == 600 and progress == sorted(progress)
    # same rows, scores, atoms and order, byte for byte (ties keep the input order in both)
    assert (tmp_path / "cluster.csv").read_bytes() == single.read_bytes()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".screen-cluster-")]


def test_shards_plain_and_gzipped_by_glob(client, model_file, smiles, single, tmp_path):
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "part0.smi").write_text("".join(f"{s} mol{k}\n" for k, s in enumerate(smiles[:250])))
    with gzip.open(shards / "part1.smi.gz", "wt") as fh:
        fh.write("".join(f"{s} mol{k}\n" for k, s in enumerate(smiles[250:], start=250)))
    summary = screen_on_cluster(model_file, [str(shards / "part*")], tmp_path / "r.csv", client, chunk_size=CHUNK)
    assert (summary.rows, summary.scored, summary.rejected) == (600, 598, 2)
    got, want = _rows(tmp_path / "r.csv"), _rows(single)
    key = lambda r: (r["id"], r["score"], r["top_nodes"])
    assert sorted(map(key, got[:598])) == sorted(map(key, want[:598]))
    scores = [float(r["score"]) for r in got[:598]]
    assert scores == sorted(scores, reverse=True) and [r["rank"] for r in got[:598]] == [str(k) for k in range(1, 599)]
    assert {r["status"] for r in got[598:]} == {"rejected: part0.smi line 11: invalid SMILES syntax: C1CC",
                                                "rejected: part0.smi line 201: invalid SMILES syntax: not_a_molecule"}


def test_top_keeps_the_best_rows_every_reject_and_the_counts(client, model_file, library, single, tmp_path):
    out = tmp_path / "top.csv"
    summary = screen_on_cluster(model_file, [library], out, client, chunk_size=CHUNK, top=25)
    want = _rows(single)
    assert _rows(out) == want[:25] + want[598:]
    counts = json.loads((tmp_path / "top.csv.summary.json").read_text())
    assert (counts["rows"], counts["scored"], counts["rejected"], counts["kept"]) == (600, 598, 2, 25)
    assert summary.scored == 598
    # the same cut of a single-machine report
    copy = tmp_path / "copy.csv"
    copy.write_bytes(single.read_bytes())
    assert keep_top(copy, 25) == 25 and _rows(copy) == want[:25] + want[598:]


def test_ctrl_c_cancels_and_keeps_every_chunk_scored(client, model_file, library, single, tmp_path):
    seen = []

    def interrupt(read, scored):
        seen.append(scored)
        if len(seen) == 3:
            raise KeyboardInterrupt

    summary = screen_on_cluster(model_file, [library], tmp_path / "s.csv", client, chunk_size=CHUNK,
                                in_flight=2, on_progress=interrupt)
    assert summary.stopped and seen[-1] <= summary.rows < 600
    rows = _rows(tmp_path / "s.csv")
    assert len(rows) == summary.rows
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) == summary.scored and len({r["id"] for r in ok}) == len(ok)
    full = {r["id"]: r["score"] for r in _rows(single)}
    assert all(full[r["id"]] == r["score"] for r in ok)
    assert [float(r["score"]) for r in ok] == sorted((float(r["score"]) for r in ok), reverse=True)


def test_the_command_line_on_a_running_scheduler(client, model_file, library, single, tmp_path):
    out = tmp_path / "cli.csv"
    code = main(["screen", str(model_file), str(library), "-o", str(out), "--chunk-size", str(CHUNK),
                 "--scheduler", client.scheduler.address, "--scratch", str(tmp_path)])
    assert code == 0 and out.read_bytes() == single.read_bytes()
    assert main(["screen", str(model_file), str(library), str(library), "-o", str(out)]) == 2  # shards need it


def test_the_command_line_starts_a_local_cluster(model_file, library, single, tmp_path):
    out = tmp_path / "local.csv"
    code = main(["screen", str(model_file), str(library), "-o", str(out), "--chunk-size", str(CHUNK),
                 "--scheduler", "local:1", "--top", "10"])
    want = _rows(single)
    assert code == 0 and _rows(out) == want[:10] + want[598:]
    assert json.loads((tmp_path / "local.csv.summary.json").read_text())["scored"] == 598


def test_scheduler_strings():
    assert parse_scheduler("local:3") == ("local", 3)
    assert parse_scheduler("local") == ("local", None)
    assert parse_scheduler("tcp://127.0.0.1:8786") == ("tcp://127.0.0.1:8786", None)
    assert parse_scheduler("/shared/scheduler.json") == ("/shared/scheduler.json", None)
    with pytest.raises(GLocalKDError):
        parse_scheduler("local:0")
    with pytest.raises(GLocalKDError):
        parse_scheduler("somewhere")
    with pytest.raises(GLocalKDError):
        library_files(["/no/such/dir/*.smi"])


def test_a_killed_worker_loses_and_duplicates_no_row(client, model_file, library, single, tmp_path):
    """SIGKILL a worker process while it scores a chunk: its tasks run again elsewhere (the nanny
    starts a new worker), and the report is still the single-machine one, row for row."""
    killed = []

    def kill_a_busy_worker(read, scored):
        if killed:
            return
        pids = client.run(os.getpid)
        busy = [addr for addr, tasks in client.processing().items() if tasks and addr in pids]
        if busy:
            os.kill(pids[busy[0]], signal.SIGKILL)
            killed.append((busy[0], pids[busy[0]]))

    summary = screen_on_cluster(model_file, [library], tmp_path / "k.csv", client, chunk_size=CHUNK,
                                on_progress=kill_a_busy_worker)
    assert killed, "no worker was busy when a chunk finished"
    assert (summary.rows, summary.scored, summary.rejected, summary.stopped) == (600, 598, 2, False)
    assert (tmp_path / "k.csv").read_bytes() == single.read_bytes()
    client.wait_for_workers(1, timeout=30)
