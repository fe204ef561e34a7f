"""The training settings form: the detector, its hyper-parameters, device and which graphs count as normal."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QLabel, QSpinBox, QWidget)

from core import DEFAULT_DETECTOR, DETECTORS, MIN_KNOWN_ANOMALIES, SEED_MAX, accepted_params, detector_defaults, \
    detector_info, counted

from ..state import FIELD_LABELS

ALL_GRAPHS = "All graphs"
NO_KNOWN = "None"
RECOMMENDED = " (recommended)"
STANDARDISE_HELP = ("Before training, keep each molecule's largest fragment (salts and solvents go), neutralise "
                    "its charges and take its canonical tautomer (RDKit). The model keeps the choice: every file "
                    "scored with it is standardised the same way, and its report adds a standardised_smiles "
                    "column. Off by default: on the hERG demo it changed 359 of 655 molecules but hardly the "
                    "ranking (ROC-AUC 0.741 as read, 0.747 standardised), and it makes reading molecules several "
                    "times slower (docs/app.md)")
DEFAULTS_FROM = "glocalkd"  # the detector whose signature gives the rows their defaults (the paper's)


def detector_label(name: str) -> str:
    """The detector's label in the menu; the default is marked as recommended."""
    return detector_info(name).label + (RECOMMENDED if name == DEFAULT_DETECTOR else "")


class TrainSettings(QWidget):
    """Form over a detector's constructor parameters; rows a detector does not use are hidden.

    The rows' defaults are GLocalKD's (the paper's), read from its signature when the form is
    activated (:meth:`activate`, once torch has loaded); saved values restored before then
    (:meth:`set_params`) are kept."""

    def __init__(self):
        super().__init__()
        form = QFormLayout(self)
        self._form = form
        self._active = False
        self._given: set[str] = set()  # the parameters set before activation (restored settings)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.detector = QComboBox()
        # the default first and selected (docs/consensus.md: the best mean ranking over the paper's benchmarks)
        for name in [DEFAULT_DETECTOR, *(n for n in DETECTORS if n != DEFAULT_DETECTOR)]:
            self.detector.addItem(detector_label(name), name)
            self.detector.setItemData(self.detector.count() - 1, detector_info(name).summary,
                                      Qt.ItemDataRole.ToolTipRole)
        self.detector.setCurrentIndex(0)
        self.detector.setToolTip("The consensus (recommended: the best mean ranking over the paper's benchmarks, "
                                 "0.8-0.9 times GLocalKD's screening rate), GLocalKD (the paper's method), "
                                 "or one of the paper's competitors (graph scores only)")
        self.detector_note = QLabel("")
        self.detector_note.setWordWrap(True)
        self.detector_note.setStyleSheet("color: #666;")
        self.normal = QComboBox()
        self.normal.setToolTip("Train only on graphs with this label (the normal class), or on all graphs")
        self.normal_note = QLabel("")
        self.normal_note.setWordWrap(True)
        self.normal_note.setTextFormat(Qt.TextFormat.RichText)
        self.normal_note.setStyleSheet("color: #666;")
        self.known = QComboBox()
        self._counts: dict[str, int] = {}  # the open data's labels (set_labels)
        self._known_allowed = False  # a label other than the normal one can be the known anomalies
        self.known.setToolTip("Graphs known to be anomalous (e.g. reference actives), never trained on: the "
                              "consensus trusts each of its views as far as it ranks them above the held-out "
                              "normal graphs, a fourth view (WL counts, which also sees size) included, "
                              "and a classifier learns their substructures (docs/consensus.md). Pick the "
                              "normal graphs' label first")
        self.epochs = _spin(1, 100000)
        self.lr = QDoubleSpinBox()
        self.lr.setDecimals(6)
        self.lr.setRange(1e-6, 1.0)
        self.lr.setSingleStep(1e-4)
        self.batch = _spin(1, 100000)
        self.hidden = _spin(1, 8192)
        self.out_dim = _spin(1, 8192)
        self.layers = _spin(1, 10)
        self.lam = QDoubleSpinBox()
        self.lam.setRange(0.0, 100.0)
        self.lam.setSingleStep(0.1)
        self.seed = QDoubleSpinBox()  # a whole number up to SEED_MAX, past a QSpinBox's 2**31 - 1 (a double holds it)
        self.seed.setDecimals(0)
        self.seed.setRange(0, SEED_MAX)
        self.seed.setGroupSeparatorShown(True)
        self.features = QComboBox()
        self.features.addItems(["auto", "attributes", "labels", "both", "degree", "atom", "atom-rings"])
        self.features.setToolTip("auto: what the data has (molecules: RDKit atom features). atom-rings: atom "
                                 "features plus the sizes of each atom's rings (finds strained rings; see "
                                 "docs/explanations.md)")
        self.normalize = QCheckBox("L2-normalise embeddings\n(authors' code)")  # two lines: the side panel stays narrow
        self.node_max = QCheckBox("Add the largest node error\nto the node term")
        self.node_max.setToolTip("A few unusual atoms in a large molecule are not averaged away "
                                 "(same trained model; see docs/explanations.md)")
        self.size_term = QCheckBox("Add the size term\nto the graph term")
        self.size_term.setToolTip("Error of the summed embeddings: finds graphs made of many normal parts, "
                                  "which max-pooling cannot tell from one part (see docs/explanations.md)")
        self.standardise = QCheckBox("Standardise molecules first")
        self.standardise.setObjectName("standardise")
        self.standardise.setToolTip(STANDARDISE_HELP)
        self.device = QComboBox()
        self.device.addItems(["auto", "cpu", "cuda"])
        self.device_note = QLabel("")
        self.device_note.setWordWrap(True)
        self.device_note.setStyleSheet("color: #666;")
        label = FIELD_LABELS.get
        for text, widget in ((label("detector"), self.detector), ("", self.detector_note),
                             (label("normal_label"), self.normal), ("", self.normal_note),
                             ("Molecules", self.standardise),
                             (label("known_label"), self.known), (label("epochs"), self.epochs),
                             (label("lr"), self.lr), (label("batch_size"), self.batch),
                             (label("hidden_dim"), self.hidden), (label("out_dim"), self.out_dim),
                             (label("num_layers"), self.layers), (label("lam"), self.lam), (label("seed"), self.seed),
                             (label("features"), self.features), ("", self.normalize),
                             ("Score readouts", self.node_max), ("", self.size_term),
                             (label("device"), self.device), ("", self.device_note)):
            form.addRow(text, widget)
        # which constructor parameter each row sets (rows of other detectors are hidden)
        self._rows = {"epochs": self.epochs, "lr": self.lr, "batch_size": self.batch, "hidden_dim": self.hidden,
                      "out_dim": self.out_dim, "num_layers": self.layers, "lam": self.lam,
                      "features": self.features, "normalize": self.normalize, "device": self.device,
                      "node_max": self.node_max, "size_term": self.size_term}
        self._defaulted = {**self._rows, "seed": self.seed}  # the rows whose default is the detector's
        for key, widget in self._defaulted.items():  # a value set before activation is kept
            changed = widget.toggled if isinstance(widget, QCheckBox) else (
                widget.currentIndexChanged if isinstance(widget, QComboBox) else widget.valueChanged)
            changed.connect(lambda *_, key=key: self._given.add(key) if not self._active else None)
        for widget in (*self._rows.values(), self.device_note):  # shown, with their defaults, once activated
            form.setRowVisible(widget, False)
        info = detector_info(self.detector_name())
        self.detector_note.setText(f"{info.summary}.")
        self.normal.currentIndexChanged.connect(lambda _index: self._offer_known())
        self.set_labels({})

    def activate(self, device_note: str = "") -> None:
        """Show the rows the chosen detector uses. Reading a detector's parameters imports its class
        (torch), so the window calls this once torch has loaded; until then the form is disabled.

        Args:
            device_note: a line on the device torch sees ("" leaves the note as it is).
        """
        if device_note:
            self.set_device_note(device_note)
        if not self._active:
            self._active = True
            defaults = detector_defaults(DEFAULTS_FROM)
            self.set_params({k: v for k, v in defaults.items() if k in self._defaulted and k not in self._given})
            self.detector.currentIndexChanged.connect(self._detector_changed)
        self._detector_changed()

    def detector_name(self) -> str:
        return self.detector.currentData()

    def _used_rows(self, name: str) -> set[str]:
        """The parameters the rows set for detector ``name`` (a consensus: its GLocalKD's too)."""
        return accepted_params(name) | (accepted_params("glocalkd") if detector_info(name).needs_glocalkd else set())

    def _detector_changed(self) -> None:
        info = detector_info(self.detector_name())
        used = self._used_rows(info.name)
        for key, widget in self._rows.items():
            self._form.setRowVisible(widget, key in used)
        self._form.setRowVisible(self.device_note, "device" in used)
        self._form.setRowVisible(self.known, info.weighable)
        if info.needs_glocalkd:
            nodes = "its GLocalKD gives the per-node errors for the heatmap and takes the GCN settings below"
        else:
            nodes = "per-node errors for the heatmap" if info.has_node_scores else "graph scores only, no heatmap"
        why = (" Recommended: the best mean ranking over the paper's 14 benchmark rows (docs/consensus.md); it "
               "screens at 0.8-0.9 times GLocalKD's rate." if info.name == DEFAULT_DETECTOR else "")
        self.detector_note.setText(f"{info.summary}; {nodes}.{why}")

    def detector_params(self) -> dict:
        """The settings of the rows the chosen detector uses (a consensus: its GLocalKD's too,
        which :func:`core.train_model` passes on to its GLocalKD component)."""
        used = self._used_rows(self.detector_name())
        return {k: v for k, v in self.params().items() if k in used}

    def show_data(self, graphs) -> None:
        """Offer the open data's labels, and only the detectors that can read it (see :meth:`set_molecular`).

        Args:
            graphs: the open :class:`core.GraphSet`.
        """
        self.set_labels(graphs.label_counts())
        self.set_molecular(graphs.is_molecular)

    def set_molecular(self, molecular: bool) -> None:
        """Enable the detectors that read molecules only (the registry's ``molecules_only``) when
        the open data is molecules, and grey them out, saying why, when it is not; a greyed-out
        choice gives way to the default detector."""
        model = self.detector.model()
        for i in range(self.detector.count()):
            info = detector_info(self.detector.itemData(i))
            if info.molecules_only:
                model.item(i).setEnabled(molecular)
                why = "" if molecular else " This data is not molecules, so it cannot be read."
                self.detector.setItemData(i, f"{info.summary}.{why}", Qt.ItemDataRole.ToolTipRole)
        if not molecular and detector_info(self.detector_name()).molecules_only:
            self.detector.setCurrentIndex(0)

    def set_labels(self, counts: dict[str, int], preferred: str | None = None, known: str | None = None) -> None:
        """Offer 'All graphs' (the default, as ``glocalkd train`` has) and each label with its count;
        pick ``preferred`` when given, and ``known`` as the known anomalies' label when it can be
        (a session's: training again from it kept the normal label and dropped the known one)."""
        from ..state import NORMAL_HELP

        self.normal.clear()
        total = sum(counts.values())
        self.normal.addItem(f"{ALL_GRAPHS} ({total:,})" if counts else ALL_GRAPHS)
        for label, n in counts.items():
            self.normal.addItem(f"Label {label} ({counted(n, 'graph')})", label)
        if preferred is not None and preferred in counts:
            self.normal.setCurrentIndex(list(counts).index(preferred) + 1)
        self.normal_note.setText(NORMAL_HELP if counts else "The data has no labels: training uses all graphs.")
        self._counts = dict(counts)
        self._offer_known(known)

    def _offer_known(self, chosen: str | None = None) -> None:
        """Offer the labels other than the normal one as known anomalies; none while every graph
        is trained on (a known anomaly is never trained on); keep ``chosen`` (None: the one
        chosen now) when it is offered."""
        counts = self._counts
        normal = self.normal_label()
        chosen = self.known.currentData() if chosen is None else chosen
        self.known.clear()
        self.known.addItem(NO_KNOWN)
        for label, n in counts.items():
            if label == normal:
                continue
            graphs = counted(n, "graph")
            if n < MIN_KNOWN_ANOMALIES:  # shown, not chosen: weighing needs more (said before training, not after)
                self.known.addItem(f"Label {label} ({graphs}: too few, at least {MIN_KNOWN_ANOMALIES})", label)
                self.known.model().item(self.known.count() - 1).setEnabled(False)
            else:
                self.known.addItem(f"Label {label} ({graphs})", label)
        self._known_allowed = normal is not None and self.known.count() > 1
        self.known.setEnabled(self._known_allowed)
        index = self.known.findData(chosen) if chosen is not None else -1
        if index > 0 and self._known_allowed and self.known.model().item(index).isEnabled():
            self.known.setCurrentIndex(index)

    def normal_label(self) -> str | None:
        return self.normal.currentData()

    def known_label(self) -> str | None:
        """The label of the known anomalies (None: none), for a detector that can weigh its views."""
        if not self._known_allowed or not detector_info(self.detector_name()).weighable:  # (disabled while busy)
            return None
        return self.known.currentData()

    def standardises(self) -> bool:
        """Whether molecules are standardised before training (the model keeps the choice)."""
        return self.standardise.isChecked()

    def set_device_note(self, text: str) -> None:
        self.device_note.setText(text)

    def params(self) -> dict:
        """Every row's value and the detector; before :meth:`activate`, None for a number or check
        box that has neither a restored value nor its default yet (a menu shows its first choice)."""
        values = dict(epochs=self.epochs.value(), lr=self.lr.value(), batch_size=self.batch.value(),
                      hidden_dim=self.hidden.value(), out_dim=self.out_dim.value(), num_layers=self.layers.value(),
                      lam=self.lam.value(), normalize=self.normalize.isChecked(), node_max=self.node_max.isChecked(),
                      size_term=self.size_term.isChecked(), features=self.features.currentText(),
                      seed=int(self.seed.value()), device=self.device.currentText(), detector=self.detector_name(),
                      standardise=self.standardise.isChecked())
        if not self._active:
            values.update({k: None for k, widget in self._defaulted.items()
                           if k not in self._given and not isinstance(widget, QComboBox)})
        return values

    def set_params(self, p: dict) -> None:
        """Restore saved values; unknown or malformed entries are ignored."""
        done: set[str] = set()
        setters = {"epochs": self.epochs.setValue, "lr": self.lr.setValue, "batch_size": self.batch.setValue,
                   "hidden_dim": self.hidden.setValue, "out_dim": self.out_dim.setValue,
                   "num_layers": self.layers.setValue, "lam": self.lam.setValue, "seed": self.seed.setValue}
        for key, setter in setters.items():
            try:
                if key in p:
                    setter(type(setter.__self__.value())(p[key]))
                    done.add(key)
            except (TypeError, ValueError, OverflowError):  # an edited session's "epochs": Infinity, or 1e30
                pass
        for key, box in (("normalize", self.normalize), ("node_max", self.node_max), ("size_term", self.size_term),
                         ("standardise", self.standardise)):
            if key in p:
                box.setChecked(str(p[key]).lower() in ("true", "1"))
                done.add(key)
        for key, combo in (("features", self.features), ("device", self.device)):
            if key in p and combo.findText(str(p[key])) >= 0:
                combo.setCurrentText(str(p[key]))
                done.add(key)
        if "detector" in p and self.detector.findData(str(p["detector"])) >= 0:
            self.detector.setCurrentIndex(self.detector.findData(str(p["detector"])))
        if not self._active:
            self._given |= done


def _spin(lo: int, hi: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(lo, hi)
    box.setGroupSeparatorShown(True)
    return box
