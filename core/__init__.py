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
# so that ``import core.cli.main`` does not load torch (``glocalkd --help`` answers at once), and the
# app can import from core and still set OpenMP's environment before torch loads (core/threads.py).
_PUBLIC = {
    # runtime
    "retain_freed_memory": "runtime.allocator", "wait_passively": "runtime.threads", "resolve_device": "runtime.device",
    # errors
    "DataError": "errors", "GLocalKDError": "errors", "ModelFileError": "errors", "SchemaMismatchError": "errors",
    # data
    "GraphMeta": "data.graphset", "GraphSet": "data.graphset", "Reject": "data.graphset",
    "normalize_label": "data.graphset", "FeatureSchema": "data.features", "Scores": "data.scores",
    "READOUT_PARTS": "data.scores", "smarts_matches": "data.substructure",
    # io
    "load": "io.load", "is_table": "io.columns", "table_columns": "io.columns",
    "REPORT_COLUMNS": "io.report", "node_names": "io.report", "write_report": "io.report",
    "report_rows": "io.report", "safe_cell": "io.report", "RankedReport": "io.ranked_report", "is_report": "io.ranked_report", "read_report": "io.ranked_report",
    "row_graphs": "io.ranked_report",
    # detectors
    "Detector": "detectors.base", "EpochInfo": "detectors.base", "GLocalKD": "detectors.glocalkd",
    "DEFAULT_DETECTOR": "detectors.registry", "DETECTORS": "detectors.registry", "accepted_params": "detectors.registry", "detector_info": "detectors.registry",
    "make_detector": "detectors.registry", "load_detector": "detectors.model_file",
    "save_detector": "detectors.model_file", "fit_with_calibration": "detectors.conformal",
    "benjamini_hochberg": "data.pvalues", "Review": "detectors.review", "NotApplicableError": "errors",
    # evaluation, screening, figures
    "choose_anomaly_label": "evaluation.protocol", "roc_auc": "evaluation.metrics", "roc_points": "evaluation.metrics",
    "screen": "screening.pipeline", "molecule_schema": "screening.pipeline", "merge_reports": "screening.pipeline", "ScreenSummary": "screening.pipeline",
    "draw_heatmap": "viz.heatmap", "graph_molecule": "viz.heatmap", "molecule_image": "viz.heatmap",
    "space_map": "viz.chemical_space", "node_error_norm": "viz.heatmap", "fixed_error_scale": "viz.heatmap",
    "HEATMAP_SCALES": "viz.heatmap", "smarts_atoms": "viz.heatmap", "SimilarityIndex": "viz.similarity",
    "similar_molecules": "viz.similarity", "scaffolds": "viz.similarity",
    "write_sdf": "viz.sharing", "empirical_p_values": "evaluation.metrics", "html_report": "evaluation.html_report",
}
_RENAMED = {"REPORT_COLUMNS": "COLUMNS", "HEATMAP_SCALES": "SCALES"}  # public name -> the name in its module
__all__ = ["__version__", *_PUBLIC]

from core import _legacy  # noqa: E402  (old module paths, one more release)

_legacy.install()


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
