"""Screening on a Dask cluster: ``glocalkd screen MODEL LIBRARY... -o REPORT --scheduler ...``.

The unit of work is the single-machine pipeline's (:mod:`core.screening.pipeline`): a chunk of
rows is parsed, featurized, scored and written as one file sorted by score. Here each chunk is
a Dask task, a pure function of the model bytes and the chunk's rows:

- the model file's bytes go to the scheduler once, in a worker plugin; every worker, including
  one that joins or restarts mid-run, gets them once and loads the model once, on its own
  device (``auto``: a worker that sees a GPU uses it);
- the client reads the library (one file or several shards, plain or gzipped), cuts it into
  the same chunks as the single-machine ``screen`` and keeps a bounded number of tasks in
  flight, so memory stays flat on every side;
- each task writes its sorted chunk file (and its rejected rows) to a scratch directory on
  storage every worker and the client share, under a name fixed by the chunk's number,
  through a temporary name and an atomic rename: a task run twice (its worker was killed, or
  was only slow) leaves one file, so no row is lost or duplicated;
- the client merges the chunk files in chunk order with the pipeline's k-way merge, so the
  report has the same rows, scores and order as ``screen`` on one machine.

Ctrl+C (or ``should_stop``) cancels the tasks not finished and writes the report of every
chunk already scored. ``top`` keeps only the best rows (each task keeps its chunk's best ``top``,
the merge stops after ``top``), with every rejected row and the counts.
"""
from __future__ import annotations

import csv
import glob
import heapq
import itertools
import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from core.errors import DataError, GLocalKDError
from core.data.pvalues import bh_q_table
from core.io.report import COLUMNS, P_VALUE, Q_VALUE, STATUS, format_p, safe_cell
from core.runtime.files import atomic_output, replace_output
from core.screening import pipeline
from core.screening.pipeline import ScreenSummary, featurize_chunk, iter_smiles_rows

try:  # a plain base class when Dask is missing: the module still imports, --scheduler says what to install
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # pragma: no cover
    WorkerPlugin = object


# ---------------------------------------------------------------------------- the library
def library_files(libraries: Sequence[str | Path]) -> list[Path]:
    """The shard files named by ``libraries``: paths, or glob patterns (each pattern's matches sorted)."""
    files: list[Path] = []
    for item in libraries:
        text = str(item)
        if Path(text).exists() or not glob.has_magic(text):
            if not Path(text).is_file():
                raise DataError("no such library file", text)
            files.append(Path(text))
            continue
        matches = sorted(glob.glob(text))
        if not matches:
            raise DataError("no library file matches this pattern", text)
        files.extend(Path(m) for m in matches)
    if not files:
        raise GLocalKDError("no library file given")
    return files


def library_chunks(files: Sequence[Path], chunk_size: int, smiles_column: str | None = None,
                   id_column: str | None = None) -> Iterator[tuple[int, list[tuple[int, str, str]]]]:
    """(shard number, rows) of every chunk: each shard cut as the single-machine ``screen`` cuts it."""
    for n, path in enumerate(files):
        for rows in pipeline.chunks(iter_smiles_rows(path, smiles_column, id_column), chunk_size):
            yield n, rows


# ---------------------------------------------------------------------------- worker side
class ModelPlugin(WorkerPlugin):
    """The model file's bytes, on every worker once; the model loaded on first use, on ``device``."""

    def __init__(self, name: str, data: bytes, device: str = "auto"):
        self.name = name
        self.data = data
        self.device = device
        self._model = None
        self._lock = threading.Lock()

    def __getstate__(self):
        return {"name": self.name, "data": self.data, "device": self.device}

    def __setstate__(self, state):
        self.__init__(state["name"], state["data"], state["device"])

    def setup(self, worker) -> None:
        self._dir = getattr(worker, "local_directory", None) or tempfile.gettempdir()

    def teardown(self, worker) -> None:
        self._model = None

    def model(self):
        with self._lock:
            if self._model is None:
                from core.detectors.model_file import load_detector

                folder = Path(tempfile.mkdtemp(prefix="glocalkd-model-", dir=getattr(self, "_dir", None)))
                try:
                    path = folder / "model.pt"
                    path.write_bytes(self.data)
                    self._model = load_detector(path, device=self.device)
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
            return self._model


def _atomic_csv(target: Path, rows) -> None:
    tmp = target.with_name(f"{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    os.replace(tmp, target)


def screen_chunk_task(plugin: str, rows: list[tuple[int, str, str]], scratch: str, stem: str, source: str,
                      top_nodes: int = 5, batch_graphs: int = 256, precision: str = "float32",
                      keep: int | None = None) -> dict:
    """One chunk on a worker: parse, featurize, score, and write ``stem.csv`` (scored rows sorted by
    score, at most ``keep``) and ``stem.rejects.csv`` in ``scratch``. Returns the counts and the files."""
    from distributed import get_worker

    out = Path(scratch)
    if not out.is_dir():
        raise GLocalKDError(f"{scratch}: no such directory on worker {get_worker().address}: the scratch "
                            "directory must be on storage that every worker and the client share (--scratch)")
    model = get_worker().plugins[plugin].model()
    chunk = featurize_chunk(rows)
    result = {"rows": len(rows), "scored": len(chunk["counts"]), "rejected": len(chunk["rejects"]),
              "nodes": int(chunk["counts"].sum()), "last_line": rows[-1][0] if rows else 0,
              "file": None, "rejects": None, "p_counts": {}}
    if len(chunk["counts"]):
        target = out / f"{stem}.csv"
        tmp = target.with_name(f"{target.name}.{uuid.uuid4().hex[:8]}.tmp")
        scored = pipeline.score_chunk(model, chunk, batch_graphs, precision)
        p = model.p_values(scored[0]) if getattr(model, "is_calibrated", False) else None
        if p is not None:  # every scored row counts for the q-values, kept or not
            result["p_counts"] = dict(Counter(format_p(v) for v in p))
        pipeline.write_sorted_chunk(tmp, chunk, scored, top_nodes, p)
        if keep is not None and result["scored"] > keep:
            with open(tmp, newline="", encoding="utf-8") as fh:
                best = list(itertools.islice(csv.reader(fh), keep))
            tmp.unlink()
            _atomic_csv(target, best)
        else:
            os.replace(tmp, target)
        result["file"] = str(target)
    if chunk["rejects"]:
        where = f"{source} line" if source else "line"
        target = out / f"{stem}.rejects.csv"
        _atomic_csv(target, (["", safe_cell(ident), "", safe_cell(smi), "", "", "", "", "", "",
                              f"rejected: {where} {line}: {reason}", "", ""]
                             for line, ident, smi, reason in chunk["rejects"]))
        result["rejects"] = str(target)
    return result


# ---------------------------------------------------------------------------- client side
def screen_on_cluster(model_path: str | Path, libraries: Sequence[str | Path], report: str | Path, scheduler,
                      chunk_size: int = 20000, smiles_column: str | None = None, id_column: str | None = None,
                      top_k: int = 5, batch_graphs: int = 256, precision: str = "float32", device: str = "auto",
                      top: int | None = None, scratch: str | Path | None = None, in_flight: int | None = None,
                      on_progress: Callable[[int, int], None] | None = None,
                      should_stop: Callable[[], bool] | None = None) -> ScreenSummary:
    """Screen ``libraries`` (paths or glob patterns of shards) with the model file ``model_path`` on
    the Dask cluster ``scheduler`` (``local:N``, ``tcp://HOST:PORT`` or a ``distributed.Client``).

    ``scratch`` (default: the report's folder) holds the chunk files and must be shared by every
    worker and this process. ``in_flight`` bounds the tasks submitted and not finished (default:
    twice the workers' threads, plus two). ``on_progress(rows submitted, rows scored)`` is called
    as chunks finish. ``top`` keeps the ``top`` best rows only (every rejected row is still
    listed, and ``REPORT.summary.json`` holds the counts). ``top_k`` is the number of atoms listed
    per row, as in :func:`core.screening.pipeline.screen`.
    """
    from core.detectors.model_file import load_detector
    from core.runtime.device import matmul_dtype
    from core.runtime.scheduler import connect

    if min(chunk_size, batch_graphs, 1 if top is None else top, 1 if in_flight is None else in_flight) < 1:
        raise GLocalKDError(f"chunk size, batch size, --top and tasks in flight must be at least 1 (got "
                            f"{chunk_size}, {batch_graphs}, {top}, {in_flight})")
    matmul_dtype(precision)
    model_path = Path(model_path)
    files = library_files(libraries)
    model = load_detector(model_path, device="cpu")  # fails here, before any task, on a bad file
    schema = pipeline.molecule_schema(model)
    if schema is not None and schema.mode != "atom":
        raise DataError("screening needs a model trained on molecules (SMILES or SDF)", model_path)
    data = model_path.read_bytes()
    start = time.perf_counter()
    report = Path(report)
    scratch_dir = Path(tempfile.mkdtemp(prefix=".screen-cluster-", dir=scratch or report.parent or "."))
    run = uuid.uuid4().hex[:10]
    plugin = f"glocalkd-model-{run}"
    results: dict[int, dict] = {}
    submitted = 0
    stopped = False
    try:
        with connect(scheduler) as client:
            from distributed import wait

            client.register_plugin(ModelPlugin(plugin, data, device), name=plugin)
            try:
                limit = in_flight or 2 * max(1, sum(client.nthreads().values())) + 2
                pending: dict = {}
                source = enumerate(library_chunks(files, chunk_size, smiles_column, id_column))
                exhausted = False
                scored_rows = 0
                try:
                    while True:
                        while not exhausted and not stopped and len(pending) < limit:
                            if should_stop is not None and should_stop():
                                stopped = True
                                break
                            item = next(source, None)
                            if item is None:
                                exhausted = True
                                break
                            index, (shard, rows) = item
                            label = files[shard].name if len(files) > 1 else ""
                            fut = client.submit(screen_chunk_task, plugin, rows, str(scratch_dir),
                                                f"chunk{index:09d}", label, top_k, batch_graphs, precision, top,
                                                key=f"glocalkd-screen-{run}-{index:09d}", pure=False)
                            pending[fut] = index
                            submitted += len(rows)
                        if not pending or stopped:
                            break
                        try:  # a short wait, so Ctrl+C and should_stop are seen at once
                            done = wait(list(pending), timeout=0.5, return_when="FIRST_COMPLETED").done
                        except TimeoutError:
                            done = ()
                        for fut in done:
                            results[pending[fut]] = fut.result()  # a task's own error ends the run here
                            scored_rows += results[pending.pop(fut)]["rows"]
                            if on_progress is not None:
                                on_progress(submitted, scored_rows)
                        if should_stop is not None and should_stop():
                            stopped = True
                except KeyboardInterrupt:
                    stopped = True
                if pending:  # stopped: keep what finished, cancel the rest
                    for fut, index in list(pending.items()):
                        if fut.status == "finished":
                            try:
                                results[index] = fut.result(timeout=10)
                            except Exception:  # its worker went with the interrupt: the chunk is left out
                                pass
                    client.cancel([f for f in pending if f.status != "finished"])
            finally:
                try:
                    client.unregister_worker_plugin(plugin)
                except Exception:  # a closing cluster; the plugin goes with it
                    pass
        order = sorted(results)
        sorted_files = [Path(results[i]["file"]) for i in order if results[i]["file"]]
        rejects_file = scratch_dir / "rejects.all.csv"
        with open(rejects_file, "wb") as dst:
            for i in order:
                if results[i]["rejects"]:
                    with open(results[i]["rejects"], "rb") as src:
                        shutil.copyfileobj(src, dst)
        p_counts: Counter = Counter()
        for i in order:
            p_counts.update(results[i].get("p_counts") or {})
        rows = sum(results[i]["rows"] for i in order)  # the end row counts every row written, rejects too
        if top is None:
            pipeline.write_ranked(sorted_files, rejects_file, report, scratch_dir, rows, model.fingerprint(),
                                  p_counts)
        else:
            write_top(sorted_files, rejects_file, report, scratch_dir, top, p_counts)
    finally:
        shutil.rmtree(scratch_dir, ignore_errors=True)
    counts = [results[i] for i in sorted(results)]
    summary = ScreenSummary(rows=sum(r["rows"] for r in counts), scored=sum(r["scored"] for r in counts),
                            rejected=sum(r["rejected"] for r in counts), seconds=time.perf_counter() - start,
                            report=str(report), stopped=stopped,
                            last_line=max((r["last_line"] for r in counts), default=0),
                            nodes=sum(r["nodes"] for r in counts))
    if top is not None:
        write_summary(summary, report, top=top, libraries=[str(f) for f in files], chunks=len(counts),
                      chunks_submitted=len(counts) if not stopped else None)
    return summary


def write_summary(summary: ScreenSummary, report: str | Path, **extra) -> Path:
    """``REPORT.summary.json``: the counts of a run whose report keeps the best rows only."""
    path = Path(str(report) + ".summary.json")
    data = {"rows": summary.rows, "scored": summary.scored, "rejected": summary.rejected,
            "kept": min(summary.scored, extra.get("top") or summary.scored), "nodes": summary.nodes,
            "seconds": round(summary.seconds, 3), "stopped": summary.stopped, **extra}
    with atomic_output(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=2) + "\n")
    return path


def write_top(files: list[Path], rejects_file: Path, out: Path, tmp: Path, top: int,
              p_counts: dict[str, int] | None = None) -> None:
    """The ranked report of the ``top`` best rows of sorted chunk files (k-way, fan-in as the
    pipeline's, each round cut to ``top``), then every rejected row; renamed into place."""
    level = 0
    while len(files) > pipeline.MERGE_FAN_IN:
        merged = []
        for k in range(0, len(files), pipeline.MERGE_FAN_IN):
            target = tmp / f"top{level}_{k}.csv"
            _merge_best(files[k:k + pipeline.MERGE_FAN_IN], target, top, with_rank=False)
            merged.append(target)
        files, level = merged, level + 1
    partial = tmp / "report.csv"
    with open(partial, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerow(COLUMNS)
    _merge_best(files, partial, top, with_rank=True, q_values=bh_q_table(p_counts) if p_counts else None)
    with open(partial, "a", newline="", encoding="utf-8") as dst, open(rejects_file, encoding="utf-8") as rej:
        shutil.copyfileobj(rej, dst)
    replace_output(partial, out)


def _merge_best(files: list[Path], out: Path, top: int, with_rank: bool,
                q_values: dict[str, str] | None = None) -> None:
    handles = [open(f, newline="", encoding="utf-8") for f in files]
    try:
        merged = heapq.merge(*(csv.reader(h) for h in handles), key=lambda row: -float(row[0]))
        with open(out, "a" if with_rank else "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            for rank, row in enumerate(itertools.islice(merged, top), start=1):
                if with_rank:
                    row[Q_VALUE] = (q_values or {}).get(row[P_VALUE], "")
                writer.writerow([str(rank)] + [safe_cell(c) for c in row[1:]] if with_rank else row)
    finally:
        for h in handles:
            h.close()


def keep_top(report: str | Path, top: int) -> int:
    """Cut a ranked report to its ``top`` best rows and every rejected row, in place; rows kept."""
    kept = 0
    with open(report, newline="", encoding="utf-8") as src, \
            atomic_output(report, "w", newline="", encoding="utf-8") as dst:
        reader, writer = csv.reader(src), csv.writer(dst)
        writer.writerow(next(reader))
        for row in reader:
            if row[STATUS] != "ok":
                writer.writerow(row)
            elif kept < top:
                writer.writerow(row)
                kept += 1
    return kept


# ---------------------------------------------------------------------------- the command
def run_command(args) -> int:
    """``glocalkd screen ... --scheduler ...``: the cluster run with a progress bar and a summary line."""
    import sys

    from tqdm import tqdm

    with tqdm(unit="mol", file=sys.stderr, disable=None) as bar:
        summary = screen_on_cluster(args.model, args.data, args.output, args.scheduler, chunk_size=args.chunk_size,
                                    smiles_column=args.smiles_column, id_column=args.id_column,
                                    top_k=args.top_nodes, batch_graphs=args.batch_graphs, precision=args.precision,
                                    device=args.device, top=getattr(args, "top", None),
                                    scratch=getattr(args, "scratch", None),
                                    on_progress=lambda read, scored: bar.update(scored - bar.n))
    if summary.stopped:
        print(f"stopped: the report holds the {summary.rows:,} rows of the chunks that finished", file=sys.stderr)
    kept = f" ({min(args.top, summary.scored):,} best kept)" if getattr(args, "top", None) else ""
    print(f"{summary.rows:,} rows: {summary.scored:,} scored{kept}, {summary.rejected:,} rejected, in "
          f"{summary.seconds:.1f} s ({summary.molecules_per_second:,.0f} molecules/s); ranked report written to "
          f"{summary.report}", file=sys.stderr)
    return 130 if summary.stopped else 0  # the exit status, as the single-machine screen's: 130 when stopped


def single_library(libraries: Sequence[str]) -> str:
    """The one library file the single-machine ``screen`` reads (several shards need --scheduler)."""
    if len(libraries) != 1 or (not Path(libraries[0]).exists() and glob.has_magic(libraries[0])):
        raise GLocalKDError("several library files (or a glob pattern) need --scheduler, e.g. --scheduler local:2; "
                            "or screen each and merge the reports with 'glocalkd merge-reports'")
    return libraries[0]
