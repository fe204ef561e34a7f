"""Fitted state as a model file can hold it: what torch's ``weights_only`` loader reads back.

Only tensors, numbers, strings, lists and string-keyed dicts pass that loader, so nothing in a
file can run code when it is opened. Numpy arrays become tensors tagged with their dtype (torch
has no unsigned 64-bit type), sets and dicts with other keys become lists.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from core.errors import GLocalKDError


def encode_state(value: Any) -> Any:
    """Write a fitted state as what torch's ``weights_only`` loader can read.

    Args:
        value: the state: arrays, tensors, sets, dicts, lists, tuples, numpy scalars and plain
            values, nested.

    Returns:
        The same state with arrays as tensors tagged with their dtype (torch has no unsigned
        64-bit type), tensors detached on the CPU, sets and non-string-keyed dicts as tagged
        lists, tuples as lists.

    Raises:
        GLocalKDError: an object array, or a value of another type, is met.
    """
    if isinstance(value, np.ndarray):
        kind = str(value.dtype)
        if value.dtype == np.uint64:
            value = value.view(np.int64)
        if value.dtype == object:
            raise GLocalKDError("object arrays cannot go into a model file")
        return {"__array__": torch.from_numpy(np.ascontiguousarray(value)), "dtype": kind}
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, (set, frozenset)):
        return {"__set__": [encode_state(v) for v in sorted(value)]}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: encode_state(v) for k, v in value.items()}
        return {"__items__": [[encode_state(k), encode_state(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [encode_state(v) for v in value]
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise GLocalKDError(f"a {type(value).__name__} cannot go into a model file")


def decode_state(value: Any) -> Any:
    """Read back a state written by :func:`encode_state`.

    Args:
        value: the state as loaded from the model file.

    Returns:
        The state with arrays, sets and dicts restored (tuples come back as lists).
    """
    if isinstance(value, dict):
        if "__array__" in value:
            array = value["__array__"].numpy()
            return array.view(np.uint64) if value["dtype"] == "uint64" else array.astype(value["dtype"], copy=False)
        if "__set__" in value:
            return {decode_state(v) for v in value["__set__"]}
        if "__items__" in value:
            return {decode_state(k): decode_state(v) for k, v in value["__items__"]}
        return {k: decode_state(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_state(v) for v in value]
    return value


def state_digest(value: Any, digest=None):
    """Hash an encoded state (:func:`encode_state`) by value, for a model's fingerprint.

    Pickled bytes are not a fingerprint: pickle writes an object met twice as a reference, so the
    same state, trained in memory or read back from its file, gave two digests. Here each value
    is fed in a canonical form (a type tag, lengths, a dict's keys sorted, a tensor's dtype, shape
    and bytes), so equal states hash equally however their objects are shared.

    Args:
        value: the encoded state: tensors, string-keyed dicts, lists and plain values, nested.
        digest: a ``hashlib`` object to feed (None: a new SHA-256).

    Returns:
        The digest object, fed with ``value``.

    Raises:
        GLocalKDError: a value of another type is met.
    """
    import hashlib

    h = hashlib.sha256() if digest is None else digest

    def text(s: str) -> None:
        raw = s.encode("utf-8")
        h.update(f"{len(raw)}:".encode())
        h.update(raw)

    def feed(v: Any) -> None:
        if isinstance(v, torch.Tensor):
            t = v.detach().cpu().contiguous()
            h.update(b"T")
            text(f"{t.dtype}{tuple(t.shape)}")
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(v, dict):
            h.update(f"{{{len(v)}".encode())
            for key in sorted(v):
                text(key)
                feed(v[key])
        elif isinstance(v, list):
            h.update(f"[{len(v)}".encode())
            for item in v:
                feed(item)
        elif v is None:
            h.update(b"N")
        elif isinstance(v, bool):
            h.update(b"B1" if v else b"B0")
        elif isinstance(v, int):
            h.update(b"I")
            text(str(v))
        elif isinstance(v, float):
            h.update(b"F")
            text(v.hex())
        elif isinstance(v, str):
            h.update(b"S")
            text(v)
        else:
            raise GLocalKDError(f"a {type(v).__name__} has no fingerprint")

    feed(value)
    return h
