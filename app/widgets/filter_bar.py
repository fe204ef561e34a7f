"""The bar above the results: what is shown (a text filter and a SMARTS filter, both applied as
you type after a short pause), what is flagged (a rule and its threshold), grouping by scaffold,
and how many rows that leaves. It holds no data: it says what the user asked for, by signals."""
from __future__ import annotations

import json
import math
import re

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QGridLayout, QHBoxLayout, QLabel, QLineEdit,
                               QMenu, QPushButton, QToolButton, QVBoxLayout, QWidget, QWidgetAction)

from .table import PROPERTY_HEADINGS

RANGE_COLUMNS = ("Score", "p-value", "q-value", *PROPERTY_HEADINGS)  # the table's columns a range can filter

PERCENTILE_TIP = "Flag graphs scoring above this percentile of the training graphs' scores"
FLAG_RULES = (  # (rule, its name in the box, what it means)
    ("percentile", "percentile of training scores", PERCENTILE_TIP),
    ("p", "expected false-alarm rate (p <)",
     "Flag graphs whose p-value is below this rate: about that share of normal graphs is flagged "
     "(p-values come from normal graphs held out from training)"),
    ("q", "false-discovery rate (q \u2264)",
     "Flag graphs whose q-value is at most this rate: on average at most that share of the flagged "
     "graphs are normal (Benjamini-Hochberg over the scored graphs)"),
)
INVALID_SMARTS = "not a valid SMARTS"


class ThresholdBox(QDoubleSpinBox):
    """The flag threshold: "95th percentile", "97.5th percentile", "0.05" (no trailing zeros)."""

    def textFromValue(self, value: float) -> str:  # noqa: N802 (Qt's name)
        return f"{value:.{self.decimals()}f}".rstrip("0").rstrip(".")


class RangeFilter(QToolButton):
    """Numeric ranges (min and max, either left empty) on the score, p, q and every property, in a
    drop-down beside the filters; the button says how many are set. Applies after a short pause."""

    ranges_changed = Signal(dict)  # column heading -> (min or None, max or None), only the ranges set

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setText("Ranges")
        self.setToolTip("Show only rows whose score, p, q or properties lie within a range (min, max; "
                        "leave either empty)")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("Ranges (12)") + 30)  # never clipped
        panel = QWidget()
        grid = QGridLayout(panel)
        grid.setContentsMargins(8, 6, 8, 6)
        grid.addWidget(QLabel("<b>min</b>"), 0, 1)
        grid.addWidget(QLabel("<b>max</b>"), 0, 2)
        self.edits: dict[str, tuple[QLineEdit, QLineEdit]] = {}
        self._timer = QTimer(self, singleShot=True, interval=400)
        self._timer.timeout.connect(self._emit)
        for row, heading in enumerate(RANGE_COLUMNS, start=1):
            grid.addWidget(QLabel(heading), row, 0)
            pair = (QLineEdit(), QLineEdit())
            for col, (edit, hint) in enumerate(zip(pair, ("min", "max")), start=1):
                edit.setPlaceholderText(hint)
                edit.setFixedWidth(80)
                edit.setClearButtonEnabled(True)
                edit.textChanged.connect(self._timer.start)
                grid.addWidget(edit, row, col)
            self.edits[heading] = pair
        clear = QPushButton("Clear ranges")
        clear.clicked.connect(self.clear)
        grid.addWidget(clear, len(RANGE_COLUMNS) + 1, 0, 1, 3)
        menu = QMenu(self)
        action = QWidgetAction(menu)
        action.setDefaultWidget(panel)
        menu.addAction(action)
        self.setMenu(menu)

    def ranges(self) -> dict[str, tuple[float | None, float | None]]:
        """The ranges set (a bound that is not a number counts as unset)."""
        out = {}
        for heading, (lo, hi) in self.edits.items():
            bounds = (_number(lo.text()), _number(hi.text()))
            if bounds != (None, None):
                out[heading] = bounds
        return out

    def set_ranges(self, ranges: dict) -> None:
        """Fill the boxes (e.g. kept from the last session) and apply them at once."""
        for heading, (lo, hi) in self.edits.items():
            low, high = ranges.get(heading, (None, None))
            for edit, value in ((lo, low), (hi, high)):
                edit.blockSignals(True)
                edit.setText("" if value is None else f"{value:g}")
                edit.blockSignals(False)
        self._emit()

    def to_text(self) -> str:
        """The ranges as JSON, to keep them across relaunches."""
        return json.dumps({k: list(v) for k, v in self.ranges().items()})

    def from_text(self, text: str) -> None:
        """Ranges kept by :meth:`to_text`; anything unreadable is ignored."""
        try:
            data = json.loads(text)
            ranges = {str(k): (_bound(v[0]), _bound(v[1])) for k, v in data.items() if str(k) in self.edits}
        except (TypeError, ValueError, IndexError, AttributeError):
            return
        self.set_ranges(ranges)

    def clear(self) -> None:
        self.set_ranges({})

    def _emit(self) -> None:
        self._timer.stop()
        ranges = self.ranges()
        unread = self._mark_unread()
        text = f"Ranges ({len(ranges)})" if ranges else "Ranges"
        self.setText(text if not unread else f"{text}: {unread} to check")
        self.ranges_changed.emit(ranges)

    def _mark_unread(self) -> int:
        """Outline each box whose text is not a number, or whose minimum lies above its maximum,
        and say why in its tooltip (such a bound applies no filter; it is never silently guessed).
        Returns how many boxes are marked."""
        marked = 0
        for lo, hi in self.edits.values():
            low, high = _number(lo.text()), _number(hi.text())
            crossed = low is not None and high is not None and low > high
            for edit, value in ((lo, low), (hi, high)):
                why = ""
                if edit.text().strip() and value is None:
                    why = (f"{edit.text().strip()!r} is not read as a number: write 1000 or 1.5 "
                           "(a comma is read as a decimal point only when no three digits follow it)")
                elif crossed:
                    why = "the minimum lies above the maximum: no row can match"
                edit.setStyleSheet("QLineEdit { border: 1px solid #c0392b; }" if why else "")
                edit.setToolTip(why)
                marked += bool(why)
        return marked


def _number(text: str) -> float | None:
    """A bound as typed: ``1000``, ``1.5``, ``1,5`` (a decimal comma) or ``1e3``; None for anything
    else, and for ``1,000``, which reads as a thousand or as one (never guessed)."""
    text = text.strip()
    if "," in text:
        if "." in text or re.fullmatch(r"[-+]?\d*,\d{3}", text):
            return None
        text = text.replace(",", ".")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _bound(value) -> float | None:
    return None if value is None else float(value)


class FilterBar(QWidget):
    """Filters, flag rule and grouping of the results table, as one row of controls."""

    text_changed = Signal(str)  # the text filter, after a pause in typing
    smarts_changed = Signal(str)  # the SMARTS filter, after a pause or at Enter
    flag_changed = Signal(str, float)  # the flag rule ("percentile", "p" or "q") and its threshold
    grouping_toggled = Signal(bool)  # rows grouped by scaffold, or not
    flagged_only_toggled = Signal(bool)  # only the flagged rows, or all
    ranges_changed = Signal(dict)  # numeric ranges (see RangeFilter)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._last = {"percentile": 95.0, "rate": 0.05}  # each kind of threshold keeps its value
        self.text_edit = QLineEdit()
        self.text_edit.setPlaceholderText("Filter by id, name, SMILES or label (applies as you type)")
        self.text_edit.setClearButtonEnabled(True)
        self._text_timer = QTimer(self, singleShot=True, interval=300)
        self._text_timer.timeout.connect(lambda: self.text_changed.emit(self.text()))
        self.text_edit.textChanged.connect(self._text_timer.start)
        self.smarts_edit = QLineEdit()
        self.smarts_edit.setPlaceholderText("SMARTS substructure, e.g. c1ccccc1N (applies as you type)")
        self.smarts_edit.setClearButtonEnabled(True)
        self._smarts_timer = QTimer(self, singleShot=True, interval=400)
        self._smarts_timer.timeout.connect(self._emit_smarts)
        self.smarts_edit.textChanged.connect(self._smarts_timer.start)
        self.smarts_edit.returnPressed.connect(self._emit_smarts)
        self.note = QLabel("")  # a SMARTS that does not parse, said in place (no pop-up while typing)
        self.note.setStyleSheet("color: #b03a2e;")
        self.flag_rule = QComboBox()
        for rule, text, tip in FLAG_RULES:
            self.flag_rule.addItem(text, rule)
            self.flag_rule.setItemData(self.flag_rule.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.flag_rule.currentIndexChanged.connect(self._rule_switched)
        self.threshold = ThresholdBox()
        self._set_range("percentile")
        self.threshold.valueChanged.connect(self._threshold_edited)
        self.group_scaffolds = QCheckBox("Group by scaffold")
        self.group_scaffolds.setToolTip("Group the rows by Bemis-Murcko scaffold: each scaffold's count and best "
                                        "score, so a series of related anomalies reads as one finding")
        self.group_scaffolds.toggled.connect(self.grouping_toggled)
        self.flagged_only = QCheckBox("Flagged only")
        self.flagged_only.setToolTip("Show only the flagged rows (those above the flag rule's threshold)")
        self.flagged_only.toggled.connect(self.flagged_only_toggled)
        self.range_filter = RangeFilter()
        self.range_filter.ranges_changed.connect(self.ranges_changed)
        self.count = QLabel("")
        # two rows, so that the bar fits a 1280-pixel screen beside the side panel: the filters (text,
        # SMARTS, flagged only, ranges), then the flag rule with the count of shown and flagged rows
        # (never clipped)
        rows = QVBoxLayout(self)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.setSpacing(2)
        filters, flags = QHBoxLayout(), QHBoxLayout()
        widest = "000,000 of 000,000 shown · 000,000 flagged"
        self.count.setMinimumWidth(self.count.fontMetrics().horizontalAdvance(widest) + 8)
        filters.addWidget(self.text_edit, 1)
        filters.addWidget(self.smarts_edit, 1)
        filters.addWidget(self.note)
        filters.addWidget(self.flagged_only)
        filters.addWidget(self.range_filter)
        flags.addWidget(QLabel("Flag by"))
        flags.addWidget(self.flag_rule)
        flags.addWidget(self.threshold)
        flags.addWidget(self.group_scaffolds)
        flags.addWidget(self.count, 1)
        rows.addLayout(filters)
        rows.addLayout(flags)

    # ---------------------------------------------------------------- what the user asked for
    def text(self) -> str:
        return self.text_edit.text()

    def smarts(self) -> str:
        """The SMARTS typed, stripped; "" when there is none or it is switched off."""
        return self.smarts_edit.text().strip() if self.smarts_edit.isEnabled() else ""

    def valid_smarts(self) -> str:
        """The SMARTS to highlight in drawings: "" while the one typed does not parse."""
        return "" if self.note.text() else self.smarts()

    def rule(self) -> str:
        return self.flag_rule.currentData()

    def percentile(self) -> float:
        """The percentile threshold, whichever rule is shown (the settings keep it)."""
        return self._last["percentile"]

    def set_percentile(self, value: float) -> None:
        self._last["percentile"] = value
        if self.rule() == "percentile":
            self.threshold.setValue(value)

    def rate(self) -> float:
        """The rate of the p and q rules, whichever rule is shown (the settings keep it)."""
        return self._last["rate"]

    def set_rate(self, value: float) -> None:
        self._last["rate"] = value
        if self.rule() != "percentile":
            self.threshold.setValue(value)

    def is_flagged_only(self) -> bool:
        return self.flagged_only.isChecked()

    def ranges(self) -> dict:
        return self.range_filter.ranges()

    def is_grouped(self) -> bool:
        return self.group_scaffolds.isChecked()

    # ---------------------------------------------------------------- what the window tells it
    def set_available(self, smiles: bool, scores: bool) -> None:
        """SMARTS needs SMILES; grouping by scaffold needs SMILES and scores (it is undone without)."""
        self.smarts_edit.setEnabled(smiles)
        self.group_scaffolds.setEnabled(smiles and scores)
        if not scores:
            self.group_scaffolds.setChecked(False)

    def ungroup(self) -> None:
        self.group_scaffolds.setChecked(False)

    def show_substructure(self, smarts: str) -> None:
        """Filter by ``smarts`` at once (a scaffold opened from its group): typed in the box, and
        applied now rather than again after the typing pause."""
        self.smarts_edit.setText(smarts)
        self._emit_smarts()

    def say_smarts_invalid(self, text: str) -> None:
        self.note.setText(INVALID_SMARTS)
        self.note.setToolTip(f"{text!r} does not parse as SMARTS; the filter is off until it does")

    def clear_note(self) -> None:
        self.note.setText("")

    def set_count(self, text: str) -> None:
        self.count.setText(text)

    def clear_filters(self) -> None:
        """Empty both filters without a signal: the window clears its table's filters itself."""
        for edit in (self.text_edit, self.smarts_edit):
            edit.blockSignals(True)
            edit.clear()
            edit.blockSignals(False)
        self._text_timer.stop()
        self._smarts_timer.stop()
        self.clear_note()

    # ---------------------------------------------------------------- internals
    def _emit_smarts(self) -> None:
        self._smarts_timer.stop()
        self.smarts_changed.emit(self.smarts_edit.text().strip())

    def _kind(self, rule: str) -> str:
        return "percentile" if rule == "percentile" else "rate"

    def _set_range(self, rule: str) -> None:
        """The spin box as a percentile (50-100) or as a rate (0.001-0.5), at that kind's last value."""
        self.threshold.blockSignals(True)
        if rule == "percentile":
            self.threshold.setRange(50.0, 100.0)
            self.threshold.setDecimals(1)
            self.threshold.setSingleStep(0.5)
            self.threshold.setSuffix("th percentile")
        else:
            self.threshold.setRange(0.001, 0.5)
            self.threshold.setDecimals(3)
            self.threshold.setSingleStep(0.01)
            self.threshold.setSuffix("")
        self.threshold.setValue(self._last[self._kind(rule)])
        self.threshold.setToolTip(dict((r, tip) for r, _, tip in FLAG_RULES)[rule])
        self.threshold.blockSignals(False)

    def _rule_switched(self) -> None:
        self._set_range(self.rule())
        self.flag_changed.emit(self.rule(), self.threshold.value())

    def _threshold_edited(self, value: float) -> None:
        self._last[self._kind(self.rule())] = value
        self.flag_changed.emit(self.rule(), value)
