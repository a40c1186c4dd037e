"""Plain-JSON encoding of transformer parameters and learned arrays.

Arrays become ``{"__ndarray__": dtype, "shape": [...], "data": [...]}`` (a flat list;
float64 survives exactly because Python writes the shortest round-trip repr), or,
when saving to disk, ``{"__npz__": key}`` with the array stored in the ``.npz``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from hsi.preprocess._base import BandTransformer, StateFormatError

__all__ = ["decode_value", "encode_value", "transformer_classes", "transformer_from_state"]

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


def transformer_classes() -> dict[str, type[BandTransformer]]:
    """The transformer classes a saved state may name, by class name."""
    from hsi.preprocess.bands import RemoveBands
    from hsi.preprocess.fill import NonFiniteFill
    from hsi.preprocess.pca import PCA
    from hsi.preprocess.scaling import PerBandMinMax, PerBandStandardize

    return {c.__name__: c for c in (NonFiniteFill, PerBandMinMax, PerBandStandardize, PCA, RemoveBands)}


def transformer_from_state(state: Any, source: ArraySource | None = None) -> BandTransformer:
    """Rebuild one transformer from ``{"class", "params", "fitted"}``."""
    if not isinstance(state, dict) or not {"class", "params", "fitted"} <= state.keys():
        raise StateFormatError(
            "a transformer state must be a dict with keys 'class', 'params', 'fitted'; "
            f"found {type(state).__name__}"
            + (f" with keys {sorted(state)}" if isinstance(state, dict) else "")
        )
    classes = transformer_classes()
    name = state["class"]
    if name not in classes:
        raise StateFormatError(
            f"unknown transformer class {name!r} in saved state; known: {sorted(classes)}"
        )
    cls = classes[name]
    params = decode_value(state["params"], source)
    try:
        obj = cls(**params)
    except TypeError as err:
        raise StateFormatError(f"saved parameters do not fit {name}: {err}") from err
    if state["fitted"] is not None:
        obj._set_fitted_state(decode_value(state["fitted"], source))
    return obj
