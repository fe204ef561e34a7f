"""Model files for every detector that can be saved: one safe format, read by torch's
``weights_only`` loader, so that opening a file can never run code.

GLocalKD keeps the format it has always written (:meth:`GLocalKD.state_dict`). Every other
detector's file is ``{"format": DETECTOR_FORMAT, "version", "detector": registry name,
"params": constructor parameters, "state": its fitted state}``, where the state holds only
numbers, strings, lists, dicts and arrays (stored as tensors). :func:`load_detector` reads both.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from core.errors import GLocalKDError, ModelFileError
from core.runtime.files import atomic_output

DETECTOR_FORMAT = "glocalkd-studio/detector"
DETECTOR_VERSION = 1


def encode_state(value: Any) -> Any:
    """A fitted state as what ``weights_only`` can read: arrays become tensors (tagged with their
    dtype, since torch has no unsigned 64-bit type), sets and non-string-keyed dicts become lists."""
    if isinstance(value, np.ndarray):
        kind = str(value.dtype)
        if value.dtype == np.uint64:
            value = value.view(np.int64)
        if value.dtype == object:
            raise GLocalKDError("object arrays cannot go into a model file")
        return {"__array__": torch.from_numpy(np.ascontiguousarray(value)), "dtype": kind}
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, (set, frozenset)):
        return {"__set__": [encode_state(v) for v in sorted(value)]}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: encode_state(v) for k, v in value.items()}
        return {"__items__": [[encode_state(k), encode_state(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [encode_state(v) for v in value]
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise GLocalKDError(f"a {type(value).__name__} cannot go into a model file")


def decode_state(value: Any) -> Any:
    """The inverse of :func:`encode_state`."""
    if isinstance(value, dict):
        if "__array__" in value:
            array = value["__array__"].numpy()
            return array.view(np.uint64) if value["dtype"] == "uint64" else array.astype(value["dtype"], copy=False)
        if "__set__" in value:
            return {decode_state(v) for v in value["__set__"]}
        if "__items__" in value:
            return {decode_state(k): decode_state(v) for k, v in value["__items__"]}
        return {k: decode_state(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_state(v) for v in value]
    return value


def detector_state(detector) -> dict:
    """The file contents of a fitted ``detector`` (GLocalKD: its own format)."""
    from core.detectors.glocalkd import GLocalKD

    if isinstance(detector, GLocalKD):
        return detector.state_dict()
    state = {"format": DETECTOR_FORMAT, "version": DETECTOR_VERSION, "detector": detector.name,
             "params": encode_state(detector.get_params()), "state": encode_state(detector.fitted_state())}
    if detector.is_calibrated:
        state["calibration_scores"] = encode_state(np.asarray(detector.calibration_scores_, dtype=np.float64))
    return state


def detector_from_state(state: Any, device: str = "auto", source: str = "model"):
    """The detector a :func:`detector_state` describes; a damaged one raises :class:`ModelFileError`."""
    from core.detectors.glocalkd import MODEL_FORMAT, GLocalKD
    from core.detectors.registry import accepted_params, make_detector

    if isinstance(state, dict) and state.get("format") == MODEL_FORMAT:
        return GLocalKD.from_state_dict(state, device, source)
    if not isinstance(state, dict) or state.get("format") != DETECTOR_FORMAT:
        raise ModelFileError(f"{source}: not a GLocalKD Studio model file")
    if state.get("version") != DETECTOR_VERSION:
        raise ModelFileError(f"{source}: model file version {state.get('version')!r} is not supported by this "
                             f"version (it reads version {DETECTOR_VERSION})")
    try:
        name = state["detector"]
        accepted = accepted_params(name)
        params = {k: v for k, v in decode_state(state["params"]).items() if k in accepted}  # the name fixes the rest
        if "device" in accepted:
            params["device"] = device
        detector = make_detector(name, **params)
        detector.validate_params()
        detector.restore_fitted_state(decode_state(state["state"]), device)
        if "calibration_scores" in state:
            cal = np.asarray(decode_state(state["calibration_scores"]), dtype=np.float64)
            if cal.ndim != 1 or not np.all(np.isfinite(cal)):
                raise ValueError("calibration scores are not a list of finite numbers")
            detector.calibration_scores_ = cal
    except ModelFileError:
        raise
    except (GLocalKDError, KeyError, TypeError, ValueError, RuntimeError, AttributeError, IndexError) as exc:
        raise ModelFileError(f"{source}: damaged model file ({exc})") from None
    return detector


def save_detector(detector, path: str | Path) -> None:
    """Write ``detector``'s model file atomically (:func:`core.runtime.files.atomic_output`: a new
    temporary file in the same folder, created exclusively, then renamed; no link is written through)."""
    state = detector_state(detector)
    with atomic_output(path) as fh:
        torch.save(state, fh)


def load_detector(path: str | Path, device: str = "auto"):
    """Read any detector's model file with torch's ``weights_only`` loader."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such model file")
    if not os.access(path, os.R_OK):
        raise ModelFileError(f"{path}: cannot read the model file (permission denied)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except PermissionError:
        raise ModelFileError(f"{path}: cannot read the model file (permission denied)") from None
    except Exception as exc:
        raise ModelFileError(f"{path}: not a GLocalKD Studio model file, or damaged ({type(exc).__name__})") from None
    return detector_from_state(state, device, source=str(path))


def detector_fingerprint(detector) -> str:
    """A short hash of a fitted detector's settings and state: reports scored with the same
    fingerprint were scored by the same model, whatever its file is called."""
    import hashlib
    import io

    buffer = io.BytesIO()
    torch.save(detector_state(detector), buffer)
    return hashlib.sha256(buffer.getvalue()).hexdigest()[:16]
