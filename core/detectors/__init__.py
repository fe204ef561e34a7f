"""The detectors (one module each, over the contract in :mod:`core.detectors.base`) and their registry."""
from core.detectors.registry import DETECTORS, DetectorInfo, accepted_params, detector_info, make_detector

__all__ = ["DETECTORS", "DetectorInfo", "accepted_params", "detector_info", "make_detector"]
