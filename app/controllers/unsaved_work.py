"""Work that exists only in the window, tracked from the controllers' results, and the question
asked before it is lost (quitting, opening another file, closing a scored file's tab)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QWidget

from core import counted

from ..state import AppState, describe_model
from ..unsaved import MODEL, REVIEW, UnsavedWork
from ..widgets import dialogs
from ..workers import Runner


class UnsavedWorkGuard(QObject):
    """Adds a trained or weighed model, and review marks, to ``unsaved`` and settles them when saved
    or exported; asks Save, Discard or Cancel before unsaved work is lost (:meth:`confirm`).

    Args:
        window: the parent of the question.
        runner: a save or export started from the question ends before the window goes on.
        state: the model that would be lost.
        unsaved: what is unsaved (``MODEL``, or a scored file's tab).
        save_model: asks where to save the model and saves it.
        export_work: shows the tab of a key's results and asks where to export them.
    """

    def __init__(self, window: QWidget, runner: Runner, state: AppState, unsaved: UnsavedWork,
                 save_model: Callable[[], None], export_work: Callable[[object], None]):
        super().__init__(window)
        self.window, self.runner, self.state, self.unsaved = window, runner, state, unsaved
        self._save_model, self._export_work = save_model, export_work

    @Slot(object, str)
    def trained(self, result, _text: str = "") -> None:
        self.unsaved.add(MODEL, f"the {describe_model(result.model)} model trained on "
                         f"{Path(self.state.data_path).name} and its scores")

    @Slot(str)
    def weighed(self, _text: str = "") -> None:
        self.unsaved.add(MODEL, "the consensus with its views weighed by known anomalies")

    @Slot(object)
    def marked(self, view) -> None:
        """The user changed review marks: the training tab's are unsaved work (``REVIEW``) until a
        session holds them or its rows are exported; a report tab's join its results' key."""
        if view is not None:
            self.unsaved.add(view, f"the results of {view.title} and their review marks, not exported")  # as the
            return  # tab is named: a scored file's report is a scratch file the user never saw
        count = len(self.state.review_marks)
        if count:
            self.unsaved.add(REVIEW, f"{counted(count, 'review mark')} on "
                             f"{Path(self.state.data_path).name}")
        else:
            self.unsaved.done(REVIEW)

    @Slot(str)
    def saved(self, _path: str = "") -> None:
        self.unsaved.done(MODEL)

    @Slot(str, int, object)
    def exported(self, _path: str, _rows: int, work) -> None:
        """Rows were written: ``work`` (None for an export of only some rows, which settles nothing)."""
        if work is None:
            return
        model = self.state.model
        if work is MODEL:  # the training tab's rows, with their marks
            self.unsaved.done(REVIEW)
        if work is not MODEL or model is None or not model.can_save:  # no model file: the results are the work
            self.unsaved.done(work)

    def confirm(self, keys: list | None, doing: str) -> bool:
        """Before ``doing`` over unsaved work (of ``keys``; None: all): Save, Discard or Cancel.

        Returns:
            True when the work may go on (nothing of ``keys`` is left unsaved).
        """
        return self.unsaved.confirm(keys, lambda pending: dialogs.ask_unsaved(self.window, pending, doing),
                                    self._save)

    def _save(self, key) -> None:
        """Save the model to a file, or export results that have none (a scored file's, or a model's
        without a file); the file is written before the window goes on (e.g. closes)."""
        if key == MODEL and self.state.model is not None and self.state.model.can_save:
            self._save_model()
            self.runner.wait(["save_model"])
        else:  # the marks go with the training tab's rows
            self._export_work(MODEL if key == REVIEW else key)
            self.runner.wait(["export"])
