"""Axis-order handling: parse ``layout=`` strings and auto-detect where the bands are.

A layout names the axes of a 3-D array in order with the letters ``H`` (rows), ``W``
(columns) and ``C`` (bands): ``"HWC"`` is what ``read_cube`` returns, ``"CHW"`` is a
band-first (PyTorch / BSQ) array, ``"WHC"`` a transposed image, and so on.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Literal

from hsi.errors import LayoutError

#: Bands are taken as "clearly the smallest axis" only when they are at most this
#: fraction of the next smallest axis (see :func:`detect_layout`).
CLEAR_MARGIN = 0.5

_VALID = frozenset("HWC")

Layout = Literal["HWC", "CHW", "WHC", "HCW", "CWH", "WCH"]
"""An axis order of a stored cube: a permutation of H (rows), W (columns) and C (bands)."""
LAYOUTS: tuple[str, ...] = typing.get_args(Layout)


def parse_layout(layout: str, ndim: int = 3, source: str = "") -> str:
    """Normalise a user layout string (case-insensitive) and check it is a permutation of HWC."""
    text = str(layout).strip().upper()
    if len(text) != 3 or set(text) != _VALID:
        raise LayoutError(
            f"{source + ': ' if source else ''}layout={layout!r} is not a permutation of "
            f"'HWC' (expected e.g. 'HWC', 'CHW', 'WHC', 'CWH')"
        )
    if ndim != 3:
        raise LayoutError(f"{source + ': ' if source else ''}layout={layout!r} needs a 3-D array, got {ndim}-D")
    return text


def to_hwc_axes(layout: str) -> tuple[int, int, int]:
    """Axes to pass to ``np.transpose`` to turn an array in ``layout`` into ``HWC``."""
    return (layout.index("H"), layout.index("W"), layout.index("C"))


def _spatial_layout(band_axis: int) -> str:
    """Layout with bands on ``band_axis`` and the two spatial axes in file order (H before W)."""
    letters = ["H", "W"]
    out = []
    for axis in range(3):
        out.append("C" if axis == band_axis else letters.pop(0))
    return "".join(out)


def detect_layout(shape: Sequence[int], n_wavelengths: int | None = None, source: str = "") -> tuple[str, str]:
    """Guess the layout of a 3-D ``shape``; returns ``(layout, reason)``.

    Rules, in order:

    1. **Wavelength count known**: the one axis whose length equals it is ``C``. If two or
       three axes match, the shape is ambiguous and :class:`LayoutError` is raised.
       If none matches, :class:`LayoutError` is raised as well.
    2. **Square scene**: if exactly two *adjacent* axes have the same length and the third
       (an end axis: first or last) differs, the odd one is ``C``
       (``145 x 145 x 200`` is HWC, ``200 x 145 x 145`` is CHW).
    3. **Clearly smallest end axis**: otherwise ``C`` is the first or last axis when it is
       the smallest and at most ``CLEAR_MARGIN`` (one half) of the next smallest axis
       (``610 x 340 x 103`` is HWC, ``103 x 610 x 340`` is CHW).
    4. Anything else (``100 x 100 x 100``, a smallest axis in the middle, ``512 x 217 x 204``,
       ``86 x 83 x 204``...) is ambiguous: :class:`LayoutError` asks for ``layout=``.

    In every detected case the two spatial axes keep their file order (H before W), so a
    ``W x H x C`` array can only be read correctly with an explicit ``layout="WHC"``.
    """
    shape = tuple(int(s) for s in shape)
    where = f"{source}: " if source else ""
    if len(shape) != 3:
        raise LayoutError(f"{where}expected a 3-D cube, got shape {shape}")
    hint = "; pass layout= (e.g. layout='HWC' or layout='CHW')"
    if n_wavelengths is not None:
        matches = [axis for axis, size in enumerate(shape) if size == n_wavelengths]
        if len(matches) == 1:
            return _spatial_layout(matches[0]), f"axis {matches[0]} matches the {n_wavelengths} wavelengths"
        if matches:
            raise LayoutError(
                f"{where}ambiguous layout for shape {shape}: axes {matches} all have the "
                f"wavelength count {n_wavelengths}{hint}"
            )
        raise LayoutError(f"{where}no axis of shape {shape} has the wavelength count {n_wavelengths}{hint}")
    a, b, c = shape
    if a == b != c:
        return "HWC", f"axes 0 and 1 are equal ({a}), axis 2 is the band axis"
    if b == c != a:
        return "CHW", f"axes 1 and 2 are equal ({b}), axis 0 is the band axis"
    ordered = sorted(range(3), key=lambda axis: shape[axis])
    smallest, runner_up = ordered[0], ordered[1]
    if smallest != 1 and shape[smallest] <= CLEAR_MARGIN * shape[runner_up]:
        layout = _spatial_layout(smallest)
        return layout, f"axis {smallest} ({shape[smallest]}) is clearly the smallest"
    raise LayoutError(
        f"{where}ambiguous layout for shape {shape}: cannot tell which axis holds the bands "
        f"(no wavelengths; no clearly smallest first/last axis){hint}"
    )
