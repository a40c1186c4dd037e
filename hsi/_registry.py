"""The one rule every registry of the package keeps (models, readers, output formats): a name names one class."""

from __future__ import annotations

from typing import Any

__all__ = ["add_unique"]


def add_unique(registry: dict[str, Any], name: str, cls: type, registrar: str) -> None:
    """Put ``cls`` in ``registry`` under ``name``; the same class again is a no-op (a re-imported module).

    Raises
    ------
    ValueError
        ``name`` is already another class's; the message names that class and ``registrar``
        (the decorator the user called, e.g. "register_model").
    """
    existing = registry.get(name)
    if existing is not None and existing is not cls:
        raise ValueError(f"{registrar}: name {name!r} is already registered to "
                         f"{existing.__module__}.{existing.__qualname__}; choose another name")
    registry[name] = cls
