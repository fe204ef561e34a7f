"""Options and helpers shared by several subcommands: data columns, threads, readouts, loading."""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.data.graphset import GraphSet


def add_data_options(p: argparse.ArgumentParser) -> None:
    """--smiles-column, --id-column and --label-column of a table or SDF file."""
    p.add_argument("--smiles-column", help="SMILES column of a CSV/TSV file (found by name if omitted)")
    p.add_argument("--id-column", help="id column of a CSV/TSV file, or SDF data field")
    p.add_argument("--label-column", help="label column of a CSV/TSV file, or SDF data field")


def add_threads_option(p: argparse.ArgumentParser) -> None:
    """--threads: torch's intra-op thread count for the whole command."""
    p.add_argument("--threads", type=thread_count, default=0, metavar="N",
                   help="CPU threads for torch's products (0: one per CPU this process may use, by its "
                        "affinity and cgroup quota). Where other programs keep the cores busy, 1 can be "
                        "several times faster (docs/performance.md)")


def add_cluster_options(p: argparse.ArgumentParser) -> None:
    """--scheduler (a Dask cluster), --scratch (its shared storage) and --top (the best rows only)."""
    p.add_argument("--scheduler", metavar="local:N|tcp://HOST:PORT",
                   help="run the chunks as tasks on a Dask cluster: local:N starts N worker processes here, "
                        "tcp://HOST:8786 (or the JSON of dask scheduler --scheduler-file) joins a running one "
                        "(docs/scaling.md)")
    p.add_argument("--scratch", metavar="DIR",
                   help="with --scheduler: folder for the chunk files, shared by every worker (default: the "
                        "report's folder)")
    p.add_argument("--top", type=positive_count, metavar="K",
                   help="keep only the K best rows (every rejected row is still listed; with --scheduler, "
                        "REPORT.summary.json holds the counts)")


def positive_count(text: str) -> int:
    """A count of 1 or more."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def thread_count(text: str) -> int:
    """A thread count: 0 (torch's default) up to 4 per CPU core (torch crashes on absurd counts)."""
    import os

    value = int(text)
    limit = 4 * (os.cpu_count() or 1)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    if value > limit:
        raise argparse.ArgumentTypeError(f"must be from 0 to {limit} (4 per CPU core), not {value}")
    return value


def non_negative(text: str) -> int:
    """A count of 0 or more."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def check_outputs(args: argparse.Namespace) -> None:
    """Before any work: each output file (``-o``, ``--json``) can be written, and is not one of the
    command's inputs (the model, the data, a report to merge), which it would overwrite."""
    from pathlib import Path

    from core.errors import GLocalKDError
    from core.runtime.files import check_writable

    data = getattr(args, "data", None)
    inputs = [getattr(args, "model", None), *(data if isinstance(data, list) else [data]),
              *(getattr(args, "reports", None) or [])]
    for output in (getattr(args, "output", None), getattr(args, "json", None)):
        if not output:
            continue
        if output == getattr(args, "output", None):
            check_writable(output)  # (--json makes its folder)
        out = Path(output)
        for given in inputs:
            if given and Path(given).exists() and out.exists() and out.resolve() == Path(given).resolve():
                raise GLocalKDError(f"the output {output} is an input of this command ({given}): it would be "
                                    "overwritten; write elsewhere")


def add_readout_options(parser: argparse.ArgumentParser) -> None:
    """GLocalKD's optional readouts, --node-max and --size-term."""
    parser.add_argument("--node-max", action="store_true",
                        help="add each graph's largest node error to the node term (finds a few odd atoms "
                             "in a large molecule)")
    parser.add_argument("--size-term", action="store_true",
                        help="add the sum-pooled embedding error to the graph term (finds graphs made of many "
                             "normal parts)")


def set_threads(args: argparse.Namespace) -> None:
    """Apply ``--threads`` for the whole command; 0 means one per CPU this process may use
    (:func:`core.runtime.threads.usable_cpus`: torch counts the affinity mask, not a cgroup quota)."""
    from core.runtime.threads import quota_bound_threads

    wanted = getattr(args, "threads", 0) or quota_bound_threads()
    if wanted:
        import torch

        torch.set_num_threads(wanted)


def load_graphs(args: argparse.Namespace, quiet: bool = False, path: str | None = None) -> GraphSet:
    """Load ``path`` (default ``args.data``) with the data options; unless ``quiet``, summarise it
    on stderr."""
    from core.io.load import load

    graphs = load(args.data if path is None else path, smiles_column=args.smiles_column, id_column=args.id_column,
                  label_column=args.label_column)
    if not quiet:
        print(summary(graphs), file=sys.stderr)
    return graphs


def summary(graphs: GraphSet) -> str:
    """What a file held: graphs, nodes, labels, and the first rejected rows with their reasons."""
    labels = graphs.label_counts()
    text = f"{graphs.source}: {len(graphs)} graphs ({graphs.format}), {graphs.num_nodes} nodes"
    if labels:
        text += ", labels " + ", ".join(f"{k}: {v}" for k, v in labels.items())
    if graphs.rejects:
        text += f"; {len(graphs.rejects)} rows rejected"
        for r in graphs.rejects[:5]:
            text += f"\n  line {r.line}: {r.reason}"
        if len(graphs.rejects) > 5:
            text += f"\n  ... and {len(graphs.rejects) - 5} more (all listed in the report)"
    return text


def add_fdr_option(p: argparse.ArgumentParser) -> None:
    """--fdr: flag at a false-discovery rate (needs a calibrated model)."""
    p.add_argument("--fdr", type=float, metavar="ALPHA",
                   help="flag the molecules with q-value <= ALPHA (Benjamini-Hochberg over the scored set): on "
                        "average at most that share of the flagged are normal; the model must be calibrated "
                        "('glocalkd train --calibration', on by default)")


def check_fdr(args: argparse.Namespace) -> None:
    """--fdr must be a rate between 0 and 1."""
    from core.errors import GLocalKDError

    if getattr(args, "fdr", None) is not None and not 0.0 < args.fdr < 1.0:
        raise GLocalKDError(f"--fdr must be a rate between 0 and 1, not {args.fdr}")


def report_flagged(flagged: int | None, fdr: float | None, scored: int) -> None:
    """Say how many rows ``--fdr`` flags (the report's first rows), or why it cannot."""
    if fdr is None:
        return
    if flagged is None:
        print("glocalkd: --fdr needs p-values, and this model is not calibrated: train it with "
              "--calibration above 0", file=sys.stderr)
        return
    print(f"{flagged:,} of {scored:,} scored rows flagged at a false-discovery rate of {fdr:g} (q-value <= {fdr:g}): "
          f"ranks 1 to {flagged:,} of the report", file=sys.stderr)
