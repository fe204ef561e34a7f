"""GLocalKD Studio's headless core: loaders, features, the GLocalKD model, scores and reports.

Public API (what the app and scripts use)::

    from core import load, GLocalKD
    graphs = load("compounds.csv")
    model = GLocalKD(epochs=150).fit(graphs)
    scores = model.score(load("library.smi"))

Never imports Qt.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.2.0"

# The public names and the modules that define them. They are imported on first use (PEP 562),
# so that ``import core.cli.main`` does not load torch (``glocalkd --help`` answers at once), and the
# app can import from core and still set OpenMP's environment before torch loads (core/threads.py).
_PUBLIC = {
    # runtime
    "retain_freed_memory": "runtime.allocator", "wait_passively": "runtime.threads", "usable_cpus": "runtime.threads",
    "resolve_device": "runtime.device",
    "atomic_output": "runtime.files", "check_outputs": "runtime.files", "graph_key": "data.graph_identity", "graphs_digest": "data.graph_identity", "make_scratch": "runtime.scratch", "remove_scratch": "runtime.scratch",
    "scratch_folder": "runtime.scratch", "counted": "wording",
    "file_kind": "runtime.file_kind", "SESSION_SUFFIX": "runtime.file_kind",
    # errors
    "DataError": "errors", "GLocalKDError": "errors", "ModelFileError": "errors", "SchemaMismatchError": "errors",
    "ParameterError": "errors", "Stopped": "errors", "raise_if_stopped": "errors", "ZIP_ERRORS": "errors",
    # data
    "GraphMeta": "data.graphset", "GraphSet": "data.graphset", "Reject": "data.graphset",
    "normalize_label": "data.graphset", "FeatureSchema": "data.features", "Scores": "data.scores",
    "READOUT_PARTS": "data.scores", "checked_rank": "data.scores", "ranking_of": "data.scores",
    "smarts_matches": "data.substructure",
    "Alert": "data.alerts", "ALERT_FAMILIES": "data.alerts", "structural_alerts": "data.alerts",
    "graph_alerts": "data.alerts",
    "alerts_at_atoms": "data.alerts", "alerts_text": "data.alerts",
    "molecular_properties": "data.properties", "PROPERTY_COLUMNS": "data.properties",
    "PROPERTY_FUNCTIONS": "data.properties", "property_text": "data.properties",
    # io
    "load": "io.load", "is_table": "io.columns", "table_columns": "io.columns", "smiles_column_reads": "io.columns",
    "REPORT_COLUMNS": "io.report", "report_columns": "io.report", "node_names": "io.report", "write_report": "io.report", "report_output": "io.report", "view_columns": "io.report",
    "report_rows": "io.report", "safe_cell": "io.report", "not_read_status": "io.report", "RankedReport": "io.ranked_report", "is_report": "io.ranked_report", "read_report": "io.ranked_report",
    "row_graphs": "io.ranked_report", "report_graphs": "io.ranked_report", "write_report_sdf": "io.report_sdf",
    "prepare_molecules": "io.molecules", "NO_COLUMN": "io.molecules", "standardise_smiles": "data.standardise", "tu_folder_of": "io.tu_folder",
    "count_line_ends": "io.text",
    # detectors
    "Detector": "detectors.base", "EpochInfo": "detectors.base", "SEED_MAX": "runtime.seeds", "GLocalKD": "detectors.glocalkd",
    "DEFAULT_DETECTOR": "detectors.registry", "DETECTORS": "detectors.registry", "accepted_params": "detectors.registry", "detector_info": "detectors.registry", "view_label": "detectors.registry",
    "make_detector": "detectors.registry", "load_detector": "detectors.model_file",
    "save_detector": "detectors.model_file", "fit_with_calibration": "detectors.conformal", "model_p_values": "detectors.conformal",
    "score_graphs": "detectors.stoppable_scoring", "as_model_reads": "detectors.base",
    "benjamini_hochberg": "data.pvalues", "report_q_values": "data.pvalues", "written_scores": "data.scores", "fdr_unreached_note": "data.pvalues", "detector_defaults": "detectors.registry",
    # training: the one use case of the command line, the app and the evaluation harness
    "TrainSpec": "training.spec", "TrainedModel": "training.use_case", "train_model": "training.use_case", "plan_notes": "training.plan",
    "weigh_known_anomalies": "training.use_case", "MIN_KNOWN_ANOMALIES": "detectors.catalog",
    # the review loop: an analyst's marks re-rank a consensus's graphs without training again
    "Review": "detectors.review", "apply_marks": "detectors.review", "NotApplicableError": "errors",
    # evaluation, screening, figures
    "choose_anomaly_label": "evaluation.protocol", "roc_auc": "evaluation.metrics", "roc_points": "evaluation.metrics",
    "screen": "screening.pipeline", "molecule_schema": "screening.scoring", "merge_reports": "screening.merge", "ScreenSummary": "screening.pipeline",
    "report_view_scores": "screening.rescore", "score_file": "screening.score_file", "ScoredFile": "screening.score_file",
    "is_streamed": "screening.score_file",
    "draw_heatmap": "viz.heatmap", "graph_molecule": "data.graph_molecules", "molecule_image": "viz.heatmap",
    "space_map": "viz.chemical_space", "node_error_norm": "viz.heatmap", "fixed_error_scale": "viz.heatmap",
    "HEATMAP_SCALES": "viz.heatmap", "smarts_atoms": "viz.heatmap", "smarts_match": "viz.heatmap",
    "READABLE_BOND_PX": "viz.heatmap", "SimilarityIndex": "viz.similarity",
    "similar_molecules": "viz.similarity", "scaffolds": "viz.similarity", "query_similarities": "viz.similarity",
    "structure_png": "viz.structures", "structure_pixels": "viz.structures", "structure_grid_png": "viz.structures",
    "common_substructure": "viz.structures", "pair_png": "viz.structures", "same_molecule": "viz.structures",
    "write_sdf": "viz.sharing", "empirical_p_values": "evaluation.metrics", "html_report": "evaluation.html_report",
}
_RENAMED = {"REPORT_COLUMNS": "COLUMNS", "HEATMAP_SCALES": "SCALES"}  # public name -> the name in its module
__all__ = ["__version__", *_PUBLIC]

if TYPE_CHECKING:  # what editors and type checkers see; at run time __getattr__ below imports on first use
    from core.data.graph_identity import graph_key, graphs_digest
    from core.runtime.allocator import retain_freed_memory
    from core.wording import counted
    from core.runtime.threads import usable_cpus, wait_passively
    from core.runtime.device import resolve_device
    from core.runtime.files import atomic_output, check_outputs
    from core.runtime.scratch import make_scratch, remove_scratch, scratch_folder
    from core.runtime.file_kind import SESSION_SUFFIX, file_kind
    from core.errors import (DataError, GLocalKDError, ModelFileError, SchemaMismatchError, ParameterError,
        NotApplicableError, Stopped, ZIP_ERRORS, raise_if_stopped)
    from core.data.graphset import GraphMeta, GraphSet, Reject, normalize_label
    from core.data.features import FeatureSchema
    from core.data.scores import Scores, READOUT_PARTS, checked_rank, ranking_of, written_scores
    from core.data.substructure import smarts_matches
    from core.data.alerts import Alert, ALERT_FAMILIES, structural_alerts, graph_alerts, alerts_at_atoms, alerts_text
    from core.data.properties import molecular_properties, PROPERTY_COLUMNS, PROPERTY_FUNCTIONS, property_text
    from core.io.load import load
    from core.io.columns import is_table, smiles_column_reads, table_columns
    from core.io.report import (COLUMNS as REPORT_COLUMNS, node_names, not_read_status, write_report, report_rows,
                                safe_cell, report_columns, report_output, view_columns)
    from core.io.ranked_report import RankedReport, is_report, read_report, report_graphs, row_graphs
    from core.io.report_sdf import write_report_sdf
    from core.io.molecules import NO_COLUMN, prepare_molecules
    from core.io.tu_folder import tu_folder_of
    from core.io.text import count_line_ends
    from core.data.standardise import standardise_smiles
    from core.detectors.base import Detector, EpochInfo, as_model_reads
    from core.runtime.seeds import SEED_MAX
    from core.detectors.glocalkd import GLocalKD
    from core.detectors.registry import (DEFAULT_DETECTOR, DETECTORS, accepted_params, detector_info, make_detector,
        detector_defaults, view_label)
    from core.detectors.model_file import load_detector, save_detector
    from core.detectors.stoppable_scoring import score_graphs
    from core.detectors.conformal import fit_with_calibration, model_p_values
    from core.data.pvalues import benjamini_hochberg, fdr_unreached_note, report_q_values
    from core.training.plan import plan_notes
    from core.training.spec import TrainSpec
    from core.training.use_case import TrainedModel, train_model, weigh_known_anomalies
    from core.detectors.catalog import MIN_KNOWN_ANOMALIES
    from core.detectors.review import Review, apply_marks
    from core.evaluation.protocol import choose_anomaly_label
    from core.evaluation.metrics import roc_auc, roc_points, empirical_p_values
    from core.screening.pipeline import screen, ScreenSummary
    from core.screening.scoring import molecule_schema
    from core.screening.merge import merge_reports
    from core.screening.rescore import report_view_scores
    from core.screening.score_file import ScoredFile, is_streamed, score_file
    from core.data.graph_molecules import graph_molecule
    from core.viz.heatmap import (draw_heatmap, molecule_image, node_error_norm, fixed_error_scale,
        SCALES as HEATMAP_SCALES, smarts_atoms, smarts_match, READABLE_BOND_PX)
    from core.viz.chemical_space import space_map
    from core.viz.similarity import SimilarityIndex, similar_molecules, scaffolds, query_similarities
    from core.viz.structures import (structure_png, structure_pixels, structure_grid_png, common_substructure,
        pair_png, same_molecule)
    from core.viz.sharing import write_sdf
    from core.evaluation.html_report import html_report


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
