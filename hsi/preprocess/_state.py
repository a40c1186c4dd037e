"""Plain-JSON encoding of transformer parameters and learned arrays.

Arrays become ``{"__ndarray__": dtype, "shape": [...], "data": [...]}`` (a flat list;
float64 survives exactly because Python writes the shortest round-trip repr), or,
when saving to disk, ``{"__npz__": key}`` with the array stored in the ``.npz``.
Which class a state names is looked up in :mod:`hsi.preprocess._registry`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from hsi.errors import StateFormatError

__all__ = ["decode_value", "encode_value"]

ArraySink = Callable[[np.ndarray], dict]
ArraySource = Callable[[str], np.ndarray]


def encode_value(value: Any, sink: ArraySink | None = None) -> Any:
    """Turn numpy values, tuples and nested containers into JSON types."""
    if isinstance(value, np.ndarray):
        if sink is not None:
            return sink(value)
        return {"__ndarray__": value.dtype.str.lstrip("<>|="), "shape": list(value.shape),
                "data": value.ravel().tolist()}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): encode_value(v, sink) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_value(v, sink) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot encode a value of type {type(value).__name__} as JSON state")


def decode_value(value: Any, source: ArraySource | None = None) -> Any:
    """Inverse of :func:`encode_value` (lists stay lists)."""
    if isinstance(value, dict):
        if "__ndarray__" in value:
            try:
                arr = np.asarray(value["data"], dtype=np.dtype(value["__ndarray__"]))
                return arr.reshape(value["shape"])
            except (KeyError, TypeError, ValueError) as err:
                raise StateFormatError(f"malformed array in saved state: {err}") from err
        if "__npz__" in value:
            if source is None:
                raise StateFormatError(
                    "state refers to an .npz array but no .npz file was given; "
                    "load it with Pipeline.load(path)"
                )
            return source(value["__npz__"])
        return {k: decode_value(v, source) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_value(v, source) for v in value]
    return value
