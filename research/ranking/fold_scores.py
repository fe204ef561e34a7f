"""Per-fold scores of the views that refit in seconds, on the harness's folds, for the analyses
of analyse.py (label-free combinations, known anomalies, the simulated review loop).

Usage (repository root; one row at a time, one thread)::

    PYTHONPATH=. OMP_NUM_THREADS=1 python research/ranking/fold_scores.py ROW [ROW ...] [--views a,b]

ROW is a row of the competitor table (``AIDS``, ``BZR:first-label``, ..., ``Tox21_p53``,
``REDDIT-BINARY``; see ROWS). The folds are the harness's own (``core.evaluation.protocol``:
5-fold stratified CV with seed 1, or Tox21's training / testing files with model seeds 0-4).
In each fold the training part's normal graphs are split as the consensus splits them
(``core.detectors.conformal.calibration_split(n, 0.2, seed)``, seed = the fold's model seed; graph by
graph, as the consensus split every row when these tables were made: it now draws hERG's molecules by
scaffold, :func:`core.detectors.conformal.calibration_groups`);
every view is built by the registry with that seed, fitted on the fit part, and scores the
calibration graphs, the test graphs and the training part's anomalies (the pool the harness
draws known anomalies from; never trained on). Writes ``research/ranking/out/<row>/fold<k>.npz``
(ignored by git): ``y`` (test anomalous 0/1), ``known_pool`` (training-part anomaly count), and
per view ``<view>:cal``, ``<view>:test``, ``<view>:known`` (ECFP and the property view only where the graphs
are molecules; elsewhere ``<view>:not_applicable``, the reason). With WL-LESINN,
also the WL features that the review loop's similarity view reads (``core.detectors.review``):
``wl:test:*`` (the test graphs'), ``wl:fit:*`` (the fit graphs', its reference) and ``wl:known:*``
(the known-anomaly pool's, for the review loop's classifier on the known-anomaly path), each a sparse
matrix's ``data``, ``indices``, ``indptr``, ``shape`` and the squared norms ``sq``.

The ``glocalkd`` view (``--views glocalkd``, not among the defaults: its per-fold fits take hours
on a CPU) is the default consensus's GLocalKD component, built as ``make_detector()``'s consensus
builds it (``Consensus._make``: the library's GLocalKD defaults, the fold's seed, ``--device``)
and fitted on the same fit part. It goes to its own file, ``fold<k>.glocalkd.npz`` (``y``,
``known_pool``, ``glocalkd:cal/test/known``, ``glocalkd:seconds``, ``glocalkd:loss``, ``glocalkd:epochs``), written
whole or not at all, so GPU runs (``gpu_job.py``) never touch the fast views' ``fold<k>.npz``;
:func:`load_fold` merges the two. ``--epochs N`` overrides its epochs, for trying the pipeline
out only; ``--folds 1,2`` limits the folds. ``FOLD_SCORES_OUT=folder`` writes elsewhere than ``out/``.

GLocalKD's fold files at the library's epochs are committed in ``fits/<row>/`` (``--keep`` copies
the finished ones of ``out/`` there): :func:`load_fold` reads them when ``out/`` has none, and a
run skips the folds they hold, so a fresh checkout recombines the default consensus in seconds.
Fitted on one CPU thread, they reproduce the default behind docs/results.md to the last digit on
the 13 rows fitted on CPUs before (BZR: 0.7194071610125533 in both; REDDIT-BINARY's were a GPU's).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

DATA = Path(os.environ.get("DATASETS", "../shared/datasets"))
OUT = Path(os.environ.get("FOLD_SCORES_OUT", Path(__file__).resolve().parent / "out"))  # env: to try things out
VIEWS = ("size", "wl-lesinn", "wl-count-lesinn", "spectral-lesinn", "kme-lesinn")  # --views ecfp-nn adds ECFP
from research.consensus.dump import ROWS  # noqa: E402  (row -> data, protocol, testing file, anomaly rule)


def row_folder(row: str) -> Path:
    return OUT / row.replace(":", "__")


def folds(row: str):
    """[(k, seed, training-part normal GraphSet, training-part anomalies, test GraphSet, y)]: the harness's folds."""
    from core import load
    from core.evaluation.protocol import fold_runs, choose_anomaly_label

    data, protocol, test, rule = ROWS[row]
    graphs = load(DATA / data)
    graphs = graphs.subset([i for i, lab in enumerate(graphs.labels) if lab is not None])
    anomaly = choose_anomaly_label(graphs, rule)
    labels = np.array(graphs.labels, dtype=object)
    is_anom = labels == anomaly
    test_graphs = load(DATA / test) if test else None
    runs, test_set, test_anom = fold_runs(protocol, labels, 5, 1, [0, 1, 2, 3, 4] if test else [0], test_graphs,
                                           anomaly, lambda _m: None, row)
    for k, seed, train_idx, test_idx in runs:
        normal = graphs.subset(train_idx[~is_anom[train_idx]].tolist())
        known = graphs.subset(train_idx[is_anom[train_idx]].tolist())
        if test_idx is None:
            yield k, seed, normal, known, test_set, test_anom.astype(np.int8)
        else:
            yield k, seed, normal, known, graphs.subset(test_idx.tolist()), is_anom[test_idx].astype(np.int8)


SEPARATE = ("glocalkd",)  # views written to their own file per fold, fold<k>.<view>.npz
# The committed copies of SEPARATE views' fold files, fits/<row>/fold<k>.<view>.npz (``--keep`` puts
# them there): GLocalKD's fits take hours on a CPU, and a fresh checkout has no out/ folder.
FITS = Path(__file__).resolve().parent / "fits"


def fold_paths(folder: Path) -> list[Path]:
    """The fast views' per-fold files of a row folder, ``fold<k>.npz``, by fold number."""
    paths = [p for p in folder.glob("fold*.npz") if p.stem[4:].isdigit()] if folder.exists() else []
    return sorted(paths, key=lambda p: int(p.stem[4:]))


def separate_file(path: Path, view: str) -> Path | None:
    """The ``fold<k>.<view>.npz`` of the fold file ``path``: beside it, else the committed copy in
    FITS; None when neither exists."""
    name = f"{path.stem}.{view}.npz"
    for candidate in (path.with_name(name), FITS / path.parent.name / name):
        if candidate.exists():
            return candidate
    return None


def load_fold(path: Path) -> dict:
    """A fold's saved scores: ``fold<k>.npz`` merged with the ``fold<k>.<view>.npz`` of SEPARATE
    that exist beside it or in FITS (whose ``y`` must be the same fold's)."""
    d = dict(np.load(path))
    for view in SEPARATE:
        extra = separate_file(path, view)
        if extra is not None:
            e = dict(np.load(extra))
            if not np.array_equal(e["y"], d["y"]) or int(e["known_pool"]) != int(d["known_pool"]):
                raise ValueError(f"{extra}: not the same fold as {path.name}")
            d.update({key: v for key, v in e.items() if key.startswith(f"{view}:")})
    return d


def fit_glocalkd(normal, seed: int, device: str, epochs: int | None):
    """The default consensus's GLocalKD component of a fold, fitted on the fit part, as the consensus
    fits it; returns ``(model, fit part, calibration part)``."""
    from core.detectors.conformal import calibration_split
    from core.detectors.registry import make_detector

    consensus = make_detector("consensus", seed=seed, device=device,
                              component_params=None if epochs is None else {"glocalkd": {"epochs": epochs}})
    fit_idx, cal_idx = calibration_split(len(normal), consensus.calibration, consensus.seed)
    fit, cal = normal.subset(fit_idx), normal.subset(cal_idx)
    model = consensus._make("glocalkd")  # the component exactly as the consensus makes it
    model.fit(fit)
    return model, fit, cal


def save_whole(path: Path, arrays: dict) -> None:
    """np.savez to a temporary name, then renamed: a killed run leaves no partial file."""
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)


def dump_separate(row: str, view: str, k: int, seed: int, normal, known, test, y, device: str,
                  epochs: int | None) -> float | None:
    """Write ``fold<k>.<view>.npz`` of one fold (skipped when it exists, or at the library's
    epochs when FITS holds it); returns its seconds or None."""
    path = row_folder(row) / f"fold{k}.{view}.npz"
    if path.exists() or (epochs is None and separate_file(path.with_name(f"fold{k}.npz"), view) is not None):
        return None
    t0 = time.perf_counter()
    model, _fit, cal = fit_glocalkd(normal, seed, device, epochs)
    out = {"y": y, "known_pool": np.array(len(known))}
    for part, graphs in (("cal", cal), ("test", test), ("known", known)):
        out[f"{view}:{part}"] = model.score(graphs).score.astype(np.float64)
    seconds = time.perf_counter() - t0
    out[f"{view}:seconds"] = np.array(seconds)
    out[f"{view}:loss"] = np.asarray(model.loss_history_, dtype=np.float64)
    out[f"{view}:epochs"] = np.array(model.epochs)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_whole(path, out)
    print(f"{row} fold {k} {view} ({model.device_}): {seconds:.1f} s", file=sys.stderr, flush=True)
    return seconds


def dump_row(row: str, views: list[str], device: str = "auto", epochs: int | None = None,
             only: set[int] | None = None) -> None:
    from core.detectors.conformal import DEFAULT_CALIBRATION_FRACTION, calibration_split
    from core.detectors.registry import make_detector
    from core.errors import NotApplicableError

    folder = row_folder(row)
    folder.mkdir(parents=True, exist_ok=True)
    separate = [v for v in views if v in SEPARATE]
    views = [v for v in views if v not in SEPARATE]
    for k, seed, normal, known, test, y in folds(row):
        if only is not None and k not in only:
            continue
        for view in separate:
            dump_separate(row, view, k, seed, normal, known, test, y, device, epochs)
        if not views:
            continue
        path = folder / f"fold{k}.npz"
        saved = dict(np.load(path)) if path.exists() else {}
        fit_idx, cal_idx = calibration_split(len(normal), DEFAULT_CALIBRATION_FRACTION, seed)
        fit, cal = normal.subset(fit_idx), normal.subset(cal_idx)
        saved.update(y=y, known_pool=np.array(len(known)))
        for view in views:
            if f"{view}:test" in saved or f"{view}:not_applicable" in saved:
                continue
            t0 = time.perf_counter()
            try:
                model = make_detector(view, seed=seed).fit(fit)
            except NotApplicableError as exc:  # ECFP or the property view on graphs that are not molecules
                saved[f"{view}:not_applicable"] = np.array(str(exc))  # the candidate is the default there
                continue
            saved[f"{view}:cal"] = model.score(cal).score.astype(np.float64)
            saved[f"{view}:test"] = model.score(test).score.astype(np.float64)
            saved[f"{view}:known"] = model.score(known).score.astype(np.float64)
            if view == "wl-lesinn":
                saved.update(wl_features(model, test, known))
            print(f"{row} fold {k} {view}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        np.savez(path, **saved)


def wl_features(model, test, known=None) -> dict:
    """The WL features of the test graphs, of the fit graphs and (given) of the training part's
    anomalies, as the review loop reads them."""
    from core.detectors.graph_kernels import labelled_graphs

    kernel = model.kernel_
    out = {}
    parts = [("test", kernel.kernel_.transform(labelled_graphs(test))),
             ("fit", (kernel.train_features_, kernel.train_squares_))]
    if known is not None and len(known):
        parts.append(("known", kernel.kernel_.transform(labelled_graphs(known))))
    for part, (features, squares) in parts:
        out.update({f"wl:{part}:data": features.data, f"wl:{part}:indices": features.indices,
                    f"wl:{part}:indptr": features.indptr, f"wl:{part}:shape": np.array(features.shape),
                    f"wl:{part}:sq": np.asarray(squares, dtype=np.float64)})
    return out


def kernel_columns(d: dict):
    """``core.detectors.review.KernelColumns`` of a fold's saved WL features, or None without them."""
    import scipy.sparse as sp

    from core.detectors.review import KernelColumns

    if "wl:test:data" not in d:
        return None
    f = {part: sp.csr_matrix((d[f"wl:{part}:data"], d[f"wl:{part}:indices"], d[f"wl:{part}:indptr"]),
                             shape=tuple(d[f"wl:{part}:shape"])) for part in ("test", "fit")}
    return KernelColumns(f["test"], d["wl:test:sq"], f["fit"], d["wl:fit:sq"])


def keep_fits() -> int:
    """Copy the SEPARATE views' fold files of OUT, made at the library's epochs, into FITS."""
    from core import detector_defaults

    kept = 0
    for view in SEPARATE:
        for path in sorted(OUT.glob(f"*/fold*.{view}.npz")):
            with np.load(path) as d:
                if int(d[f"{view}:epochs"]) != detector_defaults(view)["epochs"]:  # a try-out (--epochs) is not kept
                    print(f"{path}: {int(d[f'{view}:epochs'])} epochs, not the library's; left out", file=sys.stderr)
                    continue
            target = FITS / path.parent.name / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            kept += 1
    print(f"{kept} fold files in {FITS}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="*", default=list(ROWS))
    parser.add_argument("--views", default=",".join(VIEWS), help="add glocalkd for the GLocalKD component")
    parser.add_argument("--device", default="auto", help="where GLocalKD runs: auto, cpu, cuda")
    parser.add_argument("--epochs", type=int, default=None, help="GLocalKD's epochs, to try the pipeline out only")
    parser.add_argument("--folds", default=None, help="fold numbers, e.g. 1,2 (default: all)")
    parser.add_argument("--keep", action="store_true",
                        help="copy every finished out/<row>/fold<k>.glocalkd.npz into fits/ (to commit) and stop")
    args = parser.parse_args(argv)
    if args.keep:
        return keep_fits()
    only = None if args.folds is None else {int(v) for v in args.folds.split(",")}
    for row in args.rows:
        dump_row(row, args.views.split(","), args.device, args.epochs, only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
