"""The transformer classes a saved state may name, registered by a decorator on each class.

``@register_transformer`` on a :class:`~hsi.preprocess._base.BandTransformer` subclass adds it
under its class name, as ``@register_model`` does for networks, so this module imports no
transformer (and the transformers' base class can rebuild any of them from a state without
an import cycle). Importing :mod:`hsi.preprocess` imports every built-in transformer.
"""

from __future__ import annotations

from typing import Any, TypeVar

from hsi.errors import StateFormatError
from hsi.preprocess._state import ArraySource, decode_value

__all__ = ["register_transformer", "transformer_classes", "transformer_from_state"]

_T = TypeVar("_T", bound=type)
_CLASSES: dict[str, type] = {}


def register_transformer(cls: _T) -> _T:
    """Class decorator: make ``cls`` loadable from a saved state under ``cls.__name__``."""
    taken = _CLASSES.get(cls.__name__)
    if taken is not None and taken is not cls:
        raise ValueError(f"a transformer named {cls.__name__!r} is already registered ({taken.__module__})")
    _CLASSES[cls.__name__] = cls
    return cls


def transformer_classes() -> dict[str, type]:
    """The registered transformer classes, by class name."""
    return dict(_CLASSES)


def transformer_from_state(state: Any, source: ArraySource | None = None) -> Any:
    """Rebuild one transformer from ``{"class", "params", "fitted"}``."""
    if not isinstance(state, dict) or not {"class", "params", "fitted"} <= state.keys():
        raise StateFormatError(
            "a transformer state must be a dict with keys 'class', 'params', 'fitted'; "
            f"found {type(state).__name__}"
            + (f" with keys {sorted(state)}" if isinstance(state, dict) else "")
        )
    name = state["class"]
    if name not in _CLASSES:
        raise StateFormatError(
            f"unknown transformer class {name!r} in saved state; known: {sorted(_CLASSES)}"
        )
    cls = _CLASSES[name]
    params = decode_value(state["params"], source)
    try:
        obj = cls(**params)
    except TypeError as err:
        raise StateFormatError(f"saved parameters do not fit {name}: {err}") from err
    if state["fitted"] is not None:
        obj._set_fitted_state(decode_value(state["fitted"], source))
    return obj
