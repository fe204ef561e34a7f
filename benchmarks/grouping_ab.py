"""Training epochs with and without grouping nodes that look alike, interleaved (not a test).

    python benchmarks/grouping_ab.py Tox21_HSE_training [--repeats 4] [--data ../shared/datasets]

Trains on the normal graphs of the benchmark's first fold of a TU collection
(``benchmarks/bench.py``'s split), then alternates epochs run on groups (:mod:`core.nn.row_groups`)
and node by node in one process, so both see the same host; prints the best and median epoch of
each. On a shared, noisy host that is a fairer comparison than two separate runs.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    p.add_argument("--repeats", type=int, default=4)
    args = p.parse_args()

    from benchmarks.common import first_fold_normals
    from core import GLocalKD, retain_freed_memory
    from core.nn.optim import adam
    from core.data.packed import PackedGraphs, step_in_runs
    from core.nn.row_groups import GroupedPropagation

    retain_freed_memory()
    normal = first_fold_normals(Path(args.data), args.dataset)
    model = GLocalKD(epochs=1, device="cpu", seed=0).fit(normal)
    packed = PackedGraphs(model.schema_.apply(normal))
    model._attach_targets(packed, torch.device("cpu"))
    optimizer = adam(model.predictor_.parameters(), lr=model.lr)
    shuffle = torch.Generator().manual_seed(0)
    model.predictor_.train()
    plans = {"grouped": lambda batch, adj: GroupedPropagation.build(batch.x, adj, model.num_layers),
             "node by node": lambda batch, adj: None}

    def epoch(mode: str) -> float:
        model._grouping = plans[mode]  # the model's own choice, overridden for the comparison
        start = time.perf_counter()
        for ids in packed.batch_ids(model.batch_size, shuffle):
            step_in_runs(packed, ids, optimizer, lambda batch: model._graph_losses(batch, True), "cpu")
        return time.perf_counter() - start

    for mode in plans:  # warm-up
        epoch(mode)
    times: dict[str, list[float]] = {mode: [] for mode in plans}
    for _ in range(args.repeats):
        for mode in plans:
            times[mode].append(epoch(mode))
    print(f"{args.dataset}: {len(normal)} graphs, {packed.num_nodes:,} nodes, the model groups: {model.grouped_}")
    for mode, ts in times.items():
        print(f"  {mode}: best {min(ts):.3f} s, median {np.median(ts):.3f} s per epoch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
