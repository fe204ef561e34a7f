"""The detectors (one module each, over the contract in :mod:`core.detectors.base`) and their registry."""
from core.detectors.registry import (
    DEFAULT_DETECTOR,
    DETECTORS,
    DetectorInfo,
    accepted_params,
    detector_defaults,
    detector_info,
    make_detector,
)

__all__ = ["DEFAULT_DETECTOR", "DETECTORS", "DetectorInfo", "accepted_params", "detector_defaults", "detector_info", "make_detector"]
