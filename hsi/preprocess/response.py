"""Band resampling by spectral response: a (C_to, C_from) matrix that brings a cube onto new bands.

A cube ``x`` (..., C_from) goes onto the target bands as ``x @ W.T`` (:func:`apply_response`),
where ``W = response_matrix(wl_from, wl_to, fwhm_to)`` has rows summing to 1. Three methods
(:func:`resample_method` names the one used, for ``metrics.json``):

* ``"identity"``: both grids have the same centres (each within :data:`SAME_NM`): ``W`` is
  exactly the identity, whatever the band widths (a cube on the grid is never smoothed).
* ``"gaussian"`` (``fwhm_to`` known): the source spectrum is the piecewise-linear function
  through its band centres, defined only between the first and the last centre. Target band
  ``j`` sees it through a Gaussian response of centre ``wl_to[j]`` and FWHM ``fwhm_to[j]``,
  cut at +-3 sigma and at the source range, and renormalised over what is left. Each weight
  is the exact integral (error function, no quadrature) of that response times the source
  band's linear-interpolation hat function. Narrow source bands are averaged into a broad
  target band instead of two of them being picked.
* ``"linear"`` (no ``fwhm_to``): linear interpolation between the two nearest source centres
  (a target on a source centre takes that band as is).

Nothing is deconvolved: a target narrower than the source bands gets the same integral, which
then is close to plain interpolation; information the source bands averaged away is not
recovered. Only numpy is used.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from hsi.errors import BandMismatchError, OptionError, WavelengthError

__all__ = ["SAME_NM", "TRUNCATE_SIGMA", "apply_response", "dropped_bands", "grid_summary", "resample_method",
           "response_matrix"]

#: band centres closer than this (nm) are the same band
SAME_NM = 1e-6
#: the Gaussian responses are cut at this many standard deviations from their centre
TRUNCATE_SIGMA = 3.0
#: sigma of a Gaussian per unit of FWHM: 1 / (2 sqrt(2 ln 2))
FWHM_TO_SIGMA = 1.0 / (2.0 * math.sqrt(2.0 * math.log(2.0)))

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _grid(wl: ArrayLike, what: str) -> np.ndarray:
    """``wl`` as a finite (C,) float64 array with at least one band (:class:`WavelengthError` if not)."""
    arr = np.asarray(wl, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise WavelengthError(f"{what}: expected a non-empty 1-D array of band centres (nm), got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise WavelengthError(f"{what}: band {bad[0]} has centre {arr[bad[0]]} nm; every centre must be finite")
    return arr


def _widths(fwhm: ArrayLike | None, wl: np.ndarray, what: str) -> np.ndarray | None:
    """``fwhm`` checked against its band centres: same length, finite, positive."""
    if fwhm is None:
        return None
    arr = np.asarray(fwhm, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(wl.shape, float(arr))
    if arr.shape != wl.shape:
        raise WavelengthError(f"{what}: {arr.size} FWHM values for {wl.size} band centres; give one per band")
    bad = np.flatnonzero(~(np.isfinite(arr) & (arr > 0)))
    if bad.size:
        i = int(bad[0])
        raise WavelengthError(f"{what}: band {i} ({wl[i]:.3f} nm) has FWHM {arr[i]}; "
                              "every FWHM must be a finite number of nm > 0")
    return arr


#: the narrowest response (nm) a residual width is given: a target no broader than its source band is
#: then interpolated (a Gaussian this narrow integrates the linear interpolant at its centre)
MIN_RESIDUAL_NM = 1e-3


def _residual_widths(width_to: np.ndarray, dst: np.ndarray, width_from: np.ndarray, src: np.ndarray) -> np.ndarray:
    """The response width a source of bands ``width_from`` still lacks to have the target widths ``width_to``."""
    order = np.argsort(src, kind="stable")
    source_width = np.interp(dst, src[order], width_from[order])
    return np.sqrt(np.maximum(width_to ** 2 - source_width ** 2, MIN_RESIDUAL_NM ** 2))


def _same(src: np.ndarray, dst: np.ndarray) -> bool:
    """True when both grids have the same centres, in the same order, within :data:`SAME_NM`."""
    return src.shape == dst.shape and bool(np.all(np.abs(src - dst) <= SAME_NM))


def _sorted_source(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source order, sorted source centres, and the targets clipped into the source range.

    Raises :class:`WavelengthError` for fewer than 2 distinct source centres or a target
    outside the source range by more than :data:`SAME_NM`.
    """
    order = np.argsort(src, kind="stable")
    s = src[order]
    if s.size < 2:
        raise WavelengthError(f"source grid: {s.size} band at {s[0]:.3f} nm; resampling onto other centres needs "
                              "at least 2 source bands")
    gaps = np.flatnonzero(np.diff(s) <= SAME_NM)
    if gaps.size:
        a, b = order[gaps[0]], order[gaps[0] + 1]
        raise WavelengthError(f"source grid: bands {a} and {b} have the same centre ({s[gaps[0]]:.6f} nm); "
                              "source centres must be distinct")
    out = np.flatnonzero((dst < s[0] - SAME_NM) | (dst > s[-1] + SAME_NM))
    if out.size:
        j = int(out[0])
        raise WavelengthError(f"target band {j} ({dst[j]:.3f} nm) is outside the source bands' range "
                              f"{s[0]:.3f}-{s[-1]:.3f} nm (and {out.size - 1} more); a cube must cover every "
                              "target band (no extrapolation)")
    return order, s, np.clip(dst, s[0], s[-1])


def _linear(s: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(C_to, C_from) linear-interpolation weights of targets ``x`` on sorted centres ``s``."""
    hi = np.clip(np.searchsorted(s, x, side="left"), 1, s.size - 1)
    lo = hi - 1
    t = (x - s[lo]) / (s[hi] - s[lo])
    exact = np.abs(x - s[hi]) <= SAME_NM  # a target on a source centre takes that band as is
    t = np.where(exact, 1.0, np.where(np.abs(x - s[lo]) <= SAME_NM, 0.0, t))
    w = np.zeros((x.size, s.size))
    rows = np.arange(x.size)
    w[rows, lo] = 1.0 - t
    w[rows, hi] += t
    return w


def _gaussian(s: np.ndarray, mu: np.ndarray, fwhm: np.ndarray) -> np.ndarray:
    """(C_to, C_from) exact integrals of truncated Gaussian responses against the hat functions of ``s``.

    On the source interval ``[s_k, s_k+1]`` (width ``h``) clipped to the response's window
    ``[a, b]``: ``M0 = int r``, ``M1 = int (l - mu) r = sigma^2 (r(a) - r(b))``; the upper
    band gets ``(M1 + (mu - s_k) M0) / h`` and the lower band the rest of ``M0``.
    """
    sigma = (fwhm * FWHM_TO_SIGMA)[:, None]
    m = mu[:, None]
    lo, hi = m - TRUNCATE_SIGMA * sigma, m + TRUNCATE_SIGMA * sigma
    z = np.clip(s[None, :], lo, hi)  # the source centres clipped to each window
    u = (z - m) / (sigma * math.sqrt(2.0))
    cdf = np.where(s[None, :] <= lo, -math.erf(TRUNCATE_SIGMA / math.sqrt(2.0)),
                   math.erf(TRUNCATE_SIGMA / math.sqrt(2.0)))
    inside = (s[None, :] > lo) & (s[None, :] < hi)
    cdf[inside] = _erf(u[inside])  # erf only where the window does not clip it
    r = np.exp(-u * u)
    m0 = sigma * math.sqrt(math.pi / 2.0) * np.diff(cdf, axis=1)
    m1 = sigma * sigma * (r[:, :-1] - r[:, 1:])
    upper = np.clip((m1 + (m - s[None, :-1]) * m0) / np.diff(s)[None, :], 0.0, m0)
    w = np.zeros((mu.size, s.size))
    w[:, :-1] += m0 - upper
    w[:, 1:] += upper
    return w / m0.sum(axis=1, keepdims=True)


def response_matrix(wl_from: ArrayLike, wl_to: ArrayLike, fwhm_to: ArrayLike | None = None,
                    fwhm_from: ArrayLike | None = None) -> np.ndarray:
    """The matrix that resamples spectra from the bands ``wl_from`` onto the bands ``wl_to``.

    Parameters
    ----------
    wl_from : (C_from,) array
        Source band centres (nm), distinct, any order.
    wl_to : (C_to,) array
        Target band centres (nm), each inside the source range (within :data:`SAME_NM`).
    fwhm_to : (C_to,) array, scalar or None
        Target band widths (nm). Given: Gaussian responses (``"gaussian"``); None: linear
        interpolation (``"linear"``).
    fwhm_from : (C_from,) array, scalar or None
        Source band widths (nm). A source value is already its spectrum integrated under its
        own response, so the target response is narrowed to what the source lacks: Gaussians
        compose, and a target of FWHM ``f_to`` is a source of FWHM ``f_from`` seen through
        ``sqrt(f_to**2 - f_from**2)`` (``f_from`` interpolated at the target centre). A
        source band as broad as the target band or broader (broad-to-narrow) cannot be
        sharpened: near-interpolation, nothing is deconvolved. None: the full target width.

    Returns
    -------
    (C_to, C_from) float64 array
        Rows sum to 1; ``cube @ W.T`` is the cube on the target bands. Exactly the identity
        when both grids have the same centres, whatever the widths.

    Raises
    ------
    WavelengthError
        A non-finite centre, FWHM values not one per band, a FWHM that is not finite and > 0,
        repeated source centres, or a target centre outside the source range.
    """
    src, dst = _grid(wl_from, "source grid"), _grid(wl_to, "target grid")
    width_to = _widths(fwhm_to, dst, "target grid")
    width_from = _widths(fwhm_from, src, "source grid")
    if width_to is not None and width_from is not None:
        width_to = _residual_widths(width_to, dst, width_from, src)
    if _same(src, dst):
        return np.eye(src.size)
    order, s, x = _sorted_source(src, dst)
    w_sorted = _linear(s, x) if width_to is None else _gaussian(s, x, width_to)
    w = np.empty_like(w_sorted)
    w[:, order] = w_sorted
    return w


def resample_method(wl_from: ArrayLike, wl_to: ArrayLike, fwhm_to: ArrayLike | None = None) -> str:
    """The method :func:`response_matrix` uses: ``"identity"``, ``"gaussian"`` or ``"linear"``."""
    if _same(_grid(wl_from, "source grid"), _grid(wl_to, "target grid")):
        return "identity"
    return "linear" if fwhm_to is None else "gaussian"


def dropped_bands(wl_from: ArrayLike, wl_to: ArrayLike, fwhm_to: ArrayLike | None = None) -> np.ndarray:
    """Indices (into ``wl_from``, ascending, int64) of the source bands no target band uses."""
    w = response_matrix(wl_from, wl_to, fwhm_to)
    return np.flatnonzero(~np.any(w != 0.0, axis=0)).astype(np.int64)


def grid_summary(wl: ArrayLike, fwhm: ArrayLike | None = None) -> dict[str, Any]:
    """``{"range_nm": [lo, hi], "count": n, "fwhm_nm": [lo, hi] or None}`` of a band grid (JSON-ready)."""
    arr = _grid(wl, "grid")
    width = _widths(fwhm, arr, "grid")
    return {"range_nm": [float(arr.min()), float(arr.max())], "count": int(arr.size),
            "fwhm_nm": None if width is None else [float(width.min()), float(width.max())]}


def _blocks(shape: tuple[int, ...], pixels: int) -> Iterator[tuple[Any, ...]]:
    """Index tuples over the leading axes of ``shape`` (bands last), each about ``pixels`` spectra or fewer."""
    if len(shape) <= 2:
        n = shape[0] if len(shape) == 2 else 1
        for start in range(0, n, pixels):
            yield (slice(start, start + pixels),) if len(shape) == 2 else (Ellipsis,)
        return
    inner = math.prod(shape[1:-1])
    if inner > pixels:  # one slice of the first axis is already too big: go one axis deeper
        for i in range(shape[0]):
            yield from (((i,) + rest) for rest in _blocks(shape[1:], pixels))
        return
    step = max(1, pixels // max(inner, 1))
    for start in range(0, shape[0], step):
        yield (slice(start, start + step),)


def _apply_block(block: np.ndarray, wt: np.ndarray, used: np.ndarray) -> np.ndarray:
    """(n, C_from) float32 -> (n, C_to): NaN only where a band with nonzero weight is not finite."""
    finite = np.isfinite(block)
    if finite.all():
        return block @ wt
    res = np.where(finite, block, 0.0).astype(np.float32) @ wt
    res[((~finite).astype(np.float32) @ used) > 0] = np.nan
    return res


def apply_response(cube: ArrayLike, W: ArrayLike, pixels: int = 1 << 16, out: np.ndarray | None = None
                   ) -> np.ndarray:
    """``cube`` (..., C_from) on the target bands: ``cube @ W.T`` in float32, block by block.

    Parameters
    ----------
    cube : (..., C_from) array
        Any real dtype, a memory map included; only one block at a time is converted.
    W : (C_to, C_from) array
        From :func:`response_matrix`.
    pixels : int
        Spectra per block (bounds the temporaries).
    out : (..., C_to) float32 array or None
        Where to write the result; a new array when None.

    Returns
    -------
    (..., C_to) float32 array
        ``out`` when given. An output band is NaN where a band it uses (nonzero weight) is not
        finite in that pixel; bands it does not use never spread their NaNs.

    Raises
    ------
    BandMismatchError
        The cube's last axis is not ``W``'s column count.
    OptionError
        ``W`` is not 2-D, ``pixels`` < 1, or ``out`` is not float32 of the result's shape.
    """
    w = np.asarray(W, dtype=np.float64)
    if w.ndim != 2:
        raise OptionError("W", f"shape {w.shape}", "a (C_to, C_from) matrix from response_matrix")
    if not isinstance(pixels, (int, np.integer)) or pixels < 1:
        raise OptionError("pixels", pixels, "an integer >= 1")
    x = cube if isinstance(cube, np.ndarray) else np.asarray(cube)
    if x.ndim == 0 or x.shape[-1] != w.shape[1]:
        raise BandMismatchError(f"cube of shape {x.shape}: {x.shape[-1] if x.ndim else 0} bands, but the response "
                                f"matrix takes {w.shape[1]} (it is {w.shape[0]} x {w.shape[1]})")
    shape = x.shape[:-1] + (w.shape[0],)
    if out is None:
        out = np.empty(shape, dtype=np.float32)
    elif not isinstance(out, np.ndarray) or out.dtype != np.float32 or out.shape != shape:
        raise OptionError("out", f"{getattr(out, 'dtype', type(out).__name__)} {getattr(out, 'shape', '')}",
                          f"a float32 array of shape {shape}")
    wt = np.ascontiguousarray(w.T, dtype=np.float32)
    used = (wt != 0).astype(np.float32)
    for idx in _blocks(x.shape, pixels):
        block = np.asarray(x[idx], dtype=np.float32)
        out[idx] = _apply_block(block.reshape(-1, w.shape[1]), wt, used).reshape(block.shape[:-1] + (w.shape[0],))
    return out
