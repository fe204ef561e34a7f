"""``glocalkd weigh``: weigh a trained consensus's views by graphs known to be anomalous, without
training again (docs/consensus.md, "With a few known anomalies")."""
from __future__ import annotations

import argparse
import sys

from core.cli.options import add_data_options, add_device_option, add_threads_option, load_graphs
from core.errors import GLocalKDError
from core.wording import counted


def add_parser(sub) -> None:
    """Add ``weigh``: weigh a trained consensus's views by known anomalies.

    Args:
        sub: the ``glocalkd`` parser's subparsers (``add_subparsers``).
    """
    w = sub.add_parser("weigh", help="weigh a trained consensus's views by known anomalies (no training)")
    w.add_argument("model", help="a consensus model file written by 'glocalkd train'")
    w.add_argument("data", help="the known anomalies: a file or folder in any format 'glocalkd train' reads")
    w.add_argument("-o", "--output", required=True, help="model file to write (the weighed model)")
    w.add_argument("--label", help="only the graphs of DATA with this label are known anomalies")
    add_device_option(w)
    add_threads_option(w)
    add_data_options(w)


def run(args: argparse.Namespace) -> None:
    """Weigh a saved consensus's views by the known anomalies in DATA and save the weighed model.

    Args:
        args: the parsed command line.

    Raises:
        GLocalKDError: the model is not a consensus, or no graph has the label asked for.
    """
    from core.cli.train import weights_summary
    from core.detectors.model_file import load_detector
    from core.detectors.registry import detector_info
    from core.training import weigh_known_anomalies

    model = load_detector(args.model, device=args.device)
    if not detector_info(model.name).weighable:
        raise GLocalKDError(f"{args.model} is a {model.name} model: known anomalies weigh a consensus's views")
    args.standardise = model.standardises  # known anomalies are read as the model reads molecules
    known = load_graphs(args)
    if args.label is not None:
        known = known.with_label(args.label)
        if len(known) == 0:
            raise GLocalKDError(f"no graphs of {args.data} have label {args.label!r}")
    elif len(labels := known.label_counts()) >= 2:  # the rule's own words say to edit the file; this command can choose
        listed = ", ".join(f"{label}: {n:,}" for label, n in labels.items())
        raise GLocalKDError(f"{args.data} holds graphs of {len(labels)} labels ({listed}): name the anomalous one "
                            "with --label LABEL (the other graphs are left out)")
    given = len(known)
    known = weigh_known_anomalies(model, known)  # less any the model was trained or calibrated on
    model.save(args.output)
    left_out = given - len(known)
    note = (f"\n{counted(left_out, 'known anomaly', 'known anomalies')} left out: the model was trained or "
            "calibrated on them as normal (the same graphs to the model)" if left_out else "")
    print(f"{weights_summary(model, len(known))}{note}\nmodel written to {args.output}", file=sys.stderr)
