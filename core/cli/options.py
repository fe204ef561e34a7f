"""Options and helpers shared by several subcommands: data columns, threads, readouts, loading."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from core.wording import counted

if TYPE_CHECKING:
    from core.data.graphset import GraphSet


# The options whose name is not their parameter's (``--hidden`` sets ``hidden_dim``); every other
# option is its parameter with dashes: ``--normal-label`` sets ``normal_label``.
RENAMED = {"hidden": "hidden_dim", "layers": "num_layers"}
# options one command names otherwise: ``evaluate --method`` chooses the detector that ``train
# --detector`` does (a message of evaluate's once named --detector, which evaluate does not have)
COMMAND_RENAMED = {"evaluate": {"method": "detector"}}


def parameter_of(dest: str) -> str:
    """The parameter an option sets.

    Args:
        dest: the option's argparse ``dest``.

    Returns:
        The parameter's name: ``hidden`` gives ``hidden_dim`` (``RENAMED``), others are themselves.
    """
    return RENAMED.get(dest, dest)


class DetectorDefaultsHelp(argparse.HelpFormatter):
    """Help that writes GLocalKD's own default beside each setting whose help says "(default:
    GLocalKD's)": read from its signature when the help is shown, so parsing never imports torch."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default is None and "(default: GLocalKD's)" in text:
            from core.detectors.registry import detector_defaults

            value = detector_defaults("glocalkd").get(parameter_of(action.dest))
            if value is not None:
                text = text.replace("(default: GLocalKD's)", f"(default: {value}, GLocalKD's)")
        return text


def option_name(param: str, command: str = "") -> str:
    """The option that sets a parameter, the inverse of :func:`parameter_of`.

    Args:
        param: the parameter's name.
        command: the subcommand whose option it is ("": any; one may name it otherwise,
            :data:`COMMAND_RENAMED`).

    Returns:
        The option: ``normal_label`` gives ``--normal-label``, ``hidden_dim`` gives ``--hidden``,
        ``detector`` gives ``--method`` for ``evaluate``.
    """
    renamed = {**RENAMED, **COMMAND_RENAMED.get(command, {})}
    dest = next((d for d, p in renamed.items() if p == param), param)
    return "--" + dest.replace("_", "-")


def error_text(error: Exception, command: str = "") -> str:
    """Word an error in the command line's terms.

    Args:
        error: the error; a :class:`core.errors.GLocalKDError` may name parameters (``params``).
        command: the subcommand that met it (its own names for options, :func:`option_name`).

    Returns:
        Its message with each parameter it names written as its option (``--smiles-column``).
    """
    params = getattr(error, "params", ())
    return error.worded({p: option_name(p, command) for p in params}) if params else str(error)


def device_name(text: str) -> str:
    """An argparse ``type``: a device name (:func:`core.runtime.values.is_device_name`), checked as
    the command line is read, for every detector (only GLocalKD's and OCGCN's settings checked it,
    so ``train --detector size --device gpu`` ran).

    Args:
        text: the option's value.

    Returns:
        The name.

    Raises:
        argparse.ArgumentTypeError: it names no device.
    """
    from core.runtime.values import DEVICE_NAMES, is_device_name

    if not is_device_name(text):
        raise argparse.ArgumentTypeError(f"must be {DEVICE_NAMES}, not {text!r}")
    return text


def add_device_option(p: argparse.ArgumentParser, what: str = "") -> None:
    """Add --device (where the model runs), the same for every command.

    Args:
        p: the subcommand's parser.
        what: what runs there, said in the help ("": the model).
    """
    p.add_argument("--device", default="auto", type=device_name,
                   help=f"where {what or 'the model'} runs: auto (CUDA when torch sees a GPU), cpu, cuda or cuda:N")


def add_data_options(p: argparse.ArgumentParser) -> None:
    """Add --smiles-column, --id-column and --label-column (of a table or SDF file).

    Args:
        p: the subcommand's parser.
    """
    p.add_argument("--smiles-column", help="SMILES column of a CSV/TSV file (found by name if omitted)")
    p.add_argument("--id-column", help="id column of a CSV/TSV file, or SDF data field ('': none, line numbers)")
    p.add_argument("--label-column", help="label column of a CSV/TSV file, or SDF data field ('': none, unlabelled)")


def data_columns(args: argparse.Namespace) -> dict[str, str | None]:
    """The columns :func:`add_data_options` names, as the loaders' and screeners' keyword arguments:
    one place, so that no command passes two of them and drops the third (``screen`` had no
    ``--label-column``, and its cluster path no label either).

    Args:
        args: the parsed command line.

    Returns:
        ``smiles_column``, ``id_column`` and ``label_column``.
    """
    return {"smiles_column": args.smiles_column, "id_column": args.id_column, "label_column": args.label_column}


def add_standardise_option(p: argparse.ArgumentParser, training: bool) -> None:
    """Add --standardise: standardise molecules before featurising (largest fragment, neutralised,
    canonical tautomer). Training stores the choice in the model; scoring follows the model.

    Args:
        p: the subcommand's parser.
        training: whether the subcommand trains (its help says the model keeps the choice).
    """
    p.add_argument("--standardise", "--standardize", action="store_true",
                   help="standardise each molecule first with RDKit (keep the largest fragment: salts and "
                        "solvents go; neutralise charges; canonical tautomer); the model file keeps the choice "
                        "and 'score' and 'screen' apply it" if training else
                        "standardise each molecule first, as a model trained with --standardise always does "
                        "(given or not); refused for a model trained without it")


def apply_model_standardising(args: argparse.Namespace, model) -> None:
    """Make ``args.standardise`` the model's choice and say so on stderr.

    A model trained with ``--standardise`` always standardises; asking a model trained without
    it to standardise is an error (its scores would not mean what they meant in training).

    Args:
        args: the parsed command line (``standardise`` is set to the model's choice).
        model: the loaded detector.

    Raises:
        ParameterError: ``--standardise`` was given for a model trained without it.
    """
    from core.data.standardise import check_standardise_request

    check_standardise_request(bool(getattr(args, "standardise", False)), model)
    args.standardise = bool(model.standardises)
    if model.standardises:
        print("molecules are standardised first (largest fragment, neutralised, canonical tautomer), as the model "
              "was trained; the report's standardised_smiles column holds what was scored", file=sys.stderr)


def add_resume_option(p: argparse.ArgumentParser) -> None:
    """Add ``--resume``, the one wording of ``screen``'s and ``score``'s: a stopped run continued.

    Args:
        p: the command's parser.
    """
    p.add_argument("--resume", action="store_true",
                   help="continue a stopped run: the report given with -o keeps its rows, the file is read on "
                        "after the line where the run stopped, and the report is written as a whole run writes it "
                        "(the same model, file and optional columns; one molecule file)")


def add_threads_option(p: argparse.ArgumentParser) -> None:
    """Add --threads: torch's intra-op thread count for the whole command.

    Args:
        p: the subcommand's parser.
    """
    p.add_argument("--threads", type=thread_count, default=0, metavar="N",
                   help="CPU threads for torch's products (0: one per CPU this process may use, by its "
                        "affinity and cgroup quota). Where other programs keep the cores busy, 1 can be "
                        "several times faster (docs/performance.md)")


def add_cluster_options(p: argparse.ArgumentParser) -> None:
    """Add --scheduler (a Dask cluster), --scratch (its shared storage) and --top (the best rows only).

    Args:
        p: the subcommand's parser.
    """
    p.add_argument("--scheduler", metavar="local:N|tcp://HOST:PORT",
                   help="run the chunks as tasks on a Dask cluster: local:N starts N worker processes here, "
                        "tcp://HOST:8786 (or the JSON of dask scheduler --scheduler-file) joins a running one "
                        "(docs/scaling.md)")
    p.add_argument("--scratch", metavar="DIR",
                   help="folder for the chunk files (default: the report's folder); with --scheduler, one "
                        "every worker shares")
    p.add_argument("--top", type=positive_count, metavar="K",
                   help="keep only the K best rows (every rejected row is still listed; with --scheduler, "
                        "REPORT.summary.json holds the counts); --properties and --alerts are then computed "
                        "for those rows only")


def positive_count(text: str) -> int:
    """Read a count of 1 or more (an argparse ``type``).

    Args:
        text: the option's value.

    Returns:
        The count.

    Raises:
        ValueError: ``text`` is not a whole number.
        argparse.ArgumentTypeError: it is below 1.
    """
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def seed_value(text: str) -> int:
    """Read a seed (an argparse ``type``): a whole number from 0 to 2**32 - 1, as numpy and torch take it.

    Args:
        text: the option's value.

    Returns:
        The seed.

    Raises:
        ValueError: ``text`` is not a whole number.
        argparse.ArgumentTypeError: it is out of that range.
    """
    from core.detectors.base import SEED, is_seed

    value = int(text)
    if not is_seed(value):
        raise argparse.ArgumentTypeError(f"must be {SEED}, not {value}")
    return value


def thread_count(text: str) -> int:
    """Read a thread count (an argparse ``type``): 0 (one per usable CPU) up to 4 per CPU core.

    torch crashes on absurd counts, hence the limit.

    Args:
        text: the option's value.

    Returns:
        The count.

    Raises:
        ValueError: ``text`` is not a whole number.
        argparse.ArgumentTypeError: it is below 0 or above 4 per CPU core.
    """
    from core.runtime.threads import PER_CORE_LIMIT, most_per_machine

    value = int(text)
    limit = most_per_machine()
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    if value > limit:
        raise argparse.ArgumentTypeError(f"must be from 0 to {limit} ({PER_CORE_LIMIT} per CPU core), not {value}")
    return value


def non_negative(text: str) -> int:
    """Read a count of 0 or more (an argparse ``type``).

    Args:
        text: the option's value.

    Returns:
        The count.

    Raises:
        ValueError: ``text`` is not a whole number.
        argparse.ArgumentTypeError: it is below 0.
    """
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


# What each subcommand's options are, for the one output check (core.runtime.files.check_outputs).
# An option that names a file or folder must be in one of these, or in NOT_CHECKED with its reason:
# tests/core/cli/test_outputs.py fails otherwise, and checks that every subcommand's outputs are
# refused over each of its inputs.
INPUT_OPTIONS = ("model", "data", "reports", "test", "known_anomalies", "alerts")
OUTPUT_OPTIONS = ("output", "json", "markdown")
MAKES_FOLDERS = ("json", "markdown")  # their writers make missing folders
NOT_CHECKED = {
    "resume_from": "read whole before anything is written: it may name the --json being rewritten",
    "scratch": "a folder for chunk files in a private folder made inside it, removed at the end",
}


REPORT_COMMANDS = ("score", "screen", "merge-reports")  # their -o is a ranked report, written as CSV


def check_output_name(args: argparse.Namespace) -> None:
    """Refuse an output name that promises another format than the file written: a report is
    always plain CSV (``-o r.csv.gz`` or ``-o r.sdf`` wrote CSV under a name no reader of that
    format could open) and a model file is torch's (``train -o model.csv`` wrote one that the
    app then opened as a table).

    Args:
        args: the parsed command line.

    Raises:
        ParameterError: a report command's ``--output`` ends in a suffix of another format, or
            ``train``'s in a data or report format's (:func:`core.runtime.model_files.model_name_problem`),
            or ``--json``/``--markdown`` is not named .json/.md (:func:`core.evaluation.results.results_name_problem`).
    """
    from core.errors import ParameterError
    from core.io.report import report_name_problem
    from core.runtime.model_files import model_name_problem

    for option in ("json", "markdown"):  # an evaluation's results: the writers' rule
        value = getattr(args, option, None)
        if not (isinstance(value, str) and value):
            continue
        from core.evaluation.results import results_name_problem  # only an evaluation loads it

        problem = results_name_problem(value, option)
        if problem is not None:
            raise ParameterError(f"{{{option}}} {value}: {problem}", option)
    output = getattr(args, "output", None)
    command = getattr(args, "command", None)
    if not isinstance(output, str):
        return

    # the writers' own rules (the report's and the model file's), said before any work
    rule = report_name_problem if command in REPORT_COMMANDS else model_name_problem if command == "train" else None
    problem = rule(output) if rule is not None else None
    if problem is not None:
        raise ParameterError(f"{{output}} {output}: {problem}", "output")


def check_outputs(args: argparse.Namespace) -> None:
    """Check, before any work, that every output of the command can be written.

    Each output file (``-o``, ``--json``, ``--markdown``) must be writable and must not be, nor
    be inside, one of the command's inputs (the model, the data, a report to merge, a shard a
    pattern matches); the folders of ``--json`` and ``--markdown`` are made when missing.

    Args:
        args: the parsed command line.

    Raises:
        GLocalKDError: an output is, or lies inside, an input, or is named twice.
        ParameterError: an output's name is empty (``-o ''``) or ``-`` (standard output), or
            promises another format than the one written (:func:`check_output_name`), or it cannot be written (the
            ``OSError`` of :func:`core.runtime.files.check_outputs`, worded with its option).
    """
    import glob

    from core.runtime.files import check_outputs as check

    def named(option: str) -> list[str]:
        value = getattr(args, option, None)  # (evaluate's --known-anomalies is a count, not a file)
        return [v for v in (value if isinstance(value, (list, tuple)) else [value]) if isinstance(v, str) and v]

    empty = next((option for option in OUTPUT_OPTIONS if getattr(args, option, None) == ""), None)
    if empty is not None:
        from core.errors import ParameterError

        raise ParameterError(f"{{{empty}}} is an empty file name: name the file to write", empty)
    dash = next((option for option in OUTPUT_OPTIONS if getattr(args, option, None) == "-"), None)
    if dash is not None:  # the Unix habit for standard output: a file named "-" would be written instead
        from core.errors import ParameterError

        raise ParameterError(f"{{{dash}}} - : results are written to files, not to standard output; name the file "
                             "to write (./- if a file named '-' is really meant)", dash)
    outputs = [path for option in OUTPUT_OPTIONS for path in named(option)]
    inputs = [path for option in INPUT_OPTIONS for path in named(option)]
    inputs += [match for path in inputs if glob.has_magic(path) for match in glob.glob(path)]  # screen's shards
    try:
        check(outputs, inputs, make_folders=[path for option in MAKES_FOLDERS for path in named(option)])
    except OSError as exc:  # "[Errno 2] No such file ..." named no option: say which one, and its path
        option = next((o for o in OUTPUT_OPTIONS if exc.filename is not None and exc.filename in named(o)), None)
        if option is None:
            raise
        from core.errors import ParameterError

        raise ParameterError(f"{{{option}}} {exc.filename}: {exc.strerror}", option) from None
    check_report_summary(args, inputs)
    check_output_name(args)  # after the inputs: "-o" naming the data itself is said as such
    check_scratch(args)


def check_report_summary(args: argparse.Namespace, inputs: list[str]) -> None:
    """Check the second file a report command may write, ``REPORT.summary.json`` beside its
    report (with ``--top``, or merging shards cut to their best rows), with the check its writers
    make (:func:`core.screening.merge.check_summary_output`), before the model loads or a cluster starts.

    Args:
        args: the parsed command line.
        inputs: the files and folders the command reads.

    Raises:
        ParameterError: the summary cannot be written (worded with ``--output``; the message names the summary).
    """
    output = getattr(args, "output", None)
    command = getattr(args, "command", None)
    if command not in REPORT_COMMANDS or not isinstance(output, str):
        return
    from core.screening.merge import check_summary_output, has_cut_shard

    cut = getattr(args, "top", None) is not None or (command == "merge-reports" and has_cut_shard(args.reports))
    try:
        check_summary_output(output, inputs, cut)
    except OSError as exc:
        from core.errors import ParameterError

        raise ParameterError(f"{{output}} {output}: {exc.strerror}", "output") from None


def check_scratch(args: argparse.Namespace) -> None:
    """Check, before any work (a cluster started, a model read), that ``--scratch`` is a folder
    this process can make its private folder in; it said "[Errno 2] …/.screen-kw2t2yi2" after
    the cluster had started.

    Args:
        args: the parsed command line.

    Raises:
        ParameterError: ``--scratch`` is not an existing folder, or one this process cannot write in.
    """
    import os

    scratch = getattr(args, "scratch", None)
    if not scratch:
        return
    folder = Path(scratch)
    why = ("no such folder" if not folder.exists() else "not a folder" if not folder.is_dir()
           else "cannot write in it" if not os.access(folder, os.W_OK | os.X_OK) else "")
    if why:
        from core.errors import ParameterError

        raise ParameterError(f"{{scratch}} {scratch}: {why} (the chunk files go in a private folder made inside it)",
                             "scratch")


def add_readout_options(parser: argparse.ArgumentParser) -> None:
    """Add GLocalKD's optional readouts, --node-max and --size-term.

    Args:
        parser: the subcommand's parser.
    """
    parser.add_argument("--node-max", action="store_true",
                        help="add each graph's largest node error to the node term (finds a few odd atoms "
                             "in a large molecule)")
    parser.add_argument("--size-term", action="store_true",
                        help="add the sum-pooled embedding error to the graph term (finds graphs made of many "
                             "normal parts)")


def set_threads(args: argparse.Namespace) -> None:
    """Apply ``--threads`` for the whole command.

    Args:
        args: the parsed command line; ``threads`` 0 (or none) means one per CPU this process may
            use (:func:`core.runtime.threads.usable_cpus`: torch counts the affinity mask, not a
            cgroup quota), set only where a quota makes it fewer than torch's own count.
    """
    from core.runtime.threads import quota_bound_threads

    wanted = getattr(args, "threads", 0) or quota_bound_threads()
    if wanted:
        import torch

        torch.set_num_threads(wanted)


def load_graphs(args: argparse.Namespace, quiet: bool = False, path: str | None = None) -> GraphSet:
    """Load a data file with the command's data options.

    Args:
        args: the parsed command line (``data``, ``smiles_column``, ``id_column``, ``label_column``).
        quiet: do not print the file's summary (:func:`summary`) on stderr.
        path: the file to load (None: ``args.data``).

    Returns:
        The graphs.

    Raises:
        DataError: the file cannot be read (as :func:`core.io.load.load`).
    """
    from core.io.columns import is_table
    from core.io.load import load

    # the column options name the data file's columns; another file (--known-anomalies) takes them
    # only when it is a table too (a SMILES list or SDF file has none: load() refuses them)
    columns = data_columns(args)
    if path is not None and not is_table(path):
        columns = {}
    graphs = load(args.data if path is None else path, **columns, standardise=getattr(args, "standardise", False))
    if not quiet:
        print(summary(graphs), file=sys.stderr)
    return graphs


def summary(graphs: GraphSet, more: str = "each is listed in the report 'glocalkd score' writes") -> str:
    """Say what a file held, for stderr.

    Args:
        graphs: the loaded graphs.
        more: where the rejected rows beyond the first five are listed (``info`` and ``train``
            write no report: they said "all listed in the report").

    Returns:
        One line of graphs, nodes and label counts, the notes on the labels and the reader's
        (``GraphSet.notes``), the IDs that name more than one row, then the
        first five rejected rows with their reasons (and how many more).
    """
    labels = graphs.label_counts()
    text = f"{graphs.source}: {counted(len(graphs), 'graph')} ({graphs.format}), {counted(graphs.num_nodes, 'node')}"
    measured = graphs.labels_note()
    if labels:
        text += (f", {counted(len(labels), 'different label')}" if measured
                 else ", labels " + ", ".join(f"{k}: {v}" for k, v in labels.items()))
    for note in (measured, graphs.labels_case_note()):
        if note:
            text += f"\n  {note[0].upper()}{note[1:]}"
    for note in graphs.notes:  # what the reader changed (a TU collection's one-way edges made both ways)
        text += f"\n  Note: {note}"
    repeated = graphs.repeated_ids_note()
    if repeated:
        text += f"\n  {repeated} (every row is kept)"
    if graphs.rejects:
        text += f"; {counted(len(graphs.rejects), 'row')} rejected" + rejects_listed(
            [(r.line, r.reason) for r in graphs.rejects[:5]], len(graphs.rejects), more)
    return text


def rejects_listed(first: list[tuple[int, str]], total: int, more: str = "all listed in the report") -> str:
    """The lines that list rejected rows under a command's summary, each on one line whatever its
    reason holds (a quoted cell's line break once split one reject over two lines).

    Args:
        first: (input line, reason) of the first rejected rows.
        total: how many rows were rejected in all.
        more: where the others are listed.

    Returns:
        Each reject as ``\n  line L: reason``, then how many more when ``first`` is not all of them.
    """
    from core.errors import one_line

    text = "".join(f"\n  line {line}: {one_line(reason)}" for line, reason in first)
    if total > len(first):
        text += f"\n  ... and {total - len(first):,} more ({more})"
    return text


def add_fdr_option(p: argparse.ArgumentParser) -> None:
    """Add --fdr: flag at a false-discovery rate (needs a calibrated model).

    Args:
        p: the subcommand's parser.
    """
    p.add_argument("--fdr", type=float, metavar="ALPHA",
                   help="flag the molecules with q-value <= ALPHA (Benjamini-Hochberg over the scored set): on "
                        "average at most that share of the flagged are normal; the model must be calibrated "
                        "('glocalkd train --calibration', on by default)")


def add_extra_column_options(p: argparse.ArgumentParser) -> None:
    """Add --properties, --alerts and --view-scores: optional columns of the ranked report (off by default).

    Args:
        p: the subcommand's parser.
    """
    p.add_argument("--properties", action="store_true",
                   help="add a medicinal chemist's properties after the usual columns: mw, clogp (Crippen), tpsa, "
                        "hbd, hba, rotatable_bonds, heavy_atoms, rings, formal_charge (RDKit)")
    p.add_argument("--alerts", action="store_true",
                   help="add an 'alerts' column: the structural alerts each molecule matches (RDKit's Brenk, PAINS "
                        "and NIH catalogs; about 10-20 ms a molecule)")
    p.add_argument("--view-scores", action="store_true",
                   help="add each view's raw score (view:glocalkd, view:wl-lesinn, ...; a consensus with Fisher's "
                        "rule, every view): the app's review of the report re-ranks from them without scoring again")


def check_fdr(args: argparse.Namespace) -> None:
    """Check that --fdr, when given, is a rate between 0 and 1.

    Args:
        args: the parsed command line.

    Raises:
        GLocalKDError: it is not strictly between 0 and 1.
    """
    from core.errors import GLocalKDError

    if getattr(args, "fdr", None) is not None and not 0.0 < args.fdr < 1.0:
        raise GLocalKDError(f"--fdr must be a rate between 0 and 1, not {args.fdr}")


def check_fdr_model(args: argparse.Namespace, model) -> None:
    """Refuse --fdr for a model without p-values, before any row is scored (a screen was scored
    whole and only then told so, with exit status 0).

    Args:
        args: the parsed command line (``fdr``, ``model``).
        model: the loaded model.

    Raises:
        GLocalKDError: --fdr is given and the model is not calibrated.
    """
    from core.errors import GLocalKDError

    if getattr(args, "fdr", None) is not None and not model.is_calibrated:
        raise GLocalKDError(f"{args.model}: --fdr needs p-values, and this model is not calibrated: train it with "
                            "--calibration above 0")


def report_flagged(flagged: int | None, fdr: float | None, scored: int, calibration: int = 0,
                   kept: int | None = None) -> None:
    """Say on stderr how many rows ``--fdr`` flags (the report's first rows), or why none or why it cannot.

    Args:
        flagged: the rows flagged (:meth:`ScreenSummary.flagged_at`); None when the model is not
            calibrated.
        fdr: the false-discovery rate asked for (None: --fdr not given, nothing is said).
        scored: the rows scored.
        calibration: the model's calibration graphs, to say why none was flagged and what to do
            (0: not said).
        kept: the rows the report keeps (``--top``; None: every scored row), when it may hold
            fewer than are flagged.
    """
    if fdr is None:
        return
    if flagged is None:
        print("glocalkd: --fdr needs p-values, and this model is not calibrated: train it with "
              "--calibration above 0", file=sys.stderr)
        return
    if flagged == 0:
        from core.data.pvalues import fdr_unreached_note

        why = f" {fdr_unreached_note(calibration, scored, fdr)}" if calibration else ""
        print(f"no row of {scored:,} flagged at a false-discovery rate of {fdr:g} (no q-value <= {fdr:g}).{why}",
              file=sys.stderr)
        return
    where = f"ranks 1 to {flagged:,} of the report"
    if kept is not None and kept < flagged:  # it said "ranks 1 to 147" of a report of 10 rows
        where = (f"the report keeps the best {kept:,} of them (--top {kept:,}); screen with a larger --top to see "
                 "them all")
    print(f"{flagged:,} of {scored:,} scored rows flagged at a false-discovery rate of {fdr:g} (q-value <= {fdr:g}): "
          f"{where}", file=sys.stderr)
