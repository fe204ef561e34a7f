"""Dask screening against single-process screening, and a merge of 1,000 shard reports (issue 24).

    python -m benchmarks.cluster_bench throughput [--rows 100000] [--rounds 2] [--out FILE]
    python -m benchmarks.cluster_bench merge [--shards 1000] [--rows-per-shard 1000] [--out FILE]

``throughput`` screens the first ``--rows`` rows of MOSES (``../shared/datasets/moses/train.csv.gz``)
with one model, alternately with the single-machine ``screen`` (its parsing pool of 2 processes
plus the scoring process) and with :func:`core.screening.cluster.screen_on_cluster` on a
``LocalCluster`` of 2 single-threaded worker processes, each run in a fresh interpreter, rounds
interleaved so both see the same load from the machine's other tenants. The cluster's start-up
(processes, imports, model load) is timed apart from the screening; both figures are kept.
CPU seconds are those of every process of the run (client, scheduler and workers; or the main
process and its pool).

``merge`` writes ``--shards`` ranked shard reports of ``--rows-per-shard`` rows each (scores
drawn at random, rows shaped like MOSES report rows) and times ``merge_reports`` of all of
them (the reduce step of a sharded run) and the ``--top 1000`` merge of their chunk files.
Not a test: it writes JSON and prints it.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOSES = ROOT.parent / "shared" / "datasets" / "moses" / "train.csv.gz"


def _prepare(folder: Path, rows: int) -> tuple[Path, Path]:
    """The library (MOSES rows 1..rows) and a paper-width model trained 1 epoch on the next 2,000."""
    from core import GLocalKD, load

    lib, train = folder / "library.smi", folder / "train.smi"
    with gzip.open(MOSES, "rt") as src:
        next(src)
        with open(lib, "w") as dst:
            dst.writelines(itertools.islice(src, rows))
        with open(train, "w") as dst:
            dst.writelines(itertools.islice(src, 2000))
    model = folder / "model.pt"
    GLocalKD(epochs=1, device="cpu", seed=0).fit(load(train)).save(model)
    return lib, model


def _tree_cpu(pid: int) -> float:
    import psutil

    total = 0.0
    for p in [psutil.Process(pid)] + psutil.Process(pid).children(recursive=True):
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def one_run(kind: str, lib: Path, model: Path, chunk: int, out: Path) -> dict:
    """One timed run in this (fresh) process: ``single`` or ``cluster``."""
    import resource

    from core import retain_freed_memory

    retain_freed_memory()
    if kind == "single":
        from core.detectors.glocalkd import GLocalKD
        from core.screening.pipeline import screen

        m = GLocalKD.load(model, device="cpu")
        me0 = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        summary = screen(m, lib, out, chunk_size=chunk, workers=2)
        seconds = time.perf_counter() - start
        me1, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (me1.ru_utime + me1.ru_stime - me0.ru_utime - me0.ru_stime) + kids.ru_utime + kids.ru_stime
        return {"kind": kind, "chunk_size": chunk, "rows": summary.rows, "seconds": seconds,
                "molecules_per_second": summary.rows / seconds, "cpu_seconds": cpu,
                "cpu_us_per_molecule": cpu / summary.rows * 1e6}
    import distributed

    from core.screening.cluster import screen_on_cluster

    import dask

    t0 = time.perf_counter()
    with dask.config.set({"distributed.worker.profile.enabled": os.environ.get("BENCH_PROFILE") == "1"}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                     host="127.0.0.1") as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        # what the first task would otherwise pay: imports of torch, RDKit and core in each worker
        client.run(lambda: __import__("core.screening.pipeline") and __import__("core.detectors.glocalkd"))
        startup = time.perf_counter() - t0
        cpu0 = _tree_cpu(os.getpid())
        start = time.perf_counter()
        summary = screen_on_cluster(model, [lib], out, client, chunk_size=chunk)
        seconds = time.perf_counter() - start
        cpu = _tree_cpu(os.getpid()) - cpu0  # this process, the scheduler's thread, the nannies and workers
    return {"kind": kind, "chunk_size": chunk, "rows": summary.rows, "seconds": seconds,
            "startup_seconds": startup, "molecules_per_second": summary.rows / seconds,
            "molecules_per_second_with_startup": summary.rows / (seconds + startup), "cpu_seconds": cpu,
            "cpu_us_per_molecule": cpu / summary.rows * 1e6}


def throughput(rows: int, rounds: int, chunks: list[int]) -> dict:
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        lib, model = _prepare(tmp, rows)
        reports = {}
        for r in range(rounds):
            for kind, chunk in [("single", 20000)] + [("cluster", c) for c in chunks]:
                out = tmp / f"{kind}{chunk}.csv"
                done = subprocess.run([sys.executable, "-m", "benchmarks.cluster_bench", "one", kind, str(lib),
                                       str(model), str(chunk), str(out)], cwd=ROOT, check=True,
                                      capture_output=True, text=True)
                res = json.loads(done.stdout.strip().splitlines()[-1])
                res["round"] = r + 1
                res["load_average"] = os.getloadavg()[0]
                runs.append(res)
                print(json.dumps(res), file=sys.stderr, flush=True)
                reports[(kind, chunk)] = out
        same = reports[("single", 20000)].read_bytes() == reports.get(("cluster", 20000), Path(os.devnull)).read_bytes()
        size = reports[("single", 20000)].stat().st_size
        gz = len(gzip.compress(reports[("single", 20000)].read_bytes()))
    summary = {}
    for kind, chunk in [("single", 20000)] + [("cluster", c) for c in chunks]:
        mine = [x for x in runs if (x["kind"], x["chunk_size"]) == (kind, chunk)]
        rates = [x["molecules_per_second"] for x in mine]
        summary[f"{kind}_{chunk}"] = {
            "mean_molecules_per_second": sum(rates) / len(rates), "rates": rates,
            "cpu_us_per_molecule": [x["cpu_us_per_molecule"] for x in mine],
            # the rate the CPU time spent allows on the machine's cores, were they ours alone
            "cpu_limited_molecules_per_second": [(os.cpu_count() or 1) * 1e6 / x["cpu_us_per_molecule"] for x in mine]}
    single = [x["molecules_per_second"] for x in runs if x["kind"] == "single"]
    ratios = {}
    for chunk in chunks:
        cl = [x["molecules_per_second"] for x in runs if (x["kind"], x["chunk_size"]) == ("cluster", chunk)]
        ratios[f"cluster_{chunk}_over_single_per_round"] = [c / s for c, s in zip(cl, single)]
    return {"rows": rows, "rounds": rounds, "runs": runs, "summary": summary, "ratios": ratios,
            "cluster_20000_report_identical_to_single": same, "report_bytes_per_row": size / rows,
            "report_gzip_bytes_per_row": gz / rows, "cores": os.cpu_count(),
            "note": "2 cores shared with other engineers' jobs; see load_average per run"}


def merge_simulation(shards: int, per_shard: int) -> dict:
    """Time merge_reports of ``shards`` ranked reports and a --top 1000 merge of their chunk files."""
    import numpy as np

    from core.io.report import COLUMNS, end_row
    from core.screening.merge import merge_reports, write_ranked

    rng = np.random.default_rng(0)
    with gzip.open(MOSES, "rt") as src:
        next(src)
        smiles = [line.strip() for line in itertools.islice(src, 5000)]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        reports, chunk_files = [], []
        t0 = time.perf_counter()
        for s in range(shards):
            scores = np.sort(rng.lognormal(0.0, 0.5, per_shard))[::-1]
            path, chunk = tmp / f"shard{s:04d}.csv", tmp / f"chunk{s:04d}.csv"
            with open(path, "w", newline="") as fh, open(chunk, "w", newline="") as ch:
                w, wc = csv.writer(fh), csv.writer(ch)
                w.writerow(COLUMNS)
                for i, sc in enumerate(scores):
                    smi = smiles[(s * per_shard + i) % len(smiles)]
                    row = [f"{sc:.6g}", f"ZINC{s:04d}{i:07d}", "", smi, f"{sc:.6g}", f"{sc * 0.6:.6g}",
                           f"{sc * 0.4:.6g}", 24, "", "C3:0.412;N7:0.388;O12:0.301;C1:0.25;C2:0.2", "ok", "", ""]
                    w.writerow([str(i + 1)] + row[1:])
                    wc.writerow([row[0], s * per_shard + i] + row[1:])  # a chunk file: score, input position
                w.writerow(end_row(per_shard, "model", f"{s:016x}"))
            reports.append(path)
            chunk_files.append(chunk)
        write_seconds = time.perf_counter() - t0
        input_bytes = sum(p.stat().st_size for p in reports)
        t0 = time.perf_counter()
        cpu0 = time.process_time()
        rows = merge_reports(reports, tmp / "merged.csv")
        merge_seconds, merge_cpu = time.perf_counter() - t0, time.process_time() - cpu0
        out_bytes = (tmp / "merged.csv").stat().st_size
        (tmp / "rejects.csv").write_text("")
        work = tmp / "work"
        work.mkdir()
        t0 = time.perf_counter()
        write_ranked(list(chunk_files), tmp / "rejects.csv", tmp / "top.csv", work, 0, "model", limit=1000)
        top_seconds = time.perf_counter() - t0
    # the client's share: read and chunk MOSES rows (gzipped CSV) and serialise each chunk as a task argument
    import pickle

    from core.screening.pipeline import chunks, iter_smiles_rows

    t0 = time.perf_counter()
    read_rows = sent_bytes = 0
    for chunk in chunks(iter_smiles_rows(MOSES), 20000):
        sent_bytes += len(pickle.dumps(chunk, protocol=5))
        read_rows += len(chunk)
        if read_rows >= 200000:
            break
    read_seconds = time.perf_counter() - t0
    return {"client_rows_read": read_rows, "client_read_seconds": read_seconds,
            "client_rows_per_second": read_rows / read_seconds, "task_bytes_per_row": sent_bytes / read_rows,
            "shards": shards, "rows_per_shard": per_shard, "rows": rows, "write_seconds": write_seconds,
            "merge_seconds": merge_seconds, "merge_cpu_seconds": merge_cpu,
            "merge_us_per_row": merge_seconds / rows * 1e6, "input_mb": input_bytes / 1e6,
            "output_mb": out_bytes / 1e6, "bytes_per_row": out_bytes / rows,
            "top1000_merge_seconds": top_seconds, "load_average": os.getloadavg()[0]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    t = sub.add_parser("throughput")
    t.add_argument("--rows", type=int, default=100000)
    t.add_argument("--rounds", type=int, default=2)
    t.add_argument("--chunks", default="20000,5000", help="cluster chunk sizes to run (comma-separated)")
    t.add_argument("--out", type=Path)
    m = sub.add_parser("merge")
    m.add_argument("--shards", type=int, default=1000)
    m.add_argument("--rows-per-shard", type=int, default=1000)
    m.add_argument("--out", type=Path)
    o = sub.add_parser("one")
    o.add_argument("kind", choices=("single", "cluster"))
    o.add_argument("lib", type=Path)
    o.add_argument("model", type=Path)
    o.add_argument("chunk", type=int)
    o.add_argument("out", type=Path)
    args = p.parse_args()
    if args.what == "one":
        print(json.dumps(one_run(args.kind, args.lib, args.model, args.chunk, args.out)))
        return 0
    if args.what == "throughput":
        result = throughput(args.rows, args.rounds, [int(c) for c in args.chunks.split(",")])
    else:
        result = merge_simulation(args.shards, args.rows_per_shard)
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
