"""The detector contract (PyOD's ``BaseDetector`` habits): an abstract base that declares ``fit``
and ``score``, derives ``get_params`` from the constructor, keeps fitted state in trailing-underscore
attributes, and runs every detector's training through one error-handling path."""
from __future__ import annotations

import abc
import functools
import inspect
import math
from dataclasses import dataclass
from collections.abc import Callable

import numpy as np

from core.data.graphset import GraphSet
from core.data.scores import NonFiniteScoreError, Scores
from core.errors import DataError, GLocalKDError, ParameterError, Stopped
from core.runtime.device import DEVICE_NAMES, is_device_name
from core.runtime.values import SEED, is_count, is_number, is_seed  # noqa: F401 (the detectors' names)


@dataclass
class EpochInfo:
    """Progress of training, given to ``on_epoch`` after every epoch.

    Attributes:
        epoch: the epoch just finished, from 1.
        epochs: the number of epochs planned.
        loss: that epoch's mean training loss per graph.
        seconds: that epoch's wall-clock time.
    """

    epoch: int
    epochs: int
    loss: float
    seconds: float


COUNT = "a whole number of at least 1"  # the rule of epochs, widths, layers, batch sizes (Detector.check_settings)


# settings of one name count the same thing in every detector that takes them: one floor each
# (wl_iterations -5 acted as 0 and was recorded as -5; n_estimators 0 failed inside scikit-learn)
COUNT_FLOORS = {"wl_iterations": 0, "n_estimators": 1, "max_samples": 1, "ensemble_size": 1, "subsample_size": 1}


def reference_scores(values, what: str) -> np.ndarray:
    """A model file's training or calibration scores, checked as every kind of model reads them:
    a non-empty list of finite numbers (an empty one loaded, then failed at the first threshold or
    p-value with a bare IndexError).

    Args:
        values: the scores as read (a list, numpy array or tensor).
        what: what they are, for the message ("training scores").

    Returns:
        The scores, float64.

    Raises:
        ValueError: not a non-empty list of finite numbers.
    """
    out = np.asarray(values, dtype=np.float64)
    if out.ndim != 1 or not len(out) or not np.all(np.isfinite(out)):
        raise ValueError(f"{what} are not a list of finite numbers")
    return out


class CallbackError(Exception):
    """Carry an exception raised by a caller's callback through ``fit``'s error handling.

    So it reaches the caller unchanged instead of being reported as a training failure.

    Args:
        error: the callback's exception, kept as ``error``.
    """

    def __init__(self, error: BaseException):
        super().__init__(error)
        self.error = error


def call_back(fn: Callable, *args):
    """Call a caller's callback (``on_epoch``, ``should_stop``) so that its exceptions travel as :class:`CallbackError`.

    Args:
        fn: the callback.
        *args: its arguments.

    Returns:
        What the callback returns.

    Raises:
        CallbackError: wrapping any ``Exception`` the callback raises.
    """
    try:
        return fn(*args)
    except Exception as exc:
        raise CallbackError(exc) from exc


def describe_error(exc: BaseException) -> str:
    """Say in a few words why something failed inside torch or numpy, for a one-line message.

    Args:
        exc: the exception.

    Returns:
        ``out of memory`` for a ``MemoryError`` or any message saying so, else
        ``Type: message`` (``no details`` when the message is empty).
    """
    if isinstance(exc, MemoryError) or "out of memory" in str(exc):
        return "out of memory"
    return f"{type(exc).__name__}: {str(exc).strip() or 'no details'}"


DETECTOR_FORMAT = "glocalkd-studio/detector"  # model files of every detector but GLocalKD (its own format)
DETECTOR_VERSION = 1
MODEL_FORMAT = "glocalkd-studio/model"  # GLocalKD's model files


def not_this_kind(source: object, state: object, wanted: str) -> str:
    """Say why a file is not a model of the kind a loader reads, naming what it holds instead:
    one message for every loader (a graph-size model given to ``GLocalKD.load`` was called "not
    a GLocalKD Studio model file").

    Args:
        source: the file, named first.
        state: the file's contents.
        wanted: the kind asked for (a class name).

    Returns:
        One line, e.g. ``m.pt: a model of the size detector, not a GLocalKD one (load it with
        load_detector)``.
    """
    held = state.get("format") if isinstance(state, dict) else None
    name = "glocalkd" if held == MODEL_FORMAT else state.get("detector") if held == DETECTOR_FORMAT else None
    if not isinstance(name, str):
        return f"{source}: not a GLocalKD Studio model file"
    return f"{source}: a model of the {name} detector, not a {wanted} one (load it with load_detector)"

# The failures of numerical code that ``fit`` reports as "training failed (...)" (ArithmeticError:
# a division by zero or an overflow in a detector's own arithmetic, a custom one's too). A TypeError
# or an AttributeError is a mistake in the code, passed on as it is.
NUMERICAL_ERRORS = (RuntimeError, MemoryError, ValueError, IndexError, ArithmeticError)


def _without_runtime(value):
    """``value`` with the runtime settings (:attr:`Detector.RUNTIME_PARAMS`: where a model runs, not
    what it scores) left out of every dict inside it, at any depth: the one rule of the fingerprint
    for settings and state alike (a consensus's ``component_params`` and its state hold its views'
    ``device``, which gave models trained on ``cpu`` and ``auto`` two fingerprints)."""
    if isinstance(value, dict):
        return {k: _without_runtime(v) for k, v in value.items() if k not in Detector.RUNTIME_PARAMS}
    if type(value) in (list, tuple):
        return type(value)(_without_runtime(v) for v in value)
    return value


def as_model_reads(model: Detector, graphs: GraphSet, whole: bool = True) -> GraphSet:
    """``graphs`` as ``model`` reads molecules: standardised when it was trained on standardised
    ones (its ``standardises``), as read when not. The one rule of every scoring and weighing entry
    point (``Detector.score``, :func:`core.score_graphs`, :func:`core.weigh_known_anomalies`), so
    that ``model.score(load(path))`` scores what ``glocalkd score`` scores (a salt scored unstandardised
    by a standardising model got another score, with no warning).

    Args:
        model: the fitted detector.
        graphs: the graphs to score or weigh with.
        whole: the caller needs a score for every graph given (``score``): a molecule that cannot
            be standardised is then an error instead of a rejected row.

    Returns:
        ``graphs`` itself when they are already read as the model reads them; else the molecules
        standardised (those that cannot be are among the rejects, unless ``whole``), or the set
        as it was read before it was standardised in memory.

    Raises:
        DataError: standardised molecules (``load(..., standardise=True)``) for a model trained on
            molecules as read, graphs that are not molecules for a model that standardises, or
            with ``whole`` a molecule that cannot be standardised; naming the file and line.
    """
    from core.io.molecules import prepare_molecules

    wanted = bool(getattr(model, "standardises", False))
    if bool(getattr(graphs, "standardised", False)) == wanted:
        return graphs
    if not wanted:
        if graphs.as_read is not None:  # standardised in memory: the molecules as read are at hand
            return graphs.as_read
        raise DataError("these molecules were standardised as they were read, but the model was trained on molecules "
                        "as read: its scores of them would not compare with its training. Read them without "
                        "standardising (load(path) without standardise=True)", graphs.source)
    ready = prepare_molecules(graphs, True)  # DataError for graphs that are not molecules
    if whole and len(ready) != len(graphs):
        failed = next(r for r in ready.rejects if r not in graphs.rejects)
        raise DataError(f"{failed.id}: {failed.reason}; the model standardises its molecules (it was trained with "
                        "standardise): read the file with load(path, standardise=True), which lists such molecules "
                        "among the rejected rows", graphs.source, failed.line)
    return ready


def _reads_as_trained(score: Callable) -> Callable:
    """``score`` with its graphs first read as the model reads them (:func:`as_model_reads`)."""
    @functools.wraps(score)
    def reading_score(self, graphs, *args, **kwargs):
        return score(self, as_model_reads(self, graphs), *args, **kwargs)

    reading_score.reads_as_trained = True
    return reading_score


def _same_value(old, new) -> bool:
    """Whether a setting is set to what it already is (same type and equal; arrays and odd
    objects that do not compare plainly count as a change)."""
    try:
        return type(old) is type(new) and bool(old == new)
    except Exception:  # noqa: BLE001 (an array's ambiguous truth value: a change)
        return False


class Detector(abc.ABC):
    """Base of every detector: ``fit(graphs)`` on normal graphs, then ``score(graphs) -> Scores``.

    Higher scores are more anomalous. A subclass stores each constructor argument under its own
    name (``get_params`` reads them back), lists its fitted attributes in ``FITTED`` (dropped
    whenever ``fit`` fails, so a failed fit never leaves a half-trained model that looks trained),
    and implements :meth:`_fit`, :meth:`score` and :meth:`graph_embeddings`. Every ``_fit`` sets
    ``train_scores_``, ``loss_history_`` and ``stopped_early_``. ``name`` is the registry name;
    ``has_node_scores`` says whether its scores carry per-node errors.
    """

    name: str = "detector"
    has_node_scores: bool = False
    # whether the molecules it was trained on were standardised (core.data.standardise): set by
    # ``fit`` from the graphs, kept in the model file, and applied to every molecule it scores
    standardises: bool = False
    FITTED: tuple[str, ...] = ("train_scores_", "loss_history_", "stopped_early_")
    # whether ``train_scores_`` are ``score(training graphs).score`` to the last bit (GLocalKD), so
    # that a caller who needs them (the consensus) takes them instead of scoring again; False where
    # they are leave-one-out scores (LESINN, ECFP) or of another precision (graph size)
    TRAIN_SCORES_ARE_SCORES: bool = False

    def __init_subclass__(cls, **kwargs):
        """Make every detector's ``score`` read its graphs as the model reads molecules
        (:func:`as_model_reads`): one path for the API, the command line and the app."""
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("score")
        if callable(own) and not getattr(own, "__isabstractmethod__", False) \
                and not getattr(own, "reads_as_trained", False):
            cls.score = _reads_as_trained(own)

    # ------------------------------------------------------------------ parameters
    @classmethod
    def param_names(cls) -> tuple[str, ...]:
        """List the constructor's parameter names (``*args`` and ``**kwargs`` left out).

        Returns:
            The names, in the constructor's order.
        """
        sig = inspect.signature(cls.__init__)
        return tuple(n for n, p in sig.parameters.items()
                     if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    def get_params(self) -> dict:
        """Read the constructor's parameters back (scikit-learn's contract).

        Returns:
            Parameter name -> current value, in the constructor's order.
        """
        return {name: getattr(self, name) for name in self.param_names()}

    def set_params(self, **params) -> Detector:
        """Change constructor parameters; they take effect at the next ``fit``.

        A fitted detector whose settings change forgets what it was fitted (and calibrated) on,
        so that it never scores, nor saves, settings it was not fitted with; the device
        (:attr:`RUNTIME_PARAMS`: where it runs, not what it scores) and a value set to what it
        already is keep the fitted state.

        Args:
            **params: parameter name -> new value.

        Returns:
            ``self``.

        Raises:
            GLocalKDError: a name the constructor does not take (nothing is changed then).
        """
        unknown = set(params) - set(self.param_names())
        if unknown:
            raise GLocalKDError(f"{type(self).__name__} does not take {', '.join(sorted(unknown))}")
        changed = [name for name, value in params.items()
                   if name not in self.RUNTIME_PARAMS and not _same_value(getattr(self, name), value)]
        for name, value in params.items():
            setattr(self, name, value)
        if changed:
            self._forget()
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params().items())})"

    def check_params(self) -> None:
        """Check every setting as :meth:`fit` does first: its kind, then the detector's own rules.

        Raises:
            ParameterError: naming each invalid setting.
        """
        self._check_kinds()
        self.validate_params()

    def validate_params(self) -> None:  # noqa: B027 (a hook: a detector without rules to check has none)
        """Check the settings before training; the base has no rules, subclasses add theirs
        (with :meth:`check_settings`).

        Raises:
            ParameterError: naming any invalid setting.
        """

    def _check_kinds(self) -> None:
        """Refuse a setting of another kind than its default's, for every detector alike: a
        True/False setting takes a bool (``normalize="False"`` turned normalisation on), a
        whole-number one an int (``ensemble_size=1.5`` escaped as numpy's TypeError), a number a
        number, a name a string, ``seed`` a whole number from 0 to :data:`SEED_MAX`, and ``device``
        a device's name (``gpu`` failed only once training began).

        Raises:
            ParameterError: naming each setting of the wrong kind.
        """
        rules: dict[str, tuple[bool, str]] = {}
        signature = inspect.signature(type(self).__init__).parameters
        for name in self.param_names():
            default, value = signature[name].default, getattr(self, name)
            if name == "seed":
                rules[name] = (is_seed(value), SEED)
            elif name == "device":  # every detector that runs networks takes the same names
                rules[name] = (is_device_name(value), DEVICE_NAMES)
            elif isinstance(default, bool):
                rules[name] = (isinstance(value, (bool, np.bool_)), "True or False")
            elif isinstance(default, int):
                low = COUNT_FLOORS.get(name, -(2 ** 63))
                rules[name] = (is_count(value, low), "a whole number" + (f" of at least {low}" if name in COUNT_FLOORS
                                                                          else ""))
            elif isinstance(default, float):
                rules[name] = (is_number(value, -math.inf), "a number")
            elif isinstance(default, str):
                rules[name] = (isinstance(value, str), "a name (text)")
        self.check_settings(rules)

    def check_settings(self, rules: dict[str, tuple[bool, str]]) -> None:
        """Refuse the settings whose rule fails, all of them in one message.

        Args:
            rules: setting -> (whether its value keeps the rule, the rule in words: "a whole
                number of at least 1").

        Raises:
            ParameterError: "invalid setting: {name} must be <rule>, not <value>" for each failing
                setting, naming them (each front end words them as its own: ``--hidden``).
        """
        bad = [name for name, (ok, _) in rules.items() if not ok]
        if bad:
            raise ParameterError("invalid setting: " + "; ".join(
                f"{{{name}}} must be {rules[name][1]}, not {getattr(self, name)!r}" for name in bad), *bad)

    # ------------------------------------------------------------------ training
    def fit(self, graphs: GraphSet, on_epoch: Callable[[EpochInfo], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> Detector:
        """Train on ``graphs``, taken as normal; the one error-handling path of every detector's training.

        Anything that goes wrong while training (a loss that becomes NaN, torch running out of memory,
        a numerical error: :data:`NUMERICAL_ERRORS`) raises :class:`GLocalKDError` and leaves the
        detector untrained; a mistake in the code (a TypeError, say) and an exception raised by
        ``on_epoch`` or ``should_stop`` themselves are passed on unchanged, the detector untrained.

        Args:
            graphs: the training graphs.
            on_epoch: called with an :class:`EpochInfo` after each epoch, by detectors that train by
                epochs.
            should_stop: polled between batches; True ends training cleanly (the model stays usable,
                ``stopped_early_`` is True), unless no epoch had ended: nothing was learnt, so nothing
                is fitted and :class:`~core.errors.Stopped` is raised (an untrained model replaced the
                app's trained one, as "Trained (stopped after 0 epochs)").

        Returns:
            ``self``, fitted.

        Raises:
            DataError: ``graphs`` is empty.
            GLocalKDError: an invalid setting (:meth:`validate_params`) or a failed training.
            Stopped: ``should_stop`` stopped the training before its first epoch ended.
        """
        self._forget()  # first: a refused setting never stays beside a fitted state it did not make
        self.check_params()
        if len(graphs) == 0:
            raise DataError("no graphs to train on", graphs.source)
        self.standardises = bool(getattr(graphs, "standardised", False))
        try:
            self._fit(graphs, on_epoch, should_stop)
            # stopped with no epoch ended (a detector that fits in one step has no loss history)
            if getattr(self, "stopped_early_", False) and not getattr(self, "loss_history_", [None]):
                raise Stopped(f"the {type(self).__name__} was stopped before its first epoch ended: nothing was "
                              "learnt, so no model was made")
            return self
        except NonFiniteScoreError:  # its own training graphs overflow it: the training's fault, not a file's
            self._forget()
            raise GLocalKDError("training diverged: the trained model scores graphs NaN or infinite; lower the "
                                "learning rate, or scale the node attributes (very large values overflow)") from None
        except GLocalKDError:
            self._forget()
            raise
        except CallbackError as wrapped:
            self._forget()
            raise wrapped.error from None
        except NUMERICAL_ERRORS as exc:
            self._forget()
            raise GLocalKDError(f"training failed ({describe_error(exc)})") from exc
        except BaseException:
            self._forget()
            raise

    @abc.abstractmethod
    def _fit(self, graphs: GraphSet, on_epoch: Callable[[EpochInfo], None] | None,
             should_stop: Callable[[], bool] | None) -> None:
        """Set the fitted state from ``graphs`` (validated, non-empty)."""

    def _forget(self) -> None:
        """Drop the fitted state (and any calibration, which belonged to it)."""
        for name in (*self.FITTED, "calibration_scores_"):
            self.__dict__.pop(name, None)

    def _check_fitted(self) -> None:
        if not all(hasattr(self, name) for name in self.FITTED):
            raise GLocalKDError("this detector is not trained yet: call fit()")

    # ------------------------------------------------------------------ model files
    @property
    def can_save(self) -> bool:
        """Whether this detector has a model file format (see :meth:`fitted_state`)."""
        return type(self).fitted_state is not Detector.fitted_state

    def fitted_state(self) -> dict:
        """Give the fitted state as plain values (numbers, strings, lists, dicts, numpy arrays) for a model file.

        The base cannot be saved; a detector with a model file format overrides this.

        Returns:
            The fitted state, read back by :meth:`restore_fitted_state`.

        Raises:
            GLocalKDError: this kind of detector cannot be saved.
        """
        raise GLocalKDError(f"{type(self).__name__} models cannot be saved")

    def restore_fitted_state(self, state: dict, device: str = "auto") -> None:
        """Set the fitted state from :meth:`fitted_state`'s values (read from a model file).

        The base cannot be loaded; a detector with a model file format overrides this.

        Args:
            state: the values :meth:`fitted_state` gave.
            device: where the model runs (``auto``, ``cpu``, ``cuda``), for detectors with networks.

        Raises:
            GLocalKDError: this kind of detector cannot be loaded.
        """
        raise GLocalKDError(f"{type(self).__name__} models cannot be loaded")

    RUNTIME_PARAMS: tuple[str, ...] = ("device",)  # where a model runs, not what it scores

    def scoring_params(self) -> dict:
        """Give the parameters that decide the scores, for the fingerprint.

        Returns:
            :meth:`get_params` less :attr:`RUNTIME_PARAMS` (the device), at any depth (a
            consensus's ``component_params``).
        """
        return _without_runtime(self.get_params())

    def fingerprint(self) -> str:
        """Hash what decides the fitted detector's scores (settings and state, not the device), for reports.

        Reports with the same fingerprint were scored by the same model, whatever its file is called
        and wherever it ran; a model read back from its file has the one it had in memory.

        Returns:
            16 hexadecimal digits (the start of a SHA-256).

        Raises:
            GLocalKDError: the detector is not fitted, or cannot be saved.
        """
        from core.data.serialization import encode_state, state_digest
        from core.data.standardise import RULES

        self._check_fitted()
        described = {"params": self.scoring_params(), "state": _without_runtime(self.fitted_state())}
        if self.standardises:  # a model that standardises scores other molecules: its own fingerprint,
            described["standardise"] = RULES  # by the rules it standardises with now
        return state_digest(encode_state(described)).hexdigest()[:16]

    def fingerprints(self) -> tuple[str, ...]:
        """The fingerprints this model's reports may name: :meth:`fingerprint`, then the one earlier
        versions gave the same model where it differs and the scores do not (a consensus's held its
        views' device; a report it wrote then still resumes, reviews and exports as its own).

        Returns:
            The current fingerprint first.
        """
        now, before = self.fingerprint(), self._fingerprint_before()
        return (now,) if before in (None, now) else (now, before)

    def _fingerprint_before(self) -> str | None:
        """The fingerprint before runtime settings were left out at every depth, or None where the
        scores changed since (a standardising model's rules)."""
        from core.data.serialization import encode_state, state_digest

        if self.standardises:
            return None

        def old_rule(value):
            if isinstance(value, dict):
                return {k: ({n: old_rule(x) for n, x in v.items() if n not in self.RUNTIME_PARAMS}
                            if k == "params" and isinstance(v, dict) else old_rule(v)) for k, v in value.items()}
            if type(value) in (list, tuple):
                return type(value)(old_rule(v) for v in value)
            return value

        params = {k: v for k, v in self.get_params().items() if k not in self.RUNTIME_PARAMS}
        described = {"params": params, "state": old_rule(self.fitted_state())}
        return state_digest(encode_state(described)).hexdigest()[:16]

    def file_state(self) -> dict:
        """Give what this detector's model file holds (see :mod:`core.detectors.model_file`).

        Returns:
            ``{"format": DETECTOR_FORMAT, "version", "detector": name, "params", "state"}``, encoded
            for torch's ``weights_only`` loader, and ``calibration_scores`` when calibrated.

        Raises:
            GLocalKDError: the detector is not fitted, or cannot be saved.
        """
        from core.data.serialization import encode_state

        self._check_fitted()
        state = {"format": DETECTOR_FORMAT, "version": DETECTOR_VERSION, "detector": self.name,
                 "params": encode_state(self.get_params()), "state": encode_state(self.fitted_state())}
        if self.is_calibrated:
            state["calibration_scores"] = encode_state(np.asarray(self.calibration_scores_, dtype=np.float64))
        if self.standardises:  # absent (files before it, and models that do not): off
            state["standardise"] = True
        return state

    def save(self, path) -> None:
        """Write the model file atomically, with a digest of its contents; read it with :meth:`load`.

        The file is a new temporary file in the same folder, created exclusively, then renamed: no
        link is written through (:mod:`core.runtime.model_files`).

        Args:
            path: the model file to write.

        Raises:
            GLocalKDError: the detector is not fitted, or cannot be saved.
        """
        from core.runtime.model_files import write_model_file

        write_model_file(path, self.file_state())

    @classmethod
    def load(cls, path, device: str = "auto") -> Detector:
        """Read a model file of this kind of detector (any kind: :func:`core.detectors.model_file.load_detector`).

        Args:
            path: the model file.
            device: where the model runs (``auto``, ``cpu``, ``cuda``).

        Returns:
            The fitted detector.

        Raises:
            GLocalKDError: called on the abstract :class:`Detector` itself.
            ModelFileError: a missing, damaged or foreign file, naming it.
        """
        from core.runtime.model_files import read_model_file

        if inspect.isabstract(cls):
            raise GLocalKDError("Detector.load reads one kind of detector; core.load_detector(path) reads any")
        return cls.from_file_state(read_model_file(path), device, source=str(path))

    @classmethod
    def from_file_state(cls, state, device: str = "auto", source: str = "model") -> Detector:
        """Rebuild the detector a :meth:`file_state` describes, checking it.

        Args:
            state: a model file's contents.
            device: where the model runs; replaces the saved ``device`` parameter.
            source: the file's name, for messages.

        Returns:
            The fitted detector, with its calibration scores when the file has them.

        Raises:
            GLocalKDError: ``device`` is not one torch can use.
            ModelFileError: a foreign format, another version or kind of detector, or damaged
                contents, naming ``source``.
        """
        from core.data.serialization import decode_state
        from core.errors import ModelFileError
        from core.runtime.device import resolve_device
        from core.runtime.model_files import version_problem

        resolve_device(device)  # a device torch cannot use is the caller's setting, not damage in the file
        own = getattr(cls, "name", None)  # a class of one detector (the two-step family's name is its settings')
        if not isinstance(state, dict) or state.get("format") != DETECTOR_FORMAT or \
                (isinstance(own, str) and state.get("detector") != own):
            raise ModelFileError(not_this_kind(source, state, cls.__name__))
        problem = version_problem(state.get("version"), (DETECTOR_VERSION,))
        if problem:
            raise ModelFileError(f"{source}: {problem}")
        try:
            params = {k: v for k, v in decode_state(state["params"]).items() if k in cls.param_names()}
            if "device" in params:
                params["device"] = device
            detector = cls(**params)
            if detector.name != state["detector"]:
                raise ModelFileError(f"{source}: holds a {state['detector']} model, not a {detector.name} one")
            detector.check_params()  # as fit checks them: kinds too (normalize="yes" loaded as True)
            detector.restore_fitted_state(decode_state(state["state"]), device)
            reference_scores(detector.train_scores_, "training scores")  # kept as the detector keeps them
            if "calibration_scores" in state:
                detector.calibration_scores_ = reference_scores(decode_state(state["calibration_scores"]),
                                                                "calibration scores")
            detector.standardises = state.get("standardise", False) is True
        except ModelFileError as exc:  # a component's own check: name the file too
            raise (exc if str(exc).startswith(source) else ModelFileError(f"{source}: {exc}")) from None
        except (GLocalKDError, KeyError, TypeError, ValueError, RuntimeError, AttributeError, IndexError) as exc:
            raise ModelFileError(f"{source}: damaged model file ({exc})") from None
        return detector

    # ------------------------------------------------------------------ scoring
    @abc.abstractmethod
    def score(self, graphs: GraphSet, on_progress: Callable[[int, int], None] | None = None) -> Scores:
        """Score graphs with the fitted detector (higher = more anomalous).

        Args:
            graphs: the graphs to score.
            on_progress: called as ``on_progress(done, total)`` while scoring, by detectors that score
                in batches.

        Returns:
            The graphs' :class:`Scores`.
        """

    def molecule_views(self) -> dict[str, Detector]:
        """Give the parts of this model that score molecules from their atoms, bonds and counts alone.

        Such a view scores molecules with its ``score_molecules(x, bonds, atom_counts,
        bond_counts)``, from the arrays a parsing
        worker makes, with no network and no graph objects: screening scores it in its parsing
        workers, beside the parse, so that the scoring process only combines (see
        :func:`core.screening.featurize.featurize_chunk`). The scores are those of :meth:`score`.

        Returns:
            View name -> fitted detector with ``score_molecules``; empty (the default) when
            no part of the model scores so.
        """
        return {}

    @abc.abstractmethod
    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor") -> np.ndarray:
        """Give the representation each graph is scored on, for the chemical-space map.

        Args:
            graphs: the graphs.
            network: which space; GLocalKD has ``predictor``, ``target`` and ``difference``, other
                detectors have one representation and ignore it.

        Returns:
            One row per graph, shape (graphs, features).
        """

    def decision_function(self, graphs: GraphSet) -> np.ndarray:
        """Score graphs, graph scores only (PyOD's name for it).

        Args:
            graphs: the graphs to score.

        Returns:
            The graph anomaly scores, shape (graphs,).
        """
        return self.score(graphs).score

    @property
    def is_calibrated(self) -> bool:
        """Whether p-values are available: it holds the held-out normal graphs' scores (``calibration_scores_``).

        They are set by :func:`core.detectors.conformal.fit_calibrated`, or by a consensus's own fit.
        """
        return getattr(self, "calibration_scores_", None) is not None

    def p_values(self, scores: np.ndarray) -> np.ndarray:
        """Turn raw scores into conformal p-values against the held-out normal graphs.

        Args:
            scores: raw scores of this detector, shape (graphs,).

        Returns:
            For each score, the share of held-out normal graphs scoring at least as high, shape
            (graphs,).

        Raises:
            GLocalKDError: the detector is not calibrated.
        """
        from core.detectors.conformal import conformal_p_values

        if not self.is_calibrated:
            raise GLocalKDError("this model is not calibrated: train it with a calibration share of its "
                                "normal graphs to get p-values")
        return conformal_p_values(self.calibration_scores_, scores)

    def threshold(self, percentile: float = 95.0) -> float:
        """Give a natural cut-off for flagging: a percentile of the training graphs' scores.

        Args:
            percentile: the percentile, 0-100.

        Returns:
            That percentile of ``train_scores_``.

        Raises:
            ParameterError: the percentile is not a number from 0 to 100.
            GLocalKDError: the detector is not fitted.
        """
        if not (is_number(percentile) and percentile <= 100):
            raise ParameterError(f"{{percentile}} must be a number from 0 to 100, not {percentile!r}", "percentile")
        self._check_fitted()
        return float(np.percentile(self.train_scores_, percentile))


class MoleculeView:
    """A detector that scores molecules from screening's packed arrays itself (its
    ``score_molecules``), so that screening scores it in the parsing workers: graph size,
    WL-LESINN and the known-anomaly classifier."""

    def molecule_views(self) -> dict:
        """Give itself: it scores molecules from their atoms, bonds and counts (its ``score_molecules``).

        Returns:
            ``{name: self}``.
        """
        return {self.name: self}


class GraphLevelDetector(Detector, abc.ABC):
    """A detector that scores whole graphs only, with no node errors (every view beside GLocalKD
    but OCGCN's): a subclass gives one value per graph (:meth:`graph_scores`) and this class
    makes them :class:`Scores`, so that every such view reports progress and empty sets alike.
    """

    def score(self, graphs: GraphSet, on_progress: Callable[[int, int], None] | None = None) -> Scores:
        """Score graphs (higher = more anomalous); graph scores only, the node terms NaN.

        Args:
            graphs: the graphs to score.
            on_progress: called once, as ``on_progress(total, total)``, when all are scored.

        Returns:
            Graph scores only (:meth:`Scores.graph_only`).

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        values = self.graph_scores(graphs) if len(graphs) else np.zeros(0)
        if on_progress is not None:
            on_progress(len(graphs), len(graphs))
        return Scores.graph_only(values, graphs.node_ptr())

    @abc.abstractmethod
    def graph_scores(self, graphs: GraphSet) -> np.ndarray:
        """Give each graph's score, fitted state assumed (:meth:`score` checks it).

        Args:
            graphs: the graphs to score, at least one.

        Returns:
            One score per graph, shape (graphs,), higher = more anomalous.
        """
