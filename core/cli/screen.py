"""``glocalkd screen``: score a large library in bounded memory, streamed, with parsing workers."""
from __future__ import annotations

import argparse
import sys

from core.cli.options import (add_cluster_options, add_fdr_option, add_threads_option, check_fdr, non_negative,
                              report_flagged)
from core.errors import one_line


def add_parser(sub) -> None:
    s = sub.add_parser("screen", help="score a large SMILES library in bounded memory (streamed, parallel parsing)")
    s.add_argument("model", help="model file trained on molecules")
    s.add_argument("data", nargs="+", help="SMILES list (.smi) or table (.csv/.tsv/.tab), optionally gzipped; "
                   "with --scheduler, several files or glob patterns (shards)")
    s.add_argument("-o", "--output", required=True, help="ranked report CSV to write")
    s.add_argument("--chunk-size", type=int, default=20000, help="molecules per chunk")
    s.add_argument("--workers", type=int, help="parsing processes (default: one per CPU core)")
    s.add_argument("--top-nodes", type=non_negative, default=5)
    s.add_argument("--device", default="auto", help="auto (CUDA when torch sees a GPU), cpu or cuda")
    s.add_argument("--batch-graphs", type=int, default=256,
                   help="molecules per forward pass (CPU: 256 keeps tensors in cache; a GPU wants 4096 or more)")
    s.add_argument("--precision", choices=("float32", "bfloat16"), default="float32",
                   help="bfloat16: dense products in bfloat16, faster on CPUs with AMX/AVX-512 BF16 and on GPUs; "
                        "the ranking agrees closely with float32 (docs/scaling.md)")
    add_fdr_option(s)
    add_threads_option(s)
    add_cluster_options(s)
    s.add_argument("--smiles-column")
    s.add_argument("--id-column")


def run(args: argparse.Namespace) -> int:
    from core.detectors.model_file import load_detector

    from core.screening.cluster import keep_top, run_command, single_library

    check_fdr(args)
    if args.scheduler:
        return run_command(args)
    args.data = single_library(args.data)
    model = load_detector(args.model, device=args.device)
    status = screen_file(model, args, chunk_size=args.chunk_size, workers=args.workers,
                         batch_graphs=args.batch_graphs, precision=args.precision)
    if args.top and status == 0:
        keep_top(args.output, args.top)
    return status


def screen_file(model, args: argparse.Namespace, **options) -> int:
    """Run the streaming pipeline on ``args.data`` (``score`` and ``screen`` alike), report on
    stderr, and return the exit status: 130 when Ctrl+C, SIGTERM or SIGHUP stopped the run (the
    report then holds every row scored)."""
    from core.cli.progress import Progress
    from core.screening.pipeline import screen

    with Progress(unit="mol") as bar:
        summary = screen(model, args.data, args.output, smiles_column=args.smiles_column,
                         id_column=args.id_column, label_column=getattr(args, "label_column", None),
                         top_k=args.top_nodes, on_progress=bar.update, **options)
    if summary.rejected:
        text = f"{summary.rejected:,} rows rejected"
        for line, reason in summary.first_rejects:
            text += f"\n  line {line}: {one_line(reason)}"
        if summary.rejected > len(summary.first_rejects):
            text += f"\n  ... and {summary.rejected - len(summary.first_rejects):,} more (all listed in the report)"
        print(text, file=sys.stderr)
    print(f"{summary.rows:,} rows: {summary.scored:,} scored, {summary.rejected:,} rejected, in "
          f"{summary.seconds:.1f} s ({summary.molecules_per_second:,.0f} molecules/s)", file=sys.stderr)
    if not summary.written:
        print(f"glocalkd: interrupted before any row was scored; {summary.report} left as it was", file=sys.stderr)
        return 130
    where = f"ranked report written to {summary.report}"
    if summary.stopped:
        print(f"glocalkd: interrupted after line {summary.last_line:,}: the {where} holds every row read up to "
              "there", file=sys.stderr)
        return 130 if summary.interrupted else 0
    print(where, file=sys.stderr)
    calibration = len(model.calibration_scores_) if getattr(model, "is_calibrated", False) else 0
    report_flagged(summary.flagged_at(args.fdr) if args.fdr is not None else None, args.fdr, summary.scored,
                   calibration)
    return 0
