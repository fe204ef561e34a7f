"""Controllers: plain QObjects that own a use case's job submission, progress and result handling.

Each reports through the signals of :class:`Controller`; the window connects them once
(:meth:`app.main_window.MainWindow._attach`) and lays the results out in its views.
"""
from .base import Controller

__all__ = ["Controller"]
