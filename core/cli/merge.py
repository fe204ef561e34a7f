"""``glocalkd merge-reports``: merge the ranked reports of library shards into one."""
from __future__ import annotations

import argparse
import sys
from core.wording import counted


def add_parser(sub) -> None:
    """Add ``merge-reports``: merge shard reports into one (``-o`` required).

    Args:
        sub: the ``glocalkd`` parser's subparsers (``add_subparsers``).
    """
    m = sub.add_parser("merge-reports", help="merge the ranked reports of library shards into one ranked report")
    m.add_argument("reports", nargs="+", help="ranked reports written by 'glocalkd screen' with one model file")
    m.add_argument("-o", "--output", required=True, help="merged ranked report CSV to write")


def run(args: argparse.Namespace) -> None:
    """Merge the reports (:func:`core.screening.merge.merge_reports`) and say how many rows.

    Args:
        args: the parsed command line.
    """
    from core.screening.merge import cut_summary, merge_reports

    rows = merge_reports(args.reports, args.output)
    cut = cut_summary(args.output)  # a shard kept only its best rows (--top): the merge keeps as many
    kept = (f" (the best {cut['kept']:,} of {cut['scored']:,} scored rows: a shard kept only its best "
            f"{cut['kept']:,}, so the merge keeps no more; the others count in its q-values)") if cut else ""
    print(f"{counted(rows, 'row')} from {counted(len(args.reports), 'report')} merged into {args.output}{kept}",
          file=sys.stderr)
