"""Where screening's chunks are parsed and scored: the executor contract and the local executor.

:class:`LocalExecutor` parses chunks in worker processes (a pool that notices a dead worker)
and scores them in this process; a Dask cluster is the other executor
(:class:`core.screening.cluster.DaskExecutor`). :func:`core.screening.pipeline.screen` submits
chunks while there is room and takes their results in order.
"""
from __future__ import annotations

import multiprocessing as mp
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Protocol

from core.io.molecules import SourceRow
from core.runtime.threads import usable_cpus
from core.screening.featurize import featurize_in_worker, join_parts, lost_chunk, start_parsing_worker, worker_views
from core.screening.scoring import ChunkJob, ChunkResult, ChunkSettings, finish_chunk, scoring_threads

MIN_PART = 1024  # rows: a chunk is parsed in parts of at least this many (see part_count)


def part_count(rows: int, workers: int, min_part: int = MIN_PART) -> int:
    """How many parts a chunk is parsed in: one per parsing worker but one, of ``min_part`` rows or more.

    The scorer takes the chunks in order, so a chunk parsed by one worker keeps it waiting for
    that worker: on many cores, with a short run's few large chunks, most workers idle meanwhile
    (100,000 rows make 11 chunks). Parts parsed side by side end that wait. With two workers the
    chunk stays whole: the read-ahead is counted in chunks (one in flight per worker), so parts
    that end sooner leave the workers idle while the scorer works, and a part per worker cost
    5-15 % on two cores; one worker is left to the scoring process, which needs its core.
    ``python -m benchmarks.schedule_model`` plays this rule against whole chunks.

    Args:
        rows: the chunk's rows.
        workers: the parsing workers.
        min_part: the fewest rows a part has.

    Returns:
        The number of parts, at least 1.
    """
    return max(1, min(workers - 1, rows // max(1, min_part)))


class ChunkExecutor(Protocol):
    """Where chunks are parsed and scored: local worker processes (:class:`LocalExecutor`) or a
    Dask cluster (:class:`core.screening.cluster.DaskExecutor`). :func:`screen` submits chunks
    while there is room and takes their results in the order submitted."""

    def start(self, settings: ChunkSettings) -> None:
        """Get ready for a run (workers, threads) before the first chunk.

        Args:
            settings: how every chunk is turned into its sorted chunk file.
        """

    def room(self) -> bool:
        """Whether another chunk may be submitted now (the read-ahead is bounded).

        Returns:
            True when :meth:`submit` may be called.
        """

    def submit(self, job: ChunkJob) -> None:
        """Start parsing and scoring a chunk.

        Args:
            job: the chunk.
        """

    def busy(self) -> bool:
        """Whether chunks are submitted and their results not taken yet.

        Returns:
            True while :meth:`next_result` has a result to give.
        """

    def next_result(self) -> ChunkResult:
        """Wait for the result of the oldest chunk not taken, in the order submitted.

        Returns:
            That chunk's result.
        """

    def close(self, stopped: bool) -> None:
        """End the run: give the workers back, cancel what is left.

        Args:
            stopped: the run was stopped (chunks in flight are dropped).
        """


class ParsingPool:
    """The parsing workers: a process pool that notices a worker that died (killed, out of memory,
    a crash in RDKit) instead of waiting forever for its chunk, and can be started again."""

    def __init__(self, workers: int, views: dict | None = None) -> None:
        # fork where there is one (Linux, like torch's DataLoader workers): no re-import of the caller's
        # main module, which breaks under `python -` and in frozen apps; the workers touch no torch state
        self.context = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self.workers = workers
        self.views = views or {}  # the views the workers score (forked: not copied; spawned: pickled once each)
        self.executor = self._start()

    def _start(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.workers, mp_context=self.context, initializer=start_parsing_worker,
                                   initargs=(self.views,))

    def submit(self, rows: list[SourceRow], extras: tuple[str, ...] = ()) -> Future:
        """Parse and featurize rows in a worker (:func:`~core.screening.featurize.featurize_in_worker`).

        Args:
            rows: the rows (a chunk or a part of one).
            extras: the report's optional columns the worker makes.

        Returns:
            The future of the featurized rows.
        """
        return self.call(featurize_in_worker, rows, extras)

    def call(self, function: Callable, *args) -> Future:
        """Run ``function(*args)`` in a worker, starting the pool again if a worker died while idle.

        Args:
            function: a module-level function (it is sent to the worker by name).
            *args: its arguments.

        Returns:
            Its future; it fails with ``BrokenProcessPool`` if a worker dies while it runs.
        """
        try:
            future = self.executor.submit(function, *args)
        except BrokenProcessPool:  # a worker died while idle; chunks in flight fail and are redone
            self.restart()
            future = self.executor.submit(function, *args)
        self._close_our_result_writer()
        return future

    def _close_our_result_writer(self) -> None:
        """Close this process's copy of the pipe the workers send results on (once they are
        forked, all at the first submit). Otherwise a worker killed while it writes a result leaves
        the pool's reader thread waiting forever for the rest of the message: this process still
        holds a writer, so the pipe never ends. Without it, the read fails and the pool breaks, as
        it should. Only with fork: other start methods start workers later, from that pipe."""
        if self.context.get_start_method() != "fork":
            return
        queue = getattr(self.executor, "_result_queue", None)  # no public handle on the pipe
        writer = getattr(queue, "_writer", None)
        if writer is not None and not writer.closed and getattr(self.executor, "_processes", None):
            writer.close()

    def restart(self) -> None:
        """Kill the workers and start as many new ones (after one died: the pool is broken)."""
        self.close(kill=True)
        self.executor = self._start()

    def close(self, kill: bool = False) -> None:
        """Shut the pool down.

        Args:
            kill: end the workers now rather than after their current chunk.
        """
        if kill:
            processes = list((getattr(self.executor, "_processes", None) or {}).values())  # no public handle
            for process in processes:
                if process.is_alive():
                    process.kill()
        self.executor.shutdown(wait=True, cancel_futures=True)


@dataclass
class _Pending:
    job: ChunkJob
    futures: list[Future]  # the chunk's parts (see join_parts)
    starts: list[int]  # each part's first row's place in the chunk
    alone: bool  # submitted with no other chunk in flight: a worker dying now died on this chunk


WORKER_DIED = "its parsing worker died on it (killed, out of memory, or a crash in RDKit)"


class LocalExecutor:
    """Chunks parsed and featurized by ``workers`` local processes (default: one per CPU core)
    and scored in this process, one chunk in flight per worker, each chunk cut into
    :func:`part_count` parts of at least ``min_part`` rows (None: ``MIN_PART``). A worker that
    dies loses no row: the chunks it held are parsed again one at a time, halved until the row
    that kills a worker is found and rejected."""

    def __init__(self, model, workers: int | None = None, min_part: int | None = None) -> None:
        self.model = model
        self.workers = max(1, workers if workers is not None else usable_cpus())
        self.min_part = min_part  # None: MIN_PART (see submit)
        self.pool: ParsingPool | None = None

    def start(self, settings: ChunkSettings) -> None:
        """Start the worker processes and note torch's thread count (restored by :meth:`close`).

        Args:
            settings: how every chunk is turned into its sorted chunk file.
        """
        import torch

        self.settings = settings
        self.torch_threads = torch.get_num_threads()
        self.pending: deque[_Pending] = deque()
        self.again: deque[ChunkJob] = deque()  # chunks a dead worker held, to parse one at a time
        self.waited = 0.0  # seconds this process waited for parsed chunks (the benchmarks report it)
        self.pool = ParsingPool(self.workers, worker_views(self.model, every=bool(settings.views)))

    def room(self) -> bool:
        """Whether a worker is free for another chunk.

        One chunk is in flight per worker, none more while a dead worker's chunks are parsed
        again one at a time.

        Returns:
            True when :meth:`submit` may be called.
        """
        # bounded read-ahead: one chunk in flight per worker. Each parsed chunk waits in this
        # process until scored; a chunk more per worker kept about 60 MB more here on full MOSES
        # (peak PSS 1,245 against 1,182 MB) at the same rate (6,855 and 6,871/s)
        return not self.again and len(self.pending) < self.workers and not (self.pending and self.pending[-1].alone)

    def submit(self, job: ChunkJob, alone: bool = False) -> None:
        """Send a chunk to the parsing workers, in :func:`part_count` parts (joined by :func:`join_parts`).

        Args:
            job: the chunk.
            alone: no other chunk is in flight (a dead worker's chunks, parsed again one at a time).
        """
        count = part_count(len(job.rows), self.workers, self.min_part or MIN_PART)
        starts = [len(job.rows) * k // count for k in range(count)]
        futures = [self.pool.submit(job.rows[start:end], self.settings.extras)
                   for start, end in zip(starts, starts[1:] + [len(job.rows)])]
        self.pending.append(_Pending(job, futures, starts, alone))

    def busy(self) -> bool:
        """Whether chunks are in flight or waiting to be parsed again.

        Returns:
            True while :meth:`next_result` has a result to give.
        """
        return bool(self.pending or self.again)

    def _scoring_threads(self) -> int:  # the cores the parsing workers leave free (see scoring_threads)
        busy = sum(not f.done() for p in self.pending for f in p.futures)
        return scoring_threads(self.torch_threads, min(self.workers, busy))

    def next_result(self) -> ChunkResult:
        """Take the oldest chunk's features and score it in this process.

        A chunk whose worker died or ran out of memory is parsed again alone, then halved until
        the row that kills a worker is found; that row is rejected (``WORKER_DIED``).

        Returns:
            The chunk's result (:func:`finish_chunk`).
        """
        while True:
            if self.again and not self.pending:  # a suspect chunk is parsed with nothing else in flight
                self.submit(self.again.popleft(), alone=True)
            item = self.pending.popleft()
            try:
                waiting = time.perf_counter()
                parts = [future.result() for future in item.futures]
                self.waited += time.perf_counter() - waiting
                chunk = join_parts(parts, item.starts)
            # a worker died, or ran out of memory (its ceiling: core.runtime.memory) outside the
            # per-row guard, e.g. featurizing a batch: every chunk in flight is lost with the pool
            except (BrokenProcessPool, MemoryError):
                lost = [item.job] + [p.job for p in self.pending]
                self.pending.clear()
                self.pool.restart()
                if not item.alone:  # parse them again, one at a time, to find the one that kills
                    self.again.extendleft(reversed(lost))
                    continue
                job = item.job
                if len(job.rows) > 1:  # this chunk killed its worker: halve it
                    half = len(job.rows) // 2
                    self.again.extendleft([ChunkJob(job.index, job.rows[half:], job.first + half, job.source),
                                           ChunkJob(job.index, job.rows[:half], job.first, job.source)])
                    continue
                chunk = lost_chunk(job.rows, WORKER_DIED)  # this row killed its worker
            return finish_chunk(self.model, item.job, chunk, self.settings, self._scoring_threads)

    def close(self, stopped: bool) -> None:
        """Shut the workers down and restore torch's thread count.

        Args:
            stopped: the run was stopped: the workers are killed rather than left to finish.
        """
        import torch

        if self.pool is not None:
            self.pool.close(kill=stopped or bool(self.pending))
        torch.set_num_threads(self.torch_threads)
