"""Figures written as PNG files: drawn once on the Agg canvas, cut to what is drawn, written atomically.

``savefig(bbox_inches="tight")`` draws a figure twice; the previews of every run are drawn
here once, which is most of what writing them costs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["PNG_COMPRESS_LEVEL", "png_of_one_draw", "save_png"]

#: zlib level of the PNG previews: speed over size (a 2048 x 2048 class map: ~60 ms less than
#: the default level 6, ~4 % larger)
PNG_COMPRESS_LEVEL = 1


def save_png(fig: Figure, path: str | Path) -> None:
    """Render ``fig`` as PNG, cut to what is drawn (as ``bbox_inches="tight"``), and write it atomically."""
    import io

    from hsi._atomic import write_bytes_atomic

    png = png_of_one_draw(fig)
    if png is None:  # something lies outside the figure: matplotlib grows the canvas to it
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight", pil_kwargs={"compress_level": PNG_COMPRESS_LEVEL})
        png = buf.getvalue()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, png)


def png_of_one_draw(fig: Figure) -> bytes | None:
    """``fig`` drawn once and cut to its tight bounding box; None when that box leaves the figure.

    ``savefig(bbox_inches="tight")`` draws a figure twice (once to measure, once at the cut
    size), and text layout is most of a preview's time. Here the one draw is measured
    and its pixels are cut, padded by ``savefig.pad_inches`` as matplotlib pads.
    """
    import io

    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.image import imsave

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    width, height = canvas.get_width_height()
    inches = fig.get_tightbbox(canvas.get_renderer())
    if inches.x0 < 0 or inches.y0 < 0 or inches.x1 > fig.get_figwidth() or inches.y1 > fig.get_figheight():
        return None
    pad = matplotlib.rcParams["savefig.pad_inches"]
    box = inches.padded(pad if isinstance(pad, (int, float)) else 0.1).transformed(fig.dpi_scale_trans)  # pixels
    x0, x1 = max(0, int(np.floor(box.x0))), min(width, int(np.ceil(box.x1)))
    y0, y1 = max(0, int(np.floor(height - box.y1))), min(height, int(np.ceil(height - box.y0)))  # rows from the top
    buf = io.BytesIO()
    imsave(buf, np.asarray(canvas.buffer_rgba())[y0:y1, x0:x1], format="png",
           pil_kwargs={"compress_level": PNG_COMPRESS_LEVEL})
    return buf.getvalue()
