"""The epoch loop shared by the detectors that train a network by mini-batches (GLocalKD, OCGCN)."""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

from core.data.packed import PackedGraphs, step_in_runs
from core.detectors.base import EpochInfo, call_back
from core.errors import GLocalKDError


def train_epochs(packed: PackedGraphs, loss_fn: Callable, optimizer, device: torch.device, epochs: int,
                 batch_size: int, seed: int, on_epoch: Callable[[EpochInfo], None] | None,
                 should_stop: Callable[[], bool] | None, divergence_hint: str = "lower the learning rate"
                 ) -> tuple[list[float], bool]:
    """Run the epoch loop of a network trained by mini-batches (GLocalKD, OCGCN).

    Each epoch runs shuffled mini-batches; ``seed`` fixes the order.

    Args:
        packed: the training graphs, packed once.
        loss_fn: a batch's per-graph losses (see :func:`core.data.packed.step_in_runs`).
        optimizer: steps once per batch.
        device: where the batches run.
        epochs: the number of epochs.
        batch_size: graphs per batch.
        seed: the seed of the shuffle.
        on_epoch: called with an :class:`EpochInfo` after each epoch.
        should_stop: polled before each batch; True ends training after the last finished epoch.
        divergence_hint: what the error says to do when the loss becomes NaN or infinite.

    Returns:
        ``(history, stopped)``: the mean loss per graph of each finished epoch, and whether
        ``should_stop`` ended training early.

    Raises:
        GLocalKDError: the loss became NaN or infinite.
    """
    shuffle = torch.Generator().manual_seed(int(seed))
    history: list[float] = []
    for epoch in range(1, epochs + 1):
        start, total, count = time.perf_counter(), 0.0, 0
        for ids in packed.batch_ids(batch_size, shuffle):
            if should_stop is not None and call_back(should_stop):
                return history, True
            loss = step_in_runs(packed, ids, optimizer, loss_fn, device)
            if not np.isfinite(loss):
                raise GLocalKDError(f"training diverged: the loss became {loss} in epoch {epoch}; {divergence_hint}")
            total += loss
            count += len(ids)
        history.append(total / max(count, 1))
        if on_epoch is not None:
            call_back(on_epoch, EpochInfo(epoch, epochs, history[-1], time.perf_counter() - start))
    return history, False
