"""The ``envi`` format: ``classification.img`` + ``.hdr``, an ENVI Classification with names and colours.

``map info`` and ``coordinate system string`` come from the cube's georeference, or, without
one, from the cube's own ENVI header (:func:`hsi.io.writers.envi.write_classification`,
which copies the label map strip by strip).
"""

from __future__ import annotations

from pathlib import Path

from hsi.sinks.registry import FinishedMaps, MapLayout, Sink, register_sink

__all__ = ["EnviSink"]


@register_sink("envi")
class EnviSink(Sink):
    """The label map as an ENVI classification image that ENVI and QGIS open with class names and colours."""

    def files(self, layout: MapLayout) -> tuple[str, ...]:  # noqa: D102
        return ("classification.img", "classification.hdr")

    def bytes_needed(self, layout: MapLayout) -> int:
        """A copy of the label map."""
        return layout.pixels * layout.label_dtype.itemsize

    def write(self, folder: Path, maps: FinishedMaps) -> None:  # noqa: D102
        from hsi.io.writers.envi import write_classification

        write_classification(folder / "classification", maps.labels, maps.names, maps.palette, georef=maps.georef,
                             source_header=maps.source_header if maps.georef is None else None,
                             description=maps.description)
