"""Turn a :class:`RawSource` into a read plan: layout -> float32 -> band order -> checks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hsi.errors import BandMismatchError, CubeFormatError, OptionError, WavelengthError
from hsi.io.bands import band_order, check_count, to_nanometers
from hsi.io.layout import detect_layout, parse_layout, to_hwc_axes
from hsi.io.source import RawSource


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
    """

    layout: str
    band_index: np.ndarray | None
    ignore_value: float | None
    scale: float | None
    band_scale: np.ndarray | None = None
    band_offset: np.ndarray | None = None

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


def build_plan(
    source: RawSource,
    layout: str | None = None,
    expected_bands: int | None = None,
    drop_bad_bands: bool = False,
    scale: bool | float = True,
    band_order_mode: str = "auto",
) -> tuple[ReadPlan, tuple[int, int, int], np.ndarray | None, dict]:
    """Decide everything about a read; returns ``(plan, out_shape, wavelengths_nm, meta)``."""
    where = str(source.path)
    _check_scale(scale)
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
    plan = ReadPlan(lay, None if identity else index, source.ignore_value, factor,
                    *(None if v is None else v.astype(np.float32) for v in (band_scale, band_offset)))
    meta = {
        "source": where,
        "format": source.format,
        "key": source.key,
        "original_dtype": np.dtype(source.array.dtype).name,
        "original_shape": shape,
        "original_layout": lay,
        "layout_reason": why,
        "transposed": lay != "HWC",
        "reversed_bands": how == "reversed",
        "sorted_bands": how == "sorted",
        "band_order": how,
        "band_index": None if identity else index.tolist(),
        "wavelength_source": wl_from,
        "wavelength_units": unit_note,
        "scale_factor": factor,
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
    if source.fwhm is not None and mult is not None and np.asarray(source.fwhm).size == n_bands:
        meta["fwhm"] = (np.asarray(source.fwhm, dtype=np.float64).ravel() * mult)[index].tolist()
    wavelengths = None if wl_nm is None else np.ascontiguousarray(wl_nm[index], dtype=np.float64)
    return plan, (h, w, int(index.size)), wavelengths, meta
