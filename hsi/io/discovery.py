"""Variable / dataset discovery shared by the MATLAB and HDF5 readers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from hsi.errors import CubeFormatError, VariableKeyError

#: Names (case-insensitive, last path component) under which files store wavelengths.
#: ``wavlength`` (sic) is what the MUUFL Gulfport demo files use.
WAVELENGTH_NAMES = frozenset({
    "wavelengths", "wavelength", "wavlength", "wavlengths", "wavelenghts", "wavelength_nm",
    "wavelengths_nm", "wl", "wls", "wvl", "lambda", "lambdas", "wave", "waves", "centers",
    "band_centers", "bandcenters",
})


@dataclass(frozen=True)
class ArrayInfo:
    """Name, shape and dtype of one array in a file (shape as the user will see it)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    numeric: bool = True

    def describe(self) -> str:
        dims = " x ".join(str(s) for s in self.shape) or "scalar"
        return f"{self.name!r} ({dims} {self.dtype})"


def is_numeric(dtype: np.dtype) -> bool:
    """True for real numbers and booleans (not strings, objects, complex, structs)."""
    dtype = np.dtype(dtype)
    return bool(np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating) or dtype == np.bool_)


def is_wavelength_name(name: str) -> bool:
    return name.rsplit("/", 1)[-1].lower() in WAVELENGTH_NAMES


def integer_like(info: ArrayInfo) -> bool:
    """Whether an array holds integers (or booleans): the label-map candidates chosen first."""
    return info.dtype == "bool" or np.issubdtype(np.dtype(info.dtype), np.integer)


def is_vector(info: ArrayInfo) -> bool:
    return info.numeric and len(info.shape) >= 1 and int(np.prod(info.shape)) == max(info.shape, default=0) > 1


def describe(infos: Sequence[ArrayInfo]) -> str:
    return ", ".join(i.describe() for i in infos) or "none"


def _same_name(a: str, b: str) -> bool:
    return a.strip("/") == b.strip("/")


def has_ndim(shape: tuple[int, ...], ndim: int) -> bool:
    """``ndim`` axes longer than 1; a label map (ndim 2) may carry extra singleton axes ((H, W, 1))."""
    if ndim == 2:
        return len(shape) <= 3 and sum(s > 1 for s in shape) == 2
    return len(shape) == ndim and min(shape) > 1


def choose(
    infos: Sequence[ArrayInfo],
    key: str | None,
    ndim: int,
    source: str,
    what: str,
    prefer: Callable[[ArrayInfo], bool] | None = None,
) -> ArrayInfo:
    """Pick the array named ``key``, or the only numeric ``ndim``-D array when key is None.

    With several candidates and ``prefer`` given, the preferred ones (e.g. integer arrays for
    label maps) are tried first. Raises :class:`VariableKeyError` for a missing key or several
    candidates, :class:`CubeFormatError` when no array has the right dimensionality.
    """
    if key is not None:
        for info in infos:
            if _same_name(info.name, key):
                return info
        raise VariableKeyError(f"{source}: key {key!r} not found; available keys: {describe(infos)}")
    candidates = [i for i in infos if i.numeric and has_ndim(i.shape, ndim)]
    if len(candidates) > 1 and prefer is not None:
        preferred = [i for i in candidates if prefer(i)]
        if preferred:
            candidates = preferred
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise VariableKeyError(
            f"{source}: {len(candidates)} candidate {what}s: {describe(candidates)}; pass key= to choose one"
        )
    if ndim == 3:
        single = [i for i in infos if i.numeric and len(i.shape) == 3 and has_ndim(i.shape, 2)]
        hint = f"; {describe(single)} has a single band: a label map (read_labels), not a cube" if single else ""
        raise CubeFormatError(f"{source}: no 3-D numeric array with every axis longer than 1 found (expected a "
                              f"{what}); arrays present: {describe(infos)}{hint}")
    raise CubeFormatError(
        f"{source}: no {ndim}-D numeric array found (expected a {what}); arrays present: {describe(infos)}"
    )
