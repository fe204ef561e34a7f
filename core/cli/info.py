"""``glocalkd info``: what a data file holds (graphs, nodes, labels, rejected rows)."""
from __future__ import annotations

import argparse

from core.cli.options import add_data_options, load_graphs, summary


def add_parser(sub) -> None:
    """Add ``info``: what a data file holds.

    Args:
        sub: the ``glocalkd`` parser's subparsers (``add_subparsers``).
    """
    i = sub.add_parser("info", help="summarise a data file: graphs, nodes, labels, rejected rows")
    i.add_argument("data")
    add_data_options(i)


def run(args: argparse.Namespace) -> None:
    """Print what the data file holds: graphs, nodes, labels, the first rejected rows.

    Args:
        args: the parsed command line.
    """
    print(summary(load_graphs(args, quiet=True)))
