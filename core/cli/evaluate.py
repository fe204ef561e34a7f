"""``glocalkd evaluate``: the paper's protocols on labelled data (argument parsing and printing only)."""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Sequence

from core.cli.options import (add_data_options, add_device_option, add_readout_options, add_standardise_option,
                              add_threads_option, data_columns, positive_count, seed_value)
from core.data.feature_modes import MODES
from core.detectors.registry import DEFAULT_DETECTOR, DETECTORS
from core.errors import GLocalKDError

if TYPE_CHECKING:
    from core.evaluation.results import EvaluationResult


def add_parser(sub) -> None:
    """Add ``evaluate``: the paper's protocols on labelled data, with the model and protocol options.

    Args:
        sub: the ``glocalkd`` parser's subparsers (``add_subparsers``).
    """
    e = sub.add_parser("evaluate", help="reproduce the paper's protocols: ROC-AUC per fold or seed, mean ± std")
    e.add_argument("data", help="labelled TU collection or molecule file (the training file for --protocol split)")
    e.add_argument("--protocol", choices=("cv", "split"), default="cv",
                   help="cv: stratified k-fold CV; split: train on DATA, score --test (Tox21)")
    e.add_argument("--test", help="testing file of the split protocol (e.g. Tox21_HSE_testing)")
    e.add_argument("--anomaly", default="minority",
                   help="anomalous class: minority (paper's text), first-label (authors' loader) or a label value")
    e.add_argument("--folds", type=int, default=5)
    e.add_argument("--cv-seed", type=seed_value, default=1, help="seed of the fold shuffle (the paper's: 1)")
    e.add_argument("--seeds", type=positive_count, default=None,
                   help="split protocol: number of model seeds (default 5)")
    e.add_argument("--seed", type=seed_value, default=0, help="model seed (the first one for split)")
    # the GCN settings: left out, the detector's own defaults (GLocalKD's: the paper's)
    e.add_argument("--epochs", type=int, help="training epochs (default: the detector's)")
    e.add_argument("--lr", type=float, help="learning rate (default with --method glocalkd: the paper's for this data "
                                            "set, else 1e-4; the consensus's GLocalKD: GLocalKD's)")
    e.add_argument("--batch-size", type=int, help="batch size (default with --method glocalkd: the paper's, 300 or "
                                                  "2000 for Tox21; the consensus's GLocalKD: GLocalKD's)")
    e.add_argument("--hidden", type=int, help="hidden width (default: the detector's)")
    e.add_argument("--out-dim", type=int, help="embedding width (default: the detector's)")
    e.add_argument("--layers", type=int, help="GCN layers (default: the detector's)")
    e.add_argument("--lam", type=float, help="weight of the node term (default: the detector's)")
    e.add_argument("--normalize", action="store_true", help="L2-normalise each layer's node embeddings")
    add_readout_options(e)
    e.add_argument("--features", choices=MODES, help="node features (default: the detector's)")
    e.add_argument("--contamination", type=float, default=0.0,
                   help="share of anomalies in the training set (paper: 0 to 0.16)")
    e.add_argument("--train-fraction", type=float, default=1.0, help="share of the normal training graphs kept")
    e.add_argument("--score", choices=("both", "graph", "node"), default="both",
                   help="primary score: both terms, graph term only or node term only (all are recorded)")
    e.add_argument("--method", default=DEFAULT_DETECTOR, type=str.lower, choices=list(DETECTORS),
                   help=f"detector (default: {DEFAULT_DETECTOR}, the product's default; glocalkd: the paper's "
                        "method at the paper's settings; or one of the paper's competitors; same folds and metrics)")
    e.add_argument("--known-anomalies", type=int, default=0, metavar="K",
                   help="with --method consensus: K anomalies of each fold's training part (never its test part, "
                        "never trained on) weigh the consensus's views, as glocalkd train --known-anomalies does; "
                        "the equal-weight AUC is recorded beside it")
    e.add_argument("--resume", action="store_true",
                   help="keep the folds already in --json (same settings) and run only the missing ones")
    e.add_argument("--resume-from", action="append", default=[], metavar="JSON",
                   help="also keep the folds of this partial result (repeatable): merges runs made side by side")
    e.add_argument("--only", type=_fold_numbers, metavar="K[,K...]",
                   help="run only these folds (split: seed runs), numbered from 1, e.g. 2,3 here and 4,5 in "
                        "another process; merge them afterwards with --resume-from")
    e.add_argument("--ensemble", type=int, default=1, help="average this many models with independent targets")
    e.add_argument("--zscore-attributes", action="store_true",
                   help="z-score TU node attributes with the training graphs' statistics")
    add_standardise_option(e, training=True)  # the molecules' standardising, as train's
    add_threads_option(e)
    add_data_options(e)
    add_device_option(e)
    e.add_argument("--scheduler", metavar="local:N|tcp://HOST:PORT",
                   help="run the folds (split: seed runs) as tasks on a Dask cluster (docs/scaling.md)")
    e.add_argument("--json", help="write the full results as JSON (updated after every fold)")
    e.add_argument("--markdown", help="write a Markdown table with the paper's values")


def consensus_gcn_options(args: argparse.Namespace) -> dict | None:
    """The GCN options given for the consensus's GLocalKD component.

    The paper's per-data-set learning rate and batch size apply to ``--method glocalkd`` only;
    with every option at its default the consensus is evaluated exactly as ``glocalkd train``
    builds it.

    Args:
        args: the parsed command line.

    Returns:
        ``{"glocalkd": {option: value}}`` of the options that differ from GLocalKD's own
        defaults, or None when there are none.
    """
    from core.detectors.registry import make_detector

    defaults = make_detector("glocalkd").get_params()
    given = dict(epochs=args.epochs, lr=args.lr, batch_size=args.batch_size, hidden_dim=args.hidden,
                 out_dim=args.out_dim, num_layers=args.layers, lam=args.lam, normalize=args.normalize,
                 features=args.features, node_max=args.node_max, size_term=args.size_term)
    options = {k: v for k, v in given.items() if v is not None and v != defaults[k]}
    return {"glocalkd": options} if options else None


def _fold_numbers(text: str) -> list[int]:
    """``2,3`` -> [2, 3] for --only."""
    try:
        numbers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected fold numbers such as 2,3, not {text!r}") from None
    if not numbers or min(numbers) < 1:
        raise argparse.ArgumentTypeError(f"expected fold numbers from 1, such as 2,3, not {text!r}")
    return numbers


def _reproducing_argv(argv: Sequence[str]) -> list[str]:
    """The command line without what only says how a run was split up or resumed: the
    recorded command reproduces the whole evaluation."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--resume":
            continue
        elif a in ("--resume-from", "--only"):
            skip = True
        elif not a.startswith(("--resume-from=", "--only=")):
            out.append(a)
    return out


def run(args: argparse.Namespace) -> EvaluationResult:
    """Evaluate as the arguments say; print the summary and write the JSON and Markdown asked for.

    The options given go to :func:`core.evaluation.protocol.evaluate`, which chooses the rest
    (the paper's learning rate and batch size among them); with ``--scheduler`` the folds run on
    a Dask cluster. The JSON is rewritten
    after every fold; the recorded command leaves out how the run was split or resumed.

    Args:
        args: the parsed command line.

    Returns:
        The evaluation result (the exit status is 0).

    Raises:
        GLocalKDError: ``--resume`` without ``--json``, a result file to resume from does not exist, or as
            :func:`core.evaluation.protocol.evaluate`.
    """
    from core.detectors.registry import accepted_params
    from core.evaluation.protocol import evaluate
    from core.evaluation.results import read_json, write_json, write_markdown
    from core.io.load import is_molecule_list

    if args.standardise and not is_molecule_list(args.data):  # the option's old meaning here, said
        raise GLocalKDError("--standardise standardises molecules (as train's does); a TU collection's node "
                            "attributes are z-scored with --zscore-attributes")
    if args.seeds is not None and args.protocol != "split":  # it ran one seed and recorded seeds: [0], unsaid
        raise GLocalKDError("--seeds is the split protocol's number of model seeds; cross-validation trains one "
                            "model per fold with --seed (and splits the folds by --cv-seed)")
    if getattr(args, "resume", False) and not args.json:  # else every fold would run again, unasked
        raise GLocalKDError("--resume keeps the folds already in the --json file: name that file with --json")
    if getattr(args, "scheduler", None):  # the same evaluation, its folds as tasks on a Dask cluster
        from functools import partial

        from core.evaluation.cluster import evaluate_on_cluster
        evaluate = partial(evaluate_on_cluster, args.scheduler)  # noqa: F811

    method = getattr(args, "method", DEFAULT_DETECTOR)
    accepted = accepted_params(method)
    params = dict(epochs=args.epochs, lr=args.lr, batch_size=args.batch_size, hidden_dim=args.hidden,
                  out_dim=args.out_dim, num_layers=args.layers, lam=args.lam, normalize=args.normalize,
                  features=args.features, device=args.device, node_max=args.node_max, size_term=args.size_term)
    if "component_params" in accepted:  # the consensus: the GCN options given go to its GLocalKD component
        params = {"device": args.device, "component_params": consensus_gcn_options(args)}
    else:  # given ones only (the others: the detector's defaults); evaluate says those the detector does not use
        params = {k: v for k, v in params.items() if v is not None and v is not False}
    seeds = list(range(args.seed, args.seed + (args.seeds or 5))) if args.protocol == "split" else [args.seed]
    argv = _reproducing_argv(getattr(args, "argv", None) or [])
    command = "glocalkd " + " ".join(shlex.quote(a) for a in argv) if argv else None
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    def on_epoch(info) -> None:
        every = max(1, info.epochs // 10)
        if info.epoch % every == 0 or info.epoch == info.epochs:
            log(f"    epoch {info.epoch}/{info.epochs} loss {info.loss:.5g} ({info.seconds:.2f} s)")

    def on_fold(partial: EvaluationResult) -> None:
        partial.command = command
        if args.json:
            write_json(partial, args.json)

    earlier = list(getattr(args, "resume_from", None) or [])
    if getattr(args, "resume", False) and args.json and Path(args.json).exists():
        earlier.insert(0, args.json)
    for path in earlier:
        if not Path(path).exists():
            raise GLocalKDError(f"{path}: no such result file to resume from")
    resume = [read_json(path) for path in earlier] or None
    result = evaluate(args.data, protocol=args.protocol, test=args.test, anomaly=args.anomaly, folds=args.folds,
                      cv_seed=args.cv_seed, seeds=seeds, model_params=params, contamination=args.contamination,
                      train_fraction=args.train_fraction, score=args.score, ensemble=args.ensemble,
                      zscore_attributes=args.zscore_attributes, standardise=args.standardise, method=method,
                      known_anomalies=args.known_anomalies, resume=resume,
                      only=getattr(args, "only", None), on_progress=log, on_epoch=on_epoch, on_fold=on_fold,
                      columns=data_columns(args))
    result.command = command
    print(result.summary())
    if args.json:
        write_json(result, args.json)
        print(f"results written to {args.json}", file=sys.stderr)
    if args.markdown:
        write_markdown(result, args.markdown)
        print(f"table written to {args.markdown}", file=sys.stderr)
    return result
