"""Evaluation: the paper's protocols, their results and writers, the reference numbers, metrics,
and the planted-anomaly benchmark of node explanations."""
from core.evaluation.paper import (PAPER_METHODS, PAPER_TABLE2, benchmark_name, dataset_name, paper_settings,
                                   paper_value)
from core.evaluation.protocol import PROTOCOLS, SCORE_TERMS, choose_anomaly_label, evaluate
from core.evaluation.results import (EvaluationResult, FoldResult, markdown_table, merge_results, read_json,
                                     write_json, write_markdown)

__all__ = ["PAPER_METHODS", "PAPER_TABLE2", "PROTOCOLS", "SCORE_TERMS", "EvaluationResult", "FoldResult",
           "benchmark_name", "choose_anomaly_label", "dataset_name", "evaluate", "markdown_table", "merge_results", "paper_settings",
           "paper_value", "read_json", "write_json", "write_markdown"]
