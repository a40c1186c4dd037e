"""The :class:`Cube` container and :func:`read_cube`, the one entry point for every format."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hsi.errors import DataQualityWarning
from hsi.io.lazy import fwhm_array, open_cube


@dataclass
class Cube:
    """A hyperspectral cube in memory.

    Attributes
    ----------
    data : (H, W, C) float32, C-contiguous.
    wavelengths : (C,) float64 band centres in nm, strictly ascending; None if unknown.
    meta : what was read and done: ``source``, ``format``, ``key``, ``original_dtype``,
        ``original_shape``, ``original_layout``, ``layout_reason``, ``reversed_bands``,
        ``sorted_bands``, ``band_index`` (raw band of each output band, None if unchanged),
        ``scale_factor``, ``ignore_value``, ``n_ignored``, ``bbl`` (output band order),
        ``removed_bands`` (raw indices), ``wavelength_source``, ``wavelength_units``,
        ``georef`` (:class:`hsi.io.georef.GeoRef` or None), ``units`` and ``fwhm`` (below)...

        ``units``: ``{"kind", "scale", "source", "note"}`` -- kind "reflectance" (0-1 after any
        declared scale factor was applied), "radiance" or "unknown"; scale the divisor applied
        on reading, or None; source "header", "registry", "user" or "rule" (see
        :mod:`hsi.io.units`). ``fwhm``: band widths in nm aligned with the output bands (same
        reordering, reversal and bad-band removal as ``wavelengths``), or None.
    """

    data: np.ndarray
    wavelengths: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(self.data.shape)  # type: ignore[return-value]

    @property
    def fwhm(self) -> np.ndarray | None:
        """(C,) float64 band full widths at half maximum in nm, aligned with the bands; None if unknown."""
        return fwhm_array(self.meta)

    @property
    def height(self) -> int:
        return int(self.data.shape[0])

    @property
    def width(self) -> int:
        return int(self.data.shape[1])

    @property
    def n_bands(self) -> int:
        return int(self.data.shape[2])

    def looks_like(self) -> str | None:
        """Why this cube looks like a colour image rather than a hyperspectral cube, or None.

        The rule of :func:`hsi.io.kind.colour_image_reason` (3 or 4 bands of 8-bit integers
        without wavelengths); reading such a file also warns (:class:`hsi.errors.NotHyperspectralWarning`).
        """
        from hsi.io.kind import colour_image_reason

        return colour_image_reason(self.meta, self.n_bands, self.wavelengths)

    def __repr__(self) -> str:
        wl = "None" if self.wavelengths is None else f"{self.wavelengths[0]:.1f}-{self.wavelengths[-1]:.1f} nm"
        return f"Cube(shape={self.shape}, wavelengths={wl}, source={self.meta.get('source')!r})"


def read_cube(
    path: str | Path,
    key: str | None = None,
    layout: str | None = None,
    expected_bands: int | None = None,
    *,
    drop_bad_bands: bool = False,
    scale: bool | float = True,
    band_order: str = "auto",
    georef: str = "check",
    units: str | None = None,
) -> Cube:
    """Read a hyperspectral cube from any registered format (:mod:`hsi.io.readers`).

    .mat (v5, v7.3), .h5/.hdf5, ENVI (.hdr), ERDAS .lan, GeoTIFF, .npy and ``hsi convert --to npy`` scenes.

    Parameters
    ----------
    path : the file; for ENVI either the header or the binary (``x.hdr`` or ``x.img.hdr``); for an
        ``.npy`` scene its folder, ``cube.npy`` or ``meta.json``.
    key : MATLAB variable / HDF5 dataset path; None = the only 3-D numeric array.
    layout : axis order of the stored array ("HWC", "CHW", "WHC", ...); None = detect (see
        :func:`hsi.io.layout.detect_layout`; MATLAB v7.3 arrays are first put back in
        MATLAB's orientation). Always honored when given.
    expected_bands : raise :class:`BandMismatchError` unless the cube has this many bands.
    drop_bad_bands : drop the bands an ENVI ``bbl`` marks bad (kept, and listed in
        ``meta['bbl']``, by default).
    scale : True divides by the file's reflectance scale factor; False keeps raw values;
        a number (> 0) divides by that number instead. A scale <= 0 or not finite is refused
        (:class:`hsi.errors.OptionError`; the file's own: :class:`hsi.errors.CubeFormatError`
        naming the header key or attribute).
    band_order : "auto" reverses descending wavelengths and sorts AVIRIS-style detector
        overlaps; "strict" accepts only monotonic wavelengths.
    georef : "check" reads the georeference (``meta["georef"]``, a
        :class:`hsi.io.georef.GeoRef` or None) and refuses a broken one
        (:class:`hsi.errors.GeoRefError`); "ignore" reads none.
    units : what the values are, "reflectance", "radiance" or "unknown", overriding what the
        file declares and the undeclared rule (``meta["units"]["source"]`` is then "user"; the
        values are not changed). None (default): from the file, else by the rule of
        :func:`hsi.io.units.infer_units` (integers without a declared scale stay as stored,
        kind "unknown"; undeclared floats within -0.5 to 2 are reflectance). A bad value
        raises :class:`hsi.errors.OptionError`; reflectance (given or declared) whose values
        are far above 1 warns (:class:`hsi.errors.UnitsWarning`, see :func:`hsi.io.lazy.check_level`).

    Returns
    -------
    Cube with ``data`` (H, W, C) float32 (integer data is converted before any arithmetic;
    the file's no-data value -- ENVI ``data ignore value``, GeoTIFF nodata, HDF5 ``nodata`` -- and
    the pixels a GeoTIFF mask band masks out (``meta['nodata_mask']``) become NaN, counted in
    ``meta['n_ignored']``). NaN and
    infinite values are counted in ``meta['n_nonfinite']`` (values),
    ``meta['n_nonfinite_pixels']`` and ``meta['n_nonfinite_bands']``, and warned about
    (:class:`hsi.errors.DataQualityWarning`), as is a cube whose finite values are all equal.
    ``meta["units"]`` and ``meta["fwhm"]`` say what the values are and how wide the bands are.
    """
    lazy = open_cube(
        path, key, layout, expected_bands=expected_bands, drop_bad_bands=drop_bad_bands,
        scale=scale, band_order=band_order, georef=georef, units=units,
    )
    with lazy:
        data, n_ignored = lazy._read(slice(None), slice(None))
    meta = dict(lazy.meta, n_ignored=n_ignored, **nonfinite_counts(data))
    finite = np.isfinite(data)  # a mask, not a copy of the values
    lo = float(np.min(data, where=finite, initial=np.inf))
    hi = float(np.max(data, where=finite, initial=-np.inf))
    del finite
    meta["units"] = lazy._plan.units(lo, hi)
    _warn_quality(data, meta, lo, hi)
    return Cube(data=data, wavelengths=lazy.wavelengths, meta=meta)


def nonfinite_counts(data: np.ndarray) -> dict[str, int]:
    """``n_nonfinite`` (values), ``n_nonfinite_pixels`` (pixels with any) and ``n_nonfinite_bands``."""
    bad = ~np.isfinite(data)
    return {
        "n_nonfinite": int(bad.sum()),
        "n_nonfinite_pixels": int(bad.any(axis=-1).sum()),
        "n_nonfinite_bands": int(bad.any(axis=(0, 1)).sum()),
    }


def _warn_quality(data: np.ndarray, meta: dict, lo: float, hi: float) -> None:
    """Warn (:class:`DataQualityWarning`) about non-finite values and about a constant cube (finite range lo..hi)."""
    where = meta.get("source")
    if meta["n_nonfinite"]:
        ignored = f", {meta['n_ignored']} of them from the file's no-data value or mask" if meta.get("n_ignored") else ""
        warnings.warn(
            f"{where}: {meta['n_nonfinite']} NaN or infinite value(s){ignored} in {meta['n_nonfinite_pixels']} of "
            f"{data.shape[0] * data.shape[1]} pixels ({meta['n_nonfinite_bands']} bands); training leaves those "
            f"pixels out and fills the values in others' windows (counts in cube.meta)",
            DataQualityWarning, stacklevel=3,
        )
    if not np.isfinite(lo):
        warnings.warn(f"{where}: no finite value at all in the cube", DataQualityWarning, stacklevel=3)
    elif lo == hi:
        warnings.warn(
            f"{where}: every finite value of the cube is {float(lo)!r}; there is nothing to learn "
            f"from (a blank or wrongly decoded file?)", DataQualityWarning, stacklevel=3,
        )
