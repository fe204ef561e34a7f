"""Work that exists only in the window: a trained model not saved, a scored file's results not
exported, review marks in no session or export. The window asks before quitting or opening over it (Save / Discard / Cancel). No Qt."""
from __future__ import annotations

from collections.abc import Callable

MODEL = "model"  # the key of the trained model (and the training data's results)
REVIEW = "review"  # the key of the marks on the training data's rows (a report tab's join its own key)


class UnsavedWork:
    """What would be lost, by key (``MODEL``, or a scored file's tab), with words for the question."""

    def __init__(self) -> None:
        self._items: dict[object, str] = {}

    def add(self, key: object, description: str) -> None:
        self._items[key] = description

    def done(self, key: object) -> None:
        """``key``'s work was saved or exported, or discarded on purpose (its tab closed)."""
        self._items.pop(key, None)

    def pending(self, keys: list | None = None) -> list[str]:
        """Descriptions of the unsaved work (of ``keys`` only, when given)."""
        return [text for key, text in self._items.items() if keys is None or key in keys]

    def keys(self) -> list:
        return list(self._items)

    def clear(self) -> None:
        self._items.clear()

    def confirm(self, keys: list | None, ask: Callable[[list[str]], str], save: Callable[[object], None]) -> bool:
        """Before the work of ``keys`` (None: all) is lost: True at once when none of it is unsaved,
        else ``ask(descriptions)`` for "save", "discard" or "cancel" and :meth:`settle` the answer."""
        pending = self.pending(keys)
        return not pending or self.settle(keys, ask(pending), save)

    def settle(self, keys: list | None, answer: str, save: Callable[[object], None]) -> bool:
        """Act on the user's ``answer`` ("save", "discard" or "cancel") about the work of ``keys``
        (None: all): ``save(key)`` saves one (it calls :meth:`done` when it did). True when the
        work may go on: nothing of ``keys`` is left unsaved."""
        if answer == "cancel":
            return False
        for key in [k for k in self.keys() if keys is None or k in keys]:
            if answer == "discard":
                self.done(key)
            else:
                save(key)
        return not self.pending(keys)
