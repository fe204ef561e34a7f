"""Speed and memory benchmark (not a test): each figure printed beside its arithmetic bound.

    python benchmarks/bench.py [--data ../shared/datasets] [--out benchmarks/out/results.json]
                               [--parts matmul,train,tox21,reddit,screen,report]
                               [--screen-rows 10000,100000,0]   (0: the whole library)

The bound of a GCN workload is its floating-point operations divided by this machine's
own dense matmul throughput (measured first). Where nodes that look alike are grouped
(molecules with discrete features, :mod:`core.nn.row_groups`), training runs fewer products than
that bound counts, so the products actually run get a bound of their own too. Writes
everything as JSON.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import first_fold_normals, gcn_flops_per_node, matmul_gflops, peak_rss_mb


def grouped_shares(model, graphs) -> list[float]:
    """Rows per node at each level of the grouped network (:mod:`core.nn.row_groups`) over one
    pass of training-sized runs: level k holds the rows after k propagations (level 0 the
    feature rows); all 1.0 when the model does not group on these graphs."""
    from core.data.packed import PackedGraphs, max_batch_nodes

    levels = model.num_layers
    packed = PackedGraphs(model.schema_.apply(graphs))
    if not model._grouping_pays_off(packed, model.device_):
        return [1.0] * levels
    rows, nodes = np.zeros(levels), 0
    for batch in packed.batches(model.batch_size, model.device_, max_nodes=max_batch_nodes(model.device_)):
        plan = model._grouping(batch, batch.adj)
        n = batch.x.shape[0]
        nodes += n
        rows += np.array(plan.groups, dtype=float) if plan is not None else n
    return (rows / max(nodes, 1)).tolist()


def grouped_flops_per_node(in_dim: int, shares: list[float], hidden: int = 512, out: int = 256,
                           layers: int = 3) -> float:
    """Dense FLOPs per node that one forward pass actually runs on grouped rows: a layer that
    widens propagates first and multiplies the rows of the next level, one that does not
    multiplies the rows of its own level (``shares[k]``: rows per node at level k)."""
    dims = [in_dim] + [hidden] * (layers - 1) + [out]
    level_share = list(shares) + [1.0]  # after the last propagation: one row per node
    return float(sum(2 * a * b * level_share[i + 1 if a < b else i]
                     for i, (a, b) in enumerate(zip(dims[:-1], dims[1:]))))


def train_epoch_seconds(graphs, epochs: int = 5, paired_matmul: bool = True, device: str = "cpu",
                        **params) -> tuple[float, list[float], list[float], object]:
    """Median seconds per training epoch over ``epochs`` epochs after a warm-up one, each epoch's
    seconds, and (``paired_matmul``) the machine's matmul GFLOP/s measured right after each
    epoch: on a shared host the throughput drifts within minutes, so each epoch is set against
    the rate measured beside it rather than one measured before the run."""
    from core import GLocalKD

    times: list[float] = []
    rates: list[float] = []

    def on_epoch(info) -> None:
        times.append(info.seconds)
        if paired_matmul:
            rates.append(matmul_gflops(repeats=5))  # outside the epoch's own timing

    model = GLocalKD(epochs=epochs + 1, device=device, seed=0, **params)
    model.fit(graphs, on_epoch=on_epoch)
    return float(np.median(times[1:])), times[1:], rates[1:], model  # the first epoch warms caches up


def bench_train(data: Path, gflops: float, dataset: str, epochs: int) -> dict:
    """Seconds per training epoch on the harness's first fold of ``dataset`` against the arithmetic
    bound, both from the run-start matmul rate and paired with a matmul after each epoch."""
    normal = first_fold_normals(data, dataset)
    start = time.perf_counter()
    seconds, times, rates, model = train_epoch_seconds(normal, epochs=epochs)
    nodes = normal.num_nodes
    flops = nodes * gcn_flops_per_node(model.schema_.dim) * 3  # predictor forward + backward (2x)
    bound_cached = flops / (gflops * 1e9)
    bound_recomputed = bound_cached * 4 / 3  # + the target's forward
    paired = [t / (flops / (r * 1e9)) for t, r in zip(times, rates)]
    shares = grouped_shares(model, normal)
    flops_run = nodes * grouped_flops_per_node(model.schema_.dim, shares) * 3
    return {"dataset": dataset, "grouped_rows_per_node": shares,
            "bound_seconds_products_run": flops_run / (gflops * 1e9),
            "ratio_to_bound_products_run": seconds / (flops_run / (gflops * 1e9)), "train_graphs": len(normal), "train_nodes": nodes, "features": model.schema_.dim,
            "seconds_per_epoch": seconds, "epoch_seconds": times, "bound_seconds_target_cached": bound_cached,
            "bound_seconds_target_recomputed": bound_recomputed, "ratio_to_bound": seconds / bound_cached,
            "matmul_gflops_after_each_epoch": rates,
            "ratio_to_bound_paired": float(np.median(paired)) if paired else None,
            "wall_seconds": time.perf_counter() - start, "peak_rss_mb": peak_rss_mb(),
            "gpu": gpu_epoch(normal, epochs)}


def gpu_epoch(graphs, epochs: int) -> dict:
    """Seconds per training epoch on the GPU (median after a warm-up epoch, as on the CPU), or
    ``{"gpu": "no GPU"}`` where torch sees none."""
    if not torch.cuda.is_available():
        return {"gpu": "no GPU"}
    seconds, times, _, _ = train_epoch_seconds(graphs, epochs=epochs, paired_matmul=False, device="cuda")
    return {"gpu": torch.cuda.get_device_name(0), "seconds_per_epoch": seconds, "epoch_seconds": times}


def _gpu_note(r: dict) -> str:
    gpu = r["gpu"]
    if "seconds_per_epoch" not in gpu:
        return "; GPU: no GPU (torch sees none)"
    return (f"; GPU ({gpu['gpu']}): {gpu['seconds_per_epoch']:.3f} s/epoch, "
            f"{r['seconds_per_epoch'] / gpu['seconds_per_epoch']:.1f}x the CPU's speed")


def _grouped_note(r: dict) -> str:
    shares = r["grouped_rows_per_node"]
    if min(shares) >= 1.0:
        return "; no nodes grouped"
    return (f"; nodes grouped: rows per node after 0..{len(shares) - 1} propagations "
            + ", ".join(f"{v:.1%}" for v in shares) + f"; bound for the products actually run "
            f"{r['bound_seconds_products_run']:.3f} s -> {r['ratio_to_bound_products_run']:.2f}x")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "results.json"),
                   help="where to write the JSON (benchmarks/out/ is ignored by git)")
    p.add_argument("--parts", default="matmul,train,tox21,reddit,screen")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--screen-rows", default="100000",
                   help="comma-separated library sizes to screen (0: the whole file); one row each")
    p.add_argument("--keep-report", default="", help="keep the largest screening report here (the 'report' part "
                   "opens it)")
    p.add_argument("--screen-file", default="moses/train.csv.gz")
    p.add_argument("--screen-precision", default="float32",
                   help="comma-separated precisions to screen with (float32, bfloat16); one row each")
    args = p.parse_args()
    parts = set(args.parts.split(","))
    data = Path(args.data)
    from core import retain_freed_memory
    from core.runtime.machine import describe_cpu
    from core.runtime.device import bfloat16_is_fast

    allocator_tuned = retain_freed_memory()  # as the glocalkd command does
    out: dict = {"machine": {"cpus": torch.get_num_threads(), "torch": torch.__version__,
                             "python": platform.python_version(), **describe_cpu()},
                 "allocator_tuned": allocator_tuned,
                 "command": "python " + " ".join(sys.argv),
                 "started_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    gflops = matmul_gflops()
    out["matmul_gflops"] = gflops
    machine = out["machine"]
    print(f"dense fp32 matmul: {gflops:.1f} GFLOP/s on {torch.get_num_threads()} threads "
          f"({machine['cpu']}; {', '.join(machine.get('vector_flags', [])) or 'no AVX2'})", flush=True)
    precisions = args.screen_precision.split(",")
    if "bfloat16" in precisions and not bfloat16_is_fast("cpu"):  # a generic loop: ~50x slower than fp32
        precisions = [p for p in precisions if p != "bfloat16"] or ["float32"]
        out["bfloat16_skipped"] = "this CPU has no bfloat16 instructions (AVX-512 or AMX)"
        print(f"bfloat16 screening skipped: {out['bfloat16_skipped']}", flush=True)
    if "bfloat16" in precisions:
        out["matmul_gflops_bfloat16"] = matmul_gflops(dtype=torch.bfloat16)
        print(f"dense bf16 matmul: {out['matmul_gflops_bfloat16']:.1f} GFLOP/s", flush=True)
    training = (("train", "train_aids", "AIDS", args.epochs), ("tox21", "train_tox21", "Tox21_HSE_training", args.epochs),
                ("reddit", "train_reddit", "REDDIT-BINARY", max(1, args.epochs // 2)))
    for part, key, dataset, epochs in training:
        if part in parts:
            r = bench_train(data, gflops, dataset, epochs)
            out[key] = r
            print(f"{dataset} training: {r['seconds_per_epoch']:.3f} s/epoch ({r['train_nodes']:,} nodes); bound "
                  f"{r['bound_seconds_target_cached']:.3f} s -> {r['ratio_to_bound']:.2f}x the bound; against the "
                  f"matmul rate measured after each epoch: {r['ratio_to_bound_paired']:.2f}x; peak RSS "
                  f"{r['peak_rss_mb']:.0f} MB" + _grouped_note(r) + _gpu_note(r), flush=True)
    if "screen" in parts:
        from benchmarks.screening_bench import bench_screen_fresh

        sizes = [int(v) for v in args.screen_rows.split(",")]
        largest = max(sizes, key=lambda v: float("inf") if v == 0 else v)
        out["screen"] = []
        for rows in sizes:
            for precision in precisions:
                keep = Path(args.keep_report) if args.keep_report and rows == largest else None
                r = bench_screen_fresh(data / args.screen_file, rows, gflops, keep_report=keep, precision=precision)
                out["screen"].append(r)
                print(f"screening {r['rows']:,} SMILES ({precision}): {r['seconds']:.1f} s, "
                      f"{r['molecules_per_second']:.0f} molecules/s end to end; fp32 bound "
                      f"{r['bound_molecules_per_second']:.0f}/s -> {r['fraction_of_bound']:.2f} of it; peak memory "
                      f"{r['peak_memory_mb_pss']:.0f} MB (PSS, all processes; main {r['peak_main_mb_pss']:.0f}, "
                      f"workers {r['peak_workers_mb_pss']:.0f}); {r['scored']:,} scored + {r['rejected']:,} "
                      f"rejected = {r['report_rows']:,} report rows; CPU per molecule {r['cpu_us_per_molecule_main']:.0f} "
                      f"µs scoring + {r['cpu_us_per_molecule_workers']:.0f} µs parsing -> at most "
                      f"{r['cpu_limited_molecules_per_second']:.0f}/s on {r['cores']} cores of our own", flush=True)
    if "report" in parts and args.keep_report:
        from benchmarks.report_bench import bench_report_open

        r = bench_report_open(Path(args.keep_report))
        out["report_open"] = r
        print(f"opening the {r['rows']:,}-row report in the app's report window: read {r['read_seconds']:.1f} s, "
              f"window {r['window_seconds']:.1f} s, sort by id {r['sort_seconds']:.2f} s, text filter "
              f"{r['filter_seconds']:.1f} s; peak RSS {r['peak_rss_mb']:.0f} MB", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
