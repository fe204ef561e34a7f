"""Featurization cost per molecule beside RDKit's own parse-and-sanitize cost, in one process.

    python -m benchmarks.featurize_bench [--rows 10000] [--repeats 3]

Reads the first ``rows`` MOSES test SMILES, then times (process CPU time, ``repeats`` times):
``parse`` (core.data.chem.parse_smiles: RDKit parse + sanitize), ``featurize`` (the screening
featurizer, core.data.atom_batch.featurize_molecules, on the parsed molecules and their SMILES),
``featurize_one_by_one`` (mol_arrays, molecule by molecule, as training does) and
``featurize_chunk`` (the worker's whole job: parse, featurize, pack). Prints one JSON line; µs
per molecule: the best of the repeats, and their median under ``median``.
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import statistics
import time
from pathlib import Path

MOSES = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "moses" / "test.csv.gz"


def _times(fn, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--library", type=Path, default=MOSES)
    args = parser.parse_args()
    from core.data.atom_batch import featurize_molecules
    from core.data.chem import mol_arrays, parse_smiles
    from core.io.molecules import SourceRow
    from core.screening.featurize import featurize_chunk

    with gzip.open(args.library, "rt") as fh:
        next(fh)
        smiles = [line.strip().split(",")[0] for line in itertools.islice(fh, args.rows)]
    parsed = [(m, s.strip()) for s in smiles for m in [parse_smiles(s)[0]] if m is not None]
    mols, texts = [m for m, _ in parsed], [t for _, t in parsed]
    rows = [SourceRow(k + 2, str(k), "", s, None) for k, s in enumerate(smiles)]
    n = len(smiles)
    times = {"parse": (_times(lambda: [parse_smiles(s) for s in smiles], args.repeats), n),
             "featurize": (_times(lambda: featurize_molecules(mols, texts), args.repeats), len(mols)),
             "featurize_one_by_one": (_times(lambda: [mol_arrays(m) for m in mols], args.repeats), len(mols)),
             "featurize_chunk": (_times(lambda: featurize_chunk(rows), args.repeats), n)}
    us = {name: [t / count * 1e6 for t in ts] for name, (ts, count) in times.items()}
    print(json.dumps({"rows": n, **{f"{name}_us": round(min(v), 1) for name, v in us.items()},
                      "median": {f"{name}_us": round(statistics.median(v), 1) for name, v in us.items()}}))


if __name__ == "__main__":
    main()
