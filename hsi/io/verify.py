"""Check a converted output against its source: same shape, wavelengths, georeference and values.

:func:`verify_conversion` re-opens the output with :func:`hsi.io.open_cube` (an HDF5 file, a
GeoTIFF, or an ``.npy`` scene folder through its reader) and compares a seeded sample of
windows (:func:`sample_windows`: always the four corners; every window of a small scene)
with the source, exactly, and the labels whole. :func:`hsi.io.convert.convert` runs it after
writing and removes an output that differs.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import numpy as np

from hsi.errors import IntegrityError, OptionError

__all__ = ["sample_windows", "verify_conversion"]


def sample_windows(shape: tuple[int, ...], n_windows: int, window: int = 64,
                   seed: int = 0) -> tuple[list[tuple[slice, slice]], int]:
    """A seeded sample of ``window x window`` tiles of a grid over ``(H, W)``: ``(windows, grid size)``.

    Every tile when the grid has at most ``n_windows`` of them; otherwise the four corner
    tiles plus a seeded random choice of the others.
    """
    h, w = int(shape[0]), int(shape[1])
    tiles = [(slice(r, min(r + window, h)), slice(c, min(c + window, w)))
             for r in range(0, h, window) for c in range(0, w, window)]
    if len(tiles) <= n_windows:
        return tiles, len(tiles)
    n_rows, n_cols = -(-h // window), -(-w // window)
    corners = sorted({0, n_cols - 1, (n_rows - 1) * n_cols, n_rows * n_cols - 1})
    rest = [i for i in range(len(tiles)) if i not in corners]
    chosen = np.random.default_rng(seed).choice(rest, size=max(0, n_windows - len(corners)), replace=False)
    return [tiles[i] for i in sorted(corners + [int(i) for i in chosen])], len(tiles)


def _compare(expected: np.ndarray, found: np.ndarray, where: str) -> None:
    if expected.shape != found.shape or expected.dtype != found.dtype:
        raise IntegrityError(f"{where}: output block {found.shape} {found.dtype}, "
                             f"source {expected.shape} {expected.dtype}")
    same = (expected == found) | (np.isnan(expected) & np.isnan(found))
    if not same.all():
        first = tuple(int(i) for i in np.argwhere(~same)[0])
        raise IntegrityError(
            f"{where}: {int((~same).sum())} value(s) differ from the source, first at offset {first}: "
            f"source {expected[first]!r}, output {found[first]!r} (the output is corrupt; convert again)"
        )


def _check_georef(source: Any, output: Any, out: Path, input_path: str | Path) -> None:
    """Raise :class:`IntegrityError` unless both georeferences are absent or the same (CRS, transform, pixel_is)."""
    if source is None and output is None:
        return
    same = (source is not None and output is not None and source.same_grid(output, tolerance=1e-9)
            and source.pixel_is == output.pixel_is)
    if not same:
        def said(g: Any) -> str:
            return "none" if g is None else g.describe()

        raise IntegrityError(f"{out}: georeference ({said(output)}) differs from that of {input_path} ({said(source)})")


def verify_conversion(
    input_path: str | Path,
    out: str | Path,
    *,
    key: str | None = None,
    layout: str | None = None,
    labels_path: str | Path | None = None,
    labels_key: str | None = None,
    n_windows: int = 32,
    window: int = 64,
    bands: Any = None,
) -> tuple[int, int]:
    """Re-open a converted output and compare it with its source exactly; raise :class:`IntegrityError` on a difference.

    Parameters
    ----------
    input_path : str or Path
        The source cube file.
    out : str or Path
        The ``.h5`` file, ``.npy`` folder or ``.tif`` written by :func:`hsi.io.convert.convert`.
    key, layout : str, optional
        As given to :func:`hsi.io.convert.convert` for the source.
    labels_path, labels_key : optional
        The source labels, compared whole with the output's.
    n_windows : int
        Windows of ``window x window`` pixels to compare (the four corners always among them).
    window : int
        Side of a window in pixels.
    bands : (C_out,) int array, optional
        The source's bands the output holds (``hsi convert --bands`` / ``--wavelength-range``); None: all.

    Returns
    -------
    tuple of int
        ``(windows compared, windows in the scene)``.
    """
    from hsi.io import open_cube, read_labels

    if int(n_windows) < 4:
        raise OptionError("n_windows", n_windows, "an integer >= 4 (the four corners are always compared)")
    out = Path(out)
    with contextlib.ExitStack() as stack:
        src = stack.enter_context(open_cube(input_path, key, layout))
        src = src if bands is None else src.select_bands(bands)
        dst = stack.enter_context(open_cube(out))
        out_labels = read_labels(out) if labels_path is not None else None
        if tuple(dst.shape) != tuple(src.shape):
            raise IntegrityError(f"{out}: shape {tuple(dst.shape)}, the source {input_path} is {tuple(src.shape)}")
        if (dst.wavelengths is None) != (src.wavelengths is None) or (
                dst.wavelengths is not None and not np.array_equal(dst.wavelengths, src.wavelengths)):
            raise IntegrityError(f"{out}: wavelengths differ from those of {input_path}")
        _check_georef(src.meta.get("georef"), dst.meta.get("georef"), out, input_path)
        windows, total = sample_windows(src.shape, int(n_windows), window)
        for rows, cols in windows:
            _compare(src.read_window(rows, cols), dst.read_window(rows, cols),
                     f"{out}: rows {rows.start}:{rows.stop}, cols {cols.start}:{cols.stop}")
    if labels_path is not None:
        expected = read_labels(labels_path, key=labels_key)
        if out_labels is None or not np.array_equal(np.asarray(out_labels, dtype=np.int64), expected):
            raise IntegrityError(f"{out}: labels missing or different from {labels_path}")
    return len(windows), total
