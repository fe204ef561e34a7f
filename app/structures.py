"""Molecule pictures for the results tables, drawn by RDKit in a worker process.

RDKit's drawing holds Python's lock for the whole of each picture (a few milliseconds), so a
drawing thread would stall every call the table makes into Python while it paints. The pictures
are drawn in one worker process instead (:class:`StructureImages`), in small batches of the
rows last asked for (rows scrolled past are dropped), and kept in a least-recently-used cache
keyed by SMILES and size. The table's delegate (:class:`StructureDelegate`) paints a placeholder
until a picture arrives, then the picture."""
from __future__ import annotations

import multiprocessing as mp
import os
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRect, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTableView

from .widgets.table import COLUMNS, STRUCTURE_ROLE

# the sizes a user picks (View: the Structures box), as picture width and height in pixels
STRUCTURE_SIZES: dict[str, tuple[int, int] | None] = {"off": None, "small": (110, 72), "large": (200, 140)}
STRUCTURE_SIZE_NAMES = {"off": "Structures: off", "small": "Structures: small", "large": "Structures: large"}
DEFAULT_ROW_HEIGHT = 22
BATCH = 16  # pictures per request to the worker: a batch is back in about 0.1 s
WANTED = 96  # requests kept waiting; older ones (rows scrolled past) are dropped


class StructureImages(QObject):
    """The pictures of molecules at the chosen size, drawn in a worker process and cached.

    Args:
        budget: bytes of decoded pictures kept (least recently used dropped first): 64 MB holds
            about 2,000 small or 600 large pictures.
        parent: the owning QObject (the main window).

    Signals:
        arrived: new pictures are in the cache (the SMILES drawn, a frozenset: views repaint their cells).
        size_changed: the user picked another size (views change their row height).
    """

    arrived = Signal(object)
    size_changed = Signal()
    _posted = Signal(object, object)  # (future, callback) from the executor's thread, handled on the GUI thread

    def __init__(self, budget: int = 64 * 2**20, parent: QObject | None = None):
        super().__init__(parent)
        self.budget = budget
        self._bytes = 0
        self._size_key = "off"
        self._cache: OrderedDict[tuple[str, tuple[int, int]], QImage | None] = OrderedDict()
        self._wanted: deque[str] = deque()
        self._in_flight = False
        self._executor: ProcessPoolExecutor | None = None
        self._posted.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self._kick = QTimer(self, singleShot=True, interval=0)  # after the paint that asked: one batch of its rows
        self._kick.timeout.connect(self._send)

    # ---------------------------------------------------------------- the size
    def size_key(self) -> str:
        return self._size_key

    def size(self) -> tuple[int, int] | None:
        """Picture width and height in pixels; None when structures are off."""
        return STRUCTURE_SIZES[self._size_key]

    def set_size(self, key: str) -> None:
        """Show pictures at size ``key`` (one of :data:`STRUCTURE_SIZES`); unknown keys mean off."""
        key = key if key in STRUCTURE_SIZES else "off"
        if key != self._size_key:
            self._size_key = key
            self._wanted.clear()
            self.size_changed.emit()

    # ---------------------------------------------------------------- pictures
    def image(self, smiles: str) -> QImage | None:
        """The picture of ``smiles`` at the current size, or None: then it is asked for, and
        :attr:`arrived` says when it is there. A SMILES that cannot be drawn stays None."""
        size = self.size()
        if size is None or not smiles:
            return None
        key = (smiles, size)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        if smiles not in self._wanted:
            self._wanted.append(smiles)
            while len(self._wanted) > WANTED:
                self._wanted.popleft()
        self._kick.start()
        return None

    def is_known(self, smiles: str) -> bool:
        """True when ``smiles`` was drawn at the current size (its picture, or that it has none)."""
        size = self.size()
        return size is not None and (smiles, size) in self._cache

    def submit(self, fn: Callable, args: tuple, callback: Callable[[object], None]) -> None:
        """Run ``fn(*args)`` in the drawing process; ``callback(result)`` on the GUI thread
        (an exception is passed as the result). ``fn`` must be a module-level function."""
        future = self._pool().submit(fn, *args)
        future.add_done_callback(lambda f: self._posted.emit(f, callback))

    def shutdown(self) -> None:
        """Stop the drawing process (the window closes)."""
        self._kick.stop()
        self._wanted.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    # ---------------------------------------------------------------- internals
    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            context = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
            self._executor = ProcessPoolExecutor(1, mp_context=context, initializer=_follow_parent,
                                                 initargs=(os.getpid(),))
        return self._executor

    @Slot()
    def _send(self) -> None:
        if self._in_flight or not self._wanted or self.size() is None:
            return
        batch = []
        while self._wanted and len(batch) < BATCH:
            batch.append(self._wanted.pop())  # the newest first: the rows on screen now
        from core import structure_pixels

        size = self.size()
        self._in_flight = True
        try:
            self.submit(structure_pixels, (batch, *size), lambda result: self._drawn(batch, size, result))
        except BrokenProcessPool:  # the worker died: a new one next time
            self._executor = None
            self._in_flight = False

    def _drawn(self, batch: list[str], size: tuple[int, int], result) -> None:
        self._in_flight = False
        if isinstance(result, BrokenProcessPool):
            self._executor = None
        elif not isinstance(result, BaseException):
            width, height = size
            for smiles, pixels in zip(batch, result):
                image = (QImage(pixels, width, height, 4 * width, QImage.Format.Format_RGBA8888)
                         .convertToFormat(QImage.Format.Format_RGB32)  # a copy, in the format painted fastest
                         if len(pixels) == 4 * width * height else None)
                old = self._cache.pop((smiles, size), None)
                self._bytes += _nbytes(image) - _nbytes(old)
                self._cache[(smiles, size)] = image
            while self._bytes > self.budget and self._cache:
                self._bytes -= _nbytes(self._cache.popitem(last=False)[1])
            self.arrived.emit(frozenset(batch))
        if self._wanted:
            self._kick.start()

    @Slot(object, object)
    def _deliver(self, future: Future, callback: Callable[[object], None]) -> None:
        if future.cancelled():
            return
        error = future.exception()
        callback(error if error is not None else future.result())


def _nbytes(image: QImage | None) -> int:
    return 64 if image is None else image.sizeInBytes() + 64


def _follow_parent(parent: int) -> None:
    """In the drawing process: end it when the app's process is gone (killed, or crashed), which a
    forked worker waiting on its queue would not notice."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(2)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


class StructureDelegate(QStyledItemDelegate):
    """Paints the Structure column: the molecule's picture, or a grey placeholder until it arrives."""

    def __init__(self, images: StructureImages, parent: QObject | None = None):
        super().__init__(parent)
        self.images = images

    @Slot(object)
    def repaint(self, drawn: frozenset[str]) -> None:
        """Repaint the cells in sight whose pictures arrived (``drawn``: their SMILES), not the
        whole table: pictures arrive while the user scrolls, between the frames."""
        table = self.parent()
        if not isinstance(table, QTableView):
            return
        column = COLUMNS.index("Structure")
        model = table.model()
        viewport = table.viewport()
        if model is None or table.isColumnHidden(column):
            return
        first, last = table.rowAt(0), table.rowAt(viewport.height() - 1)
        if first < 0:
            return
        last = model.rowCount() - 1 if last < 0 else last
        for row in range(first, last + 1):
            index = model.index(row, column)
            if index.data(STRUCTURE_ROLE) in drawn:
                viewport.update(table.visualRect(index))

    @Slot()
    def fit(self) -> None:
        """Fit the table's rows and column to the current size."""
        table = self.parent()
        if isinstance(table, QTableView):
            fit_structures(table, self.images)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)  # background, selection
        self.paint_picture(painter, option.rect, index.data(STRUCTURE_ROLE))

    def paint_picture(self, painter: QPainter, cell: QRect, smiles: str | None) -> None:
        """Draw the picture of ``smiles`` centred in ``cell`` (its background already painted), or
        a grey placeholder while it is drawn; a table that paints its rows itself calls this."""
        if not smiles or self.images.size() is None:
            return
        image = self.images.image(smiles)
        rect = cell.adjusted(2, 2, -2, -2)
        if image is not None:
            scale = min(1.0, rect.width() / image.width(), rect.height() / image.height())  # a narrowed column
            target = QRect(0, 0, int(image.width() * scale), int(image.height() * scale))
            target.moveCenter(rect.center())
            painter.drawImage(target, image)
        elif not self.images.is_known(smiles):  # not drawn yet
            painter.fillRect(rect, QColor(242, 242, 242))


def show_structures(table: QTableView, images: StructureImages) -> None:
    """Give ``table`` a Structure column drawn from ``images``, sized as the user picks, and
    repaint it as pictures arrive.

    Args:
        table: a results table (:func:`app.widgets.table.results_view`).
        images: the window's pictures.
    """
    delegate = StructureDelegate(images, table)  # the table's child: its connections end with the table
    table.setItemDelegateForColumn(COLUMNS.index("Structure"), delegate)
    images.arrived.connect(delegate.repaint)
    images.size_changed.connect(delegate.fit)
    table.model().modelReset.connect(delegate.fit)  # new data: molecules or not
    delegate.fit()


def fit_structures(table: QTableView, images: StructureImages) -> None:
    """Row height and the Structure column's width for the current size (hidden when off or
    when the table has no SMILES)."""
    column = COLUMNS.index("Structure")
    size = images.size()
    model = table.model()
    has_smiles = bool(getattr(model, "has_smiles", lambda: False)())  # a TU collection's graphs: no structure
    table.setColumnHidden(column, size is None or not has_smiles)
    table.verticalHeader().setDefaultSectionSize(DEFAULT_ROW_HEIGHT if size is None or not has_smiles
                                                 else size[1] + 4)
    if size is not None:
        table.setColumnWidth(column, size[0] + 4)
