"""``glocalkd score``: score a file with a saved model and write the ranked report."""
from __future__ import annotations

import argparse
import sys

from core.cli.options import (add_standardise_option, apply_model_standardising, add_data_options, add_extra_column_options, add_fdr_option, add_threads_option, check_fdr, load_graphs,
                              non_negative, report_flagged)


def add_parser(sub) -> None:
    """Add ``score``: score a file with a saved model and write the ranked report.

    Args:
        sub: the ``glocalkd`` parser's subparsers (``add_subparsers``).
    """
    s = sub.add_parser("score", help="score graphs and write the ranked CSV report")
    s.add_argument("model", help="model file written by 'glocalkd train'")
    s.add_argument("data")
    s.add_argument("-o", "--output", required=True, help="report CSV to write")
    s.add_argument("--top-nodes", type=non_negative, default=5, help="nodes listed per graph in top_nodes")
    s.add_argument("--device", default="auto")
    add_fdr_option(s)
    add_standardise_option(s, training=False)
    add_extra_column_options(s)
    add_threads_option(s)
    add_data_options(s)


def run(args: argparse.Namespace) -> int:
    """Score a data file with a saved model, write the ranked report and say what ``--fdr`` flags.

    A molecule file (SMILES list, table, SDF) goes through the streaming pipeline, as
    ``screen`` (one scoring path for molecule files); TU collections are scored in memory.

    Args:
        args: the parsed command line.

    Returns:
        The exit status: 0, or 130 when a stop signal ended a streamed run.

    Raises:
        GLocalKDError: --fdr is not a rate, or the model or data cannot be read.
    """
    from core.detectors.model_file import load_detector
    from core.io.load import is_molecule_list

    from core.screening.pipeline import molecule_schema

    check_fdr(args)
    model = load_detector(args.model, device=args.device)
    apply_model_standardising(args, model)
    if args.view_scores:
        from core.screening.pipeline import report_views

        report_views(model)  # refused before any work
    schema = molecule_schema(model)
    if is_molecule_list(args.data) and (schema is None or schema.mode == "atom"):
        from core.cli.screen import screen_file

        return screen_file(model, args)
    from tqdm import tqdm

    from core.io.report import write_report

    graphs = load_graphs(args)
    with tqdm(total=len(graphs), unit="graph", file=sys.stderr, disable=None) as bar:
        scores = model.score(graphs, on_progress=lambda done, total: bar.update(done - bar.n))
    p_values = model.p_values(scores.score) if model.is_calibrated else None
    rows = write_report(args.output, graphs, scores, top_k=args.top_nodes, p_values=p_values,
                        properties=args.properties, alerts=args.alerts,
                        view_scores=model.view_scores(graphs, scores) if args.view_scores else None,
                        model=model.fingerprint())
    print(f"{len(graphs)} graphs scored, {len(graphs.rejects)} rejected; {rows} rows written to "
          f"{args.output}", file=sys.stderr)
    if args.fdr is not None and p_values is not None:
        from core.data.pvalues import benjamini_hochberg

        report_flagged(int((benjamini_hochberg(p_values) <= args.fdr).sum()), args.fdr, len(graphs),
                       len(model.calibration_scores_))
    else:
        report_flagged(None, args.fdr, len(graphs))
    return 0
