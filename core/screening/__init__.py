"""Screening large libraries: a streaming pipeline with worker processes and an external merge."""
from core.screening.merge import merge_reports
from core.screening.pipeline import screen

__all__ = ["screen", "merge_reports"]
