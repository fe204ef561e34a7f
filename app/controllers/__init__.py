"""Controllers: plain QObjects that own a use case's job submission, progress and result handling.

Each reports through the signals of :class:`Controller`, shown by :class:`app.feedback.Feedback`
(``attach``); results go into the state (:class:`app.state.AppState`), whose signals the views'
controllers listen to.
"""
from .base import Controller

__all__ = ["Controller"]
