"""Plots of scenes and splits, drawn on bare ``matplotlib.figure.Figure`` objects.

No pyplot: figures carry no global state, work without a display, and are rendered by
Agg (the maps through :func:`hsi._png.save_png`: one draw, cut to what is drawn).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hsi._pages import release_mapped, row_strips
from hsi._png import save_png
from hsi.errors import ShapeMismatchError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from hsi.io.georef import GeoRef
    from hsi.preprocess.split import Split

__all__ = [
    "NODATA_COLOR",
    "SPLIT_COLORS",
    "SPLIT_MIN_DELTA_E",
    "class_map_rgb",
    "distinguishable_palette",
    "figure_name",
    "min_delta_e",
    "plot_class_map",
    "plot_confidence",
    "plot_false_color",
    "plot_split",
    "preview_step",
    "split_rgb",
    "srgb_to_lab",
    "stretch_rgb",
]

#: RGB (0-255) of no-data pixels in class maps: a magenta that no scene palette uses for a class
NODATA_COLOR = (255, 0, 255)

#: RGB (0-255) of each category in :func:`plot_split`. Unlabeled pixels are black in both of its
#: panels, as row 0 of the scene palettes draws them in ``map.png``.
SPLIT_COLORS: dict[str, tuple[int, int, int]] = {
    "unlabeled": (0, 0, 0),
    "train": (31, 119, 180),
    "val": (255, 160, 0),
    "test": (214, 39, 40),
    "buffer": (150, 150, 150),
}


#: least CIE76 colour difference (Delta E*ab) between any two colours of the labels panel of
#: :func:`plot_split` (the classes and unlabeled). About 2.3 is just noticeable between two large
#: patches side by side; classes are small scattered regions matched against a legend, where a
#: difference of 10 (two of the scene palette's greens) is hard to see: 15 keeps every colour
#: apart by several times that while leaving palettes whose colours are already distinct as they are.
SPLIT_MIN_DELTA_E = 15.0


def srgb_to_lab(rgb: Any) -> np.ndarray:
    """CIELAB (D65 white) of ``(..., 3)`` sRGB colours given as 0-255 values."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    linear = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    to_xyz = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                       [0.0193339, 0.1191920, 0.9503041]])
    xyz = linear @ to_xyz.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


def min_delta_e(colours: Any) -> float:
    """The least CIE76 difference between two of ``(N, 3)`` sRGB colours (inf for fewer than two)."""
    lab = srgb_to_lab(np.asarray(colours).reshape(-1, 3))
    if len(lab) < 2:
        return float("inf")
    gaps = np.linalg.norm(lab[:, None] - lab[None], axis=-1)
    return float(gaps[np.triu_indices(len(lab), 1)].min())


def _candidate_colours() -> np.ndarray:
    """``(N, 3)`` uint8 replacement colours: 36 hues at four saturations and four values."""
    import colorsys

    grid = [colorsys.hsv_to_rgb(h / 36, sat, val) for h in range(36)
            for sat in (0.35, 0.6, 0.85, 1.0) for val in (0.45, 0.65, 0.85, 1.0)]
    return np.round(np.asarray(grid) * 255).astype(np.uint8)


def distinguishable_palette(table: Any, unlabeled: Any = SPLIT_COLORS["unlabeled"],
                            min_delta_e: float = SPLIT_MIN_DELTA_E) -> np.ndarray:
    """``table`` with row 0 ``unlabeled`` and every class colour at least ``min_delta_e`` from the others.

    Classes are taken in order; a colour within ``min_delta_e`` (CIE76) of unlabeled or of a
    class before it is replaced by the candidate nearest to it among those clear of every
    colour kept and every later class's own (so a grass class stays a green where one is
    free); when no candidate is clear, by the one farthest from them. Colours already apart
    are kept, so the panel matches ``map.png`` wherever the scene palette allows.

    Parameters
    ----------
    table : (K + 1, 3) uint8
        Class colours, row ``k`` for class ``k``.
    unlabeled : (3,) int
        Colour of row 0.
    min_delta_e : float

    Returns
    -------
    (K + 1, 3) uint8
    """
    out = np.array(table, dtype=np.uint8)
    out[0] = unlabeled
    lab = srgb_to_lab(out)
    candidates = _candidate_colours()
    cand_lab = srgb_to_lab(candidates)
    for k in range(1, len(out)):
        if np.linalg.norm(lab[:k] - lab[k], axis=1).min() >= min_delta_e:
            continue
        others = np.concatenate([lab[:k], lab[k + 1 :]])
        clearance = np.linalg.norm(cand_lab[:, None] - others[None], axis=-1).min(axis=1)
        clear = clearance >= min_delta_e
        if clear.any():
            near = np.linalg.norm(cand_lab - lab[k], axis=1)
            pick = int(np.argmin(np.where(clear, near, np.inf)))
        else:
            pick = int(np.argmax(clearance))
        out[k], lab[k] = candidates[pick], cand_lab[pick]
    return out


def figure_name(name: str) -> str:
    """What a figure title calls a cube: a file's name without its folder and format endings, else ``name``.

    ``"/data/run 3/samson_1.img.hdr"`` -> ``"samson_1"``, ``"scene.h5"`` -> ``"scene"``,
    ``"indian_pines"`` (a registry scene) -> ``"indian_pines"``. The endings left out are those of the
    registered readers (:func:`hsi.io.readers.known_suffixes`) and of ENVI binaries.
    """
    from hsi.io.readers import known_suffixes
    from hsi.io.readers.envi import BINARY_EXT

    formats = tuple(known_suffixes() | BINARY_EXT)
    text = Path(str(name)).name or str(name)
    while text.lower().endswith(formats) and "." in text[1:]:
        text = text[: text.rindex(".")]
    return text


def split_rgb(split: Split) -> np.ndarray:
    """An ``(H, W, 3)`` uint8 image of a split in :data:`SPLIT_COLORS`."""
    rgb = np.empty((*split.shape, 3), dtype=np.uint8)
    rgb[:] = SPLIT_COLORS["unlabeled"]
    for name in ("buffer", "val", "test", "train"):
        rgb[getattr(split, name)] = SPLIT_COLORS[name]
    return rgb


def _label_table(labels: np.ndarray, palette: Any | None, class_names: list[str] | None) -> np.ndarray:
    """``(K + 1, 3)`` uint8 class colours: ``palette``, else the scene rule for ``class_names``."""
    from hsi.scenes.palette import make_palette, scene_palette

    top = max(int(labels.max()), 0)
    if palette is None:
        names = list(class_names or [])
        return scene_palette(names) if len(names) >= top else make_palette(top)
    table = np.asarray(palette, dtype=np.uint8)
    if table.ndim != 2 or table.shape[1] != 3 or len(table) <= top:
        raise ShapeMismatchError(f"plot_split: palette has shape {table.shape}; the labels need "
                                 f"(K + 1, 3) rows with K >= {top}")
    return table


def _draw_labels(ax: Any, lab: np.ndarray, table: np.ndarray, class_names: list[str] | None) -> None:
    """The class map in ``table``'s colours, with a legend of the classes present (name, pixel count)."""
    from matplotlib.patches import Patch

    ax.imshow(class_map_rgb(lab, table), interpolation="nearest")
    ax.set_title("labels")
    present, counts = np.unique(lab[lab > 0], return_counts=True)
    names = list(class_names or [])
    handles = [Patch(facecolor=table[int(k)] / 255, edgecolor="black",
                     label=f"{names[k - 1] if k <= len(names) else f'class {k}'} ({n})")
               for k, n in zip(present, counts)]
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7,
                  ncols=1 + len(handles) // 25)


def plot_split(split: Split, labels: Any | None = None, path: str | Path | None = None,
               title: str | None = None, class_names: list[str] | None = None,
               palette: Any | None = None) -> Figure:
    """Draw a split over the scene: train / val / test / buffer / unlabeled, with a legend.

    Parameters
    ----------
    split : Split
        The split to draw.
    labels : (H, W) int, optional
        When given, the class map is drawn in a second panel beside the split, with a
        legend of the classes present (colour, name and pixel count).
    path : str or Path, optional
        Save the figure there as PNG.
    title : str, optional
        Title of the split panel (default: the split method).
    class_names : list of str, optional
        Names of classes 1..K for the labels legend (default: "class 1", "class 2", ...).
    palette : (K + 1, 3) uint8, optional
        Class colours, row ``k`` for class ``k``: pass the scene's (``scene.palette``,
        ``datamodule.palette``) so the labels panel matches ``map.png``. Default: the
        scene rule for ``class_names`` (:func:`hsi.scenes.palette.scene_palette`). Unlabeled
        pixels take ``SPLIT_COLORS["unlabeled"]`` in both panels, and a class colour too
        close to another is replaced (:func:`distinguishable_palette`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    h, w = split.shape
    panels = 1 if labels is None else 2
    aspect = w / max(h, 1)
    height = 6.0
    legends = 2.5 if labels is None else 5.0  # inches beside the panels for their legends
    fig = Figure(figsize=(min(18.0, panels * height * aspect + legends), height), dpi=100)
    axes = fig.subplots(1, panels, squeeze=False)[0]
    if labels is not None:
        lab = np.asarray(labels)
        if lab.shape != split.shape:
            raise ShapeMismatchError(f"plot_split: labels has shape {lab.shape}, the split "
                                     f"{split.shape}")
        lab = lab.astype(np.int64)
        _draw_labels(axes[0], lab, distinguishable_palette(_label_table(lab, palette, class_names)), class_names)
    ax = axes[-1]
    ax.imshow(split_rgb(split), interpolation="nearest")
    totals = split.counts.totals() if split.counts is not None else {}
    handles = [Patch(facecolor=np.asarray(SPLIT_COLORS[n]) / 255, edgecolor="black",
                     label=f"{n} ({totals[n]})" if n in totals else n)
               for n in ("train", "val", "test", "buffer", "unlabeled")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    method = split.params.get("method", "")
    ax.set_title(title or f"{method} split".strip())
    for a in axes:
        a.set_xticks([])
        a.set_yticks([])
    fig.tight_layout()
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png")
    return fig


#: resolution (dots per inch), height and largest width (inches) of the map figures (:func:`_image_figure`)
FIGURE_DPI, FIGURE_HEIGHT_IN, FIGURE_MAX_WIDTH_IN = 100, 6.0, 20.0
#: a map with more rows than the figure has pixels high, or more columns than its widest
#: figure has pixels across, is drawn from every n-th pixel: the PNG cannot show more (it is
#: a preview; the map files keep every pixel), and drawing a 2048 x 2048 map whole cost
#: ~300 MB and a third of a second per figure
MAX_DRAWN_ROWS = int(FIGURE_DPI * FIGURE_HEIGHT_IN)
MAX_DRAWN_COLS = int(FIGURE_DPI * FIGURE_MAX_WIDTH_IN)


def preview_step(shape: tuple[int, ...]) -> int:
    """The ``n`` of :func:`_decimate` for a map of ``shape`` (its first two entries): 1 when it is drawn whole.

    A preview shows the pixels whose row and column are multiples of ``n``; a whole-scene
    run keeps its false-colour bands at just those pixels (:func:`plot_false_color`'s ``shape``).
    """
    return max(1, -(-shape[0] // MAX_DRAWN_ROWS), -(-shape[1] // MAX_DRAWN_COLS))


def _decimate(image: np.ndarray) -> np.ndarray:
    """Every ``n``-th row and column (nearest pixels), within :data:`MAX_DRAWN_ROWS` x :data:`MAX_DRAWN_COLS`.

    A memory-mapped map is gathered strip by strip, each strip's pages let go of once read.
    """
    step = preview_step(image.shape)
    if getattr(image, "_mmap", None) is None:
        return image if step <= 1 else image[::step, ::step]
    parts = []
    for rows in row_strips(image.shape[0], image.shape[1], _STRIP_PIXELS, multiple=step):  # each starts on the grid
        parts.append(np.array(image[rows.start : rows.stop : step, ::step]))
        release_mapped(image, (rows.start, rows.stop))
    return np.concatenate(parts) if parts else np.array(image[::step, ::step])


def _as_array(values: Any, dtype: Any = None) -> np.ndarray:
    """``values`` as an array; an array (a memory map included) of ``dtype`` is used as it is."""
    if isinstance(values, np.ndarray) and (dtype is None or values.dtype == dtype):
        return values
    return np.asarray(values, dtype=dtype)


#: inches above a map without georeference for its title, and round its other sides
_TITLE_IN, _FRAME_IN = 0.45, 0.15


def _image_figure(h: int, w: int, extra_width: float, georef: GeoRef | None = None) -> tuple[Figure, Any]:
    """A figure and axes for an ``h`` x ``w`` image, ticks off; with ``georef``, shaped in map units."""
    from matplotlib.figure import Figure

    if georef is not None:  # the map's shape (non-square pixels), and room for the coordinate labels
        h, extra_width = h * abs(georef.transform[4] / georef.transform[0]), extra_width + 0.6
    height = FIGURE_HEIGHT_IN
    width = min(FIGURE_MAX_WIDTH_IN, height * w / max(h, 1) + extra_width)
    fig = Figure(figsize=(width, height), dpi=FIGURE_DPI)
    ax = fig.subplots()
    ax.set_xticks([])
    ax.set_yticks([])
    if georef is None:  # without tick labels the layout is known: no tight_layout (it measures every text again)
        left = _FRAME_IN / width
        fig.subplots_adjust(left=left, right=max(left + 0.01, 1 - extra_width / width),
                            bottom=_FRAME_IN / height, top=1 - _TITLE_IN / height)
    return fig, ax


#: font size (pt) of map coordinate tick labels
MAP_TICK_FONTSIZE = 8
#: estimated width (inches) of one character of a tick label at :data:`MAP_TICK_FONTSIZE`
#: (a DejaVu Sans digit is 0.64 em), and the least free space (inches) between two labels
_TICK_CHAR_IN, _TICK_GAP_IN = 0.075, 0.3


def _show(ax: Any, drawn: np.ndarray, shape: tuple[int, ...], georef: GeoRef | None, **kwargs: Any) -> Any:
    """``ax.imshow`` of ``drawn``, the :func:`_decimate`-d image of a map of ``shape``.

    With ``georef`` the image is placed in map coordinates: drawn pixel ``i`` covers original
    pixels ``step * i`` to ``step * (i + 1)``, so its extent is computed from the decimation
    step (not from ``shape``), and the axes are cut to the map's own extent. Ticks then mark
    true map coordinates however the image was decimated.
    """
    if georef is None:
        return ax.imshow(drawn, interpolation="nearest", **kwargs)
    step = preview_step(shape)
    a, _, c, _, e, f = georef.transform
    rows, cols = drawn.shape[:2]
    image = ax.imshow(drawn, interpolation="nearest", extent=(c, c + a * step * cols, f + e * step * rows, f),
                      **kwargs)
    ax.set_xlim(c, c + a * shape[1])
    ax.set_ylim(f + e * shape[0], f)
    return image


def _crs_axes(crs: str | None) -> tuple[bool, str, str]:
    """``(geographic, x label, y label)`` of a WKT CRS ("Easting (m)", or "Longitude" in degrees).

    rasterio reads the CRS when it can; without rasterio, or for a WKT it cannot parse, the
    WKT's first keyword tells geographic from projected, and the unit stays unnamed.
    """
    geographic, unit = False, "unknown"
    if crs is not None:
        try:
            from rasterio.crs import CRS

            parsed = CRS.from_wkt(crs)
            geographic, unit = bool(parsed.is_geographic), str(parsed.linear_units or "unknown")
        except (ImportError, ValueError):  # rasterio's CRSError is a ValueError
            geographic = re.match(r"\s*(GEOGCS|GEOGCRS)\b", crs) is not None
    if geographic:
        return True, "Longitude", "Latitude"
    unit = {"metre": "m", "meter": "m"}.get(unit.lower(), "ft" if "foot" in unit.lower() else unit)
    suffix = "" if unit.lower() == "unknown" else f" ({unit})"
    return False, f"Easting{suffix}", f"Northing{suffix}"


def _tick_labels(values: np.ndarray, geographic: bool) -> list[str]:
    """Labels of tick ``values`` with as few decimals as they need: "612,740", or "37.75°" in degrees."""
    decimals = next((d for d in range(10)
                     if np.all(np.abs(values * 10.0**d - np.round(values * 10.0**d)) < 1e-6)), 10)
    values = np.round(values, decimals)
    values = np.where(values == 0, 0.0, values)  # no "-0"
    if geographic:
        return [f"{v:.{decimals}f}\N{DEGREE SIGN}" for v in values]
    return [f"{v:,.{decimals}f}" for v in values]


def _fitting_ticks(lim: tuple[float, float], length_in: float, geographic: bool) -> tuple[np.ndarray, list[str]]:
    """Round-number ticks within ``lim`` on an axis ``length_in`` inches long, with their labels.

    The most ticks (at most 7) whose labels, laid along the axis, leave :data:`_TICK_GAP_IN`
    between neighbours; a single tick when even two do not fit. A label must lie along its
    own axis: one centred on the axis' end would reach past it, into the other axis' labels
    at the shared lower-left corner (or the title above the map), so such ticks are dropped.
    """
    from matplotlib.ticker import MaxNLocator

    lo, hi = sorted(lim)
    eps = 1e-9 * (hi - lo)
    for nbins in range(6, 0, -1):
        values = MaxNLocator(nbins, steps=[1, 2, 2.5, 5, 10], min_n_ticks=1).tick_values(lo, hi)
        values = _within_axis(values[(values >= lo - eps) & (values <= hi + eps)], lo, hi, length_in, geographic)
        labels = _tick_labels(values, geographic)
        if len(values) < 2:
            return values, labels
        spacing = (values[1] - values[0]) / (hi - lo) * length_in
        if spacing >= max(map(len, labels)) * _TICK_CHAR_IN + _TICK_GAP_IN:
            return values, labels
    return values[:1], labels[:1]


def _within_axis(values: np.ndarray, lo: float, hi: float, length_in: float, geographic: bool) -> np.ndarray:
    """The tick ``values`` whose centred labels end within the axis ``lo..hi`` (``length_in`` inches long).

    When none does (an axis shorter than its labels), the one nearest the axis' middle.
    """
    if values.size == 0 or hi <= lo:
        return values
    half = np.array([len(t) for t in _tick_labels(values, geographic)]) * _TICK_CHAR_IN / 2
    room = np.minimum(values - lo, hi - values) / (hi - lo) * length_in
    inside = values[room >= half]
    return inside if inside.size else values[[int(np.argmin(np.abs(values - (lo + hi) / 2)))]]


def _finish(fig: Figure, ax: Any, title: str, georef: GeoRef | None) -> None:
    """Title; with ``georef`` also the CRS name, axis labels, map coordinate ticks and the layout.

    Ticks are fitted to the axes' size twice: once to lay the labels out, then again for
    the axis lengths that layout leaves, so that labels never crowd on small or wide maps.
    """
    if georef is None:
        ax.set_title(title)  # laid out by :func:`_image_figure`
        return
    geographic, xlabel, ylabel = _crs_axes(georef.crs)
    crs = georef.crs_name or ("unknown CRS" if georef.crs is None else "unnamed CRS")
    ax.set_title(f"{title}\n{crs}")
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.tick_params(labelsize=MAP_TICK_FONTSIZE)
    for _ in range(2):
        fig.tight_layout()
        ax.apply_aspect()
        box = ax.get_position()
        xticks, xlabels = _fitting_ticks(ax.get_xlim(), box.width * fig.get_figwidth(), geographic)
        yticks, ylabels = _fitting_ticks(ax.get_ylim(), box.height * fig.get_figheight(), geographic)
        ax.set_xticks(xticks, xlabels)
        ax.set_yticks(yticks, ylabels, rotation=90, va="center")
    fig.tight_layout()


def class_map_rgb(labels: Any, palette: Any, background: Any | None = None,
                  nodata: Any | None = None) -> np.ndarray:
    """An ``(H, W, 3)`` uint8 image of a class map in the scene's palette.

    Parameters
    ----------
    labels : (H, W) int
        Ids ``0..K``; 0 (masked / unlabeled) takes ``palette[0]``.
    palette : (K + 1, 3) uint8
        Row ``k`` is the colour of class ``k``.
    background : (H, W) bool, optional
        Pixels that are background in the ground truth: drawn with their class colour
        blended half way to mid grey, so predictions there stay visible but distinct.
    nodata : (H, W) bool, optional
        No-data pixels (never classified): drawn in :data:`NODATA_COLOR`.
    """
    lab = np.asarray(labels)
    table = np.asarray(palette, dtype=np.uint8)
    if lab.size and (int(lab.min()) < 0 or int(lab.max()) >= len(table)):
        raise ShapeMismatchError(f"class_map_rgb: label ids must lie in 0..{len(table) - 1} (palette rows); "
                         f"found {int(lab.min())}..{int(lab.max())}")
    rgb = table[lab]
    if background is not None:
        bg = np.asarray(background, dtype=bool)
        if bg.shape != lab.shape:
            raise ShapeMismatchError(f"class_map_rgb: background has shape {bg.shape}, labels {lab.shape}")
        rgb[bg] = ((rgb[bg].astype(np.uint16) + 128) // 2).astype(np.uint8)
    if nodata is not None:
        rgb[_same_shape(nodata, lab, "nodata")] = NODATA_COLOR
    return rgb


def _same_shape(mask: Any, labels: np.ndarray, what: str) -> np.ndarray:
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != labels.shape:
        raise ShapeMismatchError(f"class_map_rgb: {what} has shape {mask.shape}, labels {labels.shape}")
    return mask


def plot_class_map(labels: Any, class_names: list[str], palette: Any, path: str | Path | None = None, *,
                   background: Any | None = None, nodata: Any | None = None, title: str | None = None,
                   georef: GeoRef | None = None) -> Figure:
    """Draw a classification map with a legend of class names in the scene's palette.

    Parameters
    ----------
    labels : (H, W) int
        Ids ``0..K`` (0 = masked, drawn as "unlabeled (masked)" when present).
    class_names : list[str]
        ``K`` names of ids ``1..K``.
    palette : (K + 1, 3) uint8
    path : str or Path, optional
        Save the figure there as PNG (atomically).
    background : (H, W) bool, optional
        Ground-truth background drawn dimmed (:func:`class_map_rgb`) and named in the legend.
    nodata : (H, W) bool, optional
        No-data pixels (label 0, never classified), drawn in :data:`NODATA_COLOR` and named
        in the legend with their count.
    title : str, optional
    georef : GeoRef, optional
        The map's georeference: the axes then show easting/northing (or longitude/latitude)
        ticks at true map coordinates, and the title names the CRS. Without it the image
        has no ticks.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.patches import Patch

    lab = _as_array(labels)  # a memory map stays one: read in strips
    table = np.asarray(palette, dtype=np.uint8)
    if len(table) != len(class_names) + 1:
        raise ShapeMismatchError(f"plot_class_map: palette has {len(table)} rows, expected K + 1 = {len(class_names) + 1}")
    fig, ax = _image_figure(*lab.shape, 3.0, georef)
    _show(ax, class_map_rgb(_decimate(lab), table, None if background is None else _decimate(np.asarray(background)),
                            None if nodata is None else _decimate(np.asarray(nodata))), lab.shape, georef)
    counts = _class_counts(lab, len(table))
    n_nodata = 0 if nodata is None else int(np.count_nonzero(nodata))
    handles = [Patch(facecolor=table[k] / 255, edgecolor="black", label=f"{name} ({counts[k]})")
               for k, name in enumerate(class_names, start=1)]
    if counts[0] > n_nodata:
        handles.append(Patch(facecolor=table[0] / 255, edgecolor="black",
                             label=f"unlabeled, masked ({counts[0] - n_nodata})"))
    if n_nodata:
        handles.append(Patch(facecolor=np.asarray(NODATA_COLOR) / 255, edgecolor="black",
                             label=f"no data, not classified ({n_nodata})"))
    if background is not None:
        handles.append(Patch(facecolor=(0.5, 0.5, 0.5), edgecolor="black", hatch="//",
                             label="dimmed: background in ground truth"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    _finish(fig, ax, title or "classification map", georef)
    if path is not None:
        save_png(fig, path)
    return fig


#: pixels read at a time when a whole map is summed up: a memory-mapped map is never copied whole
_STRIP_PIXELS = 1 << 20


def _class_counts(labels: np.ndarray, n: int) -> np.ndarray:
    """Pixels of each id (at least ``n`` entries, more when a larger id occurs), counted strip by strip."""
    counts = np.zeros(n, dtype=np.int64)
    for rows in row_strips(labels.shape[0], labels.shape[1], _STRIP_PIXELS):
        part = np.bincount(np.asarray(labels[rows]).ravel(), minlength=n)
        release_mapped(labels, (rows.start, rows.stop))
        if len(part) > len(counts):
            part[: len(counts)] += counts
            counts = part
        else:
            counts += part
    return counts


def _nan_mean(values: np.ndarray) -> float:
    """Mean of the non-NaN values (NaN when there are none), strip by strip in float64."""
    total, count = 0.0, 0
    for rows in row_strips(values.shape[0], values.shape[1], _STRIP_PIXELS):
        part = np.asarray(values[rows], dtype=np.float64)
        release_mapped(values, (rows.start, rows.stop))
        kept = part[~np.isnan(part)]
        total, count = total + float(kept.sum()), count + kept.size
    return total / count if count else float("nan")


def stretch_rgb(bands: Any, low: float = 2.0, high: float = 98.0) -> np.ndarray:
    """``(H, W, 3)`` float bands to uint8 with a per-channel ``low``-``high`` percentile stretch.

    Non-finite values are ignored by the percentiles and drawn black.
    """
    x = np.asarray(bands, dtype=np.float32)
    out = np.zeros(x.shape, dtype=np.uint8)
    for c in range(x.shape[-1]):
        ch = x[..., c]
        finite = np.isfinite(ch)
        if not finite.any():
            continue
        lo, hi = np.percentile(ch[finite], [low, high])
        scale = 255.0 / (hi - lo) if hi > lo else 0.0
        out[..., c] = np.where(finite, np.clip((ch - lo) * scale, 0, 255), 0).astype(np.uint8)
    return out


def plot_false_color(bands: Any, path: str | Path | None = None, *, title: str | None = None,
                     georef: GeoRef | None = None, shape: tuple[int, int] | None = None) -> Figure:
    """Draw an ``(H, W, 3)`` band stack, stretched (:func:`stretch_rgb`) by the percentiles of the pixels drawn.

    With ``georef`` the axes show map coordinates and the title names the CRS, as in
    :func:`plot_class_map`. With ``shape``, ``bands`` is already the preview of a map of
    that shape (every :func:`preview_step`-th row and column, as a whole-scene run keeps
    it), so only the pixels drawn need be kept.
    """
    drawn = _decimate(_as_array(bands)) if shape is None else np.asarray(bands)
    if shape is None:
        shape = np.shape(bands)[:2]
    else:
        step = preview_step(shape)
        expected = (-(-shape[0] // step), -(-shape[1] // step), 3)
        if drawn.shape != expected:
            raise ShapeMismatchError(f"plot_false_color: bands has shape {drawn.shape}; the preview of a "
                                     f"{shape[0]} x {shape[1]} map (every {step}-th pixel) is {expected}")
    rgb = stretch_rgb(drawn)  # percentiles of the pixels drawn
    fig, ax = _image_figure(*shape[:2], 0.5, georef)
    _show(ax, rgb, shape, georef)
    _finish(fig, ax, title or "false colour", georef)
    if path is not None:
        save_png(fig, path)
    return fig


def plot_confidence(confidence: Any, path: str | Path | None = None, *, title: str | None = None,
                    georef: GeoRef | None = None) -> Figure:
    """Draw an ``(H, W)`` map of the largest class probability, 0 to 1, with a colour bar.

    With ``georef`` the axes show map coordinates and the title names the CRS, as in
    :func:`plot_class_map`.
    """
    conf = _as_array(confidence, np.float32)
    fig, ax = _image_figure(*conf.shape, 1.5, georef)
    im = _show(ax, _decimate(conf), conf.shape, georef, cmap="viridis", vmin=0.0, vmax=1.0)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="max probability")
    _finish(fig, ax, title or f"confidence (mean {_nan_mean(conf):.3f})", georef)
    if path is not None:
        save_png(fig, path)
    return fig
