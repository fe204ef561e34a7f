"""Every scoring entry point reads graphs as the model reads molecules, through one function,
``core.as_model_reads``: ``model.score(load(path))`` scored a standardising model's molecules as
read, while ``glocalkd score`` standardised them (a salt: 20.27 against 23.28), with no word."""
from __future__ import annotations

import inspect

import core.detectors.consensus  # noqa: F401  (the registry's detectors, every subclass loaded)
from core.detectors.base import Detector
from core.detectors.registry import DETECTORS, make_detector


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def test_every_detectors_score_reads_graphs_as_its_model_does():
    names = sorted(DETECTORS)
    assert len(names) > 5
    classes = {type(make_detector(name)) for name in names} | set(_subclasses(Detector))
    unread = [f"{c.__module__}.{c.__qualname__}" for c in classes if not inspect.isabstract(c)
              and not getattr(c.score, "reads_as_trained", False)]
    assert not unread, f"score without core.as_model_reads: {unread}"

