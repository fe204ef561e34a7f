"""``glocalkd``: the command line over the core API. Each subcommand is a module of this package
with ``add_parser(subparsers)`` and ``run(args)``; this one assembles them and turns errors into
one-line messages and exit codes."""
from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

# Nothing here loads torch: it loads with the first command that needs it, so --help and
# --version answer at once.
from core import __version__
from core.cli import evaluate, explanations, info, merge, score, screen, train, weigh
from core.cli.options import OUTPUT_OPTIONS, check_outputs, error_text, set_threads
from core.errors import GLocalKDError
from core.runtime.allocator import retain_freed_memory
from core.runtime.signals import ignore_stop_signals, stop_signals_interrupt
from core.runtime.threads import wait_passively

COMMANDS = {"train": train, "score": score, "info": info, "evaluate": evaluate, "screen": screen,
            "merge-reports": merge, "evaluate-explanations": explanations, "weigh": weigh}


class _Parser(argparse.ArgumentParser):
    """An argparse parser that takes no abbreviated option: ``score --top 5`` was taken as
    ``--top-nodes 5`` and wrote every row. The subcommands' parsers are made of this class too
    (``add_subparsers`` makes them of its parser's class), so no ``glocalkd`` command takes one."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """Build the ``glocalkd`` parser with every subcommand (each module's ``add_parser``).

    Options are taken by their whole names only (:class:`_Parser`).

    Returns:
        The parser; ``--version`` and ``--help`` answer without loading torch.
    """
    parser = _Parser(prog="glocalkd", description="Graph-level anomaly detection by "
                     "glocal knowledge distillation (GLocalKD, WSDM 2022).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS.values():
        module.add_parser(sub)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as the command's other messages are: one line on stderr, no source location."""
    print(f"glocalkd: warning: {message}", file=sys.stderr)


def _outputs_now(args: argparse.Namespace) -> dict[str, int | None]:
    """Each output file the command names, with its modification time now (None: absent)."""
    import os

    found = {}
    for option in OUTPUT_OPTIONS:
        path = getattr(args, option, None)
        if isinstance(path, str) and path:
            found[path] = os.stat(path).st_mtime_ns if os.path.exists(path) else None
    return found


def _interrupted_text(before: dict[str, int | None], after: dict[str, int | None]) -> str:
    """What an interrupted command left: the outputs it did not write (an existing file kept as it
    was; every writer writes through a temporary file, so none is half-written)."""
    untouched = [path for path, stamp in before.items() if after.get(path) == stamp]
    return "glocalkd: interrupted" + (f"; not written: {', '.join(untouched)}" if untouched else "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``glocalkd``: parse the command line, check the outputs, run the subcommand.

    Errors become one-line messages on stderr, warnings too.

    Args:
        argv: the arguments after the program's name (None: the process's).

    Returns:
        The exit code: the subcommand's status (0 when it returns None), 2 for an error (a
        :class:`GLocalKDError` or an ``OSError``), 130 when interrupted (Ctrl+C, SIGTERM or SIGHUP: the
        command removes its temporary files on the way out, as for Ctrl+C).
    """
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    retain_freed_memory()  # this process is ours: see core/runtime/allocator.py
    wait_passively()  # before torch loads: OpenMP's threads sleep while they wait (core/runtime/threads.py)
    with warnings.catch_warnings():  # restores Python's own display when main returns
        warnings.showwarning = _show_warning
        before = _outputs_now(args)
        try:
            check_outputs(args)  # before any work: a bad output path must not cost a training run
            with stop_signals_interrupt():  # SIGTERM and SIGHUP stop every command as Ctrl+C does: cleaned up, 130
                set_threads(args)  # in here: it loads torch (a second or more), a stop meanwhile is a stop too
                status = COMMANDS[args.command].run(args)
        except GLocalKDError as exc:
            print(f"glocalkd: error: {error_text(exc, args.command)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(_interrupted_text(before, _outputs_now(args)), file=sys.stderr)
            return 130
        except OSError as exc:
            print(f"glocalkd: error: {exc}", file=sys.stderr)
            return 2
    return status if isinstance(status, int) else 0  # run() returns an exit status, or None for 0


def console() -> None:
    """The ``glocalkd`` program: :func:`main`, its status the process's exit code. Once the command
    has ended, stop signals are ignored while Python shuts down (:func:`ignore_stop_signals`).
    """
    status = main()
    ignore_stop_signals()
    sys.exit(status)
