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

# The public names and the modules that define them. They are imported on first use (PEP 562),
# so that ``import core.cli`` does not load torch (``glocalkd --help`` answers at once), and the
# app can import from core and still set OpenMP's environment before torch loads (core/threads.py).
_PUBLIC = {
    "retain_freed_memory": "allocator",
    "DataError": "errors", "GLocalKDError": "errors", "ModelFileError": "errors", "SchemaMismatchError": "errors",
    "GraphMeta": "graphset", "GraphSet": "graphset", "Reject": "graphset", "normalize_label": "graphset",
    "load": "loaders",
    "FeatureSchema": "features",
    "Scores": "scores",
    "EpochInfo": "model", "GLocalKD": "model", "resolve_device": "model",
    "DETECTORS": "detectors", "accepted_params": "detectors", "detector_info": "detectors",
    "make_detector": "detectors",
    "REPORT_COLUMNS": "report", "node_names": "report", "write_report": "report",
}
_RENAMED = {"REPORT_COLUMNS": "COLUMNS"}  # public name -> the name in its module
__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), _RENAMED.get(name, name))
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
