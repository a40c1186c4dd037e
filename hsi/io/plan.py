"""Turn a :class:`RawSource` into a read plan: layout -> float32 -> band order -> checks."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from hsi.errors import BandMismatchError, CubeFormatError, DataQualityWarning, OptionError, WavelengthError
from hsi.io.bands import band_order, check_count, to_nanometers
from hsi.io.layout import detect_layout, parse_layout, to_hwc_axes
from hsi.io.source import RawSource
from hsi.io.units import apply_declaration, check_units_option, declared_units, file_declaration, infer_units


@dataclass
class ReadPlan:
    """How to turn a raw window into an (h, w, C) float32 block.

    Attributes
    ----------
    layout : axis letters of the raw array ("CHW"...).
    band_index : (C_out,) indices into the raw bands (after transposing), or None for all.
    ignore_value : raw value to turn into NaN, or None.
    scale : divide by this after converting to float32, or None.
    band_scale, band_offset : (C_out,) float32 per-band ``raw * scale + offset`` (output band
        order), applied after the ignored values become NaN and before ``scale``; or None.
    value_dtype : dtype of the values as read before the cast (float32 once anything is
        scaled), what the units rule (:func:`hsi.io.units.infer_units`) sees.
    declared_units : what the file (or the caller) declares about the units, a partial or
        complete ``meta["units"]`` dict, or None.
    """

    layout: str
    band_index: np.ndarray | None
    ignore_value: float | None
    scale: float | None
    band_scale: np.ndarray | None = None
    band_offset: np.ndarray | None = None
    value_dtype: str = "float32"
    declared_units: dict | None = None
    user_units: str | None = None

    def units(self, finite_min: float | None = None, finite_max: float | None = None) -> dict[str, Any]:
        """``meta["units"]`` for values whose finite range is ``finite_min..finite_max`` (None: not scanned).

        The file's declaration and the undeclared rule (:func:`hsi.io.units.infer_units`),
        overridden by the caller's ``units=`` when given.
        """
        found = infer_units(self.value_dtype, finite_min, finite_max, self.declared_units)
        if self.user_units is None:
            return found
        user = declared_units(self.user_units, note=f"declared by the caller (units={self.user_units!r})",
                              source="user")
        return apply_declaration(found, user)

    @property
    def axes(self) -> tuple[int, int, int]:
        return to_hwc_axes(self.layout)


def _pick_candidate(source: RawSource, lengths: set[int]):
    for name, values, units in source.wavelength_candidates:
        if values.size in lengths:
            return name, values, units
    return None


def _layout(source: RawSource, layout: str | None, where: str):
    shape = tuple(source.array.shape)
    if len(shape) != 3:
        name = f" key {source.key!r}" if source.key else ""
        raise CubeFormatError(
            f"{where}{name} has shape {shape}: a {len(shape)}-D array where a 3-D cube (H x W x C) "
            f"is expected (use read_labels for a 2-D label map)"
        )
    declared = source.wavelengths
    if layout is not None:
        return parse_layout(layout, source=where), "explicit layout=", declared
    if source.layout is not None:
        return source.layout, f"fixed by the {source.format} format", declared
    if declared is not None:
        if declared.size not in shape:
            raise WavelengthError(
                f"{where}: {declared.size} wavelengths ({source.wavelength_source}) but no axis of shape "
                f"{shape} has that many bands"
            )
        found, why = detect_layout(shape, declared.size, where)
        return found, why, declared
    cand = _pick_candidate(source, set(shape))
    n_wl = cand[1].size if cand else None
    found, why = detect_layout(shape, n_wl, where)
    return found, why, None


def _wavelengths(source: RawSource, declared, n_bands: int, where: str):
    """``(nm or None, where from, unit note, multiplier to nm)`` for ``n_bands`` bands."""
    raw, units, origin = declared, source.wavelength_units, source.wavelength_source
    if raw is not None:
        check_count(np.asarray(raw).ravel(), n_bands, f"{where} ({origin})")
    else:
        cand = _pick_candidate(source, {n_bands})
        if cand is None:
            return None, None, None, None
        origin, raw, units = cand
    nm, note, mult = to_nanometers(raw, units, where)
    return nm, (origin if nm is not None else None), note, mult


def _check_scale(scale: object) -> None:
    """``scale=`` must be True, False, None or a finite non-zero number (not a string such as "yes")."""
    if scale is None or isinstance(scale, bool):
        return
    if not isinstance(scale, (int, float, np.integer, np.floating)) or not np.isfinite(scale) or scale == 0:
        raise OptionError("scale", scale, "True (the file's scale factor), False (raw values) or a finite non-zero number")


def _scale_factor(source: RawSource, scale: bool | float, where: str) -> float | None:
    """The divisor to apply: the file's (``scale=True``), none (False) or the one given."""
    if scale is True:
        factor = source.scale_factor
    elif scale is False or scale is None:
        factor = None
    else:
        factor = float(scale)
    if factor is not None and (not np.isfinite(factor) or factor == 0):
        raise CubeFormatError(f"{where}: scale factor {factor} cannot divide the data")
    return None if factor == 1.0 else factor


def _band_scaling(source: RawSource, scale: bool | float, index: np.ndarray, n_bands: int,
                  where: str) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Per-band ``(scale, offset)`` in output band order, float64; only with ``scale=True`` (the file's scaling)."""
    if scale is not True:
        return None, None
    out = []
    for name, values in (("band scale", source.band_scale), ("band offset", source.band_offset)):
        if values is None:
            out.append(None)
            continue
        values = np.asarray(values, dtype=np.float64).ravel()
        if values.size == 1:  # one scale for every band (HDF5 CF ``scale_factor``)
            values = np.full(n_bands, values[0])
        if values.size != n_bands:
            raise CubeFormatError(f"{where}: {values.size} {name} values for {n_bands} bands")
        out.append(values[index])
    return out[0], out[1]


def _check_dtype(source: RawSource, where: str) -> None:
    if np.dtype(source.array.dtype) == np.bool_:
        name = f" key {source.key!r}" if source.key else ""
        raise CubeFormatError(
            f"{where}{name}: a boolean array (a mask?), not spectral data; a cube must hold numbers "
            f"(read a mask with read_labels)"
        )


def _bad_bands(source: RawSource, index: np.ndarray, n_bands: int, drop: bool,
               where: str) -> tuple[np.ndarray, np.ndarray | None, list[int]]:
    """``(band index, bbl or None, removed bands)``: the file's bad-band list, applied when ``drop``."""
    if source.bbl is None:
        return index, None, []
    bbl = np.asarray(source.bbl).ravel().astype(np.int64)
    if bbl.size != n_bands:
        raise CubeFormatError(f"{where}: bbl has {bbl.size} entries for {n_bands} bands")
    if not drop:
        return index, bbl, []
    return index[bbl[index] != 0], bbl, [int(i) for i in index if bbl[i] == 0]




def _fwhm(source: RawSource, mult: float | None, index: np.ndarray, n_bands: int, where: str) -> list[float] | None:
    """Band widths in nm in output band order, or None; a malformed or wrong-length fwhm warns and is dropped."""
    if source.fwhm is None:
        return None
    values = np.asarray(source.fwhm, dtype=np.float64).ravel()
    good = np.isfinite(values) & (values > 0)
    problem = None
    if mult is None:
        problem = "no usable wavelengths, so its units are unknown"
    elif values.size != n_bands:
        problem = f"{values.size} values for {n_bands} bands; the counts must match"
    elif not good.all():
        bad = int(np.flatnonzero(~good)[0])
        problem = f"value {bad} is {float(values[bad])!r}; band widths must be finite and positive"
    if problem is not None:
        warnings.warn(f"{where}: fwhm ignored ({problem})", DataQualityWarning, stacklevel=5)
        return None
    return (values * mult)[index].tolist()


def _applied(source: RawSource, scale: bool | float, factor: float | None, band_scale: np.ndarray | None,
             band_offset: np.ndarray | None) -> tuple[float | None, str | None]:
    """``(divisor, what)``: the divisor applied on reading (None: none, or per-band scales that differ) in words."""
    parts, notes, divisor = [], [], 1.0
    if band_scale is not None:
        if np.all(band_scale == band_scale[0]):
            divisor /= float(band_scale[0])
            parts.append(f"scale {band_scale[0]:g} (divided by {1 / band_scale[0]:.6g})")
        else:
            divisor = None
            parts.append(f"per-band scales {band_scale.min():g} to {band_scale.max():g}")
    if band_offset is not None:
        parts.append(f"offsets {band_offset.min():g} to {band_offset.max():g}")
    if parts:
        notes.append(f"{source.scaling_origin or 'band scale/offset'} applied: {', '.join(parts)}")
    if factor is not None:
        divisor = None if divisor is None else divisor * factor
        notes.append(f"reflectance scale factor {factor:g} applied" if scale is True
                     else f"divided by {factor:g} (scale={factor:g})")
    if not notes:
        return None, None
    return (None if divisor is None or divisor == 1.0 else divisor), "; ".join(notes)


def _file_units(source: RawSource, scale: bool | float, factor: float | None, band_scale: np.ndarray | None,
                band_offset: np.ndarray | None) -> tuple[dict | None, str]:
    """``(declaration, value dtype)`` for the units rule: what the file declares and what reading applied."""
    applied, what = _applied(source, scale, factor, band_scale, band_offset)
    declared = file_declaration(source.data_units, source.data_units_origin, source.scale_factor, scale, applied, what)
    changed = factor is not None or band_scale is not None or band_offset is not None
    return declared, "float32" if changed else np.dtype(source.array.dtype).name


def _meta(source: RawSource, plan: ReadPlan, shape: tuple[int, ...], why: str, how: str, wavelength_facts: tuple,
          bbl: np.ndarray | None, removed: list[int], band_scaling: tuple, fwhm: list[float] | None) -> dict:
    """What was read and decided, as ``Cube.meta`` holds it (counts that need the values come later)."""
    index = np.arange(shape[plan.layout.index("C")]) if plan.band_index is None else plan.band_index
    wl_from, unit_note = wavelength_facts
    band_scale, band_offset = band_scaling
    return {
        "source": str(source.path),
        "format": source.format,
        "key": source.key,
        "original_dtype": np.dtype(source.array.dtype).name,
        "original_shape": shape,
        "original_layout": plan.layout,
        "layout_reason": why,
        "transposed": plan.layout != "HWC",
        "reversed_bands": how == "reversed",
        "sorted_bands": how == "sorted",
        "band_order": how,
        "band_index": None if plan.band_index is None else index.tolist(),
        "wavelength_source": wl_from,
        "wavelength_units": unit_note,
        "fwhm": fwhm,
        "units": plan.units(),
        "scale_factor": plan.scale,
        "band_scale": None if band_scale is None else band_scale.tolist(),
        "band_offset": None if band_offset is None else band_offset.tolist(),
        "ignore_value": source.ignore_value,
        "bbl": None if bbl is None else bbl[index].tolist(),
        "removed_bands": removed,
        "ignored_wavelength_vectors": [
            f"{name} ({values.size} values)" for name, values, _ in source.wavelength_candidates
            if wl_from != name
        ],
        "georef": None,  # a reader that found one sets source.extra["georef"]
        **source.extra,
    }


def build_plan(
    source: RawSource,
    layout: str | None = None,
    expected_bands: int | None = None,
    drop_bad_bands: bool = False,
    scale: bool | float = True,
    band_order_mode: str = "auto",
    units: str | None = None,
) -> tuple[ReadPlan, tuple[int, int, int], np.ndarray | None, dict]:
    """Decide everything about a read; returns ``(plan, out_shape, wavelengths_nm, meta)``.

    ``meta["units"]`` is decided without looking at values: float data that nothing declares
    is "unknown" until :func:`hsi.io.read_cube` applies the range rule (``plan.units(lo, hi)``).
    """
    where = str(source.path)
    _check_scale(scale)
    units = check_units_option(units)
    if band_order_mode not in ("auto", "strict"):
        raise OptionError("band_order", band_order_mode, "'auto' or 'strict'")
    _check_dtype(source, where)
    lay, why, declared = _layout(source, layout, where)
    shape = tuple(source.array.shape)
    n_bands = shape[lay.index("C")]
    h, w = shape[lay.index("H")], shape[lay.index("W")]
    wl_nm, wl_from, unit_note, mult = _wavelengths(source, declared, n_bands, where)
    index, how = (np.arange(n_bands), "unknown (no wavelengths)") if wl_nm is None else \
        band_order(wl_nm, where, band_order_mode)
    index, bbl, removed = _bad_bands(source, index, n_bands, drop_bad_bands, where)
    if expected_bands is not None and index.size != int(expected_bands):
        raise BandMismatchError(f"{where}: expected {int(expected_bands)} bands, found {index.size}")
    factor = _scale_factor(source, scale, where)
    identity = index.size == n_bands and np.array_equal(index, np.arange(n_bands))
    band_scale, band_offset = _band_scaling(source, scale, index, n_bands, where)
    file_units, value_dtype = _file_units(source, scale, factor, band_scale, band_offset)
    plan = ReadPlan(lay, None if identity else index, source.ignore_value, factor,
                    *(None if v is None else v.astype(np.float32) for v in (band_scale, band_offset)),
                    value_dtype=value_dtype, declared_units=file_units, user_units=units)
    meta = _meta(source, plan, shape, why, how, (wl_from, unit_note), bbl, removed, (band_scale, band_offset),
                 _fwhm(source, mult, index, n_bands, where))
    wavelengths = None if wl_nm is None else np.ascontiguousarray(wl_nm[index], dtype=np.float64)
    return plan, (h, w, int(index.size)), wavelengths, meta
