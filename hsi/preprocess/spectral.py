"""Per-pixel spectral normalisation against sensor gain and offset, and per-scene scaling.

A pixel's spectrum seen by two sensors (or under two illuminations) is, to first order,
``x = g * s + o``: a gain ``g`` (units, illumination, view geometry) and an additive
offset ``o`` (radiance calibration, path radiance), both constant across the bands of
that pixel. Each step below removes one of them, per pixel, so that nothing is learned:

- gain: :class:`PixelNormalize` divides each spectrum by its mean (``"mean"``, its
  brightness) or by its Euclidean norm over ``sqrt(C)`` (``"l2"``, which stays on the
  mean's scale). ``g * s`` and ``s`` give the same output, exactly up to float32
  rounding, for any ``g > 0``. ``"mean"`` is meant for non-negative spectra (radiance,
  reflectance); ``"l2"`` also suits signed data.
- offset: :class:`FirstDerivative` takes band-to-band differences (per nm when the
  wavelengths are known), in which ``o`` cancels; C bands become C - 1, centred on the
  midpoints of adjacent band centres.
- both: the derivative, then divided by its own ``"l2"`` norm (``"derivative+l2"``): the
  offset cancels in the differences and the gain in the division, both exactly (the
  other order would leave the offset as a per-pixel factor ``1 / (mean(s) + o / g)``).

:data:`NORMALIZE_METHODS` lists the values of ``make_pipeline(normalize=...)`` and
:func:`normalize_steps` turns one into steps; the pipeline puts them after the non-finite
fill and band removal and before the per-band scaling.

Per-scene unsupervised scaling is ``make_pipeline(...).fit(cube, sample_mask=mask)`` with ``mask``
every valid pixel of that scene (``~nodata_mask(cube)``, or None, which also leaves out
the non-finite pixels, with a warning): the statistics come from the scene's own pixel
values and no label is ever read. Under min-max this removes a per-band gain and offset
common to the whole scene.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

import numpy as np

from hsi.errors import OptionError, ShapeMismatchError, WavelengthError
from hsi.preprocess._base import BandTransformer, check_array, refuse_mask_as_y
from hsi.preprocess._registry import register_transformer

__all__ = ["NORMALIZE_METHODS", "FirstDerivative", "NormalizeMethod", "PixelNormalize",
           "normalize_steps"]

#: the values of ``make_pipeline(normalize=...)`` (None means "none")
NormalizeMethod = Literal["none", "brightness", "l2", "derivative", "derivative+l2"]
NORMALIZE_METHODS: tuple[str, ...] = get_args(NormalizeMethod)

_PIXEL_METHODS = ("mean", "l2")
#: values per chunk of the per-pixel pass (4 MiB as float64): no float64 copy of a whole cube
_CHUNK_VALUES = 1 << 19
#: a divisor below this (the smallest normal float32) is replaced by 1
_TINY = float(np.finfo(np.float32).tiny)
#: a mean divisor at most this fraction of the spectrum's mean absolute value is replaced by 1
_REL_EPS = float(np.finfo(np.float32).eps)


def normalize_steps(normalize: str | None) -> list[BandTransformer]:
    """The pipeline steps for one value of :data:`NORMALIZE_METHODS` (None: no step).

    Raises
    ------
    OptionError
        ``normalize`` is neither None nor one of :data:`NORMALIZE_METHODS`.
    """
    if normalize is None or normalize == "none":
        return []
    steps: dict[str, list[BandTransformer]] = {
        "brightness": [PixelNormalize("mean")],
        "l2": [PixelNormalize("l2")],
        "derivative": [FirstDerivative()],
        "derivative+l2": [FirstDerivative(), PixelNormalize("l2")],
    }
    if not isinstance(normalize, str) or normalize not in steps:
        allowed = ", ".join(repr(m) for m in NORMALIZE_METHODS)
        raise OptionError("normalize", normalize, f"one of {allowed}, or None")
    return steps[normalize]


def _band_count(cube: Any, y: Any, what: str, minimum: int) -> int:
    """Bands of ``cube`` after :func:`check_array` (at least ``minimum``); a mask given as ``y`` is refused."""
    x = check_array(cube, what, min_bands=minimum, fit=True)
    refuse_mask_as_y(x, y, what)
    return int(x.shape[-1])


def _divisors(block: np.ndarray, method: str) -> np.ndarray:
    """``(n,)`` float64 divisor of each spectrum of an ``(n, C)`` block; 1 where unusable.

    Unusable: non-finite, below :data:`_TINY`, or (``"mean"``) at most :data:`_REL_EPS`
    times the spectrum's mean absolute value (a zero, negative or cancelling mean). So
    every finite value divided keeps ``|x / d| < C / _REL_EPS``: finite.
    """
    n_bands = block.shape[-1]
    wide = block.astype(np.float64)
    if method == "l2":
        d = np.sqrt(np.einsum("ij,ij->i", wide, wide) / n_bands)
        ok = np.isfinite(d)
    else:
        d = np.add.reduce(wide, axis=-1) / n_bands
        ok = np.isfinite(d)
        if not block.min() >= 0:  # negative values (or NaN): the mean may cancel
            ok &= d > _REL_EPS * (np.add.reduce(np.abs(wide), axis=-1) / n_bands)
    ok &= d >= _TINY
    return np.where(ok, d, 1.0)


def _check_out(out: np.ndarray, shape: tuple[int, ...], what: str) -> None:
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.float32:
        found = (out.shape, out.dtype) if isinstance(out, np.ndarray) else type(out).__name__
        raise ShapeMismatchError(
            f"{what}: out must be a float32 array of shape {shape}, found {found}"
        )


@register_transformer
class PixelNormalize(BandTransformer):
    """Divide each pixel's spectrum (last axis) by its own brightness: removes a per-pixel gain.

    ``"mean"``: ``x / mean(x)``; ``"l2"``: ``x / (||x||_2 / sqrt(C))``. The divisor is
    accumulated in float64 chunk by chunk, and the division is done in float32 for float32
    input (other dtypes in float64, rounded once). A spectrum whose divisor is
    non-finite, below the smallest normal float32, or (``"mean"``) not clearly positive
    (at most float32 eps times its mean absolute value: zero, negative or cancelling) is
    divided by 1, i.e. left as it is, so no inf or NaN is ever produced; non-finite
    input values are passed through (the pipeline's :class:`NonFiniteFill` comes first).

    Parameters
    ----------
    method : {"mean", "l2"}
        The divisor: mean of the bands, or root mean square of the bands.

    Attributes
    ----------
    n_bands_in_, n_bands_out_ : int
        Band count C (unchanged). Nothing else is learned.
    """

    in_place = True

    def __init__(self, method: Literal["mean", "l2"] = "mean") -> None:
        self.method = method

    def _method(self) -> str:
        if self.method not in _PIXEL_METHODS:
            raise OptionError("method", self.method, "'mean' or 'l2' (PixelNormalize)")
        return str(self.method)

    def fit(self, X: Any, y: Any = None, *, sample_mask: Any | None = None,
            wavelengths: Any = None) -> PixelNormalize:
        """Record the band count of ``X`` ``(..., C)``; returns self.

        ``y``, ``sample_mask`` and ``wavelengths`` are accepted for the common ``fit``
        signature and ignored: nothing is learned from pixel values.
        """
        self._method()
        self._reset()
        self.n_bands_in_ = self.n_bands_out_ = _band_count(X, y, "PixelNormalize.fit", 1)
        return self

    def transform(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Normalise every spectrum of any ``(..., C)`` array; returns float32 of ``x``'s shape.

        ``out`` (float32, ``x``'s shape; ``x`` itself is allowed) receives the result.
        """
        x = self._check_input(x)
        method = self._method()
        if out is None:
            out = np.empty(x.shape, dtype=np.float32)
        else:
            _check_out(out, x.shape, "PixelNormalize.transform")
        n_bands = x.shape[-1]
        target = out if out.flags.c_contiguous else np.empty(x.shape, dtype=np.float32)
        src, dst = x.reshape(-1, n_bands), target.reshape(-1, n_bands)
        rows = max(1, _CHUNK_VALUES // n_bands)
        for start in range(0, src.shape[0], rows):
            block = src[start:start + rows]
            d = _divisors(block, method)
            if block.dtype == np.float32:
                np.divide(block, d.astype(np.float32)[:, None], out=dst[start:start + rows])
            else:
                dst[start:start + rows] = block / d[:, None]
        if target is not out:
            np.copyto(out, target)
        return out


@register_transformer
class FirstDerivative(BandTransformer):
    """Band-to-band first derivative of each spectrum: removes a per-pixel additive offset.

    ``y[..., i] = (x[..., i + 1] - x[..., i]) / (wl[i + 1] - wl[i])`` when wavelengths
    were given at fit (a derivative per nm, or per unit of the wavelengths given), else
    the plain difference ``x[..., i + 1] - x[..., i]``. C bands become C - 1; the output
    band ``i`` sits at the midpoint of band centres ``i`` and ``i + 1``. Float32 input
    is computed in float32, other dtypes in float64 (rounded once).

    Attributes
    ----------
    step_ : (C - 1,) float64 or None
        Wavelength step between adjacent bands, or None without wavelengths.
    wavelengths_out_ : (C - 1,) float64 or None
        Midpoints of adjacent band centres (the output bands' wavelengths), or None.
    n_bands_in_, n_bands_out_ : int
        C and C - 1.
    """

    _fitted_attrs = ("n_bands_in_", "n_bands_out_", "step_", "wavelengths_out_")

    def __init__(self) -> None:
        pass

    def fit(self, X: Any, y: Any = None, *, sample_mask: Any | None = None,
            wavelengths: Any = None) -> FirstDerivative:
        """Record the band count and the wavelength steps; returns self.

        Parameters
        ----------
        X : array (..., C)
            Only its band count is used (C >= 2); ``y`` and ``sample_mask`` are ignored.
        wavelengths : (C,) array or None
            Band centres, strictly increasing or decreasing and finite.

        Raises
        ------
        BandMismatchError
            Fewer than 2 bands.
        WavelengthError
            ``wavelengths`` of the wrong length, non-finite or not strictly monotonic.
        """
        self._reset()
        n_bands = _band_count(X, y, "FirstDerivative.fit", 2)
        step = mid = None
        if wavelengths is not None:
            wl = np.asarray(wavelengths, dtype=np.float64).reshape(-1)
            if wl.size != n_bands:
                raise WavelengthError(
                    f"FirstDerivative.fit: wavelengths has {wl.size} entries, expected one per "
                    f"band ({n_bands})"
                )
            step = np.diff(wl)
            if not np.isfinite(wl).all() or not ((step > 0).all() or (step < 0).all()):
                raise WavelengthError(
                    "FirstDerivative.fit: wavelengths must be finite and strictly increasing "
                    "or decreasing (no repeated band centre); fix the wavelength table"
                )
            mid = (wl[1:] + wl[:-1]) / 2.0
        self.n_bands_in_ = n_bands
        self.n_bands_out_ = n_bands - 1
        self.step_ = step
        self.wavelengths_out_ = mid
        return self

    def transform(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Differentiate any ``(..., C)`` array; returns float32 ``(..., C - 1)`` (``out`` when given)."""
        x = self._check_input(x)
        shape = x.shape[:-1] + (self.n_bands_out_,)
        if out is not None:
            _check_out(out, shape, "FirstDerivative.transform")
        if x.dtype == np.float32:
            out = np.subtract(x[..., 1:], x[..., :-1], out=out)
            if self.step_ is not None:
                np.divide(out, self.step_.astype(np.float32), out=out)
            return out
        diff = np.subtract(x[..., 1:], x[..., :-1], dtype=np.float64)
        if self.step_ is not None:
            diff /= self.step_
        if out is None:
            return diff.astype(np.float32)
        np.copyto(out, diff, casting="unsafe")
        return out
