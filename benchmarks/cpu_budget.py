"""Screening's CPU budget per molecule, stage by stage, in one process (not a test).

    python -m benchmarks.cpu_budget [--rows 20000] [--library MOSES] [--threads 1]

Trains a paper-width GLocalKD for one epoch on 2,000 other molecules of the library (speed does
not depend on how well it is trained), then times each stage of the screening pipeline on the
first ``rows`` SMILES, as process CPU time (best of ``--repeats``), in microseconds per molecule:

- ``read``: reading the rows from the file (the scoring process);
- ``parse``: RDKit parse and sanitize (a worker);
- ``featurize``: the chunk featurizer (a worker);
- ``transfer``: pickling the featurized chunk and reading it back (what passes between them);
- ``score``: the GCN forward passes, with ``--threads`` torch threads (the scoring process);
- ``write``: the sorted chunk file (the scoring process);
- ``merge``: the ranked report, a k-way merge of ten sorted files (the scoring process).

The bound is the machine's cores divided by the sum: the rate screening could reach were every
stage perfectly overlapped on the cores. Prints one JSON line.
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import pickle
import tempfile
import time
from pathlib import Path

MOSES = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "moses"


def _best(fn, repeats: int):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--library", type=Path, default=MOSES / "test.csv.gz")
    parser.add_argument("--train", type=Path, default=MOSES / "train.csv.gz")
    args = parser.parse_args()
    import torch

    from core import GLocalKD, load
    from core.data.atom_batch import featurize_molecules
    from core.io.molecules import parse_row
    from core.screening import featurize, merge, pipeline, scoring

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        library, train = tmp / "library.csv", tmp / "train.csv"
        for src, dst, n in ((args.library, library, args.rows), (args.train, train, 2000)):
            with gzip.open(src, "rt") as fh, open(dst, "w") as out:
                out.write(next(fh))
                out.writelines(itertools.islice(fh, n))
        model = GLocalKD(epochs=1, device="cpu", seed=0).fit(load(train))
        n = args.rows
        t_read, rows = _best(lambda: list(pipeline.iter_smiles_rows(library)), args.repeats)
        t_parse, parsed = _best(lambda: [parse_row(r) for r in rows], args.repeats)
        mols, texts = [m for m, _, _ in parsed if m is not None], [t for m, t, _ in parsed if m is not None]
        t_feat, _ = _best(lambda: featurize_molecules(mols, texts), args.repeats)
        chunk = featurize.featurize_chunk(rows)
        t_transfer, _ = _best(lambda: pickle.loads(pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL)),
                              args.repeats)
        t_score, scored = _best(lambda: scoring.score_chunk(model, chunk, 256), args.repeats)
        sorted_file = tmp / "chunk.csv"
        t_write, _ = _best(lambda: scoring.write_sorted_chunk(sorted_file, chunk, scored, 5), args.repeats)
        # the ranked report from ten sorted files, as a run of ten chunks makes
        lines = sorted_file.read_text(encoding="utf-8").splitlines(True)
        files = []
        for k in range(10):
            files.append(tmp / f"part{k}.csv")
            files[-1].write_text("".join(lines[k::10]), encoding="utf-8")
        rejects, out = tmp / "rejects.csv", tmp / "report.csv"
        rejects.write_text("")
        t_merge, _ = _best(lambda: merge.write_ranked(files, rejects, out, tmp, 0, "model"), args.repeats)
    stages = {"read": t_read, "parse": t_parse, "featurize": t_feat, "transfer": t_transfer, "score": t_score,
              "write": t_write, "merge": t_merge}
    us = {k: round(v / n * 1e6, 1) for k, v in stages.items()}
    total = sum(stages.values()) / n
    cores = os.cpu_count() or 1
    print(json.dumps({"rows": n, "torch_threads": args.threads, "cpu_us_per_molecule": us,
                      "total_us": round(total * 1e6, 1), "cores": cores,
                      "bound_molecules_per_second": round(cores / total),
                      "nodes_per_molecule": round(float(chunk["counts"].mean()), 2),
                      "torch": torch.__version__, "load_average": os.getloadavg()}))


if __name__ == "__main__":
    main()
