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
import tempfile
import threading
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from core.errors import DataError, GLocalKDError, ParameterError, one_line
from core.runtime.scratch import make_scratch, remove_scratch
from core.screening import featurize, pipeline, scoring
from core.screening.featurize import featurize_chunk
from core.screening.pipeline import ScreenSummary
from core.screening.scoring import ChunkJob, ChunkResult, ChunkSettings

try:  # a plain base class when Dask is missing: the module still imports, --scheduler says what to install
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # pragma: no cover
    WorkerPlugin = object


def library_files(libraries: Sequence[str | Path]) -> list[Path]:
    """The shard files named on the command line.

    Args:
        libraries: paths, or glob patterns (a path that exists is taken as it is).

    Returns:
        The files, in the order given, each pattern's matches sorted.

    Raises:
        DataError: a path is not a file, or a pattern matches nothing.
        GLocalKDError: ``libraries`` is empty.
    """
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
        """Note the worker's local folder, where the model file is unpacked (Dask calls it).

        Args:
            worker: the Dask worker.
        """
        self._dir = getattr(worker, "local_directory", None) or tempfile.gettempdir()

    def teardown(self, worker) -> None:
        """Drop the loaded model (Dask calls it when the plugin goes).

        Args:
            worker: the Dask worker.
        """
        self._model = None

    def model(self):
        """The model, loaded from the bytes on first use (once per worker, thread-safe).

        Returns:
            The detector, on this plugin's device.
        """
        with self._lock:
            if self._model is None:
                from core.detectors.model_file import load_detector
                from core.runtime.files import atomic_output

                folder = make_scratch("glocalkd-model-", getattr(self, "_dir", None))
                try:
                    path = folder / "model.pt"
                    with atomic_output(path) as fh:
                        fh.write(self.data)
                    self._model = load_detector(path, device=self.device)
                finally:
                    remove_scratch(folder)
            return self._model


def screen_chunk_task(plugin: str, job: ChunkJob, settings: ChunkSettings) -> ChunkResult:
    """Run one chunk on a worker: parse, featurize, score and write its sorted chunk file.

    The same step as the local executor's (:func:`core.screening.scoring.finish_chunk`), with
    one torch thread.

    Args:
        plugin: the name of the worker plugin holding the model (:class:`ModelPlugin`).
        job: the chunk.
        settings: the run's chunk settings (its scratch folder must be on shared storage).

    Returns:
        The chunk's result.

    Raises:
        GLocalKDError: the scratch folder does not exist on this worker.
    """
    from distributed import get_worker

    if not Path(settings.scratch).is_dir():
        raise GLocalKDError(f"{settings.scratch}: no such folder on worker {get_worker().address}: the scratch "
                            "folder must be on storage that every worker and the client share (--scratch)")
    model = get_worker().plugins[plugin].model()
    _one_torch_thread()
    views = featurize.worker_views(model, every=bool(settings.views))
    return scoring.finish_chunk(model, job, featurize_chunk(job.rows, settings.extras, views), settings)


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
        """Fix the run's name (the tasks' keys) and how many tasks may be in flight.

        Args:
            settings: how every chunk is turned into its sorted chunk file.
        """
        self.settings = settings
        self.limit = self.in_flight or 2 * max(1, sum(self.client.nthreads().values())) + 2
        self.run = uuid.uuid4().hex[:10]

    def room(self) -> bool:
        """Whether fewer tasks than the limit are submitted and not taken.

        Returns:
            True when :meth:`submit` may be called.
        """
        return len(self.pending) < self.limit

    def submit(self, job: ChunkJob) -> None:
        """Submit a chunk as a task (:func:`screen_chunk_task`), its key fixed by the run and chunk.

        Args:
            job: the chunk.
        """
        self.pending.append(self.client.submit(screen_chunk_task, self.plugin, job, self.settings,
                                               key=f"glocalkd-screen-{self.run}-{job.index:09d}", pure=False))

    def busy(self) -> bool:
        """Whether tasks are submitted and not taken.

        Returns:
            True while :meth:`next_result` has a result to give.
        """
        return bool(self.pending)

    def next_result(self) -> ChunkResult:
        """Wait for the oldest task's result, watching for a stop signal every half second.

        Returns:
            The chunk's result.

        Raises:
            GLocalKDError: the task failed on the cluster (one line naming the error).
            KeyboardInterrupt: a stop signal arrived while waiting.
        """
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
        """Cancel the tasks not taken.

        Args:
            stopped: the run was stopped (the tasks are cancelled either way).
        """
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
                      label_column: str | None = None, properties: bool = False,
                      alerts: bool = False, standardise: bool = False, view_scores: bool = False,
                      resume: bool = False) -> ScreenSummary:
    """Screen a library's shards with a model file on a Dask cluster.

    :func:`core.screening.pipeline.screen` with the cluster as its executor, so the report,
    the ``--top`` files, stops and errors are the single-machine ones. The model file's bytes
    go to every worker once (:class:`ModelPlugin`).

    Args:
        model_path: the model file (loaded here first, so a bad file fails before any task).
        libraries: paths or glob patterns of the shards (:func:`library_files`).
        report: the ranked CSV report to write.
        scheduler: ``local:N``, ``tcp://HOST:PORT`` or a ``distributed.Client``.
        chunk_size: the largest chunk, in rows.
        smiles_column: a table's SMILES column (None: found by its common names).
        id_column: a table's id column, or an SDF data field.
        top_k: atoms listed per row.
        batch_graphs: molecules per forward pass.
        precision: ``float32`` or ``bfloat16``.
        device: where the workers run the model (``auto``: a worker that sees a GPU uses it).
        top: keep the ``top`` best rows (None: every row).
        scratch: the folder for the chunk files, shared by every worker and this process (None:
            the report's folder).
        in_flight: the most tasks submitted and not taken (None: twice the workers' threads, plus two).
        on_progress: called after each chunk with (rows read, rows scored).
        should_stop: polled between chunks; True stops the run.
        label_column: a table's label column, or an SDF data field.
        properties: add the chemist's properties to the report (computed by the workers).
        alerts: add the ``alerts`` column (computed by the workers).
        standardise: the user asked to standardise (``--standardise``): refused for a model
            trained on molecules as read (:func:`core.data.standardise.check_standardise_request`).
        view_scores: add each view's raw score (``view:`` columns; a consensus with Fisher's rule).
        resume: ``report`` is a stopped run's, of one library file: continue it
            (:func:`~core.screening.pipeline.screen`).

    Returns:
        The run's summary, as :func:`~core.screening.pipeline.screen` gives it.

    Raises:
        GLocalKDError: ``in_flight`` is below 1, a task failed, or as :func:`~core.screening.pipeline.screen`.
        DataError: a library or the model file cannot be read, or as
            :func:`~core.screening.pipeline.screen`.
    """
    from core.data.standardise import check_standardise_request
    from core.detectors.model_file import load_detector
    from core.runtime.scheduler import connect
    from core.runtime.signals import stop_signals_interrupt

    if in_flight is not None and in_flight < 1:
        raise ParameterError(f"{{in_flight}} (tasks in flight) must be at least 1, not {in_flight}", "in_flight")
    model_path = Path(model_path)
    files = library_files(libraries)
    model = load_detector(model_path, device="cpu")  # fails here, before any task, on a bad file
    check_standardise_request(standardise, model)  # the model decides; asking otherwise is refused, as on one machine
    if view_scores:
        featurize.report_views(model)  # refused before the cluster starts, as on one machine
    data = model_path.read_bytes()
    plugin = f"glocalkd-model-{uuid.uuid4().hex[:10]}"
    with stop_signals_interrupt(), connect(scheduler) as client:  # a SIGTERM while the cluster starts: 130 too
        client.register_plugin(ModelPlugin(plugin, data, device), name=plugin)
        try:
            return pipeline.screen(model, files, report, chunk_size=chunk_size, smiles_column=smiles_column,
                                   id_column=id_column, top_k=top_k, batch_graphs=batch_graphs,
                                   on_progress=on_progress, should_stop=should_stop, precision=precision,
                                   label_column=label_column, top=top, scratch=scratch, properties=properties,
                                   alerts=alerts, view_scores=view_scores, resume=resume,
                                   executor=DaskExecutor(client, plugin, in_flight))
        finally:
            try:
                client.unregister_worker_plugin(plugin)
            except Exception:  # a closing cluster; the plugin goes with it
                pass


def single_library(libraries: Sequence[str]) -> str:
    """The one library file the single-machine ``screen`` reads.

    Args:
        libraries: the library arguments of the command line.

    Returns:
        The only one.

    Raises:
        GLocalKDError: several files, or a glob pattern, were given (they need --scheduler).
    """
    if len(libraries) != 1 or (not Path(libraries[0]).exists() and glob.has_magic(libraries[0])):
        raise GLocalKDError("several library files (or a glob pattern) need --scheduler, e.g. --scheduler local:2; "
                            "or screen each and merge the reports with 'glocalkd merge-reports'")
    return libraries[0]
