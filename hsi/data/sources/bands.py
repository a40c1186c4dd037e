"""Bands across sensors: one common wavelength grid, and resampling onto it by spectral response.

The grid (:func:`common_grid`) is the band centres of the scene with the broadest bands
(:func:`coarsest_scene`; ties go to the first training scene), restricted to the range every
scene covers, with that scene's band widths (FWHM), or its band spacing when they are unknown. A
cube is brought onto it by :func:`resample`: where the grid's widths are known, each grid
band integrates the cube's spectrum under a Gaussian response of its width (narrowed by the
cube's own band widths when those are known; narrow-to-broad resampling integrates, it
never picks); otherwise linear interpolation between the two nearest band centres
(:mod:`hsi.preprocess.response`). A grid equal to the cube's own (every centre within
:data:`SAME_NM`) leaves the cube untouched, the very same array. :func:`resampling_record`
says what was done (method, bands dropped) for the console and ``metrics.json``.

Scenes without wavelengths combine only with each other, and only when their band counts
are equal (no resampling then); beside scenes with wavelengths they need their band centres
declared (``wavelengths:`` in their entries). Inference brings a new cube onto a
checkpoint's grid the same way (:class:`ResampledSource`) and refuses a cube that does not
cover it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hsi.errors import BandMismatchError, CollectionError, WavelengthError

__all__ = ["SAME_NM", "ResampledSource", "band_width", "bands_line", "check_covers", "coarsest_scene", "common_grid",
           "covers", "grid_fwhm", "resample", "resampling_record", "same_grid", "subset_bands"]

#: band centres closer than this (nm) are the same band
SAME_NM = 1e-6


def same_grid(a: Any, b: Any) -> bool:
    """True when both grids have the same band centres (within :data:`SAME_NM`)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= SAME_NM))


def _no_wavelengths(counts: Sequence[int], names: Sequence[str], have: Sequence[bool]) -> None:
    """Scenes without wavelengths: refuse beside scenes with them, or unless every band count is the same."""
    if any(have):
        missing = ", ".join(f"{n} ({c} bands)" for n, c, h in zip(names, counts, have) if not h)
        known = ", ".join(n for n, h in zip(names, have) if h)
        raise CollectionError(
            f"scenes {missing}: no wavelengths, beside scenes with them ({known}); their bands cannot be put on a "
            "common grid without their centres. Declare them in each entry (wavelengths: [nm, ...]), or combine "
            "only scenes without wavelengths of equal band counts")
    if len(set(counts)) > 1:
        shown = ", ".join(f"{n} ({c} bands, no wavelengths)" for n, c in zip(names, counts))
        raise CollectionError(
            f"scenes {shown}: scenes without wavelengths can be combined only when their band counts are equal "
            "(there is no grid to resample them on); give every cube its wavelengths, or use scenes of one sensor")


def _shared_range(wavelengths: Sequence[Any]) -> tuple[float, float]:
    """The wavelength range every scene covers."""
    wls = [np.asarray(w, dtype=np.float64) for w in wavelengths]
    return max(float(w.min()) for w in wls), min(float(w.max()) for w in wls)


def band_width(wavelengths: Any, fwhm: Any, lo: float, hi: float) -> float:
    """A scene's typical band width inside ``lo``-``hi``: its median FWHM, or its median band spacing when wider
    (or when the FWHM is unknown)."""
    wl = np.sort(np.asarray(wavelengths, dtype=np.float64))
    inside = (wl >= lo - SAME_NM) & (wl <= hi + SAME_NM)
    spacing = float(np.median(np.diff(wl[inside]))) if inside.sum() > 1 else 0.0
    if fwhm is None:
        return spacing
    widths = np.asarray(fwhm, dtype=np.float64)[np.argsort(np.asarray(wavelengths, dtype=np.float64))]
    return max(spacing, float(np.median(widths[inside]))) if inside.any() else spacing


def coarsest_scene(wavelengths: Sequence[Any], fwhms: Sequence[Any], first_train: int) -> int:
    """The scene whose bands are the broadest over the range all cover (ties: the first training scene).

    Every scene can be brought down to the coarsest one's bands by integrating its own (narrow
    to broad); nothing can bring a broad band back to a narrow one, so a grid of narrow bands
    would leave the coarse scenes looking unlike the fine ones the model trained on.
    """
    if any(w is None for w in wavelengths):
        return first_train
    lo, hi = _shared_range(wavelengths)
    widths = [band_width(w, f, lo, hi) for w, f in zip(wavelengths, fwhms)]
    best = max(widths)
    return first_train if widths[first_train] >= best * (1 - 1e-6) else int(np.argmax(widths))


def common_grid(wavelengths: Sequence[Any], counts: Sequence[int], names: Sequence[str], reference: int
                ) -> np.ndarray | None:
    """The common band grid of a collection.

    Parameters
    ----------
    wavelengths : sequence of (C_i,) arrays or None
        Band centres (nm) of each scene.
    counts : sequence of int
        Band count of each scene.
    names : sequence of str
        Scene names, for messages.
    reference : int
        Index of the scene whose band centres inside the range every scene covers are the
        grid (:func:`coarsest_scene`).

    Returns
    -------
    (C,) float64 array, or None when no scene has wavelengths (equal band counts).

    Raises
    ------
    CollectionError
        Some scenes have wavelengths and others not, band counts differ without wavelengths,
        or the scenes share no range.
    """
    have = [w is not None for w in wavelengths]
    if not all(have):
        _no_wavelengths(counts, names, have)
        return None
    wls = [np.asarray(w, dtype=np.float64) for w in wavelengths]
    lo, hi = _shared_range(wls)
    ref = wls[reference]
    grid = ref[(ref >= lo - SAME_NM) & (ref <= hi + SAME_NM)]
    if grid.size < 2:
        ranges = ", ".join(f"{n} {w.min():.1f}-{w.max():.1f} nm" for n, w in zip(names, wls))
        raise CollectionError(f"scenes {ranges}: they share {grid.size} band(s) of {names[reference]!r} "
                              f"within {lo:.1f}-{hi:.1f} nm; a common grid needs at least 2")
    return grid


def covers(wl_from: Any, wl_to: Any) -> bool:
    """Whether band centres ``wl_from`` span ``wl_to`` (within :data:`SAME_NM`): what resampling onto ``wl_to`` needs,
    since it does not extrapolate."""
    src, dst = np.asarray(wl_from, dtype=np.float64), np.asarray(wl_to, dtype=np.float64)
    return bool(dst.min() >= src.min() - SAME_NM and dst.max() <= src.max() + SAME_NM)


def check_covers(wl_from: Any, wl_to: Any, name: str) -> None:
    """Refuse a cube whose band centres do not span the grid (:class:`~hsi.errors.WavelengthError`)."""
    src, dst = np.asarray(wl_from, dtype=np.float64), np.asarray(wl_to, dtype=np.float64)
    if not covers(src, dst):
        raise WavelengthError(
            f"{name}: its bands cover {src.min():.2f}-{src.max():.2f} nm, but the grid to resample it on spans "
            f"{dst.min():.2f}-{dst.max():.2f} nm; a cube must cover the whole grid (no extrapolation)")


def grid_fwhm(wavelengths: Any, fwhm: Any, grid: Any) -> tuple[np.ndarray | None, str | None]:
    """The band widths of the grid bands, taken from the scene of band centres ``wavelengths`` and widths ``fwhm``,
    and where they come from: ``"file"``, or ``"spacing"`` when the scene's widths are unknown (an imaging
    spectrometer's bands are about as wide as they are apart), or None for no grid."""
    if grid is None:
        return None, None
    grid = np.asarray(grid, dtype=np.float64)
    if fwhm is None:
        return (np.gradient(grid) if grid.size > 1 else None), "spacing"
    order = np.argsort(np.asarray(wavelengths, dtype=np.float64))
    wl, widths = np.asarray(wavelengths, dtype=np.float64)[order], np.asarray(fwhm, dtype=np.float64)[order]
    return np.interp(grid, wl, widths), "file"


def resample(cube: Any, wl_from: Any, wl_to: Any, name: str = "cube", pixels: int = 1 << 16, *,
             fwhm_from: Any = None, fwhm_to: Any = None) -> np.ndarray:
    """``cube`` (..., C_from) resampled to the band centres ``wl_to``.

    Parameters
    ----------
    cube : (..., C_from) array
        Reflectance (any units); the last axis is the band axis.
    wl_from : (C_from,) array
        The cube's band centres (nm).
    wl_to : (C_to,) array
        The grid's band centres (nm), inside the range of ``wl_from``.
    name : str
        For messages.
    pixels : int
        Spectra computed at a time (bounds the temporaries).
    fwhm_from, fwhm_to : (C,) arrays, optional
        Band widths (nm) of the cube and of the grid: with ``fwhm_to``, Gaussian responses
        (:func:`hsi.preprocess.response.response_matrix`); without it, linear interpolation.

    Returns
    -------
    (..., C_to) float32 array; ``cube`` itself when the grids are the same.

    Raises
    ------
    BandMismatchError
        ``wl_from`` is not the cube's band count.
    WavelengthError
        The cube does not cover the grid.
    """
    from hsi.preprocess.response import apply_response, response_matrix

    src, dst = np.asarray(wl_from, dtype=np.float64), np.asarray(wl_to, dtype=np.float64)
    if np.shape(cube)[-1] != src.size:
        raise BandMismatchError(f"{name}: {np.shape(cube)[-1]} bands but {src.size} wavelengths")
    if same_grid(src, dst):
        return cube
    check_covers(src, dst, name)
    picked = subset_bands(src, dst, fwhm_from, fwhm_to)
    if picked is not None:  # the grid is some of the cube's own bands: taken as they are
        return np.ascontiguousarray(np.asarray(cube)[..., picked], dtype=np.float32)
    return apply_response(cube, response_matrix(src, dst, fwhm_to, fwhm_from), pixels)


def subset_bands(wl_from: Any, wl_to: Any, fwhm_from: Any = None, fwhm_to: Any = None) -> np.ndarray | None:
    """The cube's band of each grid band when the grid is a subset of the cube's bands (same centres, and the same
    widths where both are known: the same sensor), else None."""
    src, dst = np.asarray(wl_from, dtype=np.float64), np.asarray(wl_to, dtype=np.float64)
    index = np.abs(dst[:, None] - src[None, :]).argmin(axis=1)
    if not np.all(np.abs(src[index] - dst) <= SAME_NM):
        return None
    if fwhm_from is not None and fwhm_to is not None and \
            not np.allclose(np.asarray(fwhm_from, dtype=np.float64)[index], fwhm_to, rtol=1e-6, atol=1e-9):
        return None
    return index


def resampling_record(wl_from: Any, wl_to: Any, *, fwhm_from: Any = None, fwhm_to: Any = None) -> dict[str, Any]:
    """What :func:`resample` does to a scene: ``method`` and the source bands no grid band uses (``dropped``: their
    count and the nm ranges they span).

    ``method`` is "identity" (the grid is the scene's own bands), "subset" (each grid band is one of the scene's
    bands, taken as it is), "gaussian" (spectral responses) or "linear" (interpolation between band centres).
    """
    from hsi.preprocess.response import resample_method, response_matrix

    src = np.asarray(wl_from, dtype=np.float64)
    method = resample_method(src, wl_to, fwhm_to)
    if method == "identity":
        return {"method": method, "dropped": 0, "dropped_nm": []}
    picked = subset_bands(src, wl_to, fwhm_from, fwhm_to)
    if picked is not None:
        method, unused = "subset", np.setdiff1d(np.arange(src.size), picked)
    else:
        w = response_matrix(src, wl_to, fwhm_to, fwhm_from)
        unused = np.flatnonzero(~np.any(w != 0.0, axis=0))
    step = float(np.median(np.diff(np.sort(src)))) if src.size > 1 else 0.0
    return {"method": method, "dropped": int(unused.size), "dropped_nm": _ranges(src[unused], step)}


def _ranges(values: np.ndarray, step: float) -> list[list[float]]:
    """Runs of band centres as ``[first, last]`` pairs (nm): a new run wherever two are over 1.5 ``step`` apart."""
    if values.size == 0:
        return []
    v = np.sort(values)
    breaks = np.flatnonzero(np.diff(v) > 1.5 * step)
    starts, ends = np.r_[0, breaks + 1], np.r_[breaks, v.size - 1]
    return [[round(float(v[a]), 3), round(float(v[b]), 3)] for a, b in zip(starts, ends)]


def bands_line(summary: dict[str, Any]) -> str:
    """One console line of a collection's band summary (``HSIDataModule.bands_summary``): the grid, then each
    scene's method and the bands it dropped."""
    grid = summary.get("grid")
    if grid is None:
        head = "bands: no wavelengths; every scene keeps its own bands (equal counts)"
    else:
        lo, hi = grid["range_nm"]
        estimated = " estimated from the band spacing" if grid.get("fwhm_from") == "spacing" else ""
        widths = "" if grid.get("fwhm_nm") is None else \
            f", FWHM {grid['fwhm_nm'][0]:.3g}-{grid['fwhm_nm'][1]:.3g} nm{estimated}"
        head = f"bands: common grid {lo:.1f}-{hi:.1f} nm, {grid['count']} bands{widths} (scene {grid['from']!r}, the " \
               "coarsest)"
    parts = []
    for name, record in summary["scenes"].items():
        if record is None:
            continue
        dropped = "" if not record["dropped"] else \
            f", {record['dropped']} band(s) dropped (" + ", ".join(
                f"{a:g}" if a == b else f"{a:g}-{b:g}" for a, b in record["dropped_nm"]) + " nm)"
        parts.append(f"{name}: {record['method']}{dropped}")
    return head + ("; " + "; ".join(parts) if parts else "")


class ResampledSource:
    """A scene source (:class:`hsi.infer.sources.SceneSource`) read window by window onto a band grid.

    Parameters
    ----------
    source : SceneSource
        The cube as read (its ``wavelengths`` are needed unless its band count is the grid's).
    grid : (C,) array
        The checkpoint's band centres.
    grid_fwhm : (C,) array, optional
        The grid's band widths (nm): Gaussian responses when known (narrowed by the source's
        own ``fwhm`` when it has them), else linear interpolation. A grid of some of the
        source's own bands (same centres, and same widths where both are known) takes those
        bands as they are (:func:`subset_bands`), as :func:`resample` does.
    """

    def __init__(self, source: Any, grid: Any, grid_fwhm: Any = None) -> None:
        from hsi.preprocess.response import response_matrix

        self.source = source
        self.grid = np.asarray(grid, dtype=np.float64)
        if source.wavelengths is None:
            raise BandMismatchError(f"{source.name}: no wavelengths, and its {source.shape[2]} bands are not the "
                                    f"checkpoint's {self.grid.size}; give the cube's band centres (nm) to resample it")
        check_covers(source.wavelengths, self.grid, source.name)
        fwhm = getattr(source, "fwhm", None)
        # a grid of some of the cube's own bands (a checkpoint's wavelength_range on its sensor) takes them as they
        # are, as :func:`resample` does at training
        self.picked = subset_bands(source.wavelengths, self.grid, fwhm, grid_fwhm)
        self.weights = None if self.picked is not None else \
            response_matrix(source.wavelengths, self.grid, grid_fwhm, fwhm)
        self.record = resampling_record(source.wavelengths, self.grid, fwhm_from=fwhm, fwhm_to=grid_fwhm)
        self.fwhm = None if grid_fwhm is None else np.asarray(grid_fwhm, dtype=np.float64)
        self.units = getattr(source, "units", None)
        h, w, _ = source.shape
        self.shape = (h, w, int(self.grid.size))
        self.wavelengths = self.grid
        self.name = source.name
        self.georef = source.georef
        self.header = None

    def read_window(self, rows: slice, cols: slice) -> np.ndarray:
        """``(h, w, C)`` float32 window on the grid."""
        from hsi.preprocess.response import apply_response

        window = self.source.read_window(rows, cols)
        if self.picked is not None:
            return np.ascontiguousarray(np.asarray(window)[..., self.picked], dtype=np.float32)
        return np.ascontiguousarray(apply_response(window, self.weights), dtype=np.float32)

    def close(self) -> None:
        """Close the underlying source."""
        self.source.close()


def onto_grid(source: Any, grid: Any, n_bands: int, grid_fwhm: Any = None) -> Any:
    """``source`` as it is when it already has the grid's bands, else a :class:`ResampledSource`."""
    if grid is None:
        return source
    same = source.wavelengths is not None and same_grid(source.wavelengths, grid)
    if same or (source.wavelengths is None and source.shape[2] == n_bands):
        return source
    return ResampledSource(source, grid, grid_fwhm)
