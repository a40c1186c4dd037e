"""What a format reader hands to the common pipeline: a raw 3-D array plus file metadata."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


class ReversedAxes:
    """Read-only view of an HDF5 dataset with its axes reversed (MATLAB v7.3 orientation).

    MATLAB writes column-major arrays, so HDF5 sees them transposed; reversing every axis
    restores the shape MATLAB shows (PaviaU ground truth: HDF5 340 x 610 -> 610 x 340).
    Indexing takes slices in the reversed order and reads only that window from disk.
    """

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset
        self.shape = tuple(dataset.shape[::-1])
        self.dtype = dataset.dtype

    def __getitem__(self, index: tuple[slice, ...]) -> np.ndarray:
        block = np.asarray(self.dataset[tuple(index)[::-1]])
        return block.transpose(tuple(range(block.ndim))[::-1])


@dataclass
class RawSource:
    """A cube as a format reader found it, before layout, band order and scaling.

    Attributes
    ----------
    path : Path of the file read (the binary for ENVI).
    format : "mat-v5", "mat-v7.3", "hdf5", "envi", "erdas", "geotiff", "npy" (the registered readers'
        name, :mod:`hsi.io.readers`, or a variant of it).
    array : object with ``shape`` (3-D), ``dtype`` and slice indexing (ndarray, h5py
        dataset, memmap, :class:`ReversedAxes`).
    key : variable / dataset name, or None for single-image formats.
    layout : layout of ``array`` when the format fixes it (ENVI, ERDAS: "HWC"), else None.
    wavelengths : wavelengths declared for this array (file order, file units); their count
        must equal the band count.
    wavelength_candidates : ``(description, values, units)`` vectors found by name elsewhere
        in the file (``"variable 'wl'"``); used only when their length matches a band axis.
    scale_factor : divisor of the whole cube (ENVI ``reflectance scale factor``), or None; kept as
        the file says it (a value <= 0 or non-finite is refused when it would be applied).
    scale_factor_origin : where ``scale_factor`` was found ("ENVI header x.hdr field 'reflectance
        scale factor'"), for messages; None when the reader does not say.
    band_scale, band_offset : per-band ``value = raw * scale + offset`` (GDAL's band scale
        and offset, in file band order), or None; applied, like ``scale_factor``, only with
        ``read_cube(scale=True)``.
    fwhm : band widths declared with the wavelengths (file order, the wavelengths' units), or None.
    data_units, data_units_origin : the file's data-units text ("W/(m2 sr um)", "reflectance")
        and where it was found ("ENVI header field 'data units'"), or None
        (:func:`hsi.io.units.parse_units_text` reads it).
    scaling_origin : where ``band_scale``/``band_offset`` come from ("GDAL band scale/offset"),
        for ``meta["units"]``'s note.
    mapped : True when ``array`` is a read-only memory map holding the file's pixels as they are read (a
        ``.npy`` file), so a caller may read its windows straight from the file (``hsi infer`` does).
    invalid : ``invalid(rows, cols) -> (h, w) bool``, the pixels of a window (slices of the
        array's first two axes) that the file masks out (a GeoTIFF mask band), or None. They are
        no-data: every band of them reads as NaN, as an ``ignore_value`` would.
    """

    path: Path
    format: str
    array: Any
    key: str | None = None
    layout: str | None = None
    wavelengths: np.ndarray | None = None
    wavelength_units: str | None = None
    wavelength_source: str | None = None
    wavelength_candidates: list[tuple[str, np.ndarray, str | None]] = field(default_factory=list)
    fwhm: np.ndarray | None = None
    bbl: np.ndarray | None = None
    ignore_value: float | None = None
    scale_factor: float | None = None
    scale_factor_origin: str | None = None
    band_scale: np.ndarray | None = None
    band_offset: np.ndarray | None = None
    data_units: str | None = None
    data_units_origin: str | None = None
    scaling_origin: str | None = None
    extra: dict = field(default_factory=dict)
    mapped: bool = False
    invalid: Callable[[slice, slice], np.ndarray] | None = None
    closer: Callable[[], None] | None = None

    def close(self) -> None:
        """Release the file handle, if any."""
        if self.closer is not None:
            self.closer()
            self.closer = None
