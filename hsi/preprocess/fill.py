"""Fill NaN and infinite values with per-band statistics of the training pixels.

The rule (the one :func:`hsi.preprocess.make_pipeline` places first, before band removal,
scaling and PCA, when ``fill_nonfinite="median"``): every non-finite value of band ``c``
becomes the median of the finite values of band ``c`` in the training pixels (inside a
:class:`~hsi.preprocess.Pipeline` those are the training pixels whose whole spectrum is
finite, since the pipeline leaves the others out of every fitted statistic). It is fitted on training
pixels only, like every other step, so no value seen in validation or test pixels shapes
it. Pixels whose own spectrum is non-finite are meant to be left out of every split (the
DataModule does so); the fill is for the values that remain inside other pixels' windows
and for whole-scene inference, so that no NaN ever reaches a model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hsi.errors import OptionError, SplitError
from hsi.preprocess._base import BandTransformer, refuse_mask_as_y, training_pixels
from hsi.preprocess._registry import register_transformer

__all__ = ["NonFiniteFill"]

_STRATEGIES = ("median", "mean")


@register_transformer
class NonFiniteFill(BandTransformer):
    """Replace NaN / +-inf values by a per-band statistic of the finite training values.

    Parameters
    ----------
    strategy : str
        "median" (default; robust to outliers) or "mean".

    Attributes
    ----------
    fill_values_ : (C,) float64
        The value written into each band's non-finite entries.
    n_bands_in_, n_bands_out_ : int
        Band count C (unchanged).
    """

    _fitted_attrs = ("n_bands_in_", "n_bands_out_", "fill_values_")
    in_place = True

    def __init__(self, strategy: str = "median") -> None:
        self.strategy = strategy

    def fit(self, X: Any, y: Any = None, *, sample_mask: Any | None = None,
            wavelengths: Any = None) -> NonFiniteFill:
        """Learn ``fill_values_`` from the finite values of the pixels where ``sample_mask`` is True.

        Parameters
        ----------
        X : array (..., C)
            Training data (``(H, W, C)`` with an ``(H, W)`` mask, or ``(N, C)``).
        y : ignored
            scikit-learn's target (a cube's pixel-grid-shaped ``y`` is refused).
        sample_mask : bool array or None
            Training pixels; None = all.
        wavelengths : ignored
            Accepted for the pipeline's uniform ``fit`` signature.
        """
        if self.strategy not in _STRATEGIES:
            raise OptionError("strategy", self.strategy, "'median' or 'mean'")
        self._reset()
        x = training_pixels(X, sample_mask, "NonFiniteFill.fit", dropna=False)
        refuse_mask_as_y(X, y, "NonFiniteFill.fit")
        x = np.where(np.isfinite(x), x, np.nan)
        empty = np.flatnonzero(np.isnan(x).all(axis=0))
        if empty.size:
            raise SplitError(
                f"NonFiniteFill.fit: band(s) {empty[:10].tolist()} have no finite value in any of the "
                f"{x.shape[0]} training pixels; remove them (remove_bands=) or fix the file"
            )
        stat = np.nanmedian if self.strategy == "median" else np.nanmean
        self.fill_values_ = np.asarray(stat(x, axis=0), dtype=np.float64)
        self.n_bands_in_ = self.n_bands_out_ = int(x.shape[1])
        return self

    def __sklearn_tags__(self) -> Any:
        """As every transformer's, but float64 input stays float64 (``preserves_dtype``)."""
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float32", "float64"]
        return tags

    def transform(self, x: Any, out: np.ndarray | None = None) -> np.ndarray:
        """``x`` with every non-finite value replaced by its band's fill value (float32 or float64 kept).

        ``out`` (``x``'s shape; ``x`` itself is allowed) receives the result when given.
        """
        x = self._check_input(x)
        if out is None:
            out = np.array(x, dtype=np.float64 if x.dtype == np.float64 else np.float32)
        elif out is not x:
            np.copyto(out, x)
        bad = ~np.isfinite(out)
        if bad.any():
            fill = np.broadcast_to(self.fill_values_.astype(out.dtype), out.shape)
            out[bad] = fill[bad]
        return out
