"""``glocalkd score``: score a file with a saved model and write the ranked report."""
from __future__ import annotations

import argparse
import sys

from core.wording import counted
from core.cli.options import (add_data_options, add_device_option, add_extra_column_options, add_fdr_option,
                              add_resume_option, add_standardise_option, add_threads_option,
                              apply_model_standardising, check_fdr, check_fdr_model, data_columns, non_negative,
                              report_flagged, summary)
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
    add_device_option(s)
    add_fdr_option(s)
    add_standardise_option(s, training=False)
    add_extra_column_options(s)
    add_resume_option(s)
    add_threads_option(s)
    add_data_options(s)


def run(args: argparse.Namespace) -> int:
    """Score a data file with a saved model, write the ranked report and say what ``--fdr`` flags.

    One entry with the app's *Score another file* (:func:`core.screening.score_file.score_file`):
    a molecule file streams through the screening pipeline, as ``screen``; a TU collection is
    scored in memory.

    Args:
        args: the parsed command line.

    Returns:
        The exit status: 0, or 130 when a stop signal ended a streamed run.

    Raises:
        GLocalKDError: --fdr is not a rate, or the model or data cannot be read.
    """
    from core.cli.progress import Progress
    from core.cli.screen import report_screen
    from core.detectors.model_file import load_detector
    from core.screening.score_file import is_streamed, score_file

    check_fdr(args)
    model = load_detector(args.model, device=args.device)
    check_fdr_model(args, model)
    apply_model_standardising(args, model)
    with Progress(unit="mol" if is_streamed(model, args.data) else "graph") as bar:
        scored = score_file(model, args.data, args.output, **data_columns(args), top_k=args.top_nodes,
                            properties=args.properties, alerts=args.alerts, view_scores=args.view_scores,
                            on_progress=bar.update, **({"resume": True} if args.resume else {}))
    if scored.summary is not None:
        return report_screen(args, scored.summary)
    graphs, p_values = scored.graphs, scored.p_values
    print(summary(graphs, more="all listed in the report"), file=sys.stderr)
    rows = counted(len(graphs) + len(graphs.rejects), 'row')
    print(f"{counted(len(graphs), 'graph')} scored, {len(graphs.rejects)} rejected; {rows} "
          f"written to {args.output}", file=sys.stderr)
    asked = [option for option, on in (("--properties", args.properties), ("--alerts", args.alerts)) if on]
    if asked and not graphs.is_molecular:  # graphs that are not molecules: no structures to compute them on
        print(f"{' and '.join(asked)}: not added, {args.data} holds graphs without molecular structures",
              file=sys.stderr)
    if args.fdr is not None and p_values is not None:
        from core.data.pvalues import report_q_values

        report_flagged(int((report_q_values(p_values) <= args.fdr).sum()), args.fdr, len(graphs),
                       len(model.calibration_scores_))
    else:
        report_flagged(None, args.fdr, len(graphs))
    return 0
