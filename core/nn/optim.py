"""Adam in one fused kernel where this PyTorch has one for the device, else the per-tensor loop."""
from __future__ import annotations

from collections.abc import Iterable

import torch


def adam(params: Iterable[torch.nn.Parameter], lr: float, weight_decay: float = 0.0) -> torch.optim.Adam:
    """Make a ``torch.optim.Adam``, fused into one kernel when this PyTorch has one for the device.

    The default on a CPU updates each tensor with about ten separate operations. The fused kernel
    does one pass: 0.43-0.71 ms against 1.06-1.67 ms per step for the 413,000 parameters of a
    paper-width predictor on AIDS (2 CPU threads). The update is the same rule; the last bits of
    the weights can differ. Fused Adam runs on CUDA, and on CPUs from PyTorch 2.4. Older versions
    raise when it is asked for, and get the per-tensor loop.

    Args:
        params: the parameters to optimise.
        lr: the learning rate.
        weight_decay: the L2 penalty (0 for none).

    Returns:
        The optimiser, fused where possible.
    """
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, fused=True)
    except (RuntimeError, ValueError, TypeError):
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
