"""``glocalkd evaluate-explanations``: do node errors point at planted anomalous atoms, or, with
``--alerts LIBRARY``, at chemists' structural alerts in a scored library?"""
from __future__ import annotations

import argparse
import sys

from core.wording import counted
from core.cli.options import (add_device_option, add_readout_options, add_threads_option, positive_count, seed_value,
                              summary)
from core.detectors.registry import DEFAULT_DETECTOR
from core.errors import GLocalKDError

DETECTORS = ("consensus", "glocalkd")  # the detectors whose scores carry node errors


def add_parser(sub) -> None:
    """Add ``evaluate-explanations``: planted anomalies, or ``--alerts`` on a scored library.

    Args:
        sub: the ``glocalkd`` parser's subparsers (``add_subparsers``).
    """
    x = sub.add_parser("evaluate-explanations",
                       help="do node errors point at planted anomalous atoms? (graph- and node-level AUC)")
    x.add_argument("data", help="normal molecules: SMILES list or table (e.g. a MOSES file)")
    x.add_argument("--alerts", metavar="LIBRARY",
                   help="instead of planting anomalies: train on the first --train molecules of DATA, score "
                        "LIBRARY and measure whether the top-error atoms lie in structural alerts (Brenk, PAINS, "
                        "NIH), beside chance and an atom-rarity baseline")
    x.add_argument("--train", type=positive_count, default=2000, help="normal molecules to train on")
    x.add_argument("--normal", type=positive_count, default=500, help="held-out normal molecules")
    x.add_argument("--local", type=positive_count, default=400, help="locally-anomalous copies (planted atoms)")
    x.add_argument("--global", dest="global_", type=positive_count, default=300, help="globally-anomalous copies")
    x.add_argument("--detector", default=DEFAULT_DETECTOR, type=str.lower, choices=DETECTORS,
                   help=f"the detector measured (default: {DEFAULT_DETECTOR}, as glocalkd train trains); the "
                        "node errors are GLocalKD's, in the consensus its component's, trained on the share "
                        "not held out for calibration")
    x.add_argument("--epochs", type=int, default=150)
    x.add_argument("--features", choices=("atom", "atom-rings"), default="atom",
                   help="atom-rings: add the sizes of each atom's rings to the atom features")
    add_readout_options(x)
    x.add_argument("--seed", type=seed_value, default=0)
    add_device_option(x)
    add_threads_option(x)
    x.add_argument("--json", help="write the results as JSON here")


def _write_json(path: str, payload: dict) -> None:
    """The results as JSON, written whole or not at all (its folder made if missing); NaN is null."""
    import json
    import math
    from pathlib import Path

    from core.runtime.files import atomic_output

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    def plain(value):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    text = json.dumps(plain(payload), indent=2, allow_nan=False) + "\n"
    with atomic_output(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _make_model(args: argparse.Namespace):
    """The detector measured, with the command's GLocalKD settings."""
    from core.detectors.registry import make_detector

    glocalkd = {"epochs": args.epochs, "node_max": args.node_max, "size_term": args.size_term,
                "features": args.features}
    if args.detector == "consensus":
        return make_detector("consensus", seed=args.seed, device=args.device, component_params={"glocalkd": glocalkd})
    return make_detector("glocalkd", seed=args.seed, device=args.device, **glocalkd)


def run(args: argparse.Namespace) -> None:
    """Plant anomalies in copies of DATA's molecules, train, and print (and write) how well node errors find them.

    With ``--alerts`` it measures the agreement with structural alerts instead (:func:`run_alerts`).

    Args:
        args: the parsed command line.
    """
    if args.alerts:
        return run_alerts(args)
    from core.errors import DataError
    from core.evaluation.alert_agreement import first_molecules
    from core.evaluation.explanations import evaluate_explanations, make_planted

    need = args.train + args.normal + 4 * (args.local + args.global_)
    molecules = first_molecules(args.data, need)
    print(summary(molecules, more="listed with --json"), file=sys.stderr)
    try:
        planted = make_planted([m.smiles for m in molecules.meta], args.train, args.normal, args.local,
                               args.global_, seed=args.seed)
    except DataError as exc:
        raise DataError(f"{exc.reason}: ask for fewer with --train and --normal, or give more molecules",
                        args.data) from exc
    model = _make_model(args)
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
        _write_json(args.json, {"command": "glocalkd evaluate-explanations " + " ".join(args.argv[1:]),
                                "results": [r.to_dict() for r in results], "rejected": _rejected(molecules)})


def run_alerts(args: argparse.Namespace) -> None:
    """Train on DATA's first --train molecules, score --alerts LIBRARY, print and write the agreement.

    Args:
        args: the parsed command line.

    Raises:
        GLocalKDError: the library holds no molecules with SMILES.
    """
    from core.evaluation.alert_agreement import first_molecules, measure_alert_agreement
    from core.io.load import load

    library = load(args.alerts)
    if library.kind != "molecule" or not any(m.smiles for m in library.meta):
        raise GLocalKDError(f"{args.alerts}: --alerts needs molecules with SMILES (a SMILES list, table or SDF)")
    train = first_molecules(args.data, args.train)
    for graphs in (train, library):
        print(summary(graphs, more="listed with --json"), file=sys.stderr)
    result, seconds = measure_alert_agreement(_make_model(args), train, library)
    print(f"detector {args.detector}, trained on {counted(len(train), 'molecule')} in {seconds:.1f} s; {result.scored} "
          f"scored, {result.with_alerts} with alerts; rare elements among them: {', '.join(result.rare_elements) or 'none'}")
    for title, rows in (("all molecules", result.all_molecules),
                        ("without molecules whose alert is a rare element alone", result.without_rare)):
        print(f"\n{title}\n{'group':<48} {'mols':>5} {'top1':>6} {'top3':>6} {'chance':>6} {'rar1':>6} {'rar3':>6}  claim")
        for r in rows:  # a group left without molecules (all its alerts on rare elements) has no figures: "-"
            figures = " ".join(f"{v:>6.3f}" if r.molecules else f"{'-':>6}"
                               for v in (r.top1, r.top3, r.chance, r.rarity_top1, r.rarity_top3))
            print(f"{r.group[:48]:<48} {r.molecules:>5} {figures}  {'yes' if r.claim else 'no'}")
    if args.json:
        _write_json(args.json, {"command": "glocalkd evaluate-explanations " + " ".join(args.argv[1:]),
                                "detector": args.detector, "train": len(train), "seconds_train": seconds,
                                "library": str(args.alerts), **result.to_dict(),
                                "rejected": _rejected(train) + _rejected(library)})


def _rejected(graphs) -> list[dict]:
    """A file's rejected rows for the JSON: file, line, id and reason, so that none is lost."""
    return [{"file": graphs.source, "line": r.line, "id": r.id, "reason": r.reason} for r in graphs.rejects]
