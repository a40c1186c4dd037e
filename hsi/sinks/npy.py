"""The ``npy`` format: ``labels.npy``, ``confidence.npy`` and, when kept, ``probabilities.npy``.

The tile pass writes these maps itself, as memory maps in the staging folder
(:mod:`hsi.infer.arrays`), so this sink writes nothing and needs no space beyond the run's
own maps: choosing it keeps them, leaving it out removes them once the other sinks have read them.
"""

from __future__ import annotations

from pathlib import Path

from hsi.sinks.registry import FinishedMaps, MapLayout, Sink, register_sink

__all__ = ["NpySink"]


@register_sink("npy")
class NpySink(Sink):
    """``labels.npy`` ``(H, W)`` class ids, ``confidence.npy`` ``(H, W)`` float32, ``probabilities.npy``
    ``(H, W, K)`` float16 (optional): the run's own memory-mapped maps, kept."""

    writes_probabilities = True

    def files(self, layout: MapLayout) -> tuple[str, ...]:  # noqa: D102
        return ("labels.npy", "confidence.npy") + (("probabilities.npy",) if layout.probabilities else ())

    def bytes_needed(self, layout: MapLayout) -> int:  # noqa: D102 - the run's maps are counted for every run
        return 0

    def write(self, folder: Path, maps: FinishedMaps) -> None:  # noqa: D102 - already there
        return None
