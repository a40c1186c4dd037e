"""Output formats of ``hsi infer`` as registered sinks (``--format``): :mod:`hsi.sinks.registry`.

Built in, in the order they are written: ``npy`` (the run's memory-mapped maps, kept),
``envi`` (an ENVI classification), ``gtiff`` (Cloud-Optimized GeoTIFFs) and ``png`` (previews).
A new format is a :class:`Sink` subclass decorated with :func:`register_sink`: in the package,
one module here and its import below; from outside, the decorator alone, or an ``hsi.sinks``
entry point of the package that ships it (:mod:`hsi.plugins`, docs/extending.md).
"""

from __future__ import annotations

from hsi.sinks import envi, gtiff, npy, png  # noqa: F401 - each registers its format
from hsi.sinks.registry import (
    DEFAULT_FORMATS,
    FinishedMaps,
    MapLayout,
    Sink,
    chosen_sinks,
    get_sink,
    list_sinks,
    probability_sinks,
    register_sink,
    unregister_sink,
    wants_false_colour,
)

__all__ = ["DEFAULT_FORMATS", "FinishedMaps", "MapLayout", "Sink", "chosen_sinks", "get_sink", "list_sinks",
           "probability_sinks", "register_sink", "unregister_sink", "wants_false_colour"]
