"""One screening path, two executors: local worker processes and a Dask cluster run the same
pipeline, so every case below gives the same report, files, messages and exit status on both."""
from __future__ import annotations

import csv
import gzip
import json
import os
import re
import signal

import pytest

distributed = pytest.importorskip("distributed")

from core import GLocalKD, load
from core.cli import progress
from core.cli.main import main
from core.errors import DataError, GLocalKDError
from core.runtime.scheduler import parse_scheduler
from core.screening.cluster import library_files, screen_on_cluster
from core.screening.merge import merge_reports
from core.screening.pipeline import screen

CHUNK = 37
EXECUTORS = ("local", "dask")

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
    """The single-machine report of the library (the model loaded as the CLI loads it: device auto)."""
    out = tmp_path_factory.mktemp("single") / "single.csv"
    summary = screen(GLocalKD.load(model_file), library, out, chunk_size=CHUNK, workers=2)
    assert (summary.rows, summary.scored, summary.rejected) == (600, 598, 2)
    return out


def run(kind, client, model_file, library, out, **options):
    """Screen ``library`` into ``out`` on the executor ``kind``."""
    options.setdefault("chunk_size", CHUNK)
    if kind == "local":
        return screen(GLocalKD.load(model_file), library, out, workers=2, **options)
    return screen_on_cluster(model_file, [library], out, client, **options)


def _rows(path):
    """The report's rows without its end row."""
    with open(path, newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if not r["status"].startswith("end of report")]


def _leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("kind", EXECUTORS)
def test_every_executor_writes_the_single_machine_report(kind, client, model_file, library, single, tmp_path):
    progress_seen = []
    summary = run(kind, client, model_file, library, tmp_path / "r.csv",
                  on_progress=lambda read, scored: progress_seen.append(read))
    assert (summary.rows, summary.scored, summary.rejected, summary.stopped) == (600, 598, 2, False)
    assert progress_seen[-1] == 600 and progress_seen == sorted(progress_seen)
    # same rows, scores, atoms, order and end row (the model's fingerprint), byte for byte
    assert (tmp_path / "r.csv").read_bytes() == single.read_bytes()
    assert not _leftovers(tmp_path)


@pytest.mark.parametrize("kind", EXECUTORS)
def test_a_stopped_run_resumed_on_either_executor_writes_the_single_machine_report(kind, client, model_file, library,
                                                                                   single, tmp_path):
    """A run stopped on one executor and resumed on the other (and on the same one)."""
    done = []
    other = "dask" if kind == "local" else "local"
    stopped = run(other, client, model_file, library, tmp_path / "r.csv", on_progress=lambda r, s: done.append(r),
                  should_stop=lambda: len(done) >= 3)
    assert stopped.stopped and stopped.rows < 600
    summary = run(kind, client, model_file, library, tmp_path / "r.csv", resume=True)
    assert (summary.rows, summary.scored, summary.rejected, summary.resumed_rows) == (600, 598, 2, stopped.rows)
    assert (tmp_path / "r.csv").read_bytes() == single.read_bytes()
    assert not _leftovers(tmp_path)


def test_the_fingerprint_is_that_of_the_model_not_of_its_device(model_file, tmp_path):
    from core import load_detector, make_detector

    assert GLocalKD.load(model_file, device="cpu").fingerprint() == GLocalKD.load(model_file).fingerprint()
    data = tmp_path / "d.smi"
    data.write_text("".join(f"{s}\n" for s in ["CCO", "CCN", "c1ccccc1", "CC(=O)O", "CCCl", "OCCO"] * 7))  # 42: as many as a consensus needs to hold out its share
    consensus = make_detector("consensus", seed=0, component_params={
        "glocalkd": {"epochs": 1, "hidden_dim": 16, "out_dim": 8, "device": "cpu"}}).fit(load(data))
    consensus.save(tmp_path / "c.pt")
    assert load_detector(tmp_path / "c.pt", device="cpu").fingerprint() == \
        load_detector(tmp_path / "c.pt", device="auto").fingerprint()


@pytest.fixture(scope="module")
def ties(tmp_path_factory):
    """A library where every molecule comes twice, the second time written in another atom order:
    the two score alike to the report's six digits, not always to the last bit."""
    from rdkit import Chem

    from tests.conftest import RESOURCES

    with gzip.open(RESOURCES / "moses_sample.csv.gz", "rt") as fh:
        smiles = [line.strip() for line in fh][1:151]
    rows = []
    for k, s in enumerate(smiles):
        other = Chem.MolToSmiles(Chem.MolFromSmiles(s), doRandom=True, canonical=False)
        rows += [f"{s} mol{k}", f"{other} mol{k}b"]
    folder = tmp_path_factory.mktemp("ties")
    path = folder / "ties.smi"
    path.write_text("\n".join(rows) + "\n")
    model = folder / "model.pt"
    GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(load(path)).save(model)
    return path, model


def test_ties_keep_input_order_whatever_the_chunks_and_the_executor(client, ties, tmp_path):
    path, model = ties
    reports = []
    for kind, chunk in [("local", 1000), ("local", 3), ("local", 7), ("dask", 5)]:
        out = tmp_path / f"{kind}{chunk}.csv"
        run(kind, client, model, path, out, chunk_size=chunk)
        reports.append(out.read_bytes())
    rows = _rows(tmp_path / "local1000.csv")
    scores = [r["score"] for r in rows]
    assert len(set(scores)) < len(scores)  # the library has ties
    assert all(r == reports[0] for r in reports[1:])
    # among equal scores, rows keep the library's order
    position = {f"mol{k // 2}" + ("b" if k % 2 else ""): k for k in range(300)}
    for a, b in zip(rows, rows[1:]):
        if a["score"] == b["score"]:
            assert position[a["id"]] < position[b["id"]]


EMPTY = {"empty": ("lib.smi", ""), "comments only": ("lib.smi", "# a comment\n# another\n"),
         "header only": ("lib.csv", "smiles,id\n"), "all invalid": ("lib.smi", "C1CC a\nnot_a_molecule b\n")}


@pytest.mark.parametrize("kind", EXECUTORS)
@pytest.mark.parametrize("case", sorted(EMPTY))
def test_a_library_without_a_molecule_is_refused_and_writes_nothing(kind, case, client, model_file, tmp_path):
    name, text = EMPTY[case]
    data = tmp_path / name
    data.write_text(text)
    with pytest.raises(DataError, match=str(data)):
        run(kind, client, model_file, data, tmp_path / "r.csv")
    assert not (tmp_path / "r.csv").exists() and not _leftovers(tmp_path)


@pytest.mark.parametrize("scheduler", [False, True])
def test_the_command_refuses_an_empty_library_with_status_2(scheduler, client, model_file, tmp_path, capsys):
    data = tmp_path / "lib.smi"
    data.write_text("# only a comment\n")
    extra = ["--scheduler", client.scheduler.address] if scheduler else []
    assert main(["screen", str(model_file), str(data), "-o", str(tmp_path / "r.csv"), *extra]) == 2
    err = capsys.readouterr().err
    assert "glocalkd: error:" in err and "Traceback" not in err and not (tmp_path / "r.csv").exists()


def _sigterm_on_progress(after):
    calls = []

    def on_progress(read, scored):
        calls.append(read)
        if len(calls) == after:
            os.kill(os.getpid(), signal.SIGTERM)

    return on_progress


def test_a_sigterm_keeps_the_same_rows_on_every_executor(client, model_file, library, tmp_path):
    reports = {}
    for kind in EXECUTORS:
        out = tmp_path / kind / "r.csv"
        out.parent.mkdir()
        summary = run(kind, client, model_file, library, out, on_progress=_sigterm_on_progress(3))
        assert summary.interrupted and summary.stopped and summary.written
        assert summary.rows == 4 + 8 + 16  # the three chunks taken (4, 8, 16 rows), in input order
        assert len(_rows(out)) == 28 and not _leftovers(out.parent)
        reports[kind] = out.read_bytes()
    assert reports["local"] == reports["dask"]
    # the report of the rows kept is the report of a library of those rows
    head = tmp_path / "head.smi"
    head.write_text("".join(library.read_text().splitlines(keepends=True)[:29]))
    screen(GLocalKD.load(model_file), head, tmp_path / "head.csv", chunk_size=CHUNK, workers=1)
    whole, stopped = ((tmp_path / "head.csv").read_bytes().splitlines(keepends=True),
                      reports["local"].splitlines(keepends=True))
    assert stopped[:-1] == whole[:-1]  # and its end row says where the run stopped, which the whole run's does not
    assert re.fullmatch(re.escape(whole[-1][:-4]) + rb"; read as [0-9a-f]{12}; rows read [0-9a-f]{16}; stopped after input line 29,,\r\n",
                        stopped[-1])


@pytest.mark.parametrize("scheduler", [False, True])
def test_the_command_exits_130_on_sigterm_with_every_row_taken(scheduler, client, model_file, library, tmp_path,
                                                               monkeypatch, capsys):
    calls = []

    def update(self, read, scored=None):
        calls.append(read)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(progress.Progress, "update", update)
    extra = ["--scheduler", client.scheduler.address] if scheduler else []
    out = tmp_path / "r.csv"
    code = main(["screen", str(model_file), str(library), "-o", str(out), "--chunk-size", str(CHUNK), *extra])
    assert code == 130 and len(_rows(out)) == 28 and not _leftovers(tmp_path)
    assert "interrupted after line 29" in capsys.readouterr().err


@pytest.mark.parametrize("kind", EXECUTORS)
def test_top_keeps_the_best_rows_every_reject_and_the_counts(kind, client, model_file, library, single, tmp_path):
    out = tmp_path / "top.csv"
    summary = run(kind, client, model_file, library, out, top=25)
    want = _rows(single)
    assert _rows(out) == want[:25] + want[598:] and summary.scored == 598
    counts = json.loads((tmp_path / "top.csv.summary.json").read_text())
    assert (counts["rows"], counts["scored"], counts["rejected"], counts["kept"]) == (600, 598, 2, 25)
    assert not _leftovers(tmp_path)


def test_top_reports_of_shards_merge_into_the_whole_librarys_top(client, model_file, smiles, tmp_path):
    """Shards screened with --top on either executor merge (with their summaries) into the report
    of the whole library screened with --top: its best rows, every rejected row."""
    shards = []
    for k, (lo, hi) in enumerate([(0, 300), (300, 600)]):
        path = tmp_path / f"part{k}.smi"
        path.write_text("".join(f"{s} mol{i}\n" for i, s in enumerate(smiles[lo:hi], start=lo)))
        out = tmp_path / f"part{k}.csv"
        run(EXECUTORS[k], client, model_file, path, out, top=10)
        shards.append(out)
    whole = tmp_path / "whole.smi"
    whole.write_text("".join(f"{s} mol{i}\n" for i, s in enumerate(smiles[:600])))
    run("local", client, model_file, whole, tmp_path / "whole.csv", top=10)
    assert merge_reports(shards, tmp_path / "merged.csv") == 10 + 2
    merged, alone = _rows(tmp_path / "merged.csv"), _rows(tmp_path / "whole.csv")
    assert [r for r in merged if r["status"] == "ok"] == [r for r in alone if r["status"] == "ok"]
    assert len(merged) == len(alone) == 12 and [r["rank"] for r in merged[:10]] == [str(k) for k in range(1, 11)]


@pytest.mark.parametrize("scheduler", [False, True])
def test_a_top_beyond_any_count_keeps_every_row(scheduler, client, model_file, library, single, tmp_path):
    extra = ["--scheduler", client.scheduler.address] if scheduler else []
    out = tmp_path / "r.csv"
    assert main(["screen", str(model_file), str(library), "-o", str(out), "--chunk-size", str(CHUNK),
                 "--top", "99999999999999999999", *extra]) == 0
    assert _rows(out) == _rows(single)
    assert json.loads((tmp_path / "r.csv.summary.json").read_text())["kept"] == 598


def test_a_failing_task_is_one_line_without_a_worker_traceback(model_file, library, tmp_path, capfd):
    import torch

    if torch.cuda.is_available():
        pytest.skip("needs a machine without CUDA (--device cuda must fail on the workers)")
    code = main(["screen", str(model_file), str(library), "-o", str(tmp_path / "r.csv"), "--scheduler", "local:1",
                 "--device", "cuda"])
    err = capfd.readouterr().err
    assert code == 2 and "Traceback" not in err and "Compute Failed" not in err
    assert [line for line in err.splitlines() if line.startswith("glocalkd: error:")] == [
        line for line in err.splitlines() if line.strip()][-1:]
    assert not (tmp_path / "r.csv").exists() and not _leftovers(tmp_path)


def test_the_same_library_with_two_chunk_sizes_is_not_merged(ties, tmp_path):
    path, model = ties
    for chunk in (3, 1000):
        screen(GLocalKD.load(model), path, tmp_path / f"r{chunk}.csv", chunk_size=chunk, workers=1)
    with pytest.raises(DataError):
        merge_reports([tmp_path / "r3.csv", tmp_path / "r1000.csv"], tmp_path / "m.csv")
    assert not (tmp_path / "m.csv").exists()


def test_shards_that_overlap_are_not_merged(model_file, smiles, tmp_path):
    reports = []
    for k, (lo, hi) in enumerate([(0, 400), (300, 600)]):
        path = tmp_path / f"part{k}.smi"
        path.write_text("".join(f"{s} mol{i}\n" for i, s in enumerate(smiles[lo:hi], start=lo)))
        reports.append(tmp_path / f"part{k}.csv")
        screen(GLocalKD.load(model_file), path, reports[-1], chunk_size=CHUNK, workers=1)
    with pytest.raises(DataError, match="overlap"):
        merge_reports(reports, tmp_path / "m.csv")
    # shards that do not overlap merge
    path = tmp_path / "rest.smi"
    path.write_text("".join(f"{s} mol{i}\n" for i, s in enumerate(smiles[400:], start=400)))
    screen(GLocalKD.load(model_file), path, tmp_path / "rest.csv", chunk_size=CHUNK, workers=1)
    assert merge_reports([reports[0], tmp_path / "rest.csv"], tmp_path / "m.csv") == 600


def test_shards_plain_and_gzipped_by_glob(client, model_file, smiles, single, tmp_path):
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "part0.smi").write_text("".join(f"{s} mol{k}\n" for k, s in enumerate(smiles[:250])))
    with gzip.open(shards / "part1.smi.gz", "wt") as fh:
        fh.write("".join(f"{s} mol{k}\n" for k, s in enumerate(smiles[250:], start=250)))
    summary = screen_on_cluster(model_file, [str(shards / "part*")], tmp_path / "r.csv", client, chunk_size=CHUNK)
    assert (summary.rows, summary.scored, summary.rejected) == (600, 598, 2)
    got, want = _rows(tmp_path / "r.csv"), _rows(single)
    def key(r):
        return (r["id"], r["score"], r["top_nodes"])
    assert sorted(map(key, got[:598])) == sorted(map(key, want[:598]))
    scores = [float(r["score"]) for r in got[:598]]
    assert scores == sorted(scores, reverse=True) and [r["rank"] for r in got[:598]] == [str(k) for k in range(1, 599)]
    assert {r["status"] for r in got[598:]} == {"rejected: part0.smi line 11: invalid SMILES syntax: C1CC",
                                                "rejected: part0.smi line 201: invalid SMILES syntax: not_a_molecule"}


def test_the_command_line_on_a_running_scheduler(client, model_file, library, single, tmp_path):
    out = tmp_path / "cli.csv"
    code = main(["screen", str(model_file), str(library), "-o", str(out), "--chunk-size", str(CHUNK),
                 "--scheduler", client.scheduler.address, "--scratch", str(tmp_path)])
    assert code == 0 and out.read_bytes() == single.read_bytes()
    assert main(["screen", str(model_file), str(library), str(library), "-o", str(out)]) == 2  # shards need it


def test_the_command_line_starts_a_local_cluster(model_file, library, single, tmp_path):
    out = tmp_path / "local.csv"
    code = main(["screen", str(model_file), str(library), "-o", str(out), "--chunk-size", str(CHUNK),
                 "--scheduler", "local:2"])
    assert code == 0 and out.read_bytes() == single.read_bytes()


def test_scheduler_strings():
    assert parse_scheduler("local:3") == ("local", 3)
    assert parse_scheduler("local") == ("local", None)
    assert parse_scheduler("tcp://127.0.0.1:8786") == ("tcp://127.0.0.1:8786", None)
    assert parse_scheduler("/shared/scheduler.json") == ("/shared/scheduler.json", None)
    with pytest.raises(GLocalKDError):
        parse_scheduler("local:0")
    from core.runtime.threads import most_per_machine

    assert parse_scheduler(f"local:{most_per_machine()}") == ("local", most_per_machine())
    with pytest.raises(GLocalKDError, match="4 per CPU core"):  # as --workers: each a process
        parse_scheduler(f"local:{most_per_machine() + 1}")
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


def test_the_cluster_is_an_executor_of_the_pipeline_not_a_second_one(client, model_file, library, tmp_path,
                                                                     monkeypatch):
    """The structure that keeps the two executors alike: the Dask module reads no library, writes
    no report and merges nothing of its own; its run is the pipeline's ``screen``."""
    import ast
    import inspect

    from core.screening import cluster, pipeline

    tree = ast.parse(inspect.getsource(cluster))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not imported & {"csv", "heapq", "json", "core.io.load", "core.io.report"}
    called = {node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
              for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert not called & {"open", "write_text", "write_bytes", "molecule_rows", "iter_smiles_rows"}

    class Ran(Exception):
        pass

    def pipeline_screen(model, path, report, **options):
        raise Ran(type(options["executor"]).__name__)

    monkeypatch.setattr(pipeline, "screen", pipeline_screen)
    with pytest.raises(Ran, match="DaskExecutor"):
        screen_on_cluster(model_file, [library], tmp_path / "r.csv", client)


@pytest.mark.parametrize("kind", EXECUTORS)
def test_properties_and_alerts_come_out_the_same_on_every_executor(kind, client, model_file, library, single,
                                                                    tmp_path):
    from core import PROPERTY_COLUMNS

    run(kind, client, model_file, library, tmp_path / "r.csv", properties=True, alerts=True)
    rows, plain = _rows(tmp_path / "r.csv"), _rows(single)
    assert [r["id"] for r in rows] == [r["id"] for r in plain] and [r["score"] for r in rows] == [r["score"] for r in plain]
    assert list(rows[0]) == [*plain[0], *PROPERTY_COLUMNS, "alerts"]
    scored = [r for r in rows if r["status"] == "ok"]
    assert all(r["mw"] and r["heavy_atoms"] == r["num_nodes"] for r in scored)
    assert any(r["alerts"] for r in scored)
    assert all(r["mw"] == "" for r in rows if r["status"] != "ok")
    if kind == "local":  # shards with the columns merge with them
        merge_reports([tmp_path / "r.csv"], tmp_path / "merged.csv")
        assert _rows(tmp_path / "merged.csv") == rows
    # with --top the merge computes them for the kept rows: the same cells
    run(kind, client, model_file, library, tmp_path / "top.csv", properties=True, alerts=True, top=40)
    assert _rows(tmp_path / "top.csv") == rows[:40] + rows[598:]


def test_workers_are_not_silently_left_unused_with_a_scheduler(model_file, library, tmp_path, capsys):
    """--workers with --scheduler was accepted and not used (0 too): the cluster's workers parse."""
    code = main(["screen", str(model_file), str(library), "-o", str(tmp_path / "r.csv"), "--scheduler", "local:2",
                 "--workers", "3"])
    err = capsys.readouterr().err
    assert code == 2 and "--workers sets the parsing processes of a run on this machine" in err
    assert not (tmp_path / "r.csv").exists()
    with pytest.raises(SystemExit):
        main(["screen", str(model_file), str(library), "-o", str(tmp_path / "r.csv"), "--workers", "0"])
