"""The module paths of the flat layout (``core.model``, ``core.loaders``, ...) still import, for one
release, as aliases of their new homes, with a :class:`DeprecationWarning` naming the new path.

``from core import ...`` is the stable API and is not affected; see CHANGELOG.md for the moves.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

# old module path -> its home in the layered layout
MOVED = {
    "core.allocator": "core.runtime.allocator", "core.threads": "core.runtime.threads",
    "core.machine": "core.runtime.machine",
    "core.graphset": "core.data.graphset", "core.chem": "core.data.chem", "core.features": "core.data.features",
    "core.feature_modes": "core.data.feature_modes", "core.packed": "core.data.packed",
    "core.scores": "core.data.scores", "core.substructure": "core.data.substructure",
    "core.loaders": "core.io.load", "core.loaders.text": "core.io.text", "core.loaders.tu": "core.io.tu",
    "core.loaders.molecules": "core.io.molecules", "core.loaders.columns": "core.io.columns",
    "core.report": "core.io.report", "core.ranked_report": "core.io.ranked_report",
    "core.gcn": "core.nn.gcn", "core.row_groups": "core.nn.row_groups", "core.pooling": "core.nn.pooling",
    "core.optim": "core.nn.optim",
    "core.detector_base": "core.detectors.base", "core.model": "core.detectors.glocalkd",
    "core.ocgcn": "core.detectors.ocgcn", "core.size_baseline": "core.detectors.size",
    "core.two_step": "core.detectors.two_step", "core.graph_kernels": "core.detectors.graph_kernels",
    "core.propagation_kernel": "core.detectors.propagation_kernel", "core.lesinn": "core.detectors.lesinn",
    "core.metrics": "core.evaluation.metrics", "core.evaluate": "core.evaluation",
    "core.explanations": "core.evaluation.explanations",
    "core.heatmap": "core.viz.heatmap", "core.chemical_space": "core.viz.chemical_space",
}
_PACKAGES = {"core.loaders"}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers only for the old paths above, after the regular finders found nothing."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=fullname in _PACKAGES)

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module) -> None:
        new = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} has moved to {new}; the old path will be removed in the next release",
                      DeprecationWarning, stacklevel=2)
        target = importlib.import_module(new)
        module.__dict__.update({k: v for k, v in vars(target).items()
                                if k not in ("__name__", "__spec__", "__loader__", "__package__", "__path__")})
        module.__getattr__ = lambda name: getattr(target, name)


def install() -> None:
    """Put the finder last on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())
