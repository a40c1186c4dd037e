"""What a file read as a cube looks like: the rule that tells a colour photo from a hyperspectral cube.

:func:`colour_image_reason` is the one place the rule lives; :func:`hsi.io.open_cube` (so
also :func:`hsi.io.read_cube`, ``hsi train`` and ``hsi inspect``) warns with its sentence
(:class:`hsi.errors.NotHyperspectralWarning`), and :meth:`hsi.io.Cube.looks_like` returns it.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from hsi.errors import NotHyperspectralWarning

__all__ = ["COLOUR_BANDS", "colour_image_reason", "warn_if_not_hyperspectral"]

#: band counts of colour images: RGB, and RGB plus alpha
COLOUR_BANDS = (3, 4)


def colour_image_reason(meta: Mapping[str, Any], n_bands: int, wavelengths: Any) -> str | None:
    """Why a cube looks like a colour image rather than a hyperspectral cube, or None when it does not.

    The rule: 3 or 4 bands (:data:`COLOUR_BANDS`) stored as 8-bit integers
    (``meta["original_dtype"]`` uint8 or int8) and no wavelengths. A hyperspectral cube has
    many more bands, or at least wavelengths saying which light each band holds.

    Parameters
    ----------
    meta : mapping
        ``Cube.meta`` / ``LazyCube.meta`` (``source`` and ``original_dtype`` are read).
    n_bands : int
        Bands of the cube as read.
    wavelengths : array or None
        The cube's wavelengths.

    Returns
    -------
    str or None
        One sentence naming the file, e.g. "photo.tif: 3 bands of 8-bit integers without
        wavelengths: this looks like a colour image, not a hyperspectral cube".
    """
    dtype = meta.get("original_dtype")
    if wavelengths is not None or n_bands not in COLOUR_BANDS or dtype is None:
        return None
    if np.dtype(dtype) not in (np.dtype(np.uint8), np.dtype(np.int8)):
        return None
    alpha = " (colour and alpha)" if n_bands == 4 else ""
    return (f"{meta.get('source')}: {n_bands} bands{alpha} of 8-bit integers without wavelengths: this looks like a "
            f"colour image, not a hyperspectral cube")


def warn_if_not_hyperspectral(meta: Mapping[str, Any], n_bands: int, wavelengths: Any, stacklevel: int = 3) -> None:
    """Warn (:class:`NotHyperspectralWarning`) with :func:`colour_image_reason`'s sentence, if any."""
    reason = colour_image_reason(meta, n_bands, wavelengths)
    if reason is not None:
        warnings.warn(reason, NotHyperspectralWarning, stacklevel=stacklevel)
