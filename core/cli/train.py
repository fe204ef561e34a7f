"""``glocalkd train``: fit a model on normal graphs and save it (argument parsing and printing;
the rules are :func:`core.training.train_model`'s)."""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time

from core.wording import counted
from core.cli.options import (DetectorDefaultsHelp, add_data_options, add_device_option, add_readout_options,
                              add_standardise_option, add_threads_option, load_graphs, option_name, parameter_of,
                              seed_value)
from core.data.feature_modes import MODES
from core.detectors.conformal import DEFAULT_CALIBRATION_FRACTION
from core.detectors.registry import DEFAULT_DETECTOR, DETECTORS, detector_info

SAVABLE = [name for name, info in DETECTORS.items() if info.savable]  # what --detector offers
# the options that set a detector's settings (left out: the detector's own defaults, its signature's)
SETTING_OPTIONS = ("epochs", "lr", "batch_size", "hidden", "out_dim", "layers", "lam", "normalize", "features",
                   "node_max", "size_term")


def add_parser(sub) -> None:
    """Add ``train``: its data, output, detector, GCN, calibration and known-anomaly options.

    Args:
        sub: the ``glocalkd`` parser's subparsers (``add_subparsers``).
    """
    t = sub.add_parser("train", help="train a model on normal graphs", formatter_class=DetectorDefaultsHelp)
    t.add_argument("data", help="TU folder or .zip, .smi, .csv/.tsv/.tab or .sdf file (optionally .gz)")
    t.add_argument("-o", "--output", required=True, help="model file to write")
    # the GCN settings: left out, the detector's own defaults (GLocalKD's: the paper's)
    t.add_argument("--epochs", type=int, help="training epochs (default: GLocalKD's)")
    t.add_argument("--lr", type=float, help="learning rate (default: GLocalKD's)")
    t.add_argument("--batch-size", type=int, help="graphs per batch (default: GLocalKD's)")
    t.add_argument("--hidden", type=int, help="hidden width (default: GLocalKD's)")
    t.add_argument("--out-dim", type=int, help="embedding width (default: GLocalKD's)")
    t.add_argument("--layers", type=int, help="GCN layers (default: GLocalKD's)")
    t.add_argument("--lam", type=float, help="weight of the node term (default: GLocalKD's)")
    t.add_argument("--normalize", action="store_true",
                   help="L2-normalise each layer's node embeddings (the authors' code; off in the paper)")
    add_readout_options(t)
    t.add_argument("--features", choices=MODES, help="node features (default: GLocalKD's)")
    t.add_argument("--detector", default=None, type=str.lower, choices=SAVABLE,
                   help=f"what to train: the consensus of GLocalKD, WL-LESINN and graph size (the default, "
                        f"{DEFAULT_DETECTOR}: the best mean ranking over the paper's benchmarks, docs/consensus.md), "
                        "GLocalKD (the paper's method, 1.06-1.25 times as fast to screen on CPUs), or one competitor; the GCN "
                        "options apply to GLocalKD, also inside the consensus. Without --detector, --calibration 0 "
                        "or too few graphs to calibrate train GLocalKD")
    t.add_argument("--calibration", type=float, default=DEFAULT_CALIBRATION_FRACTION, metavar="SHARE",
                   help="share of the normal graphs held out to calibrate p-values, 0 to 0.5 (reports then carry "
                        "p- and q-values and --fdr works); 0 trains on every graph, as the paper does, without "
                        "p-values")
    t.add_argument("--normal-label", help="train only on graphs with this label")
    t.add_argument("--known-anomalies", metavar="FILE",
                   help="graphs known to be anomalous (e.g. reference actives; any format DATA takes), never "
                        "trained on: the consensus trusts each of its views as far as it ranks them above the "
                        "held-out normal graphs (3 or more; docs/consensus.md)")
    t.add_argument("--known-label", metavar="LABEL",
                   help="the graphs of DATA with this label are the known anomalies (as --known-anomalies); "
                        "without --normal-label, the model trains on the other graphs")
    t.add_argument("--seed", type=seed_value, default=0, help="random seed: weights, batches, calibration split "
                   "(default: %(default)s)")
    add_device_option(t)
    add_standardise_option(t, training=True)
    add_threads_option(t)
    add_data_options(t)


def run(args: argparse.Namespace) -> None:
    """Train as the arguments say (:func:`core.training.train_model`), show the progress and save the model.

    Args:
        args: the parsed command line.

    Raises:
        GLocalKDError: the data cannot be read or the settings break a training rule
            (:mod:`core.training.plan`).
    """
    from tqdm import tqdm

    from core.training import TrainSpec, check_settings, train_model

    spec = TrainSpec(detector=args.detector, params=detector_settings(args), calibration=args.calibration,
                     normal_label=args.normal_label, known_label=args.known_label, seed=args.seed, device=args.device)
    check_settings(spec)  # before the data is read: "--epochs 0" is said at once
    graphs = load_graphs(args)
    if args.known_anomalies is not None:
        spec = dataclasses.replace(spec, known_anomalies=load_graphs(args, path=args.known_anomalies))
    start = time.perf_counter()
    piped = not sys.stderr.isatty()  # no progress bar: a line every tenth of the epochs instead
    with tqdm(unit="epoch", file=sys.stderr, disable=piped or None) as bar:
        def on_epoch(info):
            bar.total = info.epochs
            bar.set_postfix(loss=f"{info.loss:.4g}")
            bar.update(1)
            if piped and (info.epoch % max(1, info.epochs // 10) == 0 or info.epoch == info.epochs):
                print(f"epoch {info.epoch}/{info.epochs} · loss {info.loss:.4g} · "
                      f"{time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
        trained = train_model(graphs, spec, on_epoch=on_epoch, on_plan=lambda plan: say_plan(plan, args))
    model = trained.model
    if trained.plan.known is not None:
        print(weights_summary(model, len(trained.plan.known)), file=sys.stderr)
    model.save(args.output)
    loss = f"; final loss {model.loss_history_[-1]:.4g}" if model.loss_history_ else ""
    standardised = " (molecules standardised; scoring with it standardises too)" if model.standardises else ""
    how = f" ({trained.calibration_note})" if trained.calibration_note else ""
    calibrated = (f"calibrated on {trained.n_calibration} held out{how}" if trained.n_calibration
                  else "not calibrated (no p-values)")
    print(f"{detector_info(model.name).label} trained on {counted(trained.n_fit, 'graph')}, {calibrated}, "
          f"in {time.perf_counter() - start:.1f} s{loss}; model written to "
          f"{args.output}{standardised}", file=sys.stderr)


def detector_settings(args: argparse.Namespace) -> dict:
    """The detector settings given on the command line (the others keep the detector's defaults).

    Args:
        args: the parsed command line.

    Returns:
        Parameter name to value for each of ``SETTING_OPTIONS`` given (a flag only when set).
    """
    settings = {parameter_of(option): getattr(args, option) for option in SETTING_OPTIONS}
    return {k: v for k, v in settings.items() if v is not None and v is not False}


def say_plan(plan, args: argparse.Namespace) -> None:
    """Say on stderr what is about to be trained: the normal graphs, the known anomalies, and any choice the rules made.

    Args:
        plan: the training plan (:class:`core.training.TrainingPlan`).
        args: the parsed command line (``normal_label``, ``calibration``).
    """
    from core.training.plan import plan_notes

    if args.normal_label is not None:
        print(f"training on the {counted(len(plan.normal), 'graph')} labelled {args.normal_label}", file=sys.stderr)
    if plan.known is not None:
        print(f"{len(plan.known)} known anomalies weigh the consensus's views", file=sys.stderr)
    for note in plan_notes(plan, args.calibration, "--calibration 0", lambda key: option_name(key, "train")):
        print(note, file=sys.stderr)


def weights_summary(model, n_known: int) -> str:
    """Say how known anomalies weighed a consensus's views.

    Args:
        model: the weighed consensus.
        n_known: how many known anomalies weighed it.

    Returns:
        One line: each view's ROC-AUC against the held-out normal graphs and its weight (or that
        no view ranks them above the normal graphs, so the components weigh the same), and that
        the classifier view joined, when it did.
    """
    auc, weights = model.known_anomaly_auc_, model.weights_now()
    return (f"views weighed by {n_known} known anomalies (ROC-AUC against the held-out normal graphs, weight): "
            + ", ".join(f"{n} {auc[n]:.3f} ({weights[n]:.2f})" for n in auc)
            + ("" if model.view_weights_ else "; no view ranks them above the normal graphs, so the components "
               "weigh the same, as without known anomalies")
            + ("; a classifier of their WL substructures joins the weighed views (known-classifier)"
               if getattr(model, "known_classifier_", None) is not None else ""))
