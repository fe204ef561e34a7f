"""Screening on a Dask cluster: ``glocalkd screen MODEL LIBRARY... -o REPORT --scheduler ...``.

The cluster is an executor of the single-machine pipeline (:func:`core.screening.pipeline.screen`),
not a second one: the same reading and chunking, the same checks of empty input, the same
report, end row, ``--top`` files, stops and exit statuses. Only where a chunk is parsed and
scored differs: here each chunk is a Dask task, a pure function of the model bytes and the
chunk's rows (:func:`screen_chunk_task`):

- the model file's bytes go to the scheduler once, in a worker plugin; every worker, including
  one that joins or restarts mid-run, gets them once and loads the model once, on its own
  device (``auto``: a worker that sees a GPU uses it);
- each task writes its sorted chunk file to the run's scratch folder, on storage every worker
  and the client share, under a name fixed by the chunk, through a temporary name and an atomic
  rename: a task run twice (its worker was killed, or was only slow) leaves one file, so no row
  is lost or duplicated;
- the client takes the results in input order and merges the chunk files, so the report is
  byte for byte the single-machine one.
"""
from __future__ import annotations

import glob
import shutil
import tempfile
import threading
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from core.errors import DataError, GLocalKDError, one_line
from core.screening import pipeline
from core.screening.pipeline import ChunkJob, ChunkResult, ChunkSettings, ScreenSummary, featurize_chunk

try:  # a plain base class when Dask is missing: the module still imports, --scheduler says what to install
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # pragma: no cover
    WorkerPlugin = object


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
                from core.runtime.files import atomic_output

                folder = Path(tempfile.mkdtemp(prefix="glocalkd-model-", dir=getattr(self, "_dir", None)))
                try:
                    path = folder / "model.pt"
                    with atomic_output(path) as fh:
                        fh.write(self.data)
                    self._model = load_detector(path, device=self.device)
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
            return self._model


def screen_chunk_task(plugin: str, job: ChunkJob, settings: ChunkSettings) -> ChunkResult:
    """One chunk on a worker: parse, featurize, score and write its sorted chunk file
    (:func:`core.screening.pipeline.finish_chunk`, as the local executor does)."""
    from distributed import get_worker

    if not Path(settings.scratch).is_dir():
        raise GLocalKDError(f"{settings.scratch}: no such folder on worker {get_worker().address}: the scratch "
                            "folder must be on storage that every worker and the client share (--scratch)")
    model = get_worker().plugins[plugin].model()
    _one_torch_thread()
    return pipeline.finish_chunk(model, job, featurize_chunk(job.rows, settings.standardise), settings)


def _one_torch_thread() -> None:
    """One torch thread per task thread, as Dask sets for the workers it spawns (``OMP_NUM_THREADS=1``);
    a forked local worker inherits the client's count. Set in the thread that scores (OpenMP's
    thread count is per thread)."""
    import torch

    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)


# ---------------------------------------------------------------------------- client side
class DaskExecutor:
    """Chunks run as tasks on a Dask cluster (``client``), at most ``in_flight`` submitted and not
    taken (default: twice the workers' threads, plus two), taken in the order submitted. A
    task's error ends the run as one line naming it; a worker that dies has its tasks run again
    elsewhere by Dask."""

    def __init__(self, client, plugin: str, in_flight: int | None = None) -> None:
        self.client, self.plugin, self.in_flight = client, plugin, in_flight
        self.pending: deque = deque()

    def start(self, settings: ChunkSettings) -> None:
        self.settings = settings
        self.limit = self.in_flight or 2 * max(1, sum(self.client.nthreads().values())) + 2
        self.run = uuid.uuid4().hex[:10]

    def room(self) -> bool:
        return len(self.pending) < self.limit

    def submit(self, job: ChunkJob) -> None:
        self.pending.append(self.client.submit(screen_chunk_task, self.plugin, job, self.settings,
                                               key=f"glocalkd-screen-{self.run}-{job.index:09d}", pure=False))

    def busy(self) -> bool:
        return bool(self.pending)

    def next_result(self) -> ChunkResult:
        from core.runtime.signals import stop_received

        try:
            while True:  # short waits: a SIGTERM whose KeyboardInterrupt was lost is seen at once
                try:
                    result = self.pending[0].result(timeout=0.5)
                    break
                except TimeoutError:
                    if stop_received():
                        raise KeyboardInterrupt from None
        except (GLocalKDError, KeyboardInterrupt):
            raise
        except Exception as exc:  # the worker's traceback stays on the worker: one line here
            raise GLocalKDError(f"a screening task failed on the cluster: {type(exc).__name__}: "
                                f"{one_line(str(exc))}") from None
        self.pending.popleft()
        return result

    def close(self, stopped: bool) -> None:
        if self.pending:
            try:
                self.client.cancel(list(self.pending))
            except Exception:  # a cluster going down with the interrupt: its tasks go with it
                pass
        self.pending.clear()


def screen_on_cluster(model_path: str | Path, libraries: Sequence[str | Path], report: str | Path, scheduler,
                      chunk_size: int = 20000, smiles_column: str | None = None, id_column: str | None = None,
                      top_k: int = 5, batch_graphs: int = 256, precision: str = "float32", device: str = "auto",
                      top: int | None = None, scratch: str | Path | None = None, in_flight: int | None = None,
                      on_progress: Callable[[int, int], None] | None = None,
                      should_stop: Callable[[], bool] | None = None,
                      label_column: str | None = None) -> ScreenSummary:
    """Screen ``libraries`` (paths or glob patterns of shards) with the model file ``model_path`` on
    the Dask cluster ``scheduler`` (``local:N``, ``tcp://HOST:PORT`` or a ``distributed.Client``):
    :func:`core.screening.pipeline.screen` with the cluster as its executor, so the report,
    the ``--top`` files, stops and errors are the single-machine ones.

    ``scratch`` (default: the report's folder) holds the chunk files and must be shared by every
    worker and this process. ``in_flight`` bounds the tasks submitted and not taken. ``device``
    is where the workers run the model. The other arguments are :func:`~core.screening.pipeline.screen`'s.
    """
    from core.detectors.model_file import load_detector
    from core.runtime.scheduler import connect
    from core.runtime.signals import stop_signals_interrupt

    if in_flight is not None and in_flight < 1:
        raise GLocalKDError(f"tasks in flight must be at least 1 (got {in_flight})")
    model_path = Path(model_path)
    files = library_files(libraries)
    model = load_detector(model_path, device="cpu")  # fails here, before any task, on a bad file
    data = model_path.read_bytes()
    plugin = f"glocalkd-model-{uuid.uuid4().hex[:10]}"
    with stop_signals_interrupt(), connect(scheduler) as client:  # a SIGTERM while the cluster starts: 130 too
        client.register_plugin(ModelPlugin(plugin, data, device), name=plugin)
        try:
            return pipeline.screen(model, files, report, chunk_size=chunk_size, smiles_column=smiles_column,
                                   id_column=id_column, top_k=top_k, batch_graphs=batch_graphs,
                                   on_progress=on_progress, should_stop=should_stop, precision=precision,
                                   label_column=label_column, top=top, scratch=scratch,
                                   executor=DaskExecutor(client, plugin, in_flight))
        finally:
            try:
                client.unregister_worker_plugin(plugin)
            except Exception:  # a closing cluster; the plugin goes with it
                pass


def single_library(libraries: Sequence[str]) -> str:
    """The one library file the single-machine ``screen`` reads (several shards need --scheduler)."""
    if len(libraries) != 1 or (not Path(libraries[0]).exists() and glob.has_magic(libraries[0])):
        raise GLocalKDError("several library files (or a glob pattern) need --scheduler, e.g. --scheduler local:2; "
                            "or screen each and merge the reports with 'glocalkd merge-reports'")
    return libraries[0]
