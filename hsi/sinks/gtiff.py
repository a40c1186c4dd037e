"""The ``gtiff`` format: Cloud-Optimized GeoTIFFs with the cube's CRS and transform.

``labels.tif`` (nodata 0, colour table, class names as GDAL category names in
``labels.tif.aux.xml`` and as a band tag), ``confidence.tif`` and, when kept,
``probabilities.tif`` (float32 with overviews, nodata NaN at no-data pixels; named bands:
:data:`CONFIDENCE_BAND`, one per class). :mod:`hsi.io.writers.geotiff` writes each strip by strip.
"""

from __future__ import annotations

from pathlib import Path

from hsi.sinks.registry import FinishedMaps, MapLayout, Sink, register_sink

__all__ = ["CONFIDENCE_BAND", "GeoTiffSink"]

#: description of the one band of ``confidence.tif`` (``labels.tif``'s is "class")
CONFIDENCE_BAND = "confidence (largest class probability)"


@register_sink("gtiff")
class GeoTiffSink(Sink):
    """The label, confidence and probability maps as GeoTIFFs that GIS software opens in place."""

    writes_probabilities = True

    def files(self, layout: MapLayout) -> tuple[str, ...]:  # noqa: D102
        return ("labels.tif", "labels.tif.aux.xml", "confidence.tif") + (
            ("probabilities.tif",) if layout.probabilities else ())

    def bytes_needed(self, layout: MapLayout) -> int:
        """The GeoTIFFs uncompressed, plus the largest of their scratch copies (each is written, then copied as
        a COG, one file at a time)."""
        per_file = [layout.label_dtype.itemsize, 4] + ([4 * layout.num_classes] if layout.probabilities else [])
        return layout.pixels * (sum(per_file) + max(per_file))

    def write(self, folder: Path, maps: FinishedMaps) -> None:  # noqa: D102
        from hsi.io.writers.geotiff import write_float_tif, write_label_cog

        write_label_cog(folder / "labels.tif", maps.labels, maps.names, maps.palette, maps.georef)
        write_float_tif(folder / "confidence.tif", maps.confidence, maps.georef, nodata_mask=maps.nodata,
                        band_names=(CONFIDENCE_BAND,))
        if maps.probabilities is not None:
            write_float_tif(folder / "probabilities.tif", maps.probabilities, maps.georef, nodata_mask=maps.nodata,
                            band_names=maps.names[1:])
