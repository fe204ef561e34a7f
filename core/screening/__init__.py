"""Screening large libraries: a streaming pipeline with worker processes and an external merge."""
from core.screening.pipeline import merge_reports, screen

__all__ = ["screen", "merge_reports"]
