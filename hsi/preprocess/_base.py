"""Shared machinery of the band transformers: the scikit-learn estimator base, input checks, fitted checks, state.

Every transformer works on the last axis (bands). ``fit(X, y=None, *, sample_mask=None)``
sees only training pixels, gathered by :func:`training_pixels`; ``transform`` accepts any
``(..., C)`` array. :func:`check_array` is the one input check of both.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, ClassVar

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin

from hsi.errors import (  # noqa: F401 - NonFiniteWarning, StateFormatError are re-exported here
    ArrayTypeError,
    BandMismatchError,
    NonFiniteWarning,
    NotFittedError,
    ShapeMismatchError,
    SplitError,
    StateFormatError,
)
from hsi.preprocess._registry import transformer_from_state
from hsi.preprocess._state import ArraySink, encode_value

__all__ = [
    "BandTransformer",
    "NonFiniteWarning",
    "StateFormatError",
    "check_array",
    "find_nonfinite",
    "refuse_mask_as_y",
    "training_pixels",
]


def find_nonfinite(x: np.ndarray, per_pixel: bool = False) -> tuple[int, tuple[int, ...]] | None:
    """None when every value of ``x`` is finite, else ``(count, first index)`` of the non-finite ones.

    One sum decides the common case (a finite total means every value is finite; an
    infinite one may be an overflow, so only then are the values looked at). With
    ``per_pixel`` the count and index are of pixels (the last axis, bands, reduced).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        total = np.add.reduce(x, axis=None)
    if np.isfinite(total):
        return None
    bad = ~np.isfinite(x)
    if per_pixel:
        bad = bad.any(axis=-1)
    if not bad.any():
        return None
    return int(bad.sum()), tuple(int(i) for i in np.argwhere(bad)[0])


def nodata_mask(x: np.ndarray) -> np.ndarray | None:
    """``(...)`` bool mask of the no-data pixels of ``x`` ``(..., C)``, or None when there are none.

    The one no-data rule of the package: a pixel is no-data when any of its bands is NaN
    or infinite. Readers turn a file's declared no-data value (ENVI ``data ignore value``,
    an HDF5 ``nodata`` / ``_FillValue`` attribute) into NaN, so it is covered too. Training
    leaves such pixels out of every split; inference leaves them unclassified. As in
    :func:`find_nonfinite`, one sum decides the common case.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        total = np.add.reduce(x, axis=None)
    if np.isfinite(total):
        return None
    bad = ~np.isfinite(x).all(axis=-1)
    return bad if bad.any() else None


def _as_mask(mask: Any, expected_shape: tuple[int, ...], what: str) -> np.ndarray:
    mask = np.asarray(mask)
    if mask.shape != expected_shape:
        raise ShapeMismatchError(
            f"{what}: mask must have shape {expected_shape} (the cube without its band axis), "
            f"found {mask.shape}"
        )
    if mask.dtype != bool:
        if np.issubdtype(mask.dtype, np.integer) and np.isin(mask, (0, 1)).all():
            mask = mask.astype(bool)
        else:
            raise ShapeMismatchError(
                f"{what}: mask must be boolean (True = training pixel), found dtype {mask.dtype}"
            )
    return mask


def check_array(x: Any, what: str, *, min_bands: int = 1, fit: bool = False) -> np.ndarray:
    """``x`` as a dense numeric array with ``min_bands`` or more bands (last axis).

    The one input check of every transformer's ``fit`` and ``transform``, worded as
    scikit-learn's ``check_array`` is (its estimator checks match these words). Object
    arrays of numbers become float64; other dtypes are kept (no copy of an array given).
    ``fit`` needs ``(N, C)`` or more dimensions and at least one pixel; ``transform`` also
    takes one spectrum ``(C,)`` (the bands are always the last axis, so it is not ambiguous).

    Raises
    ------
    ArrayTypeError
        Sparse input, complex values, or values that are not numbers.
    ShapeMismatchError
        No band axis; for ``fit``, fewer than 2 dimensions (one spectrum is given as ``(1, C)``).
    BandMismatchError
        Fewer than ``min_bands`` bands.
    SplitError
        ``fit`` and no pixel.
    """
    if sparse.issparse(x):
        raise ArrayTypeError(f"{what}: sparse input is not supported; pass a dense array (x.toarray())")
    arr = np.asarray(x)
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise ArrayTypeError(f"{what}: X holds values that are not numbers: {err}") from err
    if np.iscomplexobj(arr):
        raise ArrayTypeError(f"{what}: Complex data not supported (dtype {arr.dtype}); pass real values")
    if arr.ndim < (2 if fit else 1):
        raise ShapeMismatchError(
            f"{what}: cube must be (H, W, C) or (N, C) with bands last, found shape {arr.shape}. "
            "Reshape your data: x.reshape(1, -1) for a single spectrum"
        )
    if arr.shape[-1] < min_bands:
        raise BandMismatchError(
            f"{what}: found array with {arr.shape[-1]} feature(s) (shape={arr.shape}) while a minimum of "
            f"{min_bands} is required (at least {min_bands} band(s) on the last axis)"
        )
    if fit and arr.size == 0:
        raise SplitError(
            f"{what}: found array with 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required; "
            "fit needs at least one training pixel"
        )
    return arr


def refuse_mask_as_y(x: Any, y: Any, what: str) -> None:
    """Refuse a training mask given as ``y`` to a cube (the ``fit(cube, mask)`` of earlier hsi releases).

    ``y`` is scikit-learn's target, which every transformer ignores: the training pixels are
    given as ``sample_mask=``. A ``y`` shaped like the pixel grid of an ``(H, W, C)`` cube is
    no scikit-learn target (those go with 2-D ``X``), so it is an error rather than ignored,
    lest an old call silently fit on every pixel.
    """
    if y is None:
        return
    shape = getattr(x, "shape", None)  # no second read of an array-like that is not an array
    grid = tuple(np.asarray(x).shape if shape is None else shape)[:-1]
    if len(grid) < 2 or np.shape(y) != grid:
        return
    raise ShapeMismatchError(
        f"{what}: y has the shape {grid} of the cube's pixel grid; y is scikit-learn's target and is "
        "ignored, so a training mask must be given as sample_mask=mask (fit(cube, sample_mask=mask))"
    )


def training_pixels(cube: Any, mask: Any | None, what: str, *, dropna: bool = True) -> np.ndarray:
    """Return the training pixels of ``cube`` as a float64 ``(N, C)`` array.

    Parameters
    ----------
    cube : array (..., C)
        ``(H, W, C)`` with mask ``(H, W)``, or ``(N, C)`` with mask ``(N,)``.
    mask : bool array of shape ``cube.shape[:-1]`` or None
        True = training pixel; None = every pixel.
    what : str
        Name used in error messages (e.g. ``"PerBandMinMax.fit"``).
    dropna : bool
        Pixels with any non-finite band are dropped with a :class:`NonFiniteWarning`
        giving their number (they are never silently zeroed).

    Raises
    ------
    ShapeMismatchError
        The cube has fewer than 2 dimensions or the mask does not match it.
    ArrayTypeError, BandMismatchError
        As :func:`check_array`.
    SplitError
        The mask selects no pixel (or only non-finite ones).
    """
    cube = check_array(cube, what, fit=True)
    if mask is None:
        pixels = cube.reshape(-1, cube.shape[-1])
    else:
        mask = _as_mask(mask, cube.shape[:-1], what)
        pixels = cube[mask]
    if pixels.shape[0] == 0:  # (an empty cube is refused by check_array)
        raise SplitError(
            f"{what}: the training mask selects no pixel (mask.sum() == 0); "
            "fit needs at least one training pixel"
        )
    pixels = np.asarray(pixels, dtype=np.float64)
    if dropna:
        finite = np.isfinite(pixels).all(axis=1)
        n_bad = int(finite.size - finite.sum())
        if n_bad:
            if n_bad == finite.size:
                raise SplitError(
                    f"{what}: all {n_bad} training pixels contain NaN or infinite values"
                )
            warnings.warn(
                f"{what}: ignored {n_bad} of {finite.size} training pixels that contain NaN "
                "or infinite values",
                NonFiniteWarning,
                stacklevel=3,
            )
            pixels = pixels[finite]
    return pixels


class BandTransformer(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Base class: a scikit-learn transformer, plus fitted checks, band-count checks and JSON state.

    From :class:`sklearn.base.BaseEstimator` come ``get_params`` / ``set_params``, the
    repr and :func:`sklearn.base.clone` (an unfitted copy with the same parameters), so
    the transformers work in scikit-learn tools (``sklearn.pipeline.Pipeline``, grid
    searches): ``__init__`` only stores its arguments, unchanged and under their own names,
    and every check of them happens in ``fit`` / ``transform``.

    ``fit(X, y=None, *, sample_mask=None, wavelengths=None)``: ``y`` is accepted and ignored,
    as by scikit-learn's unsupervised transformers (a pixel-grid-shaped ``y`` with a cube is
    refused: :func:`refuse_mask_as_y`); ``sample_mask`` (True = training pixel, shape
    ``X.shape[:-1]``) picks the pixels learned from, all of them when None. In a
    ``sklearn.pipeline.Pipeline`` it is passed as ``<step>__sample_mask=``. ``transform``
    returns float32 (``preserves_dtype`` tag ``["float32"]``): the networks take float32, and
    a whole scene kept in float64 would double the memory of training and inference; float64
    input is computed in float64 and rounded once. Non-finite values are allowed
    (``allow_nan`` tag): ``fit`` leaves pixels with a non-finite band out of its statistics
    with a :class:`NonFiniteWarning`, ``transform`` passes them through
    (:class:`~hsi.preprocess.NonFiniteFill` replaces them). ``n_features_in_`` is the band
    count ``n_bands_in_``.

    Subclasses list their learned attributes in ``_fitted_attrs``; each ends in ``_``, is
    a numpy array, a Python number or None, and is set only by ``fit`` / ``partial_fit``,
    so :func:`sklearn.utils.validation.check_is_fitted` and :attr:`is_fitted` agree.
    """

    _fitted_attrs: ClassVar[tuple[str, ...]] = ("n_bands_in_", "n_bands_out_")
    #: True when ``transform(x, out=...)`` can write a float32 result into a given array of
    #: ``x``'s shape, ``x`` itself included (per-band steps, which keep the band count)
    in_place: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # No scikit-learn ``set_output`` wrapping of transform / fit_transform, here or in any
        # subclass (``auto_wrap_output_keys=None``): its containers (pandas, polars) are 2-D
        # tables while a transformer takes (..., C) cubes and may write into the ``out`` array
        # it is given. ``transform`` always returns that numpy array, whatever
        # ``sklearn.set_config(transform_output=...)`` says, and ``set_output`` is not offered.
        kwargs.setdefault("auto_wrap_output_keys", None)
        super().__init_subclass__(**kwargs)

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's tags: bands-last arrays of 2 or more dimensions, NaN allowed, float32 output."""
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.three_d_array = True
        tags.transformer_tags.preserves_dtype = ["float32"]
        return tags

    @property
    def n_features_in_(self) -> int:
        """Bands seen at fit (scikit-learn's name for :attr:`n_bands_in_`); absent before ``fit``."""
        if not self.is_fitted:
            raise AttributeError(f"{type(self).__name__} is not fitted yet: it has no n_features_in_")
        return int(self.n_bands_in_)

    # -- parameters ---------------------------------------------------------------
    def _init_params(self) -> dict[str, Any]:
        """The constructor arguments in signature order, the order of ``"params"`` in the JSON state.

        ``get_params`` (scikit-learn's) sorts them by name; the state keeps the order it has
        always been written in, so saved pipelines and checkpoints stay byte for byte the same.
        """
        params = self.get_params(deep=False)
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {name: params[name] for name in names}

    # -- fitted state -------------------------------------------------------------
    @property
    def is_fitted(self) -> bool:
        return hasattr(self, "n_bands_in_")

    def __sklearn_is_fitted__(self) -> bool:
        """What :func:`sklearn.utils.validation.check_is_fitted` asks: the same answer as :attr:`is_fitted`."""
        return self.is_fitted

    def _check_fitted(self) -> None:
        if not self.is_fitted:
            raise NotFittedError(
                f"this {type(self).__name__} instance is not fitted yet; call "
                f"{type(self).__name__}.fit(cube, sample_mask=mask) on the training pixels before transform"
            )

    def _check_input(self, x: Any) -> np.ndarray:
        """Fitted check, then :func:`check_array` and the band-count check; returns ``x`` as an array."""
        self._check_fitted()
        name = type(self).__name__
        x = check_array(x, f"{name}.transform")  # (C,), (N, C), (H, W, C)...
        if x.shape[-1] != self.n_bands_in_:
            raise BandMismatchError(
                f"{name}.transform: X has {x.shape[-1]} features, but {name} is expecting {self.n_bands_in_} "
                f"features as input (expected {self.n_bands_in_} bands on the last axis, as at fit, found "
                f"{x.shape[-1]}; input shape {x.shape})"
            )
        return x

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        """``fit(X, y, **fit_params)`` then ``transform(X)`` (every pixel, not only the training ones).

        scikit-learn's ``Pipeline`` calls it so: ``step__sample_mask=`` and
        ``step__wavelengths=`` reach ``fit``.
        """
        return self.fit(X, y, **fit_params).transform(X)

    def fitted_state(self) -> dict[str, Any]:
        """The learned attributes (arrays, numbers or None), by name."""
        self._check_fitted()
        return {name: getattr(self, name) for name in self._fitted_attrs}

    def _set_fitted_state(self, state: dict[str, Any]) -> None:
        missing = [a for a in self._fitted_attrs if a not in state]
        if missing:
            raise StateFormatError(
                f"{type(self).__name__}: saved state lacks learned attributes {missing}"
            )
        for name in self._fitted_attrs:
            setattr(self, name, state[name])

    def _reset(self) -> None:
        for name in self._fitted_attrs:
            if hasattr(self, name):
                delattr(self, name)

    # -- state as plain JSON types ------------------------------------------------
    def _encode(self, sink: ArraySink | None = None) -> dict[str, Any]:
        """``{"class", "params", "fitted"}`` of this transformer; ``sink`` may store the learned arrays elsewhere."""
        return {
            "class": type(self).__name__,
            "params": encode_value(self._init_params()),
            "fitted": None if not self.is_fitted else encode_value(self.fitted_state(), sink),
        }

    def to_state(self) -> dict[str, Any]:
        """JSON-serializable description: class name, parameters, learned attributes."""
        return self._encode()

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> BandTransformer:
        """Rebuild a transformer (fitted if the state was) from :meth:`to_state` output."""
        obj = transformer_from_state(state)
        if not isinstance(obj, cls):
            raise StateFormatError(
                f"state describes a {type(obj).__name__}, not a {cls.__name__}"
            )
        return obj
