"""Where and in what precision the networks run: device choice and bfloat16 support."""
from __future__ import annotations

import torch

from core.errors import GLocalKDError, ParameterError
from core.runtime.values import DEVICE_NAMES, is_device_name
from core.wording import counted

PRECISIONS = ("float32", "bfloat16")


def resolve_device(device: str) -> torch.device:
    """Turn a device name into a torch device, checking that it is there.

    Args:
        device: ``auto`` (CUDA when torch sees a GPU, else CPU), ``cpu``, ``cuda`` or ``cuda:N``.

    Returns:
        The torch device.

    Raises:
        ParameterError: the name is not a device (:func:`is_device_name`), or CUDA is asked for and
            torch sees no CUDA GPU, or not the one numbered; it names the setting ``device``.
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not is_device_name(device):
        raise ParameterError(f"invalid setting: {{device}} must be {DEVICE_NAMES}, not {device!r}", "device")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ParameterError(f"{{device}} {device!r} asked for, but torch sees no CUDA GPU (use 'auto' or 'cpu')",
                             "device")
    resolved = torch.device(device)
    if resolved.type == "cuda" and resolved.index is not None and resolved.index >= torch.cuda.device_count():
        count = torch.cuda.device_count()  # else torch's "invalid device ordinal" came later, as a traceback
        raise ParameterError(f"{{device}} {device!r} asked for, but torch sees {counted(count, 'CUDA GPU')} "
                             f"(cuda:0{f' to cuda:{count - 1}' if count > 1 else ''})", "device")
    return resolved


def matmul_dtype(precision: str) -> torch.dtype | None:
    """Give the dtype of the dense products for a precision setting.

    Args:
        precision: one of ``PRECISIONS``: ``float32`` or ``bfloat16``.

    Returns:
        ``torch.bfloat16`` for ``bfloat16``; None for ``float32`` (float32 throughout).

    Raises:
        GLocalKDError: for any other precision.
    """
    if precision not in PRECISIONS:
        raise GLocalKDError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    return torch.bfloat16 if precision == "bfloat16" else None


def bfloat16_is_fast(device: torch.device | str) -> bool:
    """Tell whether a device multiplies bfloat16 in hardware, to warn before a slow bfloat16 run.

    Fast are GPUs that support it and CPUs with AVX-512 or AMX (oneDNN's bfloat16 kernels).
    Elsewhere torch runs a generic loop: a 512 x 512 x 512 product took 0.20 s in bfloat16
    against 0.004 s in float32 on an AMD EPYC with AVX2.

    Args:
        device: the device (a torch device or its name).

    Returns:
        Whether bfloat16 is fast there; True when it cannot tell (no warning).
    """
    device = torch.device(device)
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type != "cpu":
        return True
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return True
