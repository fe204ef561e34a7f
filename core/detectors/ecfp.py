"""The chemists' novelty score as a detector: ECFP4 nearest-neighbour Tanimoto distance.

A molecule's score is ``1 - max Tanimoto`` between its ECFP4 fingerprint (RDKit's Morgan
fingerprint, radius 2, 2,048 bits) and those of the training molecules: 0 for a molecule seen
in training, 1 for one that shares no substructure bit with any. It is what a chemist would
pick instead of a graph anomaly detector, so the result tables show it beside them.

Molecules come from :func:`core.data.graph_molecules.molecules`: the SMILES of molecule files
(SMILES, SDF, CSV) or, for TU collections, node labels that the collection's readme maps to
elements (AIDS, Tox21) with bonds from edge labels mapped to bond orders. Other data cannot be
fingerprinted: fitting raises
:class:`core.errors.NotApplicableError`, and the evaluation harness reports "n/a".
Deterministic: ``seed`` is kept only so that every detector takes one.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.data.graph_molecules import molecules
from core.data.graphset import GraphSet
from core.detectors.base import GraphLevelDetector, is_count

class ECFPNearestNeighbour(GraphLevelDetector):
    """The chemists' novelty score: ``1 - max Tanimoto`` of ECFP fingerprints to the training molecules.

    Fitted state: ``bits_`` (the training fingerprints, packed), ``train_scores_`` (each training
    molecule against the others).

    Args:
        radius: the Morgan radius (2: ECFP4).
        n_bits: fingerprint bits, a positive multiple of 8.
        seed: unused (the score is deterministic); kept so that every detector takes one.
    """

    name = "ecfp-nn"
    has_node_scores = False
    FITTED = ("bits_", "train_scores_", "loss_history_", "stopped_early_")

    def __init__(self, radius: int = 2, n_bits: int = 2048, seed: int = 0):
        self.radius = radius
        self.n_bits = n_bits
        self.seed = seed

    def validate_params(self) -> None:
        """Check that ``radius`` is 0 or more and ``n_bits`` a positive multiple of 8.

        Raises:
            ParameterError: naming each that breaks its rule (:meth:`check_settings`).
        """
        self.check_settings({"radius": (is_count(self.radius, 0), "a whole number of at least 0"),
                             "n_bits": (is_count(self.n_bits, 8) and self.n_bits % 8 == 0, "a positive multiple of 8")})

    def _fingerprints(self, graphs: GraphSet) -> np.ndarray:
        """(graphs, n_bits) uint8 bits."""
        from rdkit.Chem import rdFingerprintGenerator

        gen = rdFingerprintGenerator.GetMorganGenerator(radius=self.radius, fpSize=self.n_bits)
        mols = molecules(graphs, "ECFP4 nearest neighbour")
        if not mols:
            return np.zeros((0, self.n_bits), dtype=np.uint8)
        return np.stack([gen.GetFingerprintAsNumPy(m).astype(np.uint8) for m in mols])

    @staticmethod
    def _bit_vectors(bits: np.ndarray) -> list:
        from rdkit import DataStructs

        out = []
        for row in bits:
            fp = DataStructs.ExplicitBitVect(len(row))
            fp.SetBitsFromList(np.flatnonzero(row).tolist())
            out.append(fp)
        return out

    def _fit(self, graphs: GraphSet, on_epoch: Callable | None = None,
             should_stop: Callable[[], bool] | None = None) -> None:
        """Fingerprint the training molecules; no epochs."""
        bits = self._fingerprints(graphs)
        self.bits_ = np.packbits(bits, axis=1)
        self._train_fps = self._bit_vectors(bits)
        self.train_scores_ = self._distances(self._train_fps, leave_one_out=True)
        self.loss_history_: list[float] = []
        self.stopped_early_ = False

    def _distances(self, fps: list, leave_one_out: bool = False) -> np.ndarray:
        from rdkit import DataStructs

        train = self._training_fps()
        out = np.zeros(len(fps))
        for i, fp in enumerate(fps):
            sims = np.asarray(DataStructs.BulkTanimotoSimilarity(fp, train))
            if leave_one_out:
                sims[i] = -np.inf
            out[i] = 1.0 - (float(sims.max()) if len(sims) and np.isfinite(sims.max()) else 0.0)
        return out

    def _training_fps(self) -> list:
        if getattr(self, "_train_fps", None) is None:
            self._train_fps = self._bit_vectors(np.unpackbits(self.bits_, axis=1, count=self.n_bits))
        return self._train_fps

    def fitted_state(self) -> dict:
        """Give the packed training fingerprints and the training scores, for a model file.

        Returns:
            ``{"bits", "train_scores"}``.

        Raises:
            GLocalKDError: not fitted.
        """
        self._check_fitted()
        return {"bits": self.bits_, "train_scores": self.train_scores_}

    def restore_fitted_state(self, state: dict, device: str = "auto") -> None:
        """Set the training fingerprints and scores from :meth:`fitted_state`'s values.

        Args:
            state: the values :meth:`fitted_state` gave.
            device: unused (no network).

        Raises:
            ValueError: the fingerprints are not non-empty packed rows of ``n_bits`` bits.
        """
        bits = np.asarray(state["bits"], dtype=np.uint8)
        if bits.ndim != 2 or bits.shape[1] != self.n_bits // 8 or len(bits) == 0:
            raise ValueError(f"ECFP fingerprints must be packed rows of {self.n_bits} bits")
        self.bits_, self._train_fps = bits, None
        self.train_scores_ = np.asarray(state["train_scores"], dtype=np.float64)
        self.loss_history_, self.stopped_early_ = [], False

    def _forget(self) -> None:
        super()._forget()
        self.__dict__.pop("_train_fps", None)

    def graph_embeddings(self, graphs: GraphSet, network: str = "predictor") -> np.ndarray:
        """Give each molecule's fingerprint bits (the representation compared).

        Args:
            graphs: the molecules.
            network: ignored: there is one representation.

        Returns:
            Shape (graphs, n_bits), float32 zeros and ones.

        Raises:
            GLocalKDError: not fitted.
            NotApplicableError: the graphs are not molecules (:func:`molecules`).
        """
        self._check_fitted()
        return self._fingerprints(graphs).astype(np.float32)

    def graph_scores(self, graphs: GraphSet) -> np.ndarray:
        """Score molecules by ``1 - max Tanimoto`` to the training molecules (higher = more novel).

        Args:
            graphs: the molecules to score.

        Returns:
            One score per molecule, in [0, 1].

        Raises:
            NotApplicableError: the graphs are not molecules (:func:`molecules`).
            DataError: a molecule cannot be made (:func:`molecules`).
        """
        return self._distances(self._bit_vectors(self._fingerprints(graphs)))
