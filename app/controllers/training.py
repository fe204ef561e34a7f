"""Training the chosen detector in the background: the job, its epochs (loss and ETA) and its result."""
from __future__ import annotations

import functools
import time

from PySide6.QtCore import QObject, Signal, Slot

from core import counted

from .. import tasks
from ..state import AppState, duration, marks_dropped_text, view_weights_text
from ..widgets.settings_form import TrainSettings
from ..workers import Runner
from .base import Controller


class TrainingController(Controller):
    """Trains a detector on the state's graphs and puts the model and its scores into the state.

    Signals:
        started: training starts (the detector's label, whether it counts epochs); ``busy`` came first.
        epoch_ended: an epoch has ended (its number, from 1).
        losses_changed: the losses so far (one per epoch).
        trained: the state holds the new model and scores (the job's :class:`app.tasks.Trained`,
            the sentence that says how it went).
    """

    started = Signal(str, bool)
    epoch_ended = Signal(int)
    losses_changed = Signal(list)
    trained = Signal(object, str)

    def __init__(self, runner: Runner, state: AppState, parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self.state = state
        self.losses: list[float] = []
        self._started = 0.0

    def train(self, form: TrainSettings) -> None:
        """Start training the detector ``form`` names, with its settings, on the state's normal graphs."""
        from core import detector_info

        if self.state.graphs is None or len(self.state.graphs) == 0:
            self.warning.emit("No data", "Open a data file first.")
            return
        if self.runner.blocking():  # Train is enabled by the same rule
            return
        info = detector_info(form.detector_name())
        params = form.detector_params()
        self.losses = []
        self.losses_changed.emit([])
        self._started = time.perf_counter()
        by_epoch = info.trains_by_epoch  # a kernel and a shallow detector: one step, no epochs to count
        self.busy.emit(f"Training {info.label}…" if by_epoch else f"Fitting {info.label}…", not by_epoch)
        self.started.emit(info.label, by_epoch)
        job = functools.partial(tasks.train, self.state.graphs, info.name, params, form.normal_label(),
                                known_label=form.known_label(), standardise=form.standardises())
        self.runner.start("train", job, self._trained, self._failed, self._epoch,
                          stoppable=by_epoch)  # a one-step fit does not poll Stop: Stop, Busy and Quit say so

    @Slot(object)
    def _epoch(self, info) -> None:
        self.losses.append(info.loss)
        self.epoch_ended.emit(info.epoch)
        elapsed = time.perf_counter() - self._started
        eta = elapsed / info.epoch * (info.epochs - info.epoch)
        self.said.emit(f"Epoch {info.epoch}/{info.epochs} · loss {info.loss:.4g} · "
                       f"{info.seconds:.2f} s/epoch · ETA {duration(eta)}")
        self.losses_changed.emit(self.losses)

    @Slot(object)
    def _trained(self, result: tasks.Trained | tasks.NotTrained | None) -> None:
        if result is None:
            return
        self.idle.emit()
        if isinstance(result, tasks.NotTrained):  # the model and scores shown stay as they were
            self._kept_losses()
            kept = "the model is as it was" if self.state.model is not None else "no model was made"
            text = f"Training stopped before its first epoch ended: nothing was learnt; {kept}."
            self.said.emit(text)
            self.status.emit(text, 15000)
            return
        dropped = self.state.use_graphs(result.graphs, result.properties)  # standardised when the form asked for it
        self.state.set_trained(result.model, result.scores, result.n_train, result.normal_label, result.size_model,
                               result.size_scores, known_label=result.known_label)
        model = result.model
        note = f" (stopped after {len(model.loss_history_)} epochs)" if model.stopped_early_ else ""
        weighed = view_weights_text(model)
        weighed = f" {weighed}" if weighed else ""
        how = f", {result.calibration_note}" if result.calibration_note else ""
        held = f" ({result.n_calibration:,} of them held out to calibrate{how})" if result.n_calibration else ""
        told = "".join(f" {n[0].upper()}{n[1:]}." for n in result.notes)  # the rules' choices: GLocalKD for too few
        self.said.emit(f"Trained on {counted(result.n_train, 'graph')}{held} in "
                       f"{duration(time.perf_counter() - self._started)}{note}.{weighed}{told}")
        text = (f"Trained{note}; {counted(len(result.scores), 'graph')} scored.{weighed}{told}"
                f"{marks_dropped_text(dropped)}")
        self.trained.emit(result, text)
        self.status.emit(text, 12000)

    @Slot(str)
    def _failed(self, message: str) -> None:
        """A failed training leaves the model as it was: its loss curve is drawn again (training
        began by clearing it), then the failure is passed on."""
        self._kept_losses()
        super()._failed(message)

    def _kept_losses(self) -> None:
        """Draw the loss curve of the model kept (none: empty), after a training that made none."""
        model = self.state.model
        self.losses = list(getattr(model, "loss_history_", []) or []) if model is not None else []
        self.losses_changed.emit(self.losses)
