"""GLocalKD Studio's headless core: loaders, features, the GLocalKD model, scores and reports.

Public API (what the app and scripts use)::

    from core import load, GLocalKD
    graphs = load("compounds.csv")
    model = GLocalKD(epochs=150).fit(graphs)
    scores = model.score(load("library.smi"))

Never imports Qt.
"""
from __future__ import annotations

__version__ = "0.1.0"

from .allocator import retain_freed_memory  # noqa: E402
from .errors import DataError, GLocalKDError, ModelFileError, SchemaMismatchError  # noqa: E402
from .graphset import GraphMeta, GraphSet, Reject, normalize_label  # noqa: E402
from .loaders import load  # noqa: E402
from .features import FeatureSchema  # noqa: E402
from .scores import Scores  # noqa: E402
from .model import EpochInfo, GLocalKD, resolve_device  # noqa: E402
from .detectors import DETECTORS, accepted_params, detector_info, make_detector  # noqa: E402
from .report import COLUMNS as REPORT_COLUMNS, node_names, write_report  # noqa: E402

__all__ = [
    "__version__", "load", "GraphSet", "GraphMeta", "Reject", "normalize_label", "FeatureSchema",
    "GLocalKD", "EpochInfo", "DETECTORS", "accepted_params", "detector_info", "make_detector", "Scores", "resolve_device", "write_report", "node_names", "REPORT_COLUMNS",
    "GLocalKDError", "DataError", "ModelFileError", "SchemaMismatchError", "retain_freed_memory",
]
