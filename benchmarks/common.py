"""Helpers shared by the benchmarks (not a test): memory sampling, the machine's matmul rate,
the GCN's dense FLOPs per node and the evaluation harness's first training fold."""
from __future__ import annotations

import resource
import time
from pathlib import Path

import numpy as np
import torch


def peak_rss_mb() -> float:
    """Peak resident memory of this process and its finished children, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (own + kids) / 1024.0


class MemorySampler:
    """Peak memory of this process and its children, sampled in a thread: the sum of their PSS
    (shared pages split fairly between the processes, so forked workers are not counted twice).

    A PSS sample makes the kernel walk every resident page: about 30 ms of CPU for a screening's
    three processes (1.7 GB). Sampling every 0.2 s took 15% of a core, counted as the scoring
    process's CPU; once a second takes 3%, and ``cpu_seconds`` says how much, so callers can
    take it out."""

    def __init__(self, every: float = 1.0):
        import threading

        import psutil

        self.peak_mb = 0.0
        self.peak_main_mb = 0.0  # this process alone (the scoring side of screening)
        self.peak_children_mb = 0.0  # its children together (the parsing workers)
        self.samples: list[tuple[float, float, float]] = []  # (seconds since start, main MB, children MB)
        self.cpu_seconds = 0.0  # the sampling thread's own CPU time
        self._every = every
        self._psutil = psutil
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> tuple[float, float]:
        """PSS of this process and the sum over its children, in MB."""
        me = self._psutil.Process()
        sizes = []
        for p in [me] + me.children(recursive=True):
            try:
                info = p.memory_full_info()
                sizes.append(getattr(info, "pss", info.rss))
            except (self._psutil.NoSuchProcess, self._psutil.AccessDenied):
                sizes.append(0)
        return sizes[0] / 2**20, sum(sizes[1:]) / 2**20

    def _run(self) -> None:
        start = time.perf_counter()
        while not self._stop.is_set():
            main, children = self._sample()
            self.samples.append((time.perf_counter() - start, main, children))
            self.cpu_seconds = time.thread_time()
            self.peak_mb = max(self.peak_mb, main + children)
            self.peak_main_mb = max(self.peak_main_mb, main)
            self.peak_children_mb = max(self.peak_children_mb, children)
            self._stop.wait(self._every)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def peaks_by_part(self, parts: int = 10) -> list[dict | None]:
        """Peak PSS of the main process and of the children in each of ``parts`` equal slices of
        the sampled time: flat memory shows as level peaks from slice to slice."""
        if not self.samples:
            return []
        end = self.samples[-1][0] or 1.0
        out: list[dict | None] = [None] * parts  # None: no sample fell in that slice (a short run)
        for t, main, children in self.samples:
            k = min(int(parts * t / end), parts - 1)
            prev = out[k] or {"main_mb": 0.0, "children_mb": 0.0}
            out[k] = {"main_mb": round(max(prev["main_mb"], main), 1),
                      "children_mb": round(max(prev["children_mb"], children), 1)}
        return out


def matmul_gflops(n: int = 2048, repeats: int = 20, dtype: torch.dtype = torch.float32) -> float:
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    torch.mm(a, b)
    start = time.perf_counter()
    for _ in range(repeats):
        torch.mm(a, b)
    return 2 * n**3 * repeats / (time.perf_counter() - start) / 1e9


def gcn_flops_per_node(in_dim: int, hidden: int = 512, out: int = 256, layers: int = 3) -> float:
    """Dense FLOPs of one network's forward pass per node (the sparse propagation is far smaller)."""
    dims = [in_dim] + [hidden] * (layers - 1) + [out]
    return float(sum(2 * a * b for a, b in zip(dims[:-1], dims[1:])))


def first_fold_normals(data: Path, dataset: str):
    """The normal graphs of the evaluation harness's first training fold of ``dataset``."""
    from sklearn.model_selection import StratifiedKFold

    from core import load
    from core.evaluation import choose_anomaly_label

    graphs = load(data / dataset)
    anomaly = choose_anomaly_label(graphs, "minority")  # the harness's rule: the same fold as its first
    y = np.array([label == anomaly for label in graphs.labels])
    train_idx, _ = next(StratifiedKFold(5, shuffle=True, random_state=1).split(y, y))
    return graphs.subset([i for i in train_idx if not y[i]])
