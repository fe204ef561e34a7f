"""The single detectors by name: GLocalKD, the paper's competitors and the graph-size baseline.

:mod:`core.detectors.registry` adds the detectors built from these (the consensus) and is what
the app and the command line use.

Every detector has the same interface: constructor parameters, ``fit(graphs, on_epoch,
should_stop)``, ``score(graphs) -> Scores`` (higher = more anomalous), ``decision_function``,
``threshold(percentile)``, ``graph_embeddings(graphs)`` and the fitted ``train_scores_``,
``loss_history_`` and ``stopped_early_``. ``has_node_scores`` says whether its scores carry
per-node errors (only GLocalKD's do), so views know when a heatmap means something.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from collections.abc import Callable

from core.errors import GLocalKDError


@dataclass(frozen=True)
class DetectorInfo:
    """A detector's registry entry: its name, label and summary, how to build it, and what it can do.

    Every front end asks these fields rather than keeping lists of names.

    Attributes:
        name: the registry name (lower case), as ``glocalkd train --detector`` takes it.
        label: the name shown to people.
        summary: one phrase on what it is.
        has_node_scores: its scores carry per-node errors (heatmaps mean something).
        trains_by_epoch: it reports progress per epoch (``on_epoch``).
        factory: builds an unfitted detector from constructor parameters.
        savable: it has a model file format (``glocalkd train`` offers it).
        calibrates_itself: it holds out its calibration share inside ``fit`` (its
            ``calibration`` parameter), so it is never fitted on a held-out split from outside.
        weighable: known anomalies can weigh its views (``weigh_views``).
        needs_glocalkd: it is built on a GLocalKD component, which takes the GCN settings.
        batch_dependent: a graph's score depends on the other graphs scored with it (the
            propagation kernel hashes the node labels a batch brings in, as GraKeL does), so a file
            is scored whole, never streamed in chunks (:func:`core.screening.score_file.is_streamed`).
        molecules_only: it reads molecules only (:func:`core.detectors.ecfp.molecules`); other
            graphs raise :class:`core.errors.NotApplicableError`, and the app does not offer it for them.
    """

    name: str
    label: str
    summary: str
    has_node_scores: bool
    trains_by_epoch: bool
    factory: Callable[..., object]
    savable: bool = False
    calibrates_itself: bool = False
    weighable: bool = False
    needs_glocalkd: bool = False
    batch_dependent: bool = False
    molecules_only: bool = False


def _lazy(path: str) -> Callable[..., object]:
    """A factory of the detector class ``module:Class``, imported when the first one is made (so
    that naming detectors, for ``--help`` or the app's menu, loads no torch)."""
    module, cls = path.split(":")

    def make(**params):
        return getattr(importlib.import_module(module), cls)(**params)

    return make


_glocalkd = _lazy("core.detectors.glocalkd:GLocalKD")
_ocgcn = _lazy("core.detectors.ocgcn:OCGCN")
_gin_iforest = _lazy("core.detectors.random_gin_forest:RandomGINForest")
_kme_lesinn = _lazy("core.detectors.kernel_mean_embedding:KernelMeanEmbedding")
_spectral_lesinn = _lazy("core.detectors.spectral:SpectralView")
_distance_lesinn = _lazy("core.detectors.distance_profile:DistanceProfile")
_graphlet_lesinn = _lazy("core.detectors.graphlets:GraphletView")
_ecfp_nn = _lazy("core.detectors.ecfp:ECFPNearestNeighbour")
_rare_substructure = _lazy("core.detectors.rare_substructure:RareSubstructure")
_property_lesinn = _lazy("core.detectors.property_space:PropertySpace")
_size = _lazy("core.detectors.size:SizeBaseline")


MIN_KNOWN_ANOMALIES = 3  # fewer cannot tell a consensus's views apart (docs/consensus.md: 3 already help)

TWO_STEP_FIXED = {"kernel", "scorer", "normalize"}  # a two-step detector's name fixes them


def _two_step(kernel: str, scorer: str, normalize: bool = True) -> Callable[..., object]:
    def make(**params):
        from core.detectors.two_step import TwoStepDetector

        return TwoStepDetector(kernel=kernel, scorer=scorer, normalize=normalize, **params)

    make.fixed = TWO_STEP_FIXED
    return make


SINGLE_DETECTORS: dict[str, DetectorInfo] = {info.name: info for info in (
    DetectorInfo("glocalkd", "GLocalKD", "glocal knowledge distillation from a frozen random GCN (the paper's "
                 "method)", True, True, _glocalkd, savable=True),
    DetectorInfo("ocgcn", "OCGCN", "the same GCN trained with the Deep SVDD one-class objective", False, True,
                 _ocgcn),
    DetectorInfo("wl-iforest", "WL-iForest", "Weisfeiler-Lehman subtree kernel (3 iterations) + isolation forest",
                 False, False, _two_step("wl", "iforest")),
    DetectorInfo("wl-lesinn", "WL-LESINN", "Weisfeiler-Lehman subtree kernel (3 iterations) + LESINN "
                 "nearest-neighbour ensemble", False, False, _two_step("wl", "lesinn"), savable=True),
    DetectorInfo("wl-count-lesinn", "WL counts", "Weisfeiler-Lehman subtree counts (3 iterations, not normalised, "
                 "so size counts too) + LESINN nearest-neighbour ensemble", False, False,
                 _two_step("wl", "lesinn", normalize=False), savable=True),
    DetectorInfo("pk-iforest", "PK-iForest", "propagation kernel + isolation forest", False, False,
                 _two_step("pk", "iforest"), batch_dependent=True),
    DetectorInfo("pk-lesinn", "PK-LESINN", "propagation kernel + LESINN nearest-neighbour ensemble", False, False,
                 _two_step("pk", "lesinn"), savable=True, batch_dependent=True),
    DetectorInfo("gin-iforest", "Random-GIN iForest", "untrained random GIN encoders, one isolation forest on "
                 "each one's graph embeddings, averaged (Deep Isolation Forest's idea)", False, False, _gin_iforest),
    DetectorInfo("kme-lesinn", "Node-attribute KME", "each graph's (propagated) node features as a distribution, "
                 "embedded by random Fourier features + LESINN", False, False, _kme_lesinn),
    DetectorInfo("spectral-lesinn", "Spectral", "Rayleigh quotients of the node features on the normalised "
                 "Laplacian and spectral moments + LESINN", False, False, _spectral_lesinn),
    DetectorInfo("distance-lesinn", "Distance profile", "a graph's global shape: the shares of its shortest-path "
                 "lengths and of its nodes' eccentricities + LESINN", False, False, _distance_lesinn),
    DetectorInfo("graphlet-lesinn", "Graphlets", "how a graph closes into small cycles: the shares of its "
                 "connected 3- and 4-node graphlets (triangles, 4-cycles, cliques, ...) + LESINN", False, False,
                 _graphlet_lesinn),
    DetectorInfo("rare-substructure", "Rare substructures", "how seldom a graph's rarest node neighbourhoods "
                 "(Weisfeiler-Lehman subtrees of radius 0-2) occur among the training graphs", False, False,
                 _rare_substructure, savable=True),
    DetectorInfo("property-lesinn", "Property outlier", "how far a molecule's medicinal-chemistry properties "
                 "(weight, cLogP, TPSA, H-bond donors and acceptors, rotatable bonds, heavy atoms, rings, charge) "
                 "lie from the training molecules', by LESINN (molecules only)", False, False, _property_lesinn,
                 savable=True, molecules_only=True),
    DetectorInfo("ecfp-nn", "ECFP4 nearest neighbour", "the chemists' novelty score: 1 - the largest Tanimoto "
                 "similarity of ECFP4 fingerprints (Morgan radius 2, 2,048 bits) to the training molecules "
                 "(molecules only)", False, False, _ecfp_nn, savable=True, molecules_only=True),
    DetectorInfo("size", "Graph size", "a sanity baseline: how unusual a graph's node and edge counts are "
                 "against the training graphs", False, False, _size, savable=True),
)}


def info_in(table: dict[str, DetectorInfo], name: str) -> DetectorInfo:
    """Look up the entry of a detector in a table of detectors.

    Args:
        table: registry name -> entry.
        name: the name (case-insensitive).

    Returns:
        Its :class:`DetectorInfo`.

    Raises:
        GLocalKDError: an unknown name; the one-line message lists the table's names.
    """
    info = table.get(str(name).lower())
    if info is None:
        raise GLocalKDError(f"unknown detector {name!r}; choose one of {', '.join(table)}")
    return info


def params_in(table: dict[str, DetectorInfo], name: str) -> set[str]:
    """List the constructor parameters a detector of a table takes (those its name fixes left out).

    Args:
        table: registry name -> entry.
        name: the name (case-insensitive).

    Returns:
        The parameter names.

    Raises:
        GLocalKDError: an unknown name.
    """
    factory = info_in(table, name).factory
    return set(factory().param_names()) - getattr(factory, "fixed", set())


def make_in(table: dict[str, DetectorInfo], name: str, **params):
    """Make a new, unfitted detector of a table by name.

    Args:
        table: registry name -> entry.
        name: the name (case-insensitive).
        **params: constructor parameters.

    Returns:
        The detector.

    Raises:
        GLocalKDError: an unknown name, or a parameter the detector does not take.
    """
    info = info_in(table, name)
    unknown = set(params) - params_in(table, name)
    if unknown:
        raise GLocalKDError(f"{info.label} does not take {', '.join(sorted(unknown))}")
    return info.factory(**params)


def make_single(name: str, **params):
    """Make a new, unfitted single detector (not a consensus of others).

    Args:
        name: a name of ``SINGLE_DETECTORS`` (case-insensitive).
        **params: constructor parameters.

    Returns:
        The detector.

    Raises:
        GLocalKDError: an unknown name, or a parameter the detector does not take.
    """
    return make_in(SINGLE_DETECTORS, name, **params)


def single_params(name: str) -> set[str]:
    """List the constructor parameters of a single detector.

    Args:
        name: a name of ``SINGLE_DETECTORS`` (case-insensitive).

    Returns:
        The parameter names.

    Raises:
        GLocalKDError: an unknown name.
    """
    return params_in(SINGLE_DETECTORS, name)
