"""Public names of a package imported from their modules on first use (PEP 562), one mechanism for every package
that keeps its import light (``hsi.io``, ``hsi.scenes``: the command line's option errors then cost no numpy)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(namespace: dict[str, Any], homes: Mapping[str, str]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for a package whose ``namespace`` (its ``globals()``) lists ``__all__`` and whose
    public names live in the modules ``homes`` gives (name -> module); a name is imported once, then kept."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value  # the next look-up is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace["__all__"]})

    return __getattr__, __dir__
