"""Argument checks shared by the split functions; messages start with the caller's name."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from hsi.errors import ShapeMismatchError, SplitError

__all__ = ["check_fractions", "check_int", "check_labels"]


def check_labels(labels: Any, what: str, name: str = "labels") -> np.ndarray:
    """A 2-D non-negative integer label map as int64 (0 = unlabeled, 1..K = classes)."""
    arr = np.asarray(labels)
    if arr.ndim != 2:
        raise ShapeMismatchError(f"{what}: {name} must be a 2-D (H, W) label map, found shape "
                                 f"{arr.shape}")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise SplitError(f"{what}: {name} must be an integer label map (0 = unlabeled, classes "
                         f"1..K), found dtype {arr.dtype}")
    if arr.size and arr.min() < 0:
        raise SplitError(f"{what}: {name} has negative values (min {arr.min()}); use 0 for "
                         "unlabeled and 1..K for classes")
    return arr.astype(np.int64)


def check_fractions(fractions: Any, what: str) -> np.ndarray:
    """(train, val, test) shares as a (3,) float64 array: non-negative, sum 1, train/test > 0."""
    try:
        f = np.asarray(fractions, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as err:
        raise SplitError(f"{what}: fractions must be 3 numbers (train, val, test), found "
                         f"{fractions!r}") from err
    if f.size != 3 or not np.isfinite(f).all():
        raise SplitError(f"{what}: fractions must be 3 finite numbers (train, val, test), "
                         f"found {fractions!r}")
    if (f < 0).any():
        raise SplitError(f"{what}: fractions must be non-negative, found {fractions!r}")
    if abs(f.sum() - 1.0) > 1e-6:
        raise SplitError(f"{what}: fractions must sum to 1, found {fractions!r} "
                         f"(sum {f.sum():.6g})")
    if f[0] == 0 or f[2] == 0:
        raise SplitError(f"{what}: fractions must give train and test a positive share, found "
                         f"{fractions!r}")
    return f


def check_int(value: Any, name: str, what: str, minimum: int) -> int:
    """``value`` as an int, if it is an integer (not a bool) >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise SplitError(f"{what}: {name} must be an int >= {minimum}, found {value!r}")
    return int(value)
