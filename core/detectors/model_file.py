"""Reading any detector's model file: the one entry point that needs to know every detector.

Each detector writes its own file (:meth:`Detector.save`): GLocalKD in the format it has always
had (:meth:`GLocalKD.state_dict`), every other detector as ``{"format": DETECTOR_FORMAT,
"version", "detector": registry name, "params", "state"}`` (:meth:`Detector.file_state`). Both are
read with torch's ``weights_only`` loader, so opening a file can never run code, and both are
written and read by :mod:`core.runtime.model_files`, which adds a digest of the contents and checks
it (and refuses NaN or infinite numbers) before any detector sees them.
"""
from __future__ import annotations

from pathlib import Path

from core.detectors.base import DETECTOR_FORMAT, MODEL_FORMAT, Detector
from core.detectors.glocalkd import GLocalKD
from core.detectors.registry import DETECTORS, make_detector
from core.errors import ModelFileError
from core.runtime.model_files import read_model_file


def detector_from_file_state(state, device: str = "auto", source: str = "model") -> Detector:
    """Rebuild the detector a model file's contents describe, whichever kind it is.

    Args:
        state: a model file's contents (GLocalKD's own format or :data:`DETECTOR_FORMAT`).
        device: where the model runs (``auto``, ``cpu``, ``cuda``).
        source: the file's name, for messages.

    Returns:
        The fitted detector.

    Raises:
        ModelFileError: a foreign file, an unknown detector or damaged contents, naming ``source``.
    """
    if isinstance(state, dict) and state.get("format") == MODEL_FORMAT:
        return GLocalKD.from_state_dict(state, device, source)
    if not isinstance(state, dict) or state.get("format") != DETECTOR_FORMAT:
        raise ModelFileError(f"{source}: not a GLocalKD Studio model file")
    name = state.get("detector")
    if name not in DETECTORS:
        raise ModelFileError(f"{source}: a model of an unknown detector {name!r}")
    kind = type(make_detector(name))
    return kind.from_file_state(state, device, source)


def load_detector(path: str | Path, device: str = "auto") -> Detector:
    """Read any detector's model file.

    Args:
        path: the model file.
        device: where the model runs (``auto``, ``cpu``, ``cuda``).

    Returns:
        The fitted detector.

    Raises:
        ModelFileError: a missing, damaged or foreign file, naming it.
    """
    return detector_from_file_state(read_model_file(path), device, source=str(path))


def save_detector(detector: Detector, path: str | Path) -> None:
    """Write a detector's model file (its own :meth:`Detector.save`).

    Args:
        detector: the fitted detector.
        path: the model file to write.
    """
    detector.save(path)
