"""Wavelength units and band order: everything that turns file wavelengths into ascending nm, and the
bands a false-colour composite shows (:func:`pick_rgb_bands`, chosen by wavelength), and the bands a user keeps
(:func:`bands_in_range` for ``--wavelength-range``, :func:`parse_band_spec` for ``hsi convert --bands``)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from hsi.errors import DataQualityWarning, OptionError, ShapeMismatchError, WavelengthError

_TO_NM = {
    "nm": 1.0, "nanometer": 1.0, "nanometers": 1.0, "nanometre": 1.0, "nanometres": 1.0,
    "um": 1e3, "µm": 1e3, "micrometer": 1e3, "micrometers": 1e3, "micrometre": 1e3,
    "micrometres": 1e3, "micron": 1e3, "microns": 1e3,
    "mm": 1e6, "millimeter": 1e6, "millimeters": 1e6,
    "m": 1e9, "meter": 1e9, "meters": 1e9,
}
_UNKNOWN = {"", "unknown", "none", "n/a"}

#: band centres (nm) looked for by :func:`pick_rgb_bands`: red, green, blue
RGB_NM = (640.0, 550.0, 460.0)

#: Detector-overlap sorting (see :func:`band_order`) needs runs at least this long.
MIN_RUN = 8
MAX_RUNS = 8


def is_length_unit(units: str | None) -> bool:
    """Whether ``units`` names a length ("nm", "Micrometers"...) that wavelengths can be converted from."""
    return (units or "").strip().lower() in _TO_NM


#: imaging bands lie between these (nm): labelled wavelengths wholly outside are in another unit than the label says
OPTICAL_NM: tuple[float, float] = (30.0, 1e5)


def _check_label(arr: np.ndarray, units: str, mult: float, source: str) -> None:
    """Refuse labelled wavelengths that convert to no imaging band: all below 30 nm or all beyond 100 µm.

    Values of 0.4-2.5 labelled "nm" are micrometres; values of 400-2500 labelled "Micrometers"
    are nanometres. Converting either as labelled would put every band outside the optical
    range and resampling, ``--wavelength-range`` and band picking would be silently wrong.
    """
    nm = arr * mult
    if not arr.size or (nm.max() >= OPTICAL_NM[0] and nm.min() <= OPTICAL_NM[1]):
        return
    shown = f"wavelengths {arr.min():.6g}-{arr.max():.6g} labelled {units!r} are {nm.min():.4g}-{nm.max():.4g} nm"
    where = "shorter than" if nm.max() < OPTICAL_NM[0] else "longer than"
    guess = next((name for name, lo, hi in (("nanometres", 100, 30000), ("micrometres", 0.1, 30))
                  if lo <= arr.min() and arr.max() <= hi), None)
    looks = f"they look like {guess}" if guess else "their unit looks wrong"
    raise WavelengthError(f"{source}: {shown}, {where} any imaging band (30 nm to 100 µm); {looks}: correct the "
                          f"file's wavelength units")


def to_nanometers(values, units: str | None, source: str) -> tuple[np.ndarray | None, str, float | None]:
    """Convert wavelengths to float64 nm; returns ``(nm or None, how, multiplier)``.

    Known ``units`` are converted; missing/"Unknown" units are guessed: values below 100 are
    micrometres (nm values of optical sensors are > 300), others nanometres. Units that are
    not a length ("Index", "Wavenumber", "GHz") give ``None`` with a warning.

    Raises
    ------
    WavelengthError
        A wavelength that is not finite, or is <= 0; labelled wavelengths that the label puts
        wholly outside 30 nm to 100 µm (micrometres labelled nm, nanometres labelled µm).
    """
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size and not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise WavelengthError(f"{source}: wavelength {bad} is not finite ({arr[bad]})")
    if arr.size and np.any(arr <= 0):
        bad = int(np.flatnonzero(arr <= 0)[0])
        raise WavelengthError(f"{source}: wavelength {bad} is {arr[bad]:g}; wavelengths must be > 0 (band centres)")
    key = (units or "").strip().lower()
    if key in _TO_NM:
        _check_label(arr, str(units), _TO_NM[key], source)
        return arr * _TO_NM[key], f"units {units!r}", _TO_NM[key]
    if key in _UNKNOWN:
        if arr.size and np.nanmax(np.abs(arr)) < 100:
            return arr * 1e3, "values < 100 taken as micrometres", 1e3
        return arr, "values >= 100 taken as nanometres", 1.0
    warnings.warn(f"{source}: wavelength units {units!r} are not a length; wavelengths ignored", DataQualityWarning,
                  stacklevel=3)
    return None, f"units {units!r} not convertible", None


def _first_break(wl: np.ndarray, ascending: bool) -> int:
    diffs = np.diff(wl)
    bad = diffs <= 0 if ascending else diffs >= 0
    return int(np.flatnonzero(bad)[0]) + 1


def _overlap_runs(wl: np.ndarray) -> list[tuple[int, int]] | None:
    """Split into strictly ascending runs if they look like overlapping detectors."""
    starts = [0] + [i + 1 for i in np.flatnonzero(np.diff(wl) <= 0)]
    bounds = list(zip(starts, starts[1:] + [wl.size]))
    if not 2 <= len(bounds) <= MAX_RUNS or any(stop - start < MIN_RUN for start, stop in bounds):
        return None
    for (prev_start, _), (start, _) in zip(bounds, bounds[1:]):
        if wl[start] <= wl[prev_start]:
            return None  # restarts below the previous detector: not an overlap
    if np.unique(wl).size != wl.size:
        return None
    return bounds


def band_order(wl: np.ndarray, source: str, mode: str = "auto") -> tuple[np.ndarray, str]:
    """Indices that put the bands in ascending wavelength order, and what was done.

    ``"ascending"``: nothing to do. ``"reversed"``: strictly descending, bands reversed.
    ``"sorted"`` (``mode="auto"`` only): the wavelengths are a few strictly ascending runs of
    at least ``MIN_RUN`` bands, each starting inside the previous run's range with no
    duplicate value -- the detector overlap of AVIRIS (Jasper Ridge: 664 nm follows 676 nm)
    -- and the bands are stably sorted. Anything else raises :class:`WavelengthError` naming
    the first offending index. ``mode="strict"`` allows only monotonic wavelengths.
    """
    if mode not in ("auto", "strict"):
        raise OptionError("band_order", mode, "'auto' or 'strict'")
    n = wl.size
    idx = np.arange(n)
    if n < 2 or np.all(np.diff(wl) > 0):
        return idx, "ascending"
    if np.all(np.diff(wl) < 0):
        return idx[::-1].copy(), "reversed"
    if mode == "auto" and _overlap_runs(wl) is not None:
        return np.argsort(wl, kind="stable"), "sorted"
    i = _first_break(wl, ascending=wl[1] > wl[0])
    raise WavelengthError(
        f"{source}: wavelengths are not strictly monotonic: index {i} ({wl[i]:g} nm) after "
        f"index {i - 1} ({wl[i - 1]:g} nm); expected strictly ascending or descending values"
    )


def check_count(wl: np.ndarray, n_bands: int, source: str) -> None:
    """Raise :class:`WavelengthError` when there are not exactly ``n_bands`` wavelengths."""
    if wl.size != n_bands:
        raise WavelengthError(f"{source}: {wl.size} wavelengths for {n_bands} bands; the counts must match")


def pick_rgb_bands(wavelengths: Any | None, n_bands: int) -> list[int]:
    """Band indices for a false-colour composite (red, green, blue).

    With wavelengths that span :data:`RGB_NM`, the bands nearest 640, 550 and 460 nm; with
    wavelengths that do not (an infrared sensor), or none, the bands at 3/4, 1/2 and 1/4 of
    the band range (in order of increasing wavelength, so red stays the longest).
    """
    n = int(n_bands)
    if n < 1:
        raise OptionError("n_bands", n_bands, "an integer >= 1 (pick_rgb_bands)")
    if wavelengths is not None:
        wl = np.asarray(wavelengths, dtype=np.float64)
        if wl.shape != (n,):
            raise ShapeMismatchError(f"pick_rgb_bands: {wl.size} wavelengths for {n} bands")
        if wl.min() <= RGB_NM[2] and wl.max() >= RGB_NM[0]:
            return [int(np.argmin(np.abs(wl - target))) for target in RGB_NM]
    return [int(round(f * (n - 1))) for f in (0.75, 0.5, 0.25)]


def in_wavelength_range(wavelengths: Any, wavelength_range: Any) -> np.ndarray:
    """``(C,)`` bool: the bands whose centre lies within ``wavelength_range`` (``MIN <= centre <= MAX``, nm): the one
    rule of ``--wavelength-range``."""
    lo, hi = (float(v) for v in wavelength_range)
    wl = np.asarray(wavelengths, dtype=np.float64).reshape(-1)
    return (wl >= lo) & (wl <= hi)


def bands_in_range(wavelengths: Any | None, wavelength_range: Any, where: str,
                   option: str = "wavelength_range") -> np.ndarray:
    """Indices of the bands whose centre lies within ``wavelength_range`` (closed, nm), ascending.

    The rule of ``--wavelength-range`` (the DataModule's ``wavelength_range``, ``hsi convert``):
    :func:`in_wavelength_range`.

    Parameters
    ----------
    wavelengths : (C,) array or None
        Band centres in nm.
    wavelength_range : (MIN, MAX)
        The range in nm, ``MIN < MAX`` (checked at parse time by :func:`hsi._checks.wavelength_range`).
    where : str
        What the bands belong to, for messages ("scene 'salinas'", "cube.hdr").
    option : str
        The option that asked for the range, for messages.

    Returns
    -------
    (C_kept,) int64 array, at least one index.

    Raises
    ------
    OptionError
        ``wavelengths`` is None (the bands cannot be chosen by wavelength), or no band centre lies in the range.
    """
    lo, hi = (float(v) for v in wavelength_range)
    shown = (lo, hi)
    if wavelengths is None:
        raise OptionError(option, shown, f"a cube with band centre wavelengths; {where} declares none (give its "
                                         "wavelengths, or choose bands by index)")
    wl = np.asarray(wavelengths, dtype=np.float64).reshape(-1)
    keep = np.flatnonzero(in_wavelength_range(wl, shown)).astype(np.int64)
    if keep.size == 0:
        raise OptionError(option, shown, f"a range holding at least one band of {where}, whose {wl.size} band(s) "
                                         f"lie at {wl.min():.2f}-{wl.max():.2f} nm")
    return keep


def parse_band_spec(spec: str | Any, n_bands: int, option: str = "bands") -> np.ndarray:
    """The 0-based band indices of ``spec`` ("0-99,120,130-140", or a sequence of ints), ascending, each once.

    Ranges are inclusive (``130-140`` is 11 bands). Out-of-range or malformed entries raise
    :class:`~hsi.errors.OptionError` naming ``option``, what was expected and what was found.
    """
    expected = f"0-based band indices and inclusive ranges below {n_bands} (the cube's band count), e.g. 0-99,120"
    if isinstance(spec, str):
        picked: list[int] = []
        for part in (p.strip() for p in spec.split(",")):
            first, dash, last = part.partition("-")
            if not first.strip().isdigit() or (dash and not last.strip().isdigit()):
                raise OptionError(option, spec, f"{expected}; {part!r} is not an index or a range")
            a, b = int(first), int(last) if dash else int(first)
            if b < a:
                raise OptionError(option, spec, f"{expected}; range {part!r} runs backwards")
            picked.extend(range(a, b + 1))
    else:
        picked = [int(i) for i in np.asarray(spec).reshape(-1)]
    index = np.unique(np.asarray(picked, dtype=np.int64))
    bad = index[(index < 0) | (index >= n_bands)]
    if index.size == 0 or bad.size:
        found = "no band" if index.size == 0 else f"index {int(bad[0])}"
        raise OptionError(option, spec, f"{expected}; found {found}")
    return index
