"""Similarity to a query: a SMILES typed in the query bar (or the selected row's) gives every row
its Tanimoto similarity (ECFP4), shown in a Similarity column, most similar first, and the rows
below the chosen minimum hidden. The fingerprints are computed once per table, off the GUI thread."""
from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QTableView

from core import counted

from .. import tasks
from ..widgets.query_bar import QueryBar
from ..widgets.table import COLUMNS, ResultsModel, set_sort_values


class SimilarityController(QObject):
    """Keeps one table's Similarity column and filter in step with its query bar.

    Args:
        model_table: the table's model.
        table: the table view.
        bar: the query bar above it.
        parent: the owning QObject.

    Signals:
        applied: the rows shown changed (the owner updates its counts).
    """

    applied = Signal()

    def __init__(self, model_table: ResultsModel, table: QTableView, bar: QueryBar, parent: QObject | None = None):
        super().__init__(parent)
        from ..workers import Runner

        self.model_table, self.table, self.bar = model_table, table, bar
        self.runner = Runner(self)  # its own: a query does not make the window busy
        self._index = None  # the fingerprints of the rows, built by the first query
        self._indexed = None  # the data they belong to
        self._pending: str | None = None  # a query typed while another is computed
        self._asked: tuple[str, object] = ("", None)  # the running query and the rows it was asked on
        self._similarity = None  # the last result, kept to re-apply the minimum
        self._sorted_for = ""  # the query whose first result sorted the rows by similarity
        bar.query_changed.connect(self.search)
        bar.use_selected.connect(self.use_selected)
        bar.minimum_changed.connect(self._minimum_changed)
        model_table.modelReset.connect(self._data_changed)

    def stop(self) -> None:
        """Forget the waiting query and wait for the running one (its table is closing)."""
        self._pending = None
        self.runner.stop_all()

    @Slot(str)
    def search(self, query: str) -> None:
        """Rank the rows by similarity to ``query`` ("" clears the query)."""
        query = query.strip()
        if not query or not self.model_table.has_smiles():
            self._pending = None
            self._clear()
            return
        if self.runner.busy("similarity"):
            self._pending = query
            return
        if self._indexed is not self.model_table.graphs:
            self._index, self._indexed = None, self.model_table.graphs
        smiles = self.model_table.smiles()
        self.bar.say("Computing fingerprints…" if self._index is None else "Comparing…")
        index = self._index
        self._asked = (query, self.model_table.graphs)  # a result for other rows or another query is stale
        self.runner.start("similarity", lambda job: tasks.query_similarity(smiles, query, index, job=job),
                          self._done, self._failed)

    def query_values(self) -> dict:
        """The query and the minimum similarity, as JSON values (a session keeps them)."""
        return {"query": self.bar.query(), "minimum": self.bar.minimum.value()}

    def set_query_values(self, values: dict) -> None:
        """Put back :meth:`query_values`: the query is computed again; none saved clears the query."""
        if isinstance(values.get("minimum"), (int, float)):
            self.bar.minimum.setValue(float(values["minimum"]))
        query = str(values.get("query") or "")
        if query != self.bar.query():
            self.bar.set_query(query)

    def restore(self, values: dict, sort) -> None:
        """Put back a session's query (:meth:`set_query_values`) and the table's sort
        (:func:`app.widgets.table.sort_values`), which the query's result keeps (it sorts by
        similarity only for a query that is new)."""
        self._sorted_for = str(values.get("query") or "").strip()
        self.set_query_values(values)
        set_sort_values(self.table, sort)

    @Slot()
    def use_selected(self) -> None:
        """Query with the selected row's molecule."""
        current = self.table.currentIndex()
        if not current.isValid():
            self.bar.say("Select a row first.", error=True)
            return
        smiles = str(self.model_table.smiles()[self.model_table.graph_index(current.row())])
        if not smiles:
            self.bar.say("The selected row has no SMILES.", error=True)
            return
        self.bar.set_query(smiles)

    @Slot(object)
    def _done(self, result: tasks.Similarity) -> None:
        self._index = result.index
        self._pending = None
        current = self.bar.query().strip()
        if current != result.query or self.model_table.graphs is not self._asked[1]:
            # typed on, cleared or new rows since: the newest query on the rows in the table wins
            self.search(current)
            return
        if result.similarities is None:
            self._clear(keep_note=True)
            self.bar.say(f"{result.query!r}: {result.error}", error=True)
            return
        self._similarity = result.similarities
        self._show()
        if result.query != self._sorted_for:  # a new query: most similar first; the same query computed
            self._sorted_for = result.query   # again for new rows keeps the sort the user chose since
            self.table.sortByColumn(COLUMNS.index("Similarity"), Qt.SortOrder.DescendingOrder)
        if self.model_table.rowCount():
            self.table.scrollToTop()

    @Slot(str)
    def _failed(self, message: str) -> None:
        self._pending = None
        self._clear(keep_note=True)
        self.bar.say(message, error=True)

    def _show(self) -> None:
        similarity = self._similarity
        minimum = self.bar.minimum.value()
        self.model_table.set_similarity(similarity, minimum)
        self.table.setColumnHidden(COLUMNS.index("Similarity"), False)
        shown = self.model_table.visible_count()
        self.bar.say(f"{counted(shown, 'row')} at similarity {minimum:.2f} or more" if minimum > 0
                     else "Sorted by similarity to the query")
        self.applied.emit()

    def _clear(self, keep_note: bool = False) -> None:
        self._similarity = None
        self._sorted_for = ""
        had = not self.table.isColumnHidden(COLUMNS.index("Similarity"))
        self.model_table.set_similarity(None)
        self.table.setColumnHidden(COLUMNS.index("Similarity"), True)
        if not keep_note:
            self.bar.say("")
        if had and self.table.horizontalHeader().sortIndicatorSection() == COLUMNS.index("Similarity"):
            if self.model_table.scores is not None:  # back to rank order
                self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
            else:  # file order
                self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
                self.model_table.sort(-1)
        self.applied.emit()

    @Slot(float)
    def _minimum_changed(self, _value: float) -> None:
        if self._similarity is not None:
            self._show()

    @Slot()
    def _data_changed(self) -> None:
        """New rows (data opened, or scored): the query is computed again for them."""
        self._similarity = None
        self.table.setColumnHidden(COLUMNS.index("Similarity"), True)
        self.bar.set_available(self.model_table.has_smiles())
        if self.bar.query() and self.model_table.has_smiles():
            self.search(self.bar.query())
