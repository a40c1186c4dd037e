"""Turn a :class:`RawSource` into a read plan: layout -> float32 -> band order -> checks."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from hsi.errors import (BandMismatchError, CubeFormatError, DataQualityWarning, OptionError, UnitsWarning,
                        WavelengthError)
from hsi.io.bands import band_order, check_count, to_nanometers
from hsi.io.layout import detect_layout, parse_layout, to_hwc_axes
from hsi.io.source import RawSource
from hsi.io.units import (apply_declaration, check_units_option, declared_units, file_declaration, infer_units,
                          parse_units_text)


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
    nm, note, mult = to_nanometers(raw, units, f"{where} ({origin})" if origin else where)
    return nm, (origin if nm is not None else None), note, mult


def _check_scale(scale: object) -> None:
    """``scale=`` must be True, False, None or a finite number > 0 (not a string such as "yes", nor -10000)."""
    if scale is None or isinstance(scale, bool):
        return
    if not isinstance(scale, (int, float, np.integer, np.floating)) or not np.isfinite(scale) or scale <= 0:
        raise OptionError("scale", scale, "True (the file's scale factor), False (raw values) or a finite number > 0 "
                                          "the values are divided by (e.g. 10000)")


def _scale_factor(source: RawSource, scale: bool | float, where: str) -> float | None:
    """The divisor to apply: the file's (``scale=True``), none (False) or the one given.

    The file's factor must be a finite number > 0 where it is applied: a negative one would flip
    the sign of every value, and reading on with it would train on nonsense.
    """
    if scale is True:
        factor = source.scale_factor
    elif scale is False or scale is None:
        factor = None
    else:
        factor = float(scale)
    if factor is not None and not (np.isfinite(factor) and factor > 0):
        origin = source.scale_factor_origin or "the file's reflectance scale factor"
        raise CubeFormatError(f"{where}: {origin} is {factor:g}; expected a finite number > 0 (reflectance = stored "
                              f"value / factor); read with scale=False (values as stored) or scale=N (--scale N) to "
                              f"divide by N instead")
    return None if factor == 1.0 else factor


def _check_declaration(source: RawSource, scale: bool | float, units: str | None, where: str) -> None:
    """Refuse a file that declares radiance and a reflectance scale factor, where both would be used.

    A reflectance scale factor says the values are reflectance x factor; a data-units text of
    radiance says they are not reflectance. No reading of the values satisfies both, so the
    caller says which is true: ``units=`` (with ``scale=N`` if the factor is not the divisor)
    or ``scale=False``.
    """
    if scale is not True or units is not None or source.scale_factor is None:
        return
    if parse_units_text(source.data_units) != "radiance":
        return
    origin = source.scale_factor_origin or "the file's reflectance scale factor"
    raise CubeFormatError(
        f"{where}: {source.data_units_origin or 'the file'} says {source.data_units!r} (radiance) but "
        f"{origin} is {source.scale_factor:g} (a divisor for reflectance); the file contradicts itself. Say what "
        f"the values are: units='radiance' (--units radiance; add scale=1 / --scale 1 to keep them as stored "
        f"instead of divided by {source.scale_factor:g}), or units='reflectance' (--units reflectance) if they are "
        f"reflectance x {source.scale_factor:g}")


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




#: band widths (nm) below this are not those of an imaging spectrometer: widths in another unit than the wavelengths
MIN_FWHM_NM = 0.1


def implausible_fwhm(fwhm_nm: np.ndarray, wavelengths_nm: np.ndarray) -> str | None:
    """Why band widths (nm) do not fit band centres (nm), or None: narrower than :data:`MIN_FWHM_NM`, or wider
    than the whole wavelength range (widths in another unit than the wavelengths, e.g. µm beside nm)."""
    lo, hi = float(np.min(fwhm_nm)), float(np.max(fwhm_nm))
    span = float(np.max(wavelengths_nm) - np.min(wavelengths_nm))
    shown = f"band widths {lo:.4g}-{hi:.4g} nm beside wavelengths {np.min(wavelengths_nm):.4g}-" \
            f"{np.max(wavelengths_nm):.4g} nm"
    if lo < MIN_FWHM_NM:
        return f"{shown}: narrower than {MIN_FWHM_NM:g} nm; in another unit than the wavelengths (micrometres?)"
    if wavelengths_nm.size > 1 and hi > span:
        return f"{shown}: wider than the whole range ({span:.4g} nm); in another unit than the wavelengths?"
    return None


def _fwhm(source: RawSource, mult: float | None, index: np.ndarray, wl_nm: np.ndarray | None,
          where: str) -> list[float] | None:
    """Band widths in nm in output band order, or None; a malformed, wrong-length or implausible fwhm warns and is
    dropped (implausible: :func:`implausible_fwhm`, a :class:`~hsi.errors.UnitsWarning`)."""
    if source.fwhm is None:
        return None
    values = np.asarray(source.fwhm, dtype=np.float64).ravel()
    good = np.isfinite(values) & (values > 0)
    n_bands = 0 if wl_nm is None else wl_nm.size
    problem, category = None, DataQualityWarning
    if mult is None or wl_nm is None:
        problem = "no usable wavelengths, so its units are unknown"
    elif values.size != n_bands:
        problem = f"{values.size} values for {n_bands} bands; the counts must match"
    elif not good.all():
        bad = int(np.flatnonzero(~good)[0])
        problem = f"value {bad} is {float(values[bad])!r}; band widths must be finite and positive"
    else:
        problem, category = implausible_fwhm(values * mult, wl_nm), UnitsWarning
    if problem is not None:
        warnings.warn(f"{where}: fwhm ignored ({problem})", category, stacklevel=5)
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
    _check_declaration(source, scale, units, where)
    factor = _scale_factor(source, scale, where)
    identity = index.size == n_bands and np.array_equal(index, np.arange(n_bands))
    band_scale, band_offset = _band_scaling(source, scale, index, n_bands, where)
    file_units, value_dtype = _file_units(source, scale, factor, band_scale, band_offset)
    plan = ReadPlan(lay, None if identity else index, source.ignore_value, factor,
                    *(None if v is None else v.astype(np.float32) for v in (band_scale, band_offset)),
                    value_dtype=value_dtype, declared_units=file_units, user_units=units)
    meta = _meta(source, plan, shape, why, how, (wl_from, unit_note), bbl, removed, (band_scale, band_offset),
                 _fwhm(source, mult, index, wl_nm, where))
    wavelengths = None if wl_nm is None else np.ascontiguousarray(wl_nm[index], dtype=np.float64)
    return plan, (h, w, int(index.size)), wavelengths, meta
