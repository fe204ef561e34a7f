"""Evaluation on a Dask cluster: ``glocalkd evaluate ... --scheduler local:N|tcp://HOST:PORT``.

Each fold (``cv``) or seed run (``split``) is one task: :func:`core.evaluation.protocol.evaluate`
with ``only=[k]``, which depends on nothing but the settings and ``k`` (the fold's split and its
seeds are fixed by them). The client collects the one-fold results as they finish, passes the
partial result to ``on_fold`` (the JSON is rewritten after every fold, as today), and finally
calls ``evaluate`` with every fold as ``resume``: it checks the folds belong together and returns
the result an uninterrupted single-process run gives (same JSON; ``wall_seconds`` adds up the
folds' machine time, as merged ``--only`` runs do). This is the manual ``--only`` /
``--resume-from`` splitting done by the scheduler.
"""
from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

from core.evaluation.protocol import evaluate, fold_line
from core.evaluation.results import EvaluationResult, merge_results


def fold_task(data, k: int, settings: dict) -> EvaluationResult:
    """Run fold (or seed run) ``k`` alone, on a worker.

    Args:
        data: the data set (a path every worker can read, or a scattered GraphSet).
        k: the fold or seed-run number, counted from 1.
        settings: the other keyword arguments of :func:`evaluate`.

    Returns:
        A partial result holding that one fold.
    """
    return evaluate(data, only=[k], **settings)


def evaluate_on_cluster(scheduler, data, protocol: str = "cv", folds: int = 5, seeds=(0, 1, 2, 3, 4),
                        resume: EvaluationResult | list[EvaluationResult] | None = None, only=None,
                        on_progress: Callable[[str], None] | None = None, on_epoch: Callable | None = None,
                        on_fold: Callable[[EvaluationResult], None] | None = None,
                        should_stop: Callable[[], bool] | None = None, **settings) -> EvaluationResult:
    """Run :func:`evaluate` with its folds (or seed runs) as tasks on a Dask cluster.

    The result is the one a single-process run gives (``wall_seconds`` adds up the folds'
    machine time).

    Args:
        scheduler: ``local:N``, ``tcp://HOST:PORT`` or a ``distributed.Client``.
        data: the data set, a path every worker can read or a GraphSet (scattered to them).
        protocol: ``cv`` or ``split``, as :func:`evaluate`.
        folds: the number of cross-validation folds.
        seeds: the model seeds (``split`` runs one per seed).
        resume: earlier partial results of the same evaluation; their folds are not run again.
        only: the fold (or seed-run) numbers to run, from 1 (None: all).
        on_progress: called with a line of progress text.
        on_epoch: not called (epochs run on the workers); accepted for :func:`evaluate`'s signature.
        on_fold: sees the merged partial result after each fold that finishes.
        should_stop: polled; when it returns True the folds not finished are cancelled and the
            result holds the finished ones.
        **settings: the other keyword arguments of :func:`evaluate` (a ``test`` path must be
            readable by every worker).

    Returns:
        The evaluation result (incomplete when stopped or with ``only``).
    """
    from core.runtime.scheduler import connect

    say = on_progress or (lambda _msg: None)
    settings = dict(settings, protocol=protocol, folds=folds, seeds=list(seeds))
    earlier: list[EvaluationResult] = []
    if resume is not None:
        earlier = [resume] if isinstance(resume, EvaluationResult) else list(resume)
    # the first call checks the settings and loads the data here, and runs no fold (only=[])
    first = evaluate(data, resume=earlier or None, only=[], on_progress=say, **settings)
    n_runs = folds if protocol == "cv" else len(seeds)
    wanted = [k for k in range(1, n_runs + 1) if only is None or k in only]
    done = {f.fold for f in first.folds}
    todo = [k for k in wanted if k not in done]
    start = time.perf_counter()
    partials: list[EvaluationResult] = []
    stopped = False
    if todo:
        from distributed import wait

        with connect(scheduler) as client:
            run = uuid.uuid4().hex[:10]
            shipped = data if isinstance(data, (str, Path)) else client.scatter(data, broadcast=True)
            if not isinstance(settings.get("test"), (str, Path, type(None))):
                settings["test"] = client.scatter(settings["test"], broadcast=True)
            futures = {client.submit(fold_task, shipped, k, settings, key=f"glocalkd-fold-{run}-{k}",
                                     pure=False): k for k in todo}
            say(f"{len(todo)} {'folds' if protocol == 'cv' else 'seed runs'} submitted to {client.scheduler.address}")
            try:
                while futures:
                    if should_stop is not None and should_stop():
                        stopped = True
                        break
                    try:
                        finished = wait(list(futures), timeout=0.5, return_when="FIRST_COMPLETED").done
                    except TimeoutError:
                        continue
                    for fut in finished:
                        part = fut.result()
                        k = futures.pop(fut)
                        partials.append(part)
                        fr = part.folds[0]
                        say(f"{'fold' if protocol == 'cv' else 'seed run'} {k}/{n_runs} (model seed {fr.seed}): "
                            f"{fold_line(fr, settings.get('score', 'both'))}; train {fr.train_seconds:.1f} s, "
                            f"score {fr.score_seconds:.2f} s")
                        if on_fold is not None:
                            on_fold(merge_results(earlier + partials))
            except KeyboardInterrupt:
                stopped = True
            if futures:
                client.cancel(list(futures))
    if not partials:
        return first
    # every fold is in: this call runs none (only=[]), checks they belong together and sums up
    result = evaluate(data, resume=earlier + partials, only=[], **settings)
    say(f"{len(partials)} {'folds' if protocol == 'cv' else 'seed runs'} ran on the cluster in "
        f"{time.perf_counter() - start:.1f} s" + (f"; stopped with {len(result.folds)} of {n_runs} done"
                                                   if stopped else ""))
    return result
