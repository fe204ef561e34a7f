"""``glocalkd screen``: score a large library in bounded memory, streamed, with parsing workers."""
from __future__ import annotations

import argparse
import sys

from core.cli.options import add_cluster_options, add_threads_option


def add_parser(sub) -> None:
    s = sub.add_parser("screen", help="score a large SMILES library in bounded memory (streamed, parallel parsing)")
    s.add_argument("model", help="model file trained on molecules")
    s.add_argument("data", nargs="+", help="SMILES list (.smi) or table (.csv/.tsv/.tab), optionally gzipped; "
                   "with --scheduler, several files or glob patterns (shards)")
    s.add_argument("-o", "--output", required=True, help="ranked report CSV to write")
    s.add_argument("--chunk-size", type=int, default=20000, help="molecules per chunk")
    s.add_argument("--workers", type=int, help="parsing processes (default: one per CPU core)")
    s.add_argument("--top-nodes", type=int, default=5)
    s.add_argument("--device", default="auto", help="auto (CUDA when torch sees a GPU), cpu or cuda")
    s.add_argument("--batch-graphs", type=int, default=256,
                   help="molecules per forward pass (CPU: 256 keeps tensors in cache; a GPU wants 4096 or more)")
    s.add_argument("--precision", choices=("float32", "bfloat16"), default="float32",
                   help="bfloat16: dense products in bfloat16, faster on CPUs with AMX/AVX-512 BF16 and on GPUs; "
                        "the ranking agrees closely with float32 (docs/scaling.md)")
    add_threads_option(s)
    add_cluster_options(s)
    s.add_argument("--smiles-column")
    s.add_argument("--id-column")


def run(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from core.detectors.glocalkd import GLocalKD
    from core.screening.cluster import keep_top, run_command, single_library
    from core.screening.pipeline import screen

    if args.scheduler:
        return run_command(args)
    args.data = single_library(args.data)

    model = GLocalKD.load(args.model, device=args.device)
    with tqdm(unit="mol", file=sys.stderr, disable=None) as bar:
        summary = screen(model, args.data, args.output, chunk_size=args.chunk_size, workers=args.workers,
                         smiles_column=args.smiles_column, id_column=args.id_column, top_k=args.top_nodes,
                         batch_graphs=args.batch_graphs, precision=args.precision,
                         on_progress=lambda read, scored: bar.update(read - bar.n))
    if args.top:
        keep_top(args.output, args.top)
    if summary.stopped:
        print(f"stopped after line {summary.last_line:,}: the report holds every row read up to there",
              file=sys.stderr)
    print(f"{summary.rows:,} rows: {summary.scored:,} scored, {summary.rejected:,} rejected, in "
          f"{summary.seconds:.1f} s ({summary.molecules_per_second:,.0f} molecules/s); ranked report written to "
          f"{summary.report}", file=sys.stderr)
