"""The ``png`` format: previews to look at, ``map.png``, ``false_color.png`` and ``confidence.png``.

Each is drawn from its map decimated to the figure's own pixels (:func:`hsi.viz.plot_class_map`),
while the ``npy``, ``envi`` and ``gtiff`` maps keep every pixel. ``map.png`` has a legend of class
names in the scene's palette (ground-truth background dimmed, no-data in its own colour);
``false_color.png`` shows the bands the tile pass kept (:func:`hsi.io.bands.pick_rgb_bands`).
Drawing costs a few tenths of a second per scene whatever its size (0.1 to 0.25 s measured on
2 CPU cores for 32 x 32 to 2048 x 2048 maps, plus matplotlib's import in a fresh process), which
a batch run skips by leaving this format out.
"""

from __future__ import annotations

from pathlib import Path

from hsi.sinks.registry import FinishedMaps, MapLayout, Sink, register_sink

__all__ = ["PngSink"]

#: bytes kept free for the three images (whatever the scene's size: they are drawn at figure size)
IMAGE_BYTES = 3 << 20


@register_sink("png")
class PngSink(Sink):
    """The class map with a legend, the false-colour composite and the confidence, as PNG previews."""

    wants_rgb = True
    thread_safe = False  # matplotlib draws on the calling thread

    def files(self, layout: MapLayout) -> tuple[str, ...]:  # noqa: D102
        return ("map.png",) + (("false_color.png",) if layout.rgb else ()) + ("confidence.png",)

    def bytes_needed(self, layout: MapLayout) -> int:  # noqa: D102
        return IMAGE_BYTES

    def write(self, folder: Path, maps: FinishedMaps) -> None:  # noqa: D102
        from hsi.viz import plot_class_map, plot_confidence, plot_false_color

        plot_class_map(maps.labels, maps.class_names, maps.palette, folder / "map.png", background=maps.background,
                       nodata=maps.nodata, title=maps.title, georef=maps.georef)
        if maps.rgb is not None:
            plot_false_color(maps.rgb, folder / "false_color.png", title=maps.rgb_title, georef=maps.georef,
                             shape=tuple(maps.labels.shape[:2]))
        plot_confidence(maps.confidence, folder / "confidence.png", georef=maps.georef)
