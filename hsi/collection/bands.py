"""Bands across sensors: one common wavelength grid, and resampling reflectance onto it.

The grid (:func:`common_grid`) is the band centres of the first training scene, restricted
to the range every scene covers. A cube is brought onto it by linear interpolation of
its reflectance between the two nearest band centres (:func:`resample`); band widths
(FWHM) and spectral response functions are not used. A grid equal to the cube's own
(every centre within :data:`SAME_NM`) leaves the cube untouched, the very same array.
Scenes without wavelengths combine only when their band counts are equal (no resampling
then). Inference brings a new cube onto a checkpoint's grid the same way
(:class:`ResampledSource`) and refuses a cube that does not cover it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hsi.errors import BandMismatchError, CollectionError, WavelengthError

__all__ = ["SAME_NM", "ResampledSource", "check_covers", "common_grid", "resample", "same_grid"]

#: band centres closer than this (nm) are the same band
SAME_NM = 1e-6


def same_grid(a: Any, b: Any) -> bool:
    """True when both grids have the same band centres (within :data:`SAME_NM`)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= SAME_NM))


def _no_wavelengths(counts: Sequence[int], names: Sequence[str], have: Sequence[bool]) -> None:
    """Scenes without wavelengths: refuse unless every scene has the same band count."""
    if len(set(counts)) > 1:
        shown = ", ".join(f"{n} ({c} bands{'' if h else ', no wavelengths'})" for n, c, h in zip(names, counts, have))
        raise CollectionError(
            f"scenes {shown}: scenes without wavelengths can be combined only when their band counts are equal "
            "(there is no grid to resample them on); give every cube its wavelengths, or use scenes of one sensor")


def common_grid(wavelengths: Sequence[Any], counts: Sequence[int], names: Sequence[str], first_train: int
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
    first_train : int
        Index of the first training scene: its band centres inside the range every scene
        covers are the grid.

    Returns
    -------
    (C,) float64 array, or None when no scene has wavelengths (equal band counts).

    Raises
    ------
    CollectionError
        Band counts differ and some scene has no wavelengths, or the scenes share no range.
    """
    have = [w is not None for w in wavelengths]
    if not all(have):
        _no_wavelengths(counts, names, have)
        known = [np.asarray(w, dtype=np.float64) for w in wavelengths if w is not None]
        return None if not known else known[0]
    wls = [np.asarray(w, dtype=np.float64) for w in wavelengths]
    lo, hi = max(float(w.min()) for w in wls), min(float(w.max()) for w in wls)
    ref = wls[first_train]
    grid = ref[(ref >= lo - SAME_NM) & (ref <= hi + SAME_NM)]
    if grid.size < 2:
        ranges = ", ".join(f"{n} {w.min():.1f}-{w.max():.1f} nm" for n, w in zip(names, wls))
        raise CollectionError(f"scenes {ranges}: they share {grid.size} band(s) of {names[first_train]!r} "
                              f"within {lo:.1f}-{hi:.1f} nm; a common grid needs at least 2")
    return grid


def check_covers(wl_from: Any, wl_to: Any, name: str) -> None:
    """Refuse a cube whose band centres do not span the grid (:class:`~hsi.errors.WavelengthError`)."""
    src, dst = np.asarray(wl_from, dtype=np.float64), np.asarray(wl_to, dtype=np.float64)
    if dst.min() < src.min() - SAME_NM or dst.max() > src.max() + SAME_NM:
        raise WavelengthError(
            f"{name}: its bands cover {src.min():.2f}-{src.max():.2f} nm, but the grid to resample it on spans "
            f"{dst.min():.2f}-{dst.max():.2f} nm; a cube must cover the whole grid (no extrapolation)")


def _weights(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower and upper source band and the upper band's weight of each target centre."""
    order = np.argsort(src, kind="stable")
    s = src[order]
    x = np.clip(dst, s[0], s[-1])
    hi = np.clip(np.searchsorted(s, x, side="left"), 1, s.size - 1)
    lo = hi - 1
    t = (x - s[lo]) / (s[hi] - s[lo])
    exact = np.abs(x - s[hi]) <= SAME_NM  # a target on a source centre takes that band as is
    t = np.where(exact, 1.0, np.where(np.abs(x - s[lo]) <= SAME_NM, 0.0, t))
    return order[lo], order[hi], t.astype(np.float32)


def resample(cube: Any, wl_from: Any, wl_to: Any, name: str = "cube", pixels: int = 1 << 16) -> np.ndarray:
    """``cube`` (..., C_from) resampled to the band centres ``wl_to`` by linear interpolation.

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
    src, dst = np.asarray(wl_from, dtype=np.float64), np.asarray(wl_to, dtype=np.float64)
    if np.shape(cube)[-1] != src.size:
        raise BandMismatchError(f"{name}: {np.shape(cube)[-1]} bands but {src.size} wavelengths")
    if same_grid(src, dst):
        return cube
    check_covers(src, dst, name)
    lo, hi, t = _weights(src, dst)
    x = np.asarray(cube)
    out = np.empty(x.shape[:-1] + (dst.size,), dtype=np.float32)
    flat_in, flat_out = x.reshape(-1, src.size), out.reshape(-1, dst.size)
    for start in range(0, flat_in.shape[0], pixels):
        block = np.asarray(flat_in[start:start + pixels], dtype=np.float32)
        flat_out[start:start + pixels] = block[:, lo] * (1.0 - t) + block[:, hi] * t
    return out


class ResampledSource:
    """A scene source (:class:`hsi.infer.sources.SceneSource`) read window by window onto a band grid.

    Parameters
    ----------
    source : SceneSource
        The cube as read (its ``wavelengths`` are needed unless its band count is the grid's).
    grid : (C,) array
        The checkpoint's band centres.
    """

    def __init__(self, source: Any, grid: Any) -> None:
        self.source = source
        self.grid = np.asarray(grid, dtype=np.float64)
        if source.wavelengths is None:
            raise WavelengthError(f"{source.name}: no wavelengths, and its {source.shape[2]} bands are not the "
                                  f"checkpoint's {self.grid.size}; give the cube's band centres (nm)")
        check_covers(source.wavelengths, self.grid, source.name)
        h, w, _ = source.shape
        self.shape = (h, w, int(self.grid.size))
        self.wavelengths = self.grid
        self.name = source.name
        self.georef = source.georef
        self.header = None

    def read_window(self, rows: slice, cols: slice) -> np.ndarray:
        """``(h, w, C)`` float32 window on the grid."""
        return np.ascontiguousarray(resample(self.source.read_window(rows, cols), self.source.wavelengths, self.grid,
                                             self.name), dtype=np.float32)

    def close(self) -> None:
        """Close the underlying source."""
        self.source.close()


def onto_grid(source: Any, grid: Any, n_bands: int) -> Any:
    """``source`` as it is when it already has the grid's bands, else a :class:`ResampledSource`."""
    if grid is None:
        return source
    same = source.wavelengths is not None and same_grid(source.wavelengths, grid)
    if same or (source.wavelengths is None and source.shape[2] == n_bands):
        return source
    return ResampledSource(source, grid)
