"""``glocalkd``: the command line over the core API (no logic of its own)."""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import TYPE_CHECKING, Sequence

# Nothing here loads torch: it loads with the first command that needs it, so --help and
# --version answer at once.
from core import __version__
from core.runtime.allocator import retain_freed_memory
from core.detectors.registry import DETECTORS
from core.errors import GLocalKDError
from core.data.feature_modes import MODES

if TYPE_CHECKING:
    from core.data.graphset import GraphSet


def _add_data_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--smiles-column", help="SMILES column of a CSV/TSV file (found by name if omitted)")
    p.add_argument("--id-column", help="id column of a CSV/TSV file, or SDF data field")
    p.add_argument("--label-column", help="label column of a CSV/TSV file, or SDF data field")


def _add_threads_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=_threads, default=0, metavar="N",
                   help="CPU threads for torch's products (0: torch's default, one per core). Where other "
                        "programs keep the cores busy, 1 can be several times faster (README, Performance)")


def _threads(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _set_threads(args: argparse.Namespace) -> None:
    """Apply ``--threads`` for the whole command (torch's intra-op thread count)."""
    if getattr(args, "threads", 0):
        import torch

        torch.set_num_threads(args.threads)


def _load(args: argparse.Namespace) -> GraphSet:
    from core.io.load import load

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
    _add_readout_options(t)
    t.add_argument("--features", choices=MODES, default="auto")
    t.add_argument("--normal-label", help="train only on graphs with this label")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--device", default="auto", help="auto, cpu or cuda")
    _add_threads_option(t)
    _add_data_options(t)

    s = sub.add_parser("score", help="score graphs and write the ranked CSV report")
    s.add_argument("model", help="model file written by 'glocalkd train'")
    s.add_argument("data")
    s.add_argument("-o", "--output", required=True, help="report CSV to write")
    s.add_argument("--top-nodes", type=int, default=5, help="nodes listed per graph in top_nodes")
    s.add_argument("--device", default="auto")
    _add_threads_option(s)
    _add_data_options(s)

    i = sub.add_parser("info", help="summarise a data file: graphs, nodes, labels, rejected rows")
    i.add_argument("data")
    _add_data_options(i)
    _add_evaluate_parser(sub)
    _add_screen_parser(sub)
    _add_merge_parser(sub)
    _add_explanations_parser(sub)
    return parser


def _add_screen_parser(sub) -> None:
    s = sub.add_parser("screen", help="score a large SMILES library in bounded memory (streamed, parallel parsing)")
    s.add_argument("model", help="model file trained on molecules")
    s.add_argument("data", help="SMILES list (.smi) or table (.csv/.tsv/.tab), optionally gzipped")
    s.add_argument("-o", "--output", required=True, help="ranked report CSV to write")
    s.add_argument("--chunk-size", type=int, default=20000, help="molecules per chunk")
    s.add_argument("--workers", type=int, help="parsing processes (default: one per CPU core)")
    s.add_argument("--top-nodes", type=int, default=5)
    s.add_argument("--device", default="auto", help="auto (CUDA when torch sees a GPU), cpu or cuda")
    s.add_argument("--batch-graphs", type=int, default=256,
                   help="molecules per forward pass (CPU: 256 keeps tensors in cache; a GPU wants 4096 or more)")
    s.add_argument("--precision", choices=("float32", "bfloat16"), default="float32",
                   help="bfloat16: dense products in bfloat16, faster on CPUs with AMX/AVX-512 BF16 and on GPUs; "
                        "the ranking agrees closely with float32 (docs/scaling.md)")
    _add_threads_option(s)
    s.add_argument("--smiles-column")
    s.add_argument("--id-column")


def _add_merge_parser(sub) -> None:
    m = sub.add_parser("merge-reports", help="merge the ranked reports of library shards into one ranked report")
    m.add_argument("reports", nargs="+", help="ranked reports written by 'glocalkd screen' with one model file")
    m.add_argument("-o", "--output", required=True, help="merged ranked report CSV to write")


def _add_explanations_parser(sub) -> None:
    x = sub.add_parser("evaluate-explanations",
                       help="do node errors point at planted anomalous atoms? (graph- and node-level AUC)")
    x.add_argument("data", help="normal molecules: SMILES list or table (e.g. a MOSES file)")
    x.add_argument("--train", type=int, default=2000, help="normal molecules to train on")
    x.add_argument("--normal", type=int, default=500, help="held-out normal molecules")
    x.add_argument("--local", type=int, default=400, help="locally-anomalous copies (planted atoms)")
    x.add_argument("--global", dest="global_", type=int, default=300, help="globally-anomalous copies")
    x.add_argument("--epochs", type=int, default=150)
    x.add_argument("--features", choices=("atom", "atom-rings"), default="atom",
                   help="atom-rings: add the sizes of each atom's rings to the atom features")
    _add_readout_options(x)
    x.add_argument("--seed", type=int, default=0)
    x.add_argument("--device", default="auto")
    _add_threads_option(x)
    x.add_argument("--json", help="write the results as JSON here")


def _add_evaluate_parser(sub) -> None:
    e = sub.add_parser("evaluate", help="reproduce the paper's protocols: ROC-AUC per fold or seed, mean ± std")
    e.add_argument("data", help="labelled TU collection or molecule file (the training file for --protocol split)")
    e.add_argument("--protocol", choices=("cv", "split"), default="cv",
                   help="cv: stratified k-fold CV; split: train on DATA, score --test (Tox21)")
    e.add_argument("--test", help="testing file of the split protocol (e.g. Tox21_HSE_testing)")
    e.add_argument("--anomaly", default="minority",
                   help="anomalous class: minority (paper's text), first-label (authors' loader) or a label value")
    e.add_argument("--folds", type=int, default=5)
    e.add_argument("--cv-seed", type=int, default=1, help="seed of the fold shuffle (the paper's: 1)")
    e.add_argument("--seeds", type=int, default=5, help="split protocol: number of model seeds")
    e.add_argument("--seed", type=int, default=0, help="model seed (the first one for split)")
    e.add_argument("--epochs", type=int, default=150)
    e.add_argument("--lr", type=float, help="learning rate (default: the paper's for this data set, else 1e-4)")
    e.add_argument("--batch-size", type=int, help="batch size (default: the paper's, 300 or 2000 for Tox21)")
    e.add_argument("--hidden", type=int, default=512, help="hidden width")
    e.add_argument("--out-dim", type=int, default=256, help="embedding width")
    e.add_argument("--layers", type=int, default=3)
    e.add_argument("--lam", type=float, default=1.0, help="weight of the node term")
    e.add_argument("--normalize", action="store_true", help="L2-normalise each layer's node embeddings")
    _add_readout_options(e)
    e.add_argument("--features", choices=MODES, default="auto")
    e.add_argument("--contamination", type=float, default=0.0,
                   help="share of anomalies in the training set (paper: 0 to 0.16)")
    e.add_argument("--train-fraction", type=float, default=1.0, help="share of the normal training graphs kept")
    e.add_argument("--score", choices=("both", "graph", "node"), default="both",
                   help="primary score: both terms, graph term only or node term only (all are recorded)")
    e.add_argument("--method", default="glocalkd", type=str.lower, choices=list(DETECTORS),
                   help="detector: GLocalKD or one of the paper's competitors (same folds and metrics)")
    e.add_argument("--resume", action="store_true",
                   help="keep the folds already in --json (same settings) and run only the missing ones")
    e.add_argument("--resume-from", action="append", default=[], metavar="JSON",
                   help="also keep the folds of this partial result (repeatable): merges runs made side by side")
    e.add_argument("--only", type=_fold_numbers, metavar="K[,K...]",
                   help="run only these folds (split: seed runs), numbered from 1, e.g. 2,3 here and 4,5 in "
                        "another process; merge them afterwards with --resume-from")
    e.add_argument("--ensemble", type=int, default=1, help="average this many models with independent targets")
    e.add_argument("--standardize", action="store_true", help="z-score TU node attributes (training statistics)")
    _add_threads_option(e)
    e.add_argument("--device", default="auto")
    e.add_argument("--json", help="write the full results as JSON (updated after every fold)")
    e.add_argument("--markdown", help="write a Markdown table with the paper's values")


def _fold_numbers(text: str) -> list[int]:
    """``2,3`` -> [2, 3] for --only."""
    try:
        numbers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected fold numbers such as 2,3, not {text!r}") from None
    if not numbers or min(numbers) < 1:
        raise argparse.ArgumentTypeError(f"expected fold numbers from 1, such as 2,3, not {text!r}")
    return numbers


def _add_readout_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--node-max", action="store_true",
                        help="add each graph's largest node error to the node term (finds a few odd atoms "
                             "in a large molecule)")
    parser.add_argument("--size-term", action="store_true",
                        help="add the sum-pooled embedding error to the graph term (finds graphs made of many "
                             "normal parts)")


def _train(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from core.detectors.glocalkd import GLocalKD

    graphs = _load(args)
    if args.normal_label is not None:
        graphs = graphs.with_label(args.normal_label)
        if len(graphs) == 0:
            raise GLocalKDError(f"no graphs have label {args.normal_label!r}")
        print(f"training on the {len(graphs)} graphs labelled {args.normal_label}", file=sys.stderr)
    model = GLocalKD(epochs=args.epochs, lr=args.lr, batch_size=args.batch_size, hidden_dim=args.hidden,
                     out_dim=args.out_dim, num_layers=args.layers, lam=args.lam,
                     normalize=args.normalize, features=args.features, seed=args.seed,
                     device=args.device, node_max=args.node_max, size_term=args.size_term)
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

    from core.detectors.glocalkd import GLocalKD
    from core.io.report import write_report

    model = GLocalKD.load(args.model, device=args.device)
    graphs = _load(args)
    with tqdm(total=len(graphs), unit="graph", file=sys.stderr, disable=None) as bar:
        scores = model.score(graphs, on_progress=lambda done, total: bar.update(done - bar.n))
    rows = write_report(args.output, graphs, scores, top_k=args.top_nodes)
    print(f"{len(graphs)} graphs scored, {len(graphs.rejects)} rejected; {rows} rows written to "
          f"{args.output}", file=sys.stderr)


def _screen(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from core.detectors.glocalkd import GLocalKD
    from core.screening.pipeline import screen

    model = GLocalKD.load(args.model, device=args.device)
    with tqdm(unit="mol", file=sys.stderr, disable=None) as bar:
        summary = screen(model, args.data, args.output, chunk_size=args.chunk_size, workers=args.workers,
                         smiles_column=args.smiles_column, id_column=args.id_column, top_k=args.top_nodes,
                         batch_graphs=args.batch_graphs, precision=args.precision,
                         on_progress=lambda read, scored: bar.update(read - bar.n))
    if summary.stopped:
        print(f"stopped after line {summary.last_line:,}: the report holds every row read up to there",
              file=sys.stderr)
    print(f"{summary.rows:,} rows: {summary.scored:,} scored, {summary.rejected:,} rejected, in "
          f"{summary.seconds:.1f} s ({summary.molecules_per_second:,.0f} molecules/s); ranked report written to "
          f"{summary.report}", file=sys.stderr)


def _explanations(args: argparse.Namespace) -> None:
    import json
    from itertools import islice

    from core.evaluation.explanations import evaluate_explanations, make_planted
    from core.detectors.glocalkd import GLocalKD
    from core.screening.pipeline import iter_smiles_rows

    need = args.train + args.normal + 4 * (args.local + args.global_)
    smiles = [s for _, _, s in islice(iter_smiles_rows(args.data), need)]
    planted = make_planted(smiles, args.train, args.normal, args.local, args.global_, seed=args.seed)
    model = GLocalKD(epochs=args.epochs, seed=args.seed, device=args.device, node_max=args.node_max,
                     size_term=args.size_term, features=args.features)
    results = evaluate_explanations(planted, model)
    for r in results:
        print(f"node errors {r.node_error}: graph AUC local {r.graph_auc_local:.3f}, global {r.graph_auc_global:.3f}; "
              f"node AUC {r.node_auc:.3f}, top-k hit rate {r.topk_hit_rate:.3f}")
    for name, row in results[0].readouts.items():
        print(f"readout {name}: graph AUC local {row['local']:.3f}, global {row['global']:.3f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"command": "glocalkd evaluate-explanations " + " ".join(sys.argv[2:]),
                       "results": [r.to_dict() for r in results]}, fh, indent=2)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as the command's other messages are: one line on stderr, no source location."""
    print(f"glocalkd: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    retain_freed_memory()  # this process is ours: see core/allocator.py
    _set_threads(args)
    with warnings.catch_warnings():  # restores Python's own display when main returns
        warnings.showwarning = _show_warning
        try:
            _run(args, argv)
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


def _run(args: argparse.Namespace, argv: Sequence[str] | None) -> None:
    if args.command == "train":
        _train(args)
    elif args.command == "evaluate":
        from core.evaluation.protocol import run_from_args

        args.argv = list(sys.argv[1:] if argv is None else argv)
        run_from_args(args)
    elif args.command == "score":
        _score(args)
    elif args.command == "screen":
        _screen(args)
    elif args.command == "merge-reports":
        from core.screening.pipeline import merge_reports

        rows = merge_reports(args.reports, args.output)
        print(f"{rows:,} rows from {len(args.reports)} reports merged into {args.output}", file=sys.stderr)
    elif args.command == "evaluate-explanations":
        _explanations(args)
    else:
        print(_summary(_load_quiet(args)))


def _load_quiet(args: argparse.Namespace) -> GraphSet:
    from core.io.load import load

    return load(args.data, smiles_column=args.smiles_column, id_column=args.id_column,
                label_column=args.label_column)
