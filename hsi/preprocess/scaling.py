"""Per-band scaling fitted on training pixels only: min-max and standardization.

Both support ``partial_fit`` so statistics can stream over tiles of a scene too big
for memory; ``fit`` is ``partial_fit`` on a fresh state. Statistics are float64.
``transform`` of float32 data computes in float32 (:func:`per_band_affine`: a few passes
over the data instead of a float64 round trip, within a few float32 ulps of the float64
result); other dtypes are computed in float64.

Constant bands never divide by zero: a band whose training range is 0 (min-max) or
whose training standard deviation is 0 (standardize) gets a divisor of 1. So under
min-max the training value of a constant band maps to ``feature_range[0]`` (other
values shift by their difference from it), and under standardization it maps to 0.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from hsi.errors import OptionError
from hsi.preprocess._base import BandTransformer, refuse_mask_as_y, training_pixels
from hsi.preprocess._registry import register_transformer

__all__ = ["PerBandMinMax", "PerBandStandardize", "per_band_affine"]


def per_band_affine(x: np.ndarray, centre: np.ndarray, scale: np.ndarray, shift: float = 0.0,
                    out: np.ndarray | None = None) -> np.ndarray:
    """``(x - centre) * scale + shift`` per band (last axis), as float32: a new array, or ``out``.

    Float32 input is computed in float32, the cheap path for whole scenes and inference
    tiles, without the cancellation a float32 ``x - centre`` suffers when the centre is
    large next to the spread: ``centre`` (float64) is split into a float32 head and tail,
    ``x - head`` is exact wherever ``x`` lies within a factor 2 of ``head`` (Sterbenz), and
    the tail is taken off after. The result is within a few float32 ulps of the float64
    formula rounded once. Any other dtype is computed in float64 and rounded at the end.
    ``out`` (float32, ``x``'s shape; ``x`` itself is allowed) receives the result.
    """
    if x.dtype != np.float32:
        result = ((x.astype(np.float64) - centre) * scale + shift).astype(np.float32)
        if out is None:
            return result
        np.copyto(out, result)
        return out
    head = centre.astype(np.float32)
    tail = (centre - head).astype(np.float32)
    out = np.subtract(x, head, out=out)
    if tail.any():
        np.subtract(out, tail, out=out)
    np.multiply(out, scale.astype(np.float32), out=out)
    if shift:
        np.add(out, np.float32(shift), out=out)
    return out


def _partial_fit_pixels(obj: BandTransformer, X: Any, y: Any, sample_mask: Any) -> np.ndarray:
    """The training pixels of one ``partial_fit`` call as float64 ``(N, C)``, their band count checked."""
    from hsi.errors import BandMismatchError

    name = type(obj).__name__
    what = f"{name}.partial_fit"
    x = training_pixels(X, sample_mask, what)
    refuse_mask_as_y(X, y, what)
    n_bands = x.shape[1]
    if obj.is_fitted and n_bands != obj.n_bands_in_:
        raise BandMismatchError(
            f"{what}: X has {n_bands} features, but {name} is expecting {obj.n_bands_in_} features as input "
            f"(expected {obj.n_bands_in_} bands, as in earlier partial_fit calls, found {n_bands})"
        )
    return x


@register_transformer
class PerBandMinMax(BandTransformer):
    """Scale each band to ``feature_range`` using its training min and max.

    ``x' = (x - data_min_) * scale_ + feature_range[0]``.

    Parameters
    ----------
    feature_range : (float, float)
        Target range; ``feature_range[0] < feature_range[1]``.
    clip : bool
        Clip transformed values to ``feature_range`` (pixels outside the training
        range would otherwise map outside it).

    Attributes
    ----------
    data_min_, data_max_ : (C,) float64
        Per-band minimum / maximum over the training pixels.
    data_range_ : (C,) float64
        ``data_max_ - data_min_`` (0 for a constant band).
    scale_ : (C,) float64
        ``(hi - lo) / data_range_``, with a range of 0 replaced by 1.
    n_samples_seen_ : int
        Number of (finite) training pixels seen.
    n_bands_in_, n_bands_out_ : int
        Band count C (unchanged by scaling).
    """

    _fitted_attrs = ("n_bands_in_", "n_bands_out_", "n_samples_seen_",
                     "data_min_", "data_max_", "data_range_", "scale_")
    in_place = True

    def __init__(self, feature_range: Sequence[float] = (0.0, 1.0), clip: bool = False) -> None:
        self.feature_range = feature_range
        self.clip = clip

    def _range(self) -> tuple[float, float]:
        try:
            lo, hi = (float(v) for v in self.feature_range)
        except (TypeError, ValueError) as err:
            raise OptionError("feature_range", self.feature_range, "two numbers (lo, hi) (PerBandMinMax)") from err
        if not lo < hi:
            raise OptionError("feature_range", self.feature_range, "two numbers (lo, hi) with lo < hi (PerBandMinMax)")
        return lo, hi

    def fit(self, X: Any, y: Any = None, *, sample_mask: Any | None = None,
            wavelengths: Any = None) -> PerBandMinMax:
        """Learn per-band min/max from the pixels where ``sample_mask`` is True (all when None); returns self.

        ``y`` and ``wavelengths`` are ignored (scikit-learn's signature; the pipeline's uniform one).
        """
        self._reset()
        return self.partial_fit(X, y, sample_mask=sample_mask)

    def partial_fit(self, X: Any, y: Any = None, *, sample_mask: Any | None = None) -> PerBandMinMax:
        """Update the running min/max with one tile's training pixels; returns self."""
        lo, hi = self._range()
        x = _partial_fit_pixels(self, X, y, sample_mask)
        bmin, bmax = x.min(axis=0), x.max(axis=0)
        if self.is_fitted:
            bmin = np.minimum(self.data_min_, bmin)
            bmax = np.maximum(self.data_max_, bmax)
            n_seen = self.n_samples_seen_ + x.shape[0]
        else:
            n_seen = x.shape[0]
        data_range = bmax - bmin
        self.n_bands_in_ = int(x.shape[1])
        self.n_bands_out_ = int(x.shape[1])
        self.n_samples_seen_ = int(n_seen)
        self.data_min_ = bmin
        self.data_max_ = bmax
        self.data_range_ = data_range
        self.scale_ = (hi - lo) / np.where(data_range == 0, 1.0, data_range)
        return self

    def transform(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Scale any ``(..., C)`` array; returns float32 of the same shape (``out`` when given)."""
        x = self._check_input(x)
        lo, hi = self._range()
        out = per_band_affine(x, self.data_min_, self.scale_, lo, out=out)
        if self.clip:
            np.clip(out, lo, hi, out=out)
        return out

    def inverse_transform(self, x: Any) -> np.ndarray:
        """Undo :meth:`transform` (exact up to float32 rounding, without clipping)."""
        x = self._check_input(x)
        lo, _ = self._range()
        return ((x.astype(np.float64) - lo) / self.scale_ + self.data_min_).astype(np.float32)


@register_transformer
class PerBandStandardize(BandTransformer):
    """Standardize each band to zero mean and unit variance over the training pixels.

    ``x' = (x - mean_) / scale_``. ``partial_fit`` combines tiles with the pairwise
    (Chan et al.) update of mean and sum of squared deviations, so streaming over
    tiles gives the same statistics as one pass over all training pixels.

    Attributes
    ----------
    mean_ : (C,) float64
        Per-band mean of the training pixels.
    var_ : (C,) float64
        Per-band population variance (ddof = 0).
    scale_ : (C,) float64
        ``sqrt(var_)``, with 1 where the band is constant (std below
        ``10 * eps * max(1, |mean_|)``), so constant bands map to 0.
    n_samples_seen_ : int
        Number of (finite) training pixels seen.
    n_bands_in_, n_bands_out_ : int
        Band count C.
    """

    _fitted_attrs = ("n_bands_in_", "n_bands_out_", "n_samples_seen_", "mean_", "var_", "scale_")
    in_place = True

    def __init__(self) -> None:
        pass

    def fit(self, X: Any, y: Any = None, *, sample_mask: Any | None = None,
            wavelengths: Any = None) -> PerBandStandardize:
        """Learn per-band mean/std from the pixels where ``sample_mask`` is True (all when None); returns self.

        ``y`` and ``wavelengths`` are ignored (scikit-learn's signature; the pipeline's uniform one).
        """
        self._reset()
        return self.partial_fit(X, y, sample_mask=sample_mask)

    def partial_fit(self, X: Any, y: Any = None, *, sample_mask: Any | None = None) -> PerBandStandardize:
        """Update the running mean/variance with one tile's training pixels; returns self."""
        x = _partial_fit_pixels(self, X, y, sample_mask)
        n_b = x.shape[0]
        mean_b = x.mean(axis=0)
        m2_b = ((x - mean_b) ** 2).sum(axis=0)
        if self.is_fitted:
            n_a = self.n_samples_seen_
            mean_a = self.mean_
            m2_a = self.var_ * n_a
            n = n_a + n_b
            delta = mean_b - mean_a
            mean = mean_a + delta * (n_b / n)
            m2 = m2_a + m2_b + delta**2 * (n_a * n_b / n)
        else:
            n, mean, m2 = n_b, mean_b, m2_b
        var = m2 / n
        std = np.sqrt(var)
        constant = std <= 10 * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(mean))
        self.n_bands_in_ = int(x.shape[1])
        self.n_bands_out_ = int(x.shape[1])
        self.n_samples_seen_ = int(n)
        self.mean_ = mean
        self.var_ = var
        self.scale_ = np.where(constant, 1.0, std)
        return self

    def transform(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Standardize any ``(..., C)`` array; returns float32 of the same shape (``out`` when given)."""
        x = self._check_input(x)
        return per_band_affine(x, self.mean_, 1.0 / self.scale_, out=out)

    def inverse_transform(self, x: Any) -> np.ndarray:
        """Undo :meth:`transform` (exact up to float32 rounding)."""
        x = self._check_input(x)
        return (x.astype(np.float64) * self.scale_ + self.mean_).astype(np.float32)
