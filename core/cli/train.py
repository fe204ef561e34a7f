"""``glocalkd train``: fit a model on normal graphs and save it."""
from __future__ import annotations

import argparse
import sys
import time

from core.cli.options import add_data_options, add_readout_options, add_threads_option, load_graphs
from core.data.graphset import GraphSet
from core.data.feature_modes import MODES
from core.detectors.registry import DEFAULT_DETECTOR
from core.errors import GLocalKDError

DEFAULT_CALIBRATION_FRACTION = 0.2  # as core.detectors.conformal's, without importing torch for --help
SAVABLE = ("glocalkd", "consensus", "wl-lesinn", "pk-lesinn", "size", "ecfp-nn")


def add_parser(sub) -> None:
    t = sub.add_parser("train", help="train a model on normal graphs")
    t.add_argument("data", help="TU folder or .zip, .smi, .csv/.tsv/.tab or .sdf file (optionally .gz)")
    t.add_argument("-o", "--output", required=True, help="model file to write")
    t.add_argument("--epochs", type=int, default=150)
    t.add_argument("--lr", type=float, default=1e-4)
    t.add_argument("--batch-size", type=int, default=300)
    t.add_argument("--hidden", type=int, default=512, help="hidden width")
    t.add_argument("--out-dim", type=int, default=256, help="embedding width")
    t.add_argument("--layers", type=int, default=3)
    t.add_argument("--lam", type=float, default=1.0, help="weight of the node term")
    t.add_argument("--normalize", action="store_true",
                   help="L2-normalise each layer's node embeddings (the authors' code; off in the paper)")
    add_readout_options(t)
    t.add_argument("--features", choices=MODES, default="auto")
    t.add_argument("--detector", default=None, type=str.lower, choices=SAVABLE,
                   help=f"what to train: the consensus of GLocalKD, WL-LESINN and graph size (the default, "
                        f"{DEFAULT_DETECTOR}: the best mean ranking over the paper's benchmarks, docs/consensus.md), "
                        "GLocalKD (the paper's method, about 1.6 times as fast to screen), or one competitor; the GCN "
                        "options apply to GLocalKD, also inside the consensus. Without --detector, --calibration 0 "
                        "or too few graphs to calibrate train GLocalKD")
    t.add_argument("--calibration", type=float, default=DEFAULT_CALIBRATION_FRACTION, metavar="SHARE",
                   help="share of the normal graphs held out to calibrate p-values (reports then carry p- and "
                        "q-values and --fdr works); 0 trains on every graph, as the paper does, without p-values")
    t.add_argument("--normal-label", help="train only on graphs with this label")
    t.add_argument("--known-anomalies", metavar="FILE",
                   help="graphs known to be anomalous (e.g. reference actives; any format DATA takes), never "
                        "trained on: the consensus trusts each of its views as far as it ranks them above the "
                        "held-out normal graphs (3 or more; docs/consensus.md)")
    t.add_argument("--known-label", metavar="LABEL",
                   help="the graphs of DATA with this label are the known anomalies (as --known-anomalies); "
                        "without --normal-label, the model trains on the other graphs")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--device", default="auto", help="auto, cpu or cuda")
    add_threads_option(t)
    add_data_options(t)


def run(args: argparse.Namespace) -> None:
    if not 0.0 <= args.calibration < 1.0:
        raise GLocalKDError(f"--calibration must be a share from 0 to below 1, not {args.calibration}")
    from tqdm import tqdm

    from core.detectors.conformal import can_calibrate, fit_with_calibration
    from core.detectors.glocalkd import GLocalKD
    from core.detectors.registry import make_detector

    graphs = load_graphs(args)
    known = known_anomalies(args, graphs)
    if args.known_label is not None and args.normal_label is None:
        graphs = graphs.subset(i for i, label in enumerate(graphs.labels) if label != known.meta[0].label)
    if args.normal_label is not None:
        graphs = graphs.with_label(args.normal_label)
        if len(graphs) == 0:
            raise GLocalKDError(f"no graphs have label {args.normal_label!r}")
        print(f"training on the {len(graphs)} graphs labelled {args.normal_label}", file=sys.stderr)
    if args.detector is None:  # the consensus, unless it cannot hold out its calibration share
        args.detector = DEFAULT_DETECTOR
        if not can_calibrate(len(graphs), args.calibration):
            args.detector = "glocalkd"
            why = "--calibration 0" if not args.calibration else f"{len(graphs)} graphs are too few to calibrate"
            print(f"training GLocalKD: the default consensus needs a calibration share ({why})", file=sys.stderr)
    gcn = dict(epochs=args.epochs, lr=args.lr, batch_size=args.batch_size, hidden_dim=args.hidden,
               out_dim=args.out_dim, num_layers=args.layers, lam=args.lam, normalize=args.normalize,
               features=args.features, seed=args.seed, device=args.device, node_max=args.node_max,
               size_term=args.size_term)
    if args.detector == "glocalkd":
        model = GLocalKD(**gcn)
    elif args.detector == "consensus":
        if not args.calibration:
            raise GLocalKDError("the consensus calibrates its components: --calibration must be above 0")
        model = make_detector("consensus", seed=args.seed, device=args.device, calibration=args.calibration,
                              component_params={"glocalkd": gcn})
    else:
        model = make_detector(args.detector, seed=args.seed)
    if known is not None and args.detector != "consensus":
        raise GLocalKDError("known anomalies weigh the consensus's views: train the consensus (the default "
                            "detector), or leave out --known-anomalies and --known-label")
    if args.calibration > 0 and args.detector != "consensus" and not can_calibrate(len(graphs), args.calibration):
        print(f"{len(graphs)} graphs are too few to hold out a calibration share: training on all of them, "
              "so the model gives no p-values", file=sys.stderr)
    start = time.perf_counter()
    with tqdm(total=args.epochs, unit="epoch", file=sys.stderr, disable=None) as bar:
        def on_epoch(info):
            bar.set_postfix(loss=f"{info.loss:.4g}")
            bar.update(1)
        if args.calibration > 0:
            fit_with_calibration(model, graphs, args.calibration, seed=args.seed, on_epoch=on_epoch)
        else:
            model.fit(graphs, on_epoch=on_epoch)
    if known is not None:
        model.weigh_views(known)
        print(weights_summary(model, len(known)), file=sys.stderr)
    model.save(args.output)
    held_out = len(model.calibration_scores_) if model.is_calibrated else 0
    loss = f"; final loss {model.loss_history_[-1]:.4g}" if model.loss_history_ else ""
    print(f"{model!r}\ntrained on {len(graphs) - held_out} graphs, calibrated on {held_out} held out, in "
          f"{time.perf_counter() - start:.1f} s{loss}; model written to {args.output}", file=sys.stderr)


def known_anomalies(args: argparse.Namespace, graphs: GraphSet) -> GraphSet | None:
    """The known anomalies of ``--known-anomalies`` (a file) or ``--known-label`` (graphs of DATA)."""
    if args.known_anomalies is not None and args.known_label is not None:
        raise GLocalKDError("give the known anomalies as a file (--known-anomalies) or a label (--known-label), not both")
    if args.known_label is not None:
        if args.normal_label is not None and str(args.known_label) == str(args.normal_label):
            raise GLocalKDError(f"label {args.known_label!r} cannot be both the normal graphs' and the known anomalies'")
        known = graphs.with_label(args.known_label)
        if len(known) == 0:
            raise GLocalKDError(f"no graphs of {graphs.source} have label {args.known_label!r}")
    elif args.known_anomalies is not None:
        known = load_graphs(args, path=args.known_anomalies)
    else:
        return None
    print(f"{len(known)} known anomalies weigh the consensus's views", file=sys.stderr)
    return known


def weights_summary(model, n_known: int) -> str:
    """One line on how ``n_known`` known anomalies weighed a consensus's views."""
    auc, weights = model.known_anomaly_auc_, model.weights_now()
    return (f"views weighed by {n_known} known anomalies (ROC-AUC against the held-out normal graphs, weight): "
            + ", ".join(f"{n} {auc[n]:.3f} ({weights[n]:.2f})" for n in auc)
            + ("" if model.view_weights_ else "; no view ranks them above the normal graphs, so the components "
               "weigh the same, as without known anomalies"))
