"""The structural alerts (Brenk, PAINS A/B/C, NIH) the selected molecule matches, and which of its
top-error atoms lie in which alert. Picking an alert asks for its atoms to be highlighted."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

TOP_ATOMS_NAMED = 3  # as the HTML report: the three atoms with the largest errors
CACHE_SIZE = 512  # molecules whose alerts are kept (one search costs about 10-20 ms)


class AlertList(QWidget):
    """One molecule's structural alerts; emits ``picked(atoms)`` with the picked alert's 0-based
    atoms, or an empty tuple when none is picked. Hidden for a graph without a SMILES."""

    picked = Signal(tuple)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.label = QLabel("Structural alerts")
        self.label.setToolTip("RDKit's FilterCatalog: Brenk, PAINS A/B/C and NIH. Pick an alert to highlight its "
                              "atoms in the drawing; pick it again to clear.")
        self.list = QListWidget()
        self.list.setWordWrap(True)
        self.list.setMaximumWidth(200)
        self.list.itemClicked.connect(self._clicked)
        self.list.currentItemChanged.connect(self._current_changed)
        self.inside = QLabel("")
        self.inside.setWordWrap(True)
        self.inside.setMaximumWidth(200)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.inside)
        self._cache: dict[str, list] = {}
        self._alerts: list = []
        self._symbols: list[str] = []
        self._top: list[int] = []
        self._just_picked = False
        self.setVisible(False)

    def alerts(self) -> list:
        """The shown molecule's alerts (core's ``Alert``), in list order."""
        return list(self._alerts)

    def show_molecule(self, smiles: str, symbols: list[str], find: Callable[[], list] | None = None) -> None:
        """List the alerts of a molecule (searched once per molecule, then cached).

        Args:
            smiles: the molecule's SMILES, or any text that names it (the cache's key) when
                ``find`` searches it; an empty string (a graph that is no molecule) hides the list.
            symbols: its element symbols in atom order, to name atoms (``C3``).
            find: searches the molecule's alerts (``core.graph_alerts`` of a TU molecule);
                None: ``core.structural_alerts`` of ``smiles``.
        """
        self._symbols = list(symbols)
        self._top = []
        self.list.blockSignals(True)
        self.list.clear()
        self.list.blockSignals(False)
        self._alerts = self._alerts_of(smiles, find) if smiles else []
        for alert in self._alerts:
            item = QListWidgetItem(f"{alert.label}: {self._names(alert.atoms)}")
            item.setToolTip(f"{alert.family} {alert.name}, atoms {' '.join(map(str, alert.atoms))} (0-based)")
            self.list.addItem(item)
        self.label.setText(f"Structural alerts ({len(self._alerts)})" if self._alerts else "Structural alerts: none")
        self.list.setVisible(bool(self._alerts))
        self._say_inside()
        self.setVisible(bool(smiles))
        self.picked.emit(())

    def set_top_atoms(self, atoms: list[int]) -> None:
        """Name which of these atoms (largest error first; the first three count) lie in which alert."""
        self._top = list(atoms)[:TOP_ATOMS_NAMED]
        self._say_inside()

    def clear(self) -> None:
        self.show_molecule("", [])

    def pick(self, row: int | None) -> None:
        """Pick the alert in ``row`` (None: none), as a click does."""
        if row is None:
            self.list.setCurrentRow(-1)
            self.list.clearSelection()
            self.picked.emit(())
        else:
            self.list.setCurrentRow(row)

    def _alerts_of(self, key: str, find: Callable[[], list] | None) -> list:
        from core import structural_alerts

        if key not in self._cache:
            if len(self._cache) >= CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = find() if find is not None else structural_alerts(key)
        return self._cache[key]

    def _names(self, atoms) -> str:
        return " ".join(f"{self._symbols[a] if a < len(self._symbols) else '?'}{a}" for a in atoms)

    def _say_inside(self) -> None:
        from core import alerts_at_atoms

        lines = alerts_at_atoms(self._alerts, self._top, self._symbols) if self._alerts and self._top else []
        if lines:
            self.inside.setText("Top-error atoms in alerts:<br>" + "<br>".join(lines))
        elif self._alerts and self._top:
            self.inside.setText("No top-error atom lies in an alert.")
        else:
            self.inside.setText("")
        self.inside.setVisible(bool(self.inside.text()))
        # wrapped lines never overlap; an empty label has no height for a width (-1): none is kept
        self.inside.setMinimumHeight(max(0, self.inside.heightForWidth(self.inside.maximumWidth())))

    def _current_changed(self, current, _previous=None) -> None:
        row = self.list.row(current) if current is not None else -1
        self._just_picked = True
        self.picked.emit(self._alerts[row].atoms if 0 <= row < len(self._alerts) else ())

    def _clicked(self, _item) -> None:
        """A click on the alert already picked clears the pick (the drawing shows no alert)."""
        if not self._just_picked:
            self.pick(None)
        self._just_picked = False
