"""The consensus's screening rate against GLocalKD's, on one machine, in one run.

Trains GLocalKD alone and the consensus (the default detector) on the first ``--train-rows``
molecules of a library, then screens the next ``--rows`` rows with each, alternating
``--runs`` times, and prints JSON: each run's wall seconds, CPU seconds of the scoring process
and of the parsing workers, and molecules/s, the median rates and their ratio. With
``--device cuda`` both models train and score on the GPU. Each run also gives the seconds the
scoring process waited for parsed chunks (``scorer_waited_seconds``). With ``--whole-chunks`` each detector
also screens with every chunk parsed whole by one worker (``<name>-whole``), as before idle
workers got parts of chunks, in the same alternation.

    python -m benchmarks.consensus_rate LIBRARY [--rows 50000] [--device cpu|cuda|auto]
        [--threads N] [--workers N] [--runs 2] [--epochs 5] [--whole-chunks] [--out FILE]

Imports only the library (``core``), torch, RDKit, numpy, scipy and scikit-learn.
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its finished children (the workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _split(library: Path, train_rows: int, rows: int, folder: Path) -> tuple[Path, Path]:
    """The library's first ``train_rows`` rows as the training file and the next ``rows`` as the screened one."""
    opener = gzip.open if str(library).endswith(".gz") else open
    train, screened = folder / "train.smi", folder / "library.smi"
    with opener(library, "rt") as src:
        header = next(src)
        head = header if header.strip().lower() != "smiles" else ""
        for path, count in ((train, train_rows), (screened, rows)):
            with open(path, "w") as dst:
                dst.write(head)
                dst.writelines(itertools.islice(src, count))
    return train, screened


def main(argv: list[str] | None = None) -> dict:
    """Train both detectors, screen with each in turn and print the rates as JSON.

    Args:
        argv: the command line (None: ``sys.argv``).

    Returns:
        The printed results.
    """
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("library", type=Path, help="a SMILES file or table, gzipped or not (MOSES's train.csv.gz)")
    p.add_argument("--rows", type=int, default=50_000, help="rows screened")
    p.add_argument("--train-rows", type=int, default=2_000, help="rows trained on (before the screened ones)")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda")
    p.add_argument("--threads", type=int, default=0, help="torch's threads (0: torch's default)")
    p.add_argument("--workers", type=int, default=None, help="parsing workers (default: one per core)")
    p.add_argument("--runs", type=int, default=2, help="screens per detector, alternated")
    p.add_argument("--epochs", type=int, default=5, help="GLocalKD's training epochs (speed does not depend on them)")
    p.add_argument("--batch-graphs", type=int, default=256, help="molecules per forward pass")
    p.add_argument("--chunk-size", type=int, default=20_000, help="rows per chunk")
    p.add_argument("--whole-chunks", action="store_true",
                   help="also screen with each chunk parsed whole by one worker (<name>-whole)")
    p.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = p.parse_args(argv)

    from core import wait_passively

    wait_passively()  # as the glocalkd command does, before torch loads: OpenMP's threads wait asleep
    import torch

    from core import TrainSpec, load, screen, train_model
    from core.screening.executors import LocalExecutor

    if args.threads:
        torch.set_num_threads(args.threads)
    results: dict = {"library": str(args.library), "rows": args.rows, "train_rows": args.train_rows,
                     "device": args.device, "cuda": torch.cuda.is_available(), "threads": torch.get_num_threads(),
                     "workers": args.workers, "cores": len(os.sched_getaffinity(0)), "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        train, library = _split(args.library, args.train_rows, args.rows, tmp)
        graphs = load(train)
        models = {}
        for name, detector in (("glocalkd", "glocalkd"), ("consensus", None)):
            start = time.perf_counter()
            models[name] = train_model(graphs, TrainSpec(detector=detector, params={"epochs": args.epochs},
                                                         device=args.device)).model
            results[f"train_seconds_{name}"] = time.perf_counter() - start
        arms = [(name, model, None) for name, model in models.items()]
        if args.whole_chunks:  # a part larger than any chunk: each chunk parsed whole
            arms += [(f"{name}-whole", model, args.chunk_size + 1) for name, model in models.items()]
        for run in range(args.runs):
            for name, model, min_part in arms:
                cpu_before = _cpu_seconds()
                start = time.perf_counter()
                executor = LocalExecutor(model, args.workers, min_part)
                summary = screen(model, library, tmp / f"{name}.csv", batch_graphs=args.batch_graphs,
                                 chunk_size=args.chunk_size, executor=executor)
                seconds = time.perf_counter() - start
                main_cpu, workers_cpu = (a - b for a, b in zip(_cpu_seconds(), cpu_before))
                results["runs"].setdefault(name, []).append({
                    "run": run, "seconds": round(seconds, 3), "molecules_per_second": round(summary.rows / seconds, 1),
                    "cpu_seconds_main": round(main_cpu, 3), "cpu_seconds_workers": round(workers_cpu, 3),
                    "cpu_us_per_molecule": round((main_cpu + workers_cpu) / summary.rows * 1e6, 1),
                    "scorer_waited_seconds": round(executor.waited, 3),
                    "scored": summary.scored, "rejected": summary.rejected})
                print(json.dumps({name: results["runs"][name][-1]}), file=sys.stderr, flush=True)
    rate = {n: statistics.median(r["molecules_per_second"] for r in runs) for n, runs in results["runs"].items()}
    cpu = {n: statistics.median(r["cpu_us_per_molecule"] for r in runs) for n, runs in results["runs"].items()}
    results.update({"molecules_per_second": rate, "cpu_us_per_molecule": cpu,
                    "ratio_by_wall": round(rate["consensus"] / rate["glocalkd"], 3),
                    "ratio_by_cpu": round(cpu["glocalkd"] / cpu["consensus"], 3)})
    if args.whole_chunks:
        results.update({"ratio_by_wall_whole": round(rate["consensus-whole"] / rate["glocalkd-whole"], 3),
                        "ratio_by_cpu_whole": round(cpu["glocalkd-whole"] / cpu["consensus-whole"], 3)})
    text = json.dumps(results, indent=1)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return results


if __name__ == "__main__":
    main()
