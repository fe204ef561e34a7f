import sys

from app.qt_check import emit_bug_message, emit_keeps_refcounts


def test_installed_pyside_keeps_refcounts_across_emits(qapp):
    # PySide6 6.12.0 lowers True's reference count on every emit, and long sessions crash
    assert emit_keeps_refcounts(emits=200)
    assert emit_bug_message() is None


def test_the_check_sees_a_dropped_reference(qapp, monkeypatch):
    counts = iter([1000, 992])  # what 6.12.0 does: one reference fewer per emit
    monkeypatch.setattr(sys, "getrefcount", lambda obj: next(counts))
    assert not emit_keeps_refcounts()
