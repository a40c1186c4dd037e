"""Band removal: by index, by wavelength window (water absorption), or from an ENVI ``bbl``."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from hsi.errors import BandMismatchError, OptionError, WavelengthError
from hsi.preprocess._base import BandTransformer, check_array, refuse_mask_as_y
from hsi.preprocess._registry import register_transformer

__all__ = ["RemoveBands", "WATER_ABSORPTION_NM", "WATER_ABSORPTION_NM_WIDE"]

#: Closed wavelength windows (nm) of the atmospheric water-absorption bands, chosen so
#: that on the 220-band AVIRIS Indian Pines calibration (``92AV3C.spc``) they remove
#: exactly the customary 20 bands (0-based 103-107, 149-162 and 219), giving the
#: familiar 200-band "corrected" cube.
WATER_ABSORPTION_NM: tuple[tuple[float, float], ...] = ((1355.0, 1410.0), (1815.0, 1940.0),
                                                        (2495.0, 2600.0))

#: Wider windows covering the full absorption features (and the noisy 2.45-2.5 um tail),
#: for sensors whose band centres differ from AVIRIS'.
WATER_ABSORPTION_NM_WIDE: tuple[tuple[float, float], ...] = ((1340.0, 1460.0), (1790.0, 1960.0),
                                                             (2450.0, 2600.0))


@register_transformer
class RemoveBands(BandTransformer):
    """Drop bands given by index, by wavelength window, or by an ENVI bad-band list.

    The selection is the union of the three criteria. Nothing is learned from pixel
    values (``y`` and ``sample_mask`` are accepted for the common ``fit`` signature and ignored).

    Parameters
    ----------
    indices : sequence of int or None
        0-based band indices to drop (negative indices count from the end).
    wavelength_ranges : sequence of (lo, hi) or None
        Closed windows in nm; every band whose centre wavelength lies in one is dropped.
        Needs ``wavelengths`` at fit (e.g. :data:`WATER_ABSORPTION_NM`).
    bbl : sequence of 0/1 or None
        ENVI bad-band list, one entry per band: 1 = good (kept), 0 = bad (dropped).

    Attributes
    ----------
    keep_ : (C_out,) int64
        Indices of the kept bands, ascending.
    removed_ : (C - C_out,) int64
        Indices of the dropped bands, ascending.
    wavelengths_out_ : (C_out,) float64 or None
        Wavelengths of the kept bands, when wavelengths were given at fit.
    n_bands_in_, n_bands_out_ : int
    """

    _fitted_attrs = ("n_bands_in_", "n_bands_out_", "keep_", "removed_", "wavelengths_out_")

    def __init__(self, indices: Sequence[int] | None = None,
                 wavelength_ranges: Sequence[Sequence[float]] | None = None,
                 bbl: Sequence[int] | None = None) -> None:
        self.indices = indices
        self.wavelength_ranges = wavelength_ranges
        self.bbl = bbl

    def fit(self, X: Any, y: Any = None, *, sample_mask: Any | None = None,
            wavelengths: Any = None) -> RemoveBands:
        """Decide which bands to keep from the band count (and wavelengths); returns self.

        ``X`` may also be an int band count, since no pixel value is used.
        """
        self._reset()
        n_bands = _band_count(X, y)
        wl = _band_wavelengths(wavelengths, n_bands)
        drop = self._by_index(n_bands) | self._by_wavelength(wl, n_bands) | self._by_bbl(n_bands)
        if drop.all():
            raise BandMismatchError(
                f"RemoveBands: the selection removes all {n_bands} bands; nothing would be left"
            )
        self.n_bands_in_ = n_bands
        self.keep_ = np.flatnonzero(~drop).astype(np.int64)
        self.removed_ = np.flatnonzero(drop).astype(np.int64)
        self.n_bands_out_ = int(self.keep_.size)
        self.wavelengths_out_ = None if wl is None else wl[self.keep_]
        return self

    def _by_index(self, n_bands: int) -> np.ndarray:
        drop = np.zeros(n_bands, dtype=bool)
        if self.indices is None:
            return drop
        idx = np.asarray(self.indices).reshape(-1)
        if idx.size and not np.issubdtype(idx.dtype, np.integer):
            raise OptionError("indices", self.indices, f"band indices (integers); found dtype {idx.dtype}")
        bad = idx[(idx < -n_bands) | (idx >= n_bands)]
        if bad.size:
            raise BandMismatchError(
                f"RemoveBands: indices {bad.tolist()} are out of range for a cube with "
                f"{n_bands} bands"
            )
        drop[idx.astype(np.int64)] = True
        return drop

    def _by_wavelength(self, wl: np.ndarray | None, n_bands: int) -> np.ndarray:
        drop = np.zeros(n_bands, dtype=bool)
        if self.wavelength_ranges is None:
            return drop
        if wl is None:
            raise WavelengthError(
                "RemoveBands.fit: wavelength_ranges needs the band centre wavelengths; pass "
                "fit(cube, mask, wavelengths=cube_wavelengths_nm)"
            )
        for window in self.wavelength_ranges:
            try:
                lo, hi = (float(v) for v in window)
            except (TypeError, ValueError) as err:
                raise OptionError("wavelength_ranges", window, "(lo, hi) pairs in nm") from err
            if lo > hi:
                raise OptionError("wavelength_ranges", window, "(lo, hi) pairs in nm with lo <= hi")
            drop |= (wl >= lo) & (wl <= hi)
        return drop

    def _by_bbl(self, n_bands: int) -> np.ndarray:
        if self.bbl is None:
            return np.zeros(n_bands, dtype=bool)
        bbl = np.asarray(self.bbl).reshape(-1)
        if bbl.size != n_bands:
            raise BandMismatchError(
                f"RemoveBands: bbl has {bbl.size} entries, expected one per band ({n_bands})"
            )
        return bbl == 0

    def transform(self, x: Any) -> np.ndarray:
        """Select the kept bands of any ``(..., C)`` array; returns float32 ``(..., C_out)``."""
        x = self._check_input(x)
        return np.asarray(x[..., self.keep_], dtype=np.float32)


def _band_count(cube: Any, y: Any) -> int:
    """Bands of a cube (its last axis, :func:`check_array` applied), or the count itself when an int is given."""
    if isinstance(cube, (int, np.integer)):
        return int(cube)
    x = check_array(cube, "RemoveBands.fit", fit=True)
    refuse_mask_as_y(x, y, "RemoveBands.fit")
    return int(x.shape[-1])


def _band_wavelengths(wavelengths: Any, n_bands: int) -> np.ndarray | None:
    if wavelengths is None:
        return None
    wl = np.asarray(wavelengths, dtype=np.float64).reshape(-1)
    if wl.size != n_bands:
        raise WavelengthError(
            f"RemoveBands.fit: wavelengths has {wl.size} entries, expected one per band ({n_bands})"
        )
    return wl
