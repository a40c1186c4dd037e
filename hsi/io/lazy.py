"""Windowed reads of cubes too large for memory (HDF5 slicing, ENVI/ERDAS memory maps, GeoTIFF windows)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from hsi.errors import CubeFormatError, OptionError, UnitsWarning
from hsi.io.kind import warn_if_not_hyperspectral
from hsi.io.plan import ReadPlan, build_plan
from hsi.io.source import RawSource
from hsi.io.units import check_units_option, level_problem, typical_level

#: the value sample :func:`check_level` reads: a grid of ``SAMPLE_GRID x SAMPLE_GRID`` windows of
#: ``SAMPLE_SIDE x SAMPLE_SIDE`` pixels spread over the cube (at most 576 pixels, a few chunks)
SAMPLE_GRID, SAMPLE_SIDE = 3, 8


def _window(sl: slice, n: int, name: str, where: str) -> slice:
    """The slice clipped to ``n``; a window selecting nothing (empty or past the edge) raises."""
    if not isinstance(sl, slice):
        raise TypeError(f"{name} must be a slice, got {type(sl).__name__}")
    if sl.step not in (None, 1):
        raise OptionError(name, sl, "a contiguous window (step 1); only contiguous windows are supported")
    start, stop, _ = sl.indices(n)  # clipped to the cube as numpy slicing is
    if stop <= start:
        raise IndexError(
            f"{where}: {name}={sl!r} selects none of the cube's {n} {name} (valid indices 0..{n - 1}); "
            f"the window is empty or out of range"
        )
    return slice(start, stop)


def _span(sl: slice) -> str:
    """``"0:40"`` for a clipped window slice."""
    return f"{sl.start}:{sl.stop}"


def fwhm_array(meta: dict) -> np.ndarray | None:
    """``meta["fwhm"]`` as a (C,) float64 array, or None."""
    values = meta.get("fwhm")
    return None if values is None else np.asarray(values, dtype=np.float64)


class LazyCube:
    """A cube left on disk; :meth:`read_window` reads only the requested rows and columns.

    Windows come out exactly as the same pixels of :func:`hsi.io.read_cube` would: float32,
    H x W x C, same band order, bad-band selection, NaN for ignored values, per-band scale and
    offset (GeoTIFF) and scale factor.
    Use as a context manager (or call :meth:`close`) to release the file.

    Attributes
    ----------
    shape : (H, W, C) of the cube as ``read_cube`` returns it.
    wavelengths : (C,) float64 nm ascending, or None.
    meta : dict, as ``Cube.meta`` (without counts that need the whole cube; ``units`` decided
        without reading values, see :func:`open_cube`).
    fwhm : (C,) float64 band widths in nm, or None (from ``meta["fwhm"]``).
    """

    def __init__(self, source: RawSource, plan: ReadPlan, shape, wavelengths, meta: dict) -> None:
        self._source = source
        self._plan = plan
        self.shape = tuple(int(s) for s in shape)
        self.wavelengths = wavelengths
        self.meta = meta
        self._closed = False

    height = property(lambda self: self.shape[0])
    width = property(lambda self: self.shape[1])
    n_bands = property(lambda self: self.shape[2])

    @property
    def fwhm(self) -> np.ndarray | None:
        """(C,) float64 band full widths at half maximum in nm, aligned with the bands; None if unknown."""
        return fwhm_array(self.meta)

    def _read(self, rows: slice, cols: slice) -> tuple[np.ndarray, int]:
        plan = self._plan
        where = str(self.meta.get("source"))
        if self._closed:
            raise CubeFormatError(f"{where}: this LazyCube was closed; open it again with open_cube() to read windows")
        index = [slice(None)] * 3
        index[plan.layout.index("H")] = _window(rows, self.shape[0], "rows", where)
        index[plan.layout.index("W")] = _window(cols, self.shape[1], "cols", where)
        try:
            block = np.asarray(self._source.array[tuple(index)])
            if tuple(plan.axes) != (0, 1, 2):
                block = block.transpose(plan.axes)
        except OSError as err:
            raise CubeFormatError(f"{self._where()}: could not read rows {_span(index[plan.layout.index('H')])}, "
                                  f"cols {_span(index[plan.layout.index('W')])} ({err}); the file is corrupt "
                                  f"(a damaged compressed chunk?) or truncated") from err
        if plan.band_index is not None:
            block = block[..., plan.band_index]
        ignored = None
        if plan.ignore_value is not None:
            ignored = np.isnan(block) if np.isnan(plan.ignore_value) else block == plan.ignore_value
        masked = self._masked(index, where)
        if masked is not None:
            ignored = masked[..., None] if ignored is None else ignored | masked[..., None]
        # integer data -> float32 first; a fresh float32 read (HDF5) is kept as is, a view of a
        # memory map (ENVI, ERDAS) or of a reordered read is copied into an array of its own
        out = np.require(block, dtype=np.float32, requirements=["C", "W", "O"])
        n_ignored = 0
        if ignored is not None:
            ignored = np.broadcast_to(ignored, out.shape)
            n_ignored = int(ignored.sum())
            out[ignored] = np.nan
        if plan.band_scale is not None:
            out *= plan.band_scale
        if plan.band_offset is not None:
            out += plan.band_offset
        if plan.scale is not None:
            out /= np.float32(plan.scale)
        return out, n_ignored

    def _where(self) -> str:
        """The file, and the dataset or variable when the file holds several ("pack.h5 dataset 'a/cube'")."""
        key = self.meta.get("key")
        return f"{self.meta.get('source')}" + (f" dataset {key!r}" if key else "")

    def _masked(self, index: list[slice], where: str) -> np.ndarray | None:
        """(h, w) bool of the window's pixels the file masks out (:attr:`RawSource.invalid`), or None."""
        invalid = self._source.invalid
        if invalid is None:
            return None
        layout = self._plan.layout
        if layout[2] != "C":
            raise CubeFormatError(f"{where}: layout={layout!r} puts the bands first, but the file's mask band covers "
                                  f"its rows and columns; read it with its own layout (HWC)")
        masked = invalid(index[0], index[1])
        return masked.T if layout.index("H") > layout.index("W") else masked

    def read_window(self, rows: slice, cols: slice) -> np.ndarray:
        """(h, w, C) float32 block of rows ``rows`` and columns ``cols`` (contiguous slices)."""
        return self._read(rows, cols)[0]

    def can_read_into(self, out: np.ndarray) -> bool:
        """Whether :meth:`read_window_into` can fill ``out``: the file holds the windows as they come out.

        "As they come out": an HDF5 dataset of float32 stored ``H x W x C`` that no band
        selection, ignored value or scaling changes; ``out`` a C-contiguous float32 array.
        """
        import h5py

        array = self._source.array
        return (self._plan.layout == "HWC" and self._as_stored() and isinstance(array, h5py.Dataset)
                and array.dtype == np.float32 and out.dtype == np.float32 and out.flags.c_contiguous)

    def _as_stored(self) -> bool:
        """Whether windows are the stored values, only reordered and cast (nothing selected, masked or scaled)."""
        plan = self._plan
        return (not self._closed and plan.band_index is None and plan.ignore_value is None
                and self._source.invalid is None
                and plan.scale is None and plan.band_scale is None and plan.band_offset is None)

    def mapped_view(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(memory map, its (H, W, C) view)`` when the file's pixels can be read straight from the map, else None.

        Only for a reader that maps the file's pixels as stored (:attr:`hsi.io.source.RawSource.mapped`,
        the ``.npy`` reader) and a read that selects, masks and scales nothing: the view's
        windows cast to float32 are then exactly :meth:`read_window`'s (``hsi infer`` reads
        them without the copies, :class:`hsi.infer.sources.NpySource`).
        """
        array = self._source.array
        if not (self._source.mapped and self._as_stored()):
            return None
        return array, array.transpose(self._plan.axes)

    def read_window_into(self, rows: slice, cols: slice, out: np.ndarray, at: tuple[slice, slice]) -> None:
        """Read the window straight into ``out[at]`` (HDF5 ``read_direct``: no array of its own in between).

        Only where :meth:`can_read_into` says so; ``at`` selects the window's rows and
        columns in ``out``. The values are those of :meth:`read_window`.
        """
        where = str(self.meta.get("source"))
        rows = _window(rows, self.shape[0], "rows", where)
        cols = _window(cols, self.shape[1], "cols", where)
        try:
            self._source.array.read_direct(out, np.s_[rows, cols, :], np.s_[at[0], at[1], :])
        except OSError as err:
            raise CubeFormatError(f"{self._where()}: could not read rows {_span(rows)}, cols {_span(cols)} ({err}); "
                                  f"the file is corrupt (a damaged compressed chunk?) or truncated") from err

    def select_bands(self, index: Any) -> LazyCube:
        """The same file read with only the bands ``index`` (0-based, of this cube's bands, ascending).

        Windows, wavelengths, band widths, bad-band list and per-band scaling are those of the
        kept bands; ``meta["band_selection"]`` lists ``index``. The new cube shares the file:
        closing either closes both.
        """
        import dataclasses

        index = np.asarray(index, dtype=np.int64).reshape(-1)
        plan = self._plan
        raw = np.arange(self.shape[2]) if plan.band_index is None else np.asarray(plan.band_index)
        cut = dataclasses.replace(
            plan, band_index=raw[index],
            band_scale=None if plan.band_scale is None or np.size(plan.band_scale) == 1 else plan.band_scale[index],
            band_offset=None if plan.band_offset is None or np.size(plan.band_offset) == 1 else plan.band_offset[index])
        meta = dict(self.meta, band_selection=index.tolist(), band_index=raw[index].tolist())
        for key in ("fwhm", "bbl"):
            if meta.get(key) is not None:
                meta[key] = np.asarray(meta[key])[index].tolist()
        wavelengths = None if self.wavelengths is None else np.asarray(self.wavelengths)[index]
        return LazyCube(self._source, cut, (self.shape[0], self.shape[1], index.size), wavelengths, meta)

    def close(self) -> None:
        """Release the underlying file; later reads raise :class:`CubeFormatError`."""
        self._closed = True
        self._source.close()

    def __enter__(self) -> LazyCube:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LazyCube({self.meta.get('source')!r}, shape={self.shape})"


def open_cube(
    path: str | Path,
    key: str | None = None,
    layout: str | None = None,
    *,
    expected_bands: int | None = None,
    drop_bad_bands: bool = False,
    scale: bool | float = True,
    band_order: str = "auto",
    georef: str = "check",
    units: str | None = None,
) -> LazyCube:
    """Open a cube for windowed reading without loading it (arguments as :func:`read_cube`).

    HDF5 / MATLAB v7.3 windows are read by HDF5 slicing, ENVI and ERDAS windows through a
    read-only memory map, GeoTIFF windows through rasterio; MATLAB v5 files have no random
    access and are loaded whole.
    ``georef`` is "check" (a broken georeference raises :class:`hsi.errors.GeoRefError`) or
    "ignore" (none is read).
    A cube that looks like a colour photo (:func:`hsi.io.kind.colour_image_reason`) is warned
    about (:class:`hsi.errors.NotHyperspectralWarning`), and so are values said to be
    reflectance that a small sample shows far above 1, or a file scale > 1 that multiplies them
    to implausible levels (:func:`check_level`, :class:`hsi.errors.UnitsWarning`).
    ``meta`` carries ``units`` and ``fwhm`` as :func:`read_cube`'s does, except that no value is
    read ahead: float data that nothing declares has kind "unknown" here (``read_cube`` applies
    the range rule of :func:`hsi.io.units.infer_units` to the values it reads).
    """
    from hsi.io.readers import open_source

    check_units_option(units)  # before any file is opened
    source = open_source(path, key, georef)
    try:
        plan, shape, wavelengths, meta = build_plan(
            source, layout, expected_bands, drop_bad_bands, scale, band_order, units
        )
    except BaseException:
        source.close()
        raise
    warn_if_not_hyperspectral(meta, shape[2], wavelengths, stacklevel=3)
    lazy = LazyCube(source, plan, shape, wavelengths, meta)
    try:
        check_level(lazy, source.scaling_origin or "the file's band scale")
    except BaseException:
        lazy.close()
        raise
    return lazy


def sample_values(lazy: LazyCube) -> np.ndarray:
    """The values (as read) of a few small windows spread over the cube: a cheap sample, not the whole cube."""
    h, w = lazy.shape[:2]
    rows, cols = min(SAMPLE_SIDE, h), min(SAMPLE_SIDE, w)
    starts = [sorted({int((n - side) * (i + 0.5) / SAMPLE_GRID) for i in range(SAMPLE_GRID)})
              for n, side in ((h, rows), (w, cols))]
    blocks = [lazy.read_window(slice(r, r + rows), slice(c, c + cols)) for r in starts[0] for c in starts[1]]
    return np.concatenate([b.reshape(-1) for b in blocks])


def _claimed_reflectance(plan: ReadPlan) -> str | None:
    """Who says the values are reflectance: the caller's ``units=``, else the file; None when nobody does."""
    if plan.user_units is not None:
        return "units='reflectance' was given" if plan.user_units == "reflectance" else None
    declared = plan.declared_units or {}
    if declared.get("kind") != "reflectance":
        return None
    return f"the file declares reflectance ({declared.get('note') or 'its header'})"


def check_level(lazy: LazyCube, scaling_origin: str) -> None:
    """Warn (:class:`~hsi.errors.UnitsWarning`) when a sample of the values does not fit what they are said to be.

    Only where something is said: reflectance (declared by the file or ``units=``), or a file
    scale > 1 that multiplies (HDF5 CF ``scale_factor``, GDAL band scale); then a few small
    windows are read (:func:`sample_values`) and judged by :func:`hsi.io.units.level_problem`.
    """
    plan = lazy._plan
    claimed = _claimed_reflectance(plan)
    multiplier = None if plan.band_scale is None else float(np.max(plan.band_scale))
    if claimed is None and not (multiplier is not None and multiplier > 1):
        return
    problem = level_problem(typical_level(sample_values(lazy)), claimed, multiplier, scaling_origin, plan.scale)
    if problem is not None:
        warnings.warn(f"{lazy._where()}: {problem}", UnitsWarning, stacklevel=3)
