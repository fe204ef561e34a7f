"""Featurization cost per molecule beside RDKit's own parse-and-sanitize cost, in one process.

    python -m benchmarks.featurize_bench [--rows 10000] [--repeats 3]

Reads the first ``rows`` MOSES test SMILES, then times (best of ``repeats``, process CPU time):
``parse`` (core.data.chem.parse_smiles: RDKit parse + sanitize), ``featurize`` (the screening
featurizer, core.data.atom_batch.featurize_molecules, on the parsed molecules and their SMILES),
``featurize_one_by_one`` (mol_arrays, molecule by molecule, as training does) and
``featurize_chunk`` (the worker's whole job: parse, featurize, pack). Prints one JSON line; µs
per molecule.
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import time
from pathlib import Path

MOSES = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "moses" / "test.csv.gz"


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--library", type=Path, default=MOSES)
    args = parser.parse_args()
    from core.data.atom_batch import featurize_molecules
    from core.data.chem import mol_arrays, parse_smiles
    from core.io.molecules import SourceRow
    from core.screening.pipeline import featurize_chunk

    with gzip.open(args.library, "rt") as fh:
        next(fh)
        smiles = [line.strip().split(",")[0] for line in itertools.islice(fh, args.rows)]
    parsed = [(m, s.strip()) for s in smiles for m in [parse_smiles(s)[0]] if m is not None]
    mols, texts = [m for m, _ in parsed], [t for _, t in parsed]
    rows = [SourceRow(k + 2, str(k), "", s, None) for k, s in enumerate(smiles)]
    n = len(smiles)
    parse = _best(lambda: [parse_smiles(s) for s in smiles], args.repeats)
    feat = _best(lambda: featurize_molecules(mols, texts), args.repeats)
    one_by_one = _best(lambda: [mol_arrays(m) for m in mols], args.repeats)
    chunk = _best(lambda: featurize_chunk(rows), args.repeats)
    print(json.dumps({"rows": n, "parse_us": round(parse / n * 1e6, 1), "featurize_us": round(feat / len(mols) * 1e6, 1),
                      "featurize_one_by_one_us": round(one_by_one / len(mols) * 1e6, 1),
                      "featurize_chunk_us": round(chunk / n * 1e6, 1)}))


if __name__ == "__main__":
    main()
