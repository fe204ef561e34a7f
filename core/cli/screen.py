"""``glocalkd screen``: score a large library in bounded memory, streamed, with parsing workers."""
from __future__ import annotations

import argparse
import sys

from core.cli.options import (add_cluster_options, add_data_options, add_device_option, add_extra_column_options,
                              add_fdr_option, add_resume_option, add_standardise_option, add_threads_option,
                              apply_model_standardising, check_fdr, check_fdr_model, data_columns, non_negative,
                              positive_count, rejects_listed, report_flagged)
from core.errors import ParameterError
from core.wording import counted


def add_parser(sub) -> None:
    """Add ``screen``: score a large library in bounded memory, here or on a cluster.

    Args:
        sub: the ``glocalkd`` parser's subparsers (``add_subparsers``).
    """
    s = sub.add_parser("screen", help="score a large SMILES library in bounded memory (streamed, parallel parsing)")
    s.add_argument("model", help="model file trained on molecules")
    s.add_argument("data", nargs="+", help="SMILES list (.smi) or table (.csv/.tsv/.tab), optionally gzipped; "
                   "with --scheduler, several files or glob patterns (shards)")
    s.add_argument("-o", "--output", required=True, help="ranked report CSV to write")
    s.add_argument("--chunk-size", type=int, default=20000, help="molecules per chunk")
    s.add_argument("--workers", type=positive_count, help="parsing processes on this machine (default: one per CPU "
                   "core; with --scheduler, local:N or the cluster's own workers)")
    s.add_argument("--top-nodes", type=non_negative, default=5)
    add_device_option(s)
    s.add_argument("--batch-graphs", type=int, default=256,
                   help="molecules per forward pass (CPU: 256 keeps tensors in cache; a GPU wants 4096 or more)")
    s.add_argument("--precision", choices=("float32", "bfloat16"), default="float32",
                   help="bfloat16: dense products in bfloat16, faster on CPUs with AMX/AVX-512 BF16 and on GPUs; "
                        "the ranking agrees closely with float32 (docs/scaling.md)")
    add_resume_option(s)
    add_fdr_option(s)
    add_standardise_option(s, training=False)
    add_threads_option(s)
    add_cluster_options(s)
    add_extra_column_options(s)
    add_data_options(s)


def run(args: argparse.Namespace) -> int:
    """Screen the library: the pipeline on this machine, or with ``--scheduler`` on a Dask cluster.

    Both give the same report, messages and exit statuses; a stop signal while the model loads
    or the cluster starts stops the run too.

    Args:
        args: the parsed command line.

    Returns:
        The exit status: 0, or 130 when a stop signal ended the run.

    Raises:
        GLocalKDError: --fdr is not a rate, several libraries without --scheduler, or as
            :func:`core.screening.pipeline.screen`.
    """
    check_fdr(args)  # SIGTERM while the model loads or a cluster starts: 130 too (core.cli.main, every command)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    if args.scheduler and args.workers is not None:  # it was silently not used
        raise ParameterError("{workers} sets the parsing processes of a run on this machine; with {scheduler}, the "
                             "cluster's workers do the parsing (local:N starts N of them)", "workers", "scheduler")
    if args.scheduler:
        from core.detectors.model_file import load_detector
        from core.screening.cluster import screen_on_cluster

        if args.fdr is not None:  # before the cluster starts: the workers read the model themselves
            check_fdr_model(args, load_detector(args.model, device="cpu"))

        return _screen_and_report(args, lambda progress: screen_on_cluster(
            args.model, args.data, args.output, args.scheduler, chunk_size=args.chunk_size,
            **data_columns(args), top_k=args.top_nodes, batch_graphs=args.batch_graphs, precision=args.precision,
            device=args.device, top=args.top,
            scratch=args.scratch, on_progress=progress, properties=args.properties, alerts=args.alerts,
            standardise=args.standardise, view_scores=args.view_scores, resume=args.resume))
    from core.detectors.model_file import load_detector
    from core.screening.cluster import single_library

    args.data = single_library(args.data)
    model = load_detector(args.model, device=args.device)
    check_fdr_model(args, model)
    apply_model_standardising(args, model)
    return screen_file(model, args, chunk_size=args.chunk_size, workers=args.workers,
                       batch_graphs=args.batch_graphs, precision=args.precision, top=args.top, scratch=args.scratch,
                       resume=args.resume)


def screen_file(model, args: argparse.Namespace, **options) -> int:
    """Run the streaming pipeline on ``args.data`` (``score`` and ``screen`` alike) and report on stderr.

    Args:
        model: the loaded detector.
        args: the parsed command line (data, output, columns, ``top_nodes``, ``fdr``).
        **options: more keyword arguments of :func:`core.screening.pipeline.screen` (chunk
            size, workers, batch size, precision, top).

    Returns:
        The exit status: 130 when Ctrl+C, SIGTERM or SIGHUP stopped the run (the report then
        holds every row scored), else 0.
    """
    from core.screening.pipeline import screen

    return _screen_and_report(args, lambda progress: screen(
        model, args.data, args.output, **data_columns(args), top_k=args.top_nodes, on_progress=progress,
        properties=args.properties, alerts=args.alerts, view_scores=args.view_scores, **options))


def _screen_and_report(args: argparse.Namespace, run_screen) -> int:
    """Call ``run_screen(on_progress)`` under a progress bar, then report the run on stderr; the
    exit status (130 when a stop signal ended the run)."""
    from core.cli.progress import Progress

    with Progress(unit="mol") as bar:
        summary = run_screen(bar.update)
    return report_screen(args, summary)


def report_screen(args: argparse.Namespace, summary) -> int:
    """Say on stderr what a streamed run did (``score`` and ``screen`` alike): its rejects, counts,
    rate and what ``--fdr`` flags.

    Args:
        args: the parsed command line (``fdr``, and ``top`` for ``screen``).
        summary: the run's :class:`core.screening.pipeline.ScreenSummary`.

    Returns:
        The exit status: 130 when a stop signal ended the run, else 0.
    """
    if summary.rejected:
        print(f"{counted(summary.rejected, 'row')} rejected"
              + rejects_listed(list(summary.first_rejects), summary.rejected), file=sys.stderr)
    top = getattr(args, "top", None)
    kept = f" ({min(top, summary.scored):,} best kept)" if top else ""
    resumed = "" if summary.resumed_after is None else \
        f" (resumed after line {summary.resumed_after:,}: {counted(summary.rows - summary.resumed_rows, 'row')} read now)"
    print(f"{counted(summary.rows, 'row')}: {summary.scored:,} scored{kept}, {summary.rejected:,} rejected{resumed}, "
          f"in {summary.seconds:.1f} s ({summary.molecules_per_second:,.0f} molecules/s)", file=sys.stderr)
    if not summary.written:
        print(f"glocalkd: interrupted before any row was scored; {summary.report} left as it was", file=sys.stderr)
        return 130
    where = f"ranked report written to {summary.report}"
    if summary.stopped:
        held = f"the best {min(top, summary.scored):,} of the rows" if top else "every row"
        one_file = isinstance(args.data, str) or len(args.data) == 1  # a run of shards is not resumed
        again = f" ('glocalkd {getattr(args, 'command', 'screen')}' with the same arguments and --resume continues " \
            "it)" if getattr(args, "resume", None) is not None and one_file else ""
        print(f"glocalkd: interrupted after line {summary.last_line:,}: the {where} holds {held} read up to "
              f"there{again}", file=sys.stderr)
        return 130 if summary.interrupted else 0
    print(where, file=sys.stderr)
    report_flagged(summary.flagged_at(args.fdr) if args.fdr is not None else None, args.fdr, summary.scored,
                   summary.calibration, kept=min(top, summary.scored) if top else None)
    return 0
