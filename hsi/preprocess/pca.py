"""Principal component projection fitted on training pixels only."""

from __future__ import annotations

from typing import Any

import numpy as np

from hsi._checks import check_components
from hsi.errors import OptionError, SplitError
from hsi.preprocess._base import BandTransformer, refuse_mask_as_y, training_pixels
from hsi.preprocess._registry import register_transformer

__all__ = ["PCA"]


@register_transformer
class PCA(BandTransformer):
    """Project the bands onto the leading principal components of the training pixels.

    The decomposition is scikit-learn's (full SVD, deterministic signs); the fitted
    projection is stored as plain arrays, so :meth:`transform` is one numpy matmul and
    the state serializes exactly. When there are more than ``max_fit_pixels``
    training pixels, a subset of that size is drawn without replacement with
    ``np.random.default_rng(random_state)`` (deterministic for a given seed); the
    statistics of a few hundred thousand pixels are as good as those of millions.

    Parameters
    ----------
    n_components : int or float
        An int ``k`` (``1 <= k <= min(C, N)``) keeps ``k`` components; a float in
        ``(0, 1)`` keeps the fewest components whose explained variance fraction
        reaches it.
    whiten : bool
        Divide each component by its standard deviation (components with zero variance
        are left unscaled).
    random_state : int
        Seed of the pixel subsample.
    max_fit_pixels : int or None
        Most training pixels used for the fit; None uses all of them.

    Attributes
    ----------
    mean_ : (C,) float64
        Per-band mean of the pixels used for the fit.
    components_ : (K, C) float64
        Principal axes (rows), in order of decreasing variance.
    explained_variance_ : (K,) float64
        Variance along each axis (ddof = 1, as scikit-learn).
    explained_variance_ratio_ : (K,) float64
        Fraction of the total variance along each axis.
    singular_values_ : (K,) float64
    n_components_ : int
        K.
    n_samples_seen_ : int
        Number of pixels used for the fit (after subsampling).
    n_bands_in_, n_bands_out_ : int
        C and K.
    """

    _fitted_attrs = ("n_bands_in_", "n_bands_out_", "n_samples_seen_", "n_components_",
                     "mean_", "components_", "explained_variance_",
                     "explained_variance_ratio_", "singular_values_")

    def __init__(self, n_components: int | float, whiten: bool = False, random_state: int = 0,
                 max_fit_pixels: int | None = 200_000) -> None:
        self.n_components = n_components
        self.whiten = whiten
        self.random_state = random_state
        self.max_fit_pixels = max_fit_pixels

    def _check_n_components(self, n_pixels: int, n_bands: int) -> int | float:
        k = check_components("n_components", self.n_components)
        limit = min(n_pixels, n_bands)
        if isinstance(k, int) and k > limit:
            raise OptionError("n_components", k, f"at most min(bands, training pixels) = min({n_bands}, {n_pixels}) "
                              f"= {limit} (n_features = {n_bands}, n_samples = {n_pixels})")
        return k

    def fit(self, X: Any, y: Any = None, *, sample_mask: Any | None = None, wavelengths: Any = None) -> PCA:
        """Fit the projection on the pixels where ``sample_mask`` is True (all when None); returns self.

        ``y`` and ``wavelengths`` are ignored (scikit-learn's signature; the pipeline's uniform one).
        """
        from sklearn.decomposition import PCA as _SkPCA

        self._reset()
        x = training_pixels(X, sample_mask, "PCA.fit")
        refuse_mask_as_y(X, y, "PCA.fit")
        if self.max_fit_pixels is not None and x.shape[0] > self.max_fit_pixels:
            rng = np.random.default_rng(self.random_state)
            idx = np.sort(rng.choice(x.shape[0], size=int(self.max_fit_pixels), replace=False))
            x = x[idx]
        k = self._check_n_components(x.shape[0], x.shape[1])
        if x.shape[0] < 2:
            raise SplitError("PCA.fit: needs at least 2 training pixels, found 1 sample")
        sk = _SkPCA(n_components=k, svd_solver="full", whiten=False).fit(x)
        self.n_bands_in_ = int(x.shape[1])
        self.n_components_ = int(sk.n_components_)
        self.n_bands_out_ = self.n_components_
        self.n_samples_seen_ = int(x.shape[0])
        self.mean_ = np.asarray(sk.mean_, dtype=np.float64)
        self.components_ = np.ascontiguousarray(sk.components_, dtype=np.float64)
        self.explained_variance_ = np.asarray(sk.explained_variance_, dtype=np.float64)
        self.explained_variance_ratio_ = np.asarray(sk.explained_variance_ratio_, dtype=np.float64)
        self.singular_values_ = np.asarray(sk.singular_values_, dtype=np.float64)
        return self

    def transform(self, x: Any) -> np.ndarray:
        """Project any ``(..., C)`` array; returns float32 ``(..., K)``."""
        x = self._check_input(x)
        out = (x.astype(np.float64) - self.mean_) @ self.components_.T
        if self.whiten:
            std = np.sqrt(self.explained_variance_)
            out /= np.where(std > 0, std, 1.0)
        return out.astype(np.float32)

    def inverse_transform(self, x: Any) -> np.ndarray:
        """Map ``(..., K)`` scores back to ``(..., C)`` band space (lossy when K < C)."""
        self._check_fitted()
        x = np.asarray(x, dtype=np.float64)
        if x.shape[-1] != self.n_components_:
            from hsi.errors import BandMismatchError

            raise BandMismatchError(
                f"PCA.inverse_transform: expected {self.n_components_} components on the last "
                f"axis, found {x.shape[-1]}"
            )
        if self.whiten:
            std = np.sqrt(self.explained_variance_)
            x = x * np.where(std > 0, std, 1.0)
        return (x @ self.components_ + self.mean_).astype(np.float32)
