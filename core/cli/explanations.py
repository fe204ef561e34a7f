"""``glocalkd evaluate-explanations``: do node errors point at planted anomalous atoms?"""
from __future__ import annotations

import argparse
import sys

from core.cli.options import add_readout_options, add_threads_option
from core.detectors.registry import DEFAULT_DETECTOR

DETECTORS = ("consensus", "glocalkd")  # the detectors whose scores carry node errors


def add_parser(sub) -> None:
    x = sub.add_parser("evaluate-explanations",
                       help="do node errors point at planted anomalous atoms? (graph- and node-level AUC)")
    x.add_argument("data", help="normal molecules: SMILES list or table (e.g. a MOSES file)")
    x.add_argument("--train", type=int, default=2000, help="normal molecules to train on")
    x.add_argument("--normal", type=int, default=500, help="held-out normal molecules")
    x.add_argument("--local", type=int, default=400, help="locally-anomalous copies (planted atoms)")
    x.add_argument("--global", dest="global_", type=int, default=300, help="globally-anomalous copies")
    x.add_argument("--detector", default=DEFAULT_DETECTOR, type=str.lower, choices=DETECTORS,
                   help=f"the detector measured (default: {DEFAULT_DETECTOR}, as glocalkd train trains); the "
                        "node errors are GLocalKD's, in the consensus its component's, trained on the share "
                        "not held out for calibration")
    x.add_argument("--epochs", type=int, default=150)
    x.add_argument("--features", choices=("atom", "atom-rings"), default="atom",
                   help="atom-rings: add the sizes of each atom's rings to the atom features")
    add_readout_options(x)
    x.add_argument("--seed", type=int, default=0)
    x.add_argument("--device", default="auto")
    add_threads_option(x)
    x.add_argument("--json", help="write the results as JSON here")


def run(args: argparse.Namespace) -> None:
    import json
    from itertools import islice

    from core.detectors.registry import make_detector
    from core.evaluation.explanations import evaluate_explanations, make_planted
    from core.screening.pipeline import iter_smiles_rows

    need = args.train + args.normal + 4 * (args.local + args.global_)
    smiles = [row.smiles for row in islice(iter_smiles_rows(args.data), need) if row.problem is None]
    planted = make_planted(smiles, args.train, args.normal, args.local, args.global_, seed=args.seed)
    glocalkd = {"epochs": args.epochs, "node_max": args.node_max, "size_term": args.size_term,
                "features": args.features}
    if args.detector == "consensus":
        model = make_detector("consensus", seed=args.seed, device=args.device, component_params={"glocalkd": glocalkd})
    else:
        model = make_detector("glocalkd", seed=args.seed, device=args.device, **glocalkd)
    results = evaluate_explanations(planted, model)
    print(f"detector {args.detector}, trained in {results[0].seconds_train:.1f} s")
    for r in results:
        print(f"node errors {r.node_error}: graph AUC local {r.graph_auc_local:.3f}, global {r.graph_auc_global:.3f}; "
              f"node AUC {r.node_auc:.3f}, top-k hit rate {r.topk_hit_rate:.3f}")
    for name, row in results[0].readouts.items():
        print(f"readout {name}: graph AUC local {row['local']:.3f}, global {row['global']:.3f}")
    for name, row in results[0].components.items():
        print(f"component {name}: graph AUC local {row['local']:.3f}, global {row['global']:.3f}")
    if args.json:
        from pathlib import Path

        from core.runtime.files import atomic_output

        Path(args.json).parent.mkdir(parents=True, exist_ok=True)  # as evaluate --json does
        with atomic_output(args.json, "w", encoding="utf-8") as fh:
            json.dump({"command": "glocalkd evaluate-explanations " + " ".join(sys.argv[2:]),
                       "results": [r.to_dict() for r in results]}, fh, indent=2)
