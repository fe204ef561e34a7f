"""``glocalkd``: the command line over the core API (no logic of its own)."""
from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

from . import __version__
from .errors import GLocalKDError
from .features import MODES
from .graphset import GraphSet
from .loaders import load


def _add_data_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--smiles-column", help="SMILES column of a CSV/TSV file (found by name if omitted)")
    p.add_argument("--id-column", help="id column of a CSV/TSV file, or SDF data field")
    p.add_argument("--label-column", help="label column of a CSV/TSV file, or SDF data field")


def _load(args: argparse.Namespace) -> GraphSet:
    graphs = load(args.data, smiles_column=args.smiles_column, id_column=args.id_column,
                  label_column=args.label_column)
    print(_summary(graphs), file=sys.stderr)
    return graphs


def _summary(graphs: GraphSet) -> str:
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glocalkd", description="Graph-level anomaly detection by "
                                     "glocal knowledge distillation (GLocalKD, WSDM 2022).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

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
    t.add_argument("--features", choices=MODES, default="auto")
    t.add_argument("--normal-label", help="train only on graphs with this label")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--device", default="auto", help="auto, cpu or cuda")
    _add_data_options(t)

    s = sub.add_parser("score", help="score graphs and write the ranked CSV report")
    s.add_argument("model", help="model file written by 'glocalkd train'")
    s.add_argument("data")
    s.add_argument("-o", "--output", required=True, help="report CSV to write")
    s.add_argument("--top-nodes", type=int, default=5, help="nodes listed per graph in top_nodes")
    s.add_argument("--device", default="auto")
    _add_data_options(s)

    i = sub.add_parser("info", help="summarise a data file: graphs, nodes, labels, rejected rows")
    i.add_argument("data")
    _add_data_options(i)
    return parser


def _train(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from .model import GLocalKD

    graphs = _load(args)
    if args.normal_label is not None:
        graphs = graphs.with_label(args.normal_label)
        if len(graphs) == 0:
            raise GLocalKDError(f"no graphs have label {args.normal_label!r}")
        print(f"training on the {len(graphs)} graphs labelled {args.normal_label}", file=sys.stderr)
    model = GLocalKD(epochs=args.epochs, lr=args.lr, batch_size=args.batch_size, hidden_dim=args.hidden,
                     out_dim=args.out_dim, num_layers=args.layers, lam=args.lam,
                     normalize=args.normalize, features=args.features, seed=args.seed,
                     device=args.device)
    start = time.perf_counter()
    with tqdm(total=args.epochs, unit="epoch", file=sys.stderr, disable=None) as bar:
        def on_epoch(info):
            bar.set_postfix(loss=f"{info.loss:.4g}")
            bar.update(1)
        model.fit(graphs, on_epoch=on_epoch)
    model.save(args.output)
    print(f"trained on {len(graphs)} graphs in {time.perf_counter() - start:.1f} s "
          f"({model.schema_.describe()}, device {model.device_}); final loss {model.loss_history_[-1]:.4g}; "
          f"model written to {args.output}", file=sys.stderr)


def _score(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from .model import GLocalKD
    from .report import write_report

    model = GLocalKD.load(args.model, device=args.device)
    graphs = _load(args)
    with tqdm(total=len(graphs), unit="graph", file=sys.stderr, disable=None) as bar:
        scores = model.score(graphs, on_progress=lambda done, total: bar.update(done - bar.n))
    rows = write_report(args.output, graphs, scores, top_k=args.top_nodes)
    print(f"{len(graphs)} graphs scored, {len(graphs.rejects)} rejected; {rows} rows written to "
          f"{args.output}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "train":
            _train(args)
        elif args.command == "score":
            _score(args)
        else:
            print(_summary(_load_quiet(args)))
    except GLocalKDError as exc:
        print(f"glocalkd: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("glocalkd: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        print(f"glocalkd: error: {exc}", file=sys.stderr)
        return 2
    return 0


def _load_quiet(args: argparse.Namespace) -> GraphSet:
    return load(args.data, smiles_column=args.smiles_column, id_column=args.id_column,
                label_column=args.label_column)
