"""Shared machinery of the band transformers: the scikit-learn estimator base, input checks, fitted checks, state.

Every transformer works on the last axis (bands). ``fit`` sees only training pixels,
gathered by :func:`training_pixels`; ``transform`` accepts any ``(..., C)`` array.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from hsi.errors import (  # noqa: F401 - NonFiniteWarning, StateFormatError are re-exported here
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
    "find_nonfinite",
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
    SplitError
        The mask selects no pixel (or only non-finite ones).
    """
    cube = np.asarray(cube)
    if cube.ndim < 2:
        raise ShapeMismatchError(
            f"{what}: cube must be (H, W, C) or (N, C) with bands last, found shape {cube.shape}"
        )
    if cube.shape[-1] == 0:
        raise BandMismatchError(f"{what}: cube has no bands (shape {cube.shape})")
    if mask is None:
        pixels = cube.reshape(-1, cube.shape[-1])
    else:
        mask = _as_mask(mask, cube.shape[:-1], what)
        pixels = cube[mask]
    if pixels.shape[0] == 0:
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
    and every check of them happens in ``fit`` / ``transform``. ``y`` of scikit-learn is
    the training ``mask``: ``fit(cube, mask)`` learns from the pixels where it is True.

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
                f"{type(self).__name__}.fit(cube, mask) on the training pixels before transform"
            )

    def _check_input(self, x: Any) -> np.ndarray:
        """Fitted check, then band-count check; returns ``x`` as an array."""
        self._check_fitted()
        x = np.asarray(x)
        if x.ndim < 1 or x.shape[-1] != self.n_bands_in_:
            found = x.shape[-1] if x.ndim else "a scalar"
            raise BandMismatchError(
                f"{type(self).__name__}.transform: expected {self.n_bands_in_} bands on the last "
                f"axis (as at fit), found {found} (input shape {x.shape})"
            )
        return x

    def fit_transform(self, cube: Any, mask: Any | None = None, **fit_kwargs: Any) -> np.ndarray:
        """``fit(cube, mask)`` then ``transform(cube)`` (the whole cube, not only the mask).

        scikit-learn's ``Pipeline`` calls it as ``fit_transform(X, y, **params)``: ``y`` is
        the mask, and ``step__wavelengths=`` reaches ``fit``.
        """
        return self.fit(cube, mask, **fit_kwargs).transform(cube)

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
