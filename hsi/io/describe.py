"""Plain-text facts about a cube or a label map: what ``hsi inspect`` prints.

:func:`describe_cube` reports the chosen key, shape, layout decision, storage interleave,
wavelengths, any scale applied, the units (kind, scale, where from), the band widths (fwhm),
the georeference (CRS, transform) and nodata value,
non-finite and negative counts, constant bands and
per-band ranges; :func:`describe_labels` the class counts of a label map (a 2-D array that
looks like data rather than classes is refused by :func:`hsi.io.read_labels` before).
"""

from __future__ import annotations

import warnings
from typing import IO, Any

import numpy as np

from hsi.io.labels import MAX_CLASSES  # re-exported: the one limit read_labels applies

__all__ = ["MAX_CLASSES", "describe_cube", "describe_fwhm", "describe_georef", "describe_labels", "describe_scale",
           "describe_units"]

#: Per-class counts printed for at most this many classes.
MAX_SHOWN = 30


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _band_stats(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN bands -> NaN, reported as such
        flat = data.reshape(-1, data.shape[-1])
        finite = np.where(np.isfinite(flat), flat, np.nan)
        return np.nanmin(finite, axis=0), np.nanmax(finite, axis=0)


def _per_band(values: list[float] | None) -> str:
    """``1e-04`` when all bands share it, else the first values."""
    if len(set(values)) == 1:
        return f"{_fmt(values[0])} (all bands)"
    return ", ".join(_fmt(v) for v in values[:6]) + (", ..." if len(values) > 6 else "")


def describe_scale(meta: dict[str, Any]) -> str:
    """A plain statement of the scaling the reader applied ("divided by 10000", or "none")."""
    factor = meta.get("scale_factor")
    steps = []
    if meta.get("band_scale") is not None:
        steps.append(f"multiplied by the band scale {_per_band(meta['band_scale'])}")
    if meta.get("band_offset") is not None:
        steps.append(f"plus the band offset {_per_band(meta['band_offset'])}")
    if factor and float(factor) != 1.0:
        steps.append(f"divided by {_fmt(float(factor))} (the file's reflectance scale factor)")
    if not steps:
        return "none applied (values as stored, cast to float32)"
    return ", ".join(steps) + ", after the cast to float32"


def describe_units(units: dict[str, Any] | None) -> str:
    """``<kind>[, scale <s>] (<source>: <note>)`` of a ``meta["units"]`` dict ("not recorded" without one)."""
    if not units:
        return "not recorded"
    scale = "" if units.get("scale") is None else f", scale {_fmt(float(units['scale']))}"
    return f"{units.get('kind')}{scale} ({units.get('source')}: {units.get('note')})"


def describe_fwhm(fwhm: Any) -> str:
    """The band widths' range in nm (``meta["fwhm"]``), or "unknown"."""
    if fwhm is None or len(fwhm) == 0:
        return "unknown"
    values = np.asarray(fwhm, dtype=np.float64)
    if values.min() == values.max():
        return f"{_fmt(values[0])} nm (all {values.size} bands)"
    return f"{_fmt(values.min())} - {_fmt(values.max())} nm ({values.size} bands)"


def describe_georef(georef: Any, out: IO[str], nodata: float | None = None, problem: str | None = None) -> None:
    """Print the CRS and pixel grid of a :class:`hsi.io.georef.GeoRef` (or that there is none) and the nodata value.

    Users open the maps next to other layers, so the grid they will land on is worth a look
    before anything is trained on the file. ``problem``: why the file's georeference could
    not be used (printed instead of the grid).
    """
    if problem is not None:
        print(f"georeference: unusable ({problem})", file=out)
    elif georef is None:
        print("georeference: none (pixel coordinates only)", file=out)
    else:
        print(f"georeference: {georef.describe()}", file=out)
        print("transform (a, b, c, d, e, f): (" + ", ".join(f"{v:.10g}" for v in georef.transform) + ")", file=out)
    print(f"nodata: {'none' if nodata is None else _fmt(float(nodata))}", file=out)


def _print_wavelengths(cube: Any, meta: dict[str, Any], out: IO[str]) -> None:
    wl = cube.wavelengths
    if wl is None:
        print("wavelengths: none found", file=out)
    else:
        print(f"wavelengths: {_fmt(wl[0])} - {_fmt(wl[-1])} nm, {wl.size} bands, ascending; file order: "
              f"{meta['band_order']} ({meta['wavelength_source']}; {meta['wavelength_units']})", file=out)
    if meta.get("ignored_wavelength_vectors"):
        print(f"wavelength vectors not used (length differs from the band count): "
              f"{', '.join(meta['ignored_wavelength_vectors'])}", file=out)
    if meta.get("bbl") is not None:
        bad = [i for i, v in enumerate(meta["bbl"]) if v == 0]
        print(f"bad bands (bbl): {len(bad)} {bad[:20]}", file=out)


def _print_ranges(data: np.ndarray, wl: np.ndarray | None, out: IO[str]) -> None:
    c = data.shape[-1]
    bmin, bmax = _band_stats(data)
    constant = np.flatnonzero(bmin == bmax).tolist()
    print(f"constant bands: {len(constant)}" + (f" {constant[:20]}" if constant else ""), file=out)
    qs = (0, 25, 50, 75, 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        qmin, qmax = np.nanpercentile(bmin, qs), np.nanpercentile(bmax, qs)
    print("per-band min, quantiles 0/25/50/75/100%: " + " / ".join(_fmt(v) for v in qmin), file=out)
    print("per-band max, quantiles 0/25/50/75/100%: " + " / ".join(_fmt(v) for v in qmax), file=out)
    for b in sorted(set(range(min(3, c))) | set(range(max(0, c - 3), c))):
        where = f" {_fmt(wl[b])} nm" if wl is not None else ""
        print(f"  band {b}{where}: min {_fmt(bmin[b])} max {_fmt(bmax[b])}", file=out)


def describe_cube(cube: Any, out: IO[str]) -> None:
    """Print the facts about a :class:`hsi.io.Cube` to ``out``."""
    meta, data = cube.meta, cube.data
    h, w, c = cube.shape
    if meta.get("key") is not None:
        print(f"chosen key: {meta['key']}", file=out)
    print(f"shape (H x W x C): {h} x {w} x {c}  (float32; original dtype {meta['original_dtype']}, "
          f"original shape {' x '.join(map(str, meta['original_shape']))})", file=out)
    print(f"layout: {meta['original_layout']} -> HWC ({meta['layout_reason']})", file=out)
    if meta.get("interleave"):
        print(f"interleave: {meta['interleave']} (as stored in the file)", file=out)
    _print_wavelengths(cube, meta, out)
    print(f"scale: {describe_scale(meta)}", file=out)
    print(f"units: {describe_units(meta.get('units'))}", file=out)
    print(f"fwhm: {describe_fwhm(meta.get('fwhm'))}", file=out)
    describe_georef(meta.get("georef"), out, meta.get("ignore_value"), meta.get("georef_problem"))
    if meta.get("nodata_mask"):
        print(f"nodata mask: {meta['nodata_mask']} (masked pixels read as NaN, left out like nodata)", file=out)
    n_nan, n_inf = int(np.isnan(data).sum()), int(np.isinf(data).sum())
    print(f"NaN: {n_nan}  Inf: {n_inf}  (ignored values -> NaN: {meta.get('n_ignored', 0)})", file=out)
    with np.errstate(invalid="ignore"):
        print(f"negative values: {int((data < 0).sum())}", file=out)
    _print_ranges(data, cube.wavelengths, out)


def describe_labels(labels: np.ndarray, out: IO[str], key: str | None = None) -> None:
    """Print the facts about an (H, W) label map (chosen ``key`` if known)."""
    if key is not None:
        print(f"chosen key: {key}", file=out)
    values, counts = np.unique(labels[labels != 0], return_counts=True)
    print(f"label map: {labels.shape[0]} x {labels.shape[1]}, {values.size} classes, "
          f"{int(counts.sum())} labeled pixels, {int((labels == 0).sum())} unlabeled", file=out)
    pairs = [f"{v}: {n}" for v, n in zip(values[:MAX_SHOWN].tolist(), counts[:MAX_SHOWN].tolist())]
    more = f", ... ({values.size - MAX_SHOWN} more)" if values.size > MAX_SHOWN else ""
    print("per class: " + ", ".join(pairs) + more, file=out)
