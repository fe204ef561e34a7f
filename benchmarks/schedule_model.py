"""A model of screening's schedule: which rule for cutting chunks into parts keeps the scorer busy.

Plays the local pipeline's schedule in simulated time, with the product's own rules: the chunk
sizes of :func:`core.screening.pipeline.chunks`, one chunk in flight per parsing worker
(:meth:`LocalExecutor.room`), each chunk cut into :func:`core.screening.executors.part_count`
parts that a FIFO pool of workers parses, and the scorer taking the chunks in order once all
their parts are parsed. The workers and the scorer share the cores equally when they outnumber
them. A molecule costs ``--worker-us`` of a worker's CPU and ``--scorer-us`` of the scorer's:
measured figures go in (``benchmarks.consensus_rate`` records both as CPU seconds), rates come out.

It is a model, not a measurement: it leaves out memory bandwidth, pickling and the GPU's own
queue. Fed the H100 run's CPU figures (16 cores; GLocalKD's workers 250 us a molecule, the
consensus's 520, the scorer 110) it gives 7,501 and 5,609 molecules/s with whole chunks against
the 7,882-8,237 and 5,895-6,465 measured there, and fed this 2-core machine's (220 / 310 / 290 us)
3,259 and 3,027/s against 3,404 and 3,077 measured (the ratios 0.75 and 0.93 against 0.77 and
0.90). ``--table`` prints both cost profiles on 2 to 32 cores, with whole chunks, a part per
worker, and the product's rule.

    python -m benchmarks.schedule_model --table
    python -m benchmarks.schedule_model --cores 16 --rows 100000 --worker-us 520 --scorer-us 110
"""
from __future__ import annotations

import argparse
import json
from collections import deque

from core.screening.executors import MIN_PART, part_count
from core.screening.pipeline import chunks

RULES = {
    "whole": lambda rows, workers: 1,
    "part per worker": lambda rows, workers: max(1, min(workers, rows // MIN_PART)),
    "product": lambda rows, workers: part_count(rows, workers),
}
# (worker us, scorer us) a molecule, GLocalKD then the consensus, from benchmarks.consensus_rate's CPU seconds
PROFILES = {
    "H100 host (GPU scorer)": ((250e-6, 110e-6), (520e-6, 110e-6)),
    "2-core CPU (CPU scorer)": ((220e-6, 290e-6), (310e-6, 290e-6)),
}


def simulate(rows: int, cores: int, workers: int, worker_s: float, scorer_s: float, rule: str = "product",
             chunk_size: int = 20_000, step: float | None = None) -> dict:
    """Play one screen's schedule.

    Args:
        rows: rows screened.
        cores: CPU cores the workers and the scorer share.
        workers: parsing workers.
        worker_s: a worker's CPU seconds a molecule (parsing, featurizing, the views it scores).
        scorer_s: the scorer's CPU seconds a molecule.
        rule: how chunks are cut (a key of ``RULES``).
        chunk_size: the largest chunk.
        step: the simulated clock's step in seconds (None: about 10,000 steps a run).

    Returns:
        ``seconds``, ``molecules_per_second``, ``scorer_waited_seconds`` and ``tasks``.
    """
    sizes = [len(c) for c in chunks(iter(range(rows)), chunk_size)]
    step = step or max(1e-4, rows * max(worker_s / workers, scorer_s) / 10_000)
    cut = RULES[rule]
    todo, queue, running, in_flight, parts_left = deque(sizes), deque(), [], deque(), {}
    scoring, clock, waited, tasks, number = None, 0.0, 0.0, 0, 0
    while todo or in_flight or scoring is not None:
        if scoring is None:
            while todo and len(in_flight) < workers:  # one chunk in flight per worker (LocalExecutor.room)
                size = todo.popleft()
                count = cut(size, workers)
                bounds = [size * k // count for k in range(count)] + [size]
                queue.extend([number, (b - a) * worker_s] for a, b in zip(bounds, bounds[1:]))
                in_flight.append((number, size))
                parts_left[number] = count
                tasks += count
                number += 1
            if in_flight and parts_left[in_flight[0][0]] == 0:  # the oldest chunk is parsed: score it
                scoring = in_flight.popleft()[1] * scorer_s
        while queue and len(running) < workers:
            running.append(queue.popleft())
        busy = len(running) + (scoring is not None)
        share = min(1.0, cores / busy)
        if scoring is None:
            waited += step
        else:
            scoring -= share * step
            scoring = scoring if scoring > 0 else None
        for task in running:
            task[1] -= share * step
        for task in [t for t in running if t[1] <= 0]:
            running.remove(task)
            parts_left[task[0]] -= 1
        clock += step
    return {"seconds": round(clock, 2), "molecules_per_second": round(rows / clock), "scorer_waited_seconds":
            round(waited, 2), "tasks": tasks}


def table(rows: int) -> list[dict]:
    """Each cost profile on 2 to 32 cores, under each rule: both detectors' rates and their ratio."""
    out = []
    for profile, ((gw, gs), (cw, cs)) in PROFILES.items():
        for cores in (2, 4, 8, 16, 32):
            for rule in RULES:
                g = simulate(rows, cores, cores, gw, gs, rule)
                c = simulate(rows, cores, cores, cw, cs, rule)
                out.append({"profile": profile, "cores": cores, "rule": rule, "glocalkd": g["molecules_per_second"],
                            "consensus": c["molecules_per_second"],
                            "ratio": round(c["molecules_per_second"] / g["molecules_per_second"], 2)})
    return out


def main(argv: list[str] | None = None) -> dict | list:
    """Print the model's figures as JSON (``--table``: the table of ``table``)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=100_000, help="rows screened")
    p.add_argument("--cores", type=int, default=16, help="CPU cores")
    p.add_argument("--workers", type=int, help="parsing workers (default: one per core)")
    p.add_argument("--worker-us", type=float, default=520.0, help="a worker's CPU microseconds a molecule")
    p.add_argument("--scorer-us", type=float, default=110.0, help="the scorer's CPU microseconds a molecule")
    p.add_argument("--chunk-size", type=int, default=20_000, help="the largest chunk, in rows")
    p.add_argument("--table", action="store_true", help="both cost profiles on 2-32 cores under each rule")
    args = p.parse_args(argv)
    if args.table:
        result: dict | list = table(args.rows)
    else:
        result = {rule: simulate(args.rows, args.cores, args.workers or args.cores, args.worker_us * 1e-6,
                                 args.scorer_us * 1e-6, rule, args.chunk_size) for rule in RULES}
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
