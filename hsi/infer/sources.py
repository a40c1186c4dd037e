"""Where the scene's pixels come from: arrays in memory, ``.npy`` memory maps, lazy cube files.

Every source gives ``shape`` ``(H, W, C)``, ``wavelengths`` (nm or None) and
``read_window(rows, cols)`` -> ``(h, w, C)`` float32, and reads only what is asked for, so a
scene larger than memory is visited window by window: HDF5 (chunked) by slicing, ENVI and
ERDAS through read-only memory maps (:func:`hsi.io.open_cube`), ``.npy`` through
``numpy.load(mmap_mode="r")`` or plain reads (below). :func:`read_padded_block` cuts a tile plus its margin from
the scene as if the scene had been padded like the training cube. :func:`raw_window` gives
a window without a copy where the source allows (arrays, ``.npy`` maps), and a source
whose ``read_into`` reads one straight into the caller's buffer (float32 ``.npy`` files by
``preadv``, float32 HDF5 datasets by ``read_direct``; :func:`can_read_into`) serves the
fused read-and-scale pass of :func:`hsi.infer.blocks.load_scaled_block`;
:func:`release_pages` lets a memory map drop the pages of the rows it has read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import numpy as np

from hsi.errors import CubeFormatError
from hsi.infer.windows import padded_index

__all__ = ["ArraySource", "NpySource", "SceneSource", "open_scene_source", "raw_window", "can_read_into",
           "read_padded_block", "release_pages"]


class SceneSource(Protocol):
    """What inference needs from a cube."""

    shape: tuple[int, int, int]
    wavelengths: np.ndarray | None
    name: str
    georef: Any  # hsi.io.georef.GeoRef or None

    def read_window(self, rows: slice, cols: slice) -> np.ndarray:
        """``(h, w, C)`` float32 block."""

    def close(self) -> None:
        """Release files."""


class ArraySource:
    """A cube already in memory (or any array-like with numpy slicing), ``(H, W, C)``.

    Parameters
    ----------
    array : (H, W, C) array
        Any numeric dtype; windows come out as float32.
    wavelengths : (C,) array, optional
        Band centres in nm.
    name : str
        Used in error messages.
    georef : hsi.io.georef.GeoRef, optional
        Where the cube lies on the map; the outputs carry it.
    """

    def __init__(self, array: Any, wavelengths: Any = None, name: str = "array", georef: Any = None) -> None:
        if getattr(array, "ndim", None) != 3:
            raise CubeFormatError(f"{name}: a cube must be (H, W, C); found shape {getattr(array, 'shape', None)}")
        self.array = array
        self.shape = tuple(int(s) for s in array.shape)
        self.wavelengths = None if wavelengths is None else np.asarray(wavelengths, dtype=np.float64)
        self.name = name
        self.header: Path | None = None
        self.georef = georef
        self.fwhm: np.ndarray | None = None  # band widths (nm), when known
        self.units: dict[str, Any] | None = None  # what the values are (hsi.io.units), when known

    def read_window(self, rows: slice, cols: slice) -> np.ndarray:
        """``(h, w, C)`` float32 copy of the window."""
        return np.array(self.array[rows, cols], dtype=np.float32, order="C")

    def raw_window(self, rows: slice, cols: slice) -> np.ndarray:
        """The ``(h, w, C)`` window in the array's own dtype, a view where the array allows (no copy)."""
        if isinstance(self.array, np.ndarray):
            return self.array[rows, cols]
        return self.read_window(rows, cols)

    def release(self, rows: tuple[int, int] | None = None) -> None:
        """Nothing to release (see :meth:`NpySource.release`)."""

    def close(self) -> None:
        """Nothing to release."""


class NpySource(ArraySource):
    """A ``.npy`` cube read straight from its read-only memory map; ``layout`` "HWC" (default) or "CHW".

    The file is opened by its reader (:mod:`hsi.io.readers.npy_scene`, through
    :func:`hsi.io.open_cube`: a scene's ``meta.json`` gives wavelengths and georeference);
    windows are then read from the map, or by ``preadv`` into the caller's buffer, with
    the values :meth:`hsi.io.LazyCube.read_window` gives.

    Parameters
    ----------
    path : str or Path
        The ``.npy`` file (or an ``hsi convert --to npy`` scene: its folder, ``cube.npy`` or ``meta.json``).
    layout : str, optional
        Axis order of the stored array; None means "HWC".
    wavelengths : (C,) array, optional
        Band centres in nm, instead of the file's (a lone ``.npy`` file carries none).
    georef : {"check", "ignore"}
        How a scene's georeference is read (:func:`hsi.io.open_cube`).
    """

    def __init__(self, path: str | Path, layout: str | None = None, wavelengths: Any = None,
                 georef: str = "check") -> None:
        from hsi.io import open_cube

        lazy = open_cube(path, layout=layout, georef=georef)
        mapped = lazy.mapped_view()
        if mapped is None:
            lazy.close()
            raise CubeFormatError(f"{path}: its pixels cannot be read straight from a memory map of the file "
                                  f"(not a .npy array); open it with open_scene_source")
        self._attach(lazy, mapped, str(path), wavelengths)

    @classmethod
    def from_lazy(cls, lazy: Any, mapped: tuple[np.ndarray, np.ndarray], name: str) -> NpySource:
        """The source of an opened cube whose :meth:`hsi.io.LazyCube.mapped_view` is ``mapped``."""
        source = cls.__new__(cls)
        source._attach(lazy, mapped, name, None)
        return source

    def _attach(self, lazy: Any, mapped: tuple[np.ndarray, np.ndarray], name: str, wavelengths: Any) -> None:
        array, view = mapped
        super().__init__(view, lazy.wavelengths if wavelengths is None else wavelengths, name, lazy.meta.get("georef"))
        self.fwhm, self.units = lazy.fwhm, lazy.meta.get("units")
        self._mmap = array
        self._data_offset = int(array.offset)
        self._fd = _open_for_preadv(Path(lazy.meta["source"])) if _preadv_fits(view) else None

    #: :meth:`read_into` a few rows at a time costs no more than the whole window at once
    read_into_by_rows = True

    def can_read_into(self, out: np.ndarray) -> bool:
        """Whether :meth:`read_into` can fill ``out``: a native float32 file stored ``H x W x C``, ``out`` C-contiguous float32."""
        return self._fd is not None and out.dtype == np.float32 and out.flags.c_contiguous

    def read_into(self, rows: slice, cols: slice, out: np.ndarray, at: tuple[slice, slice]) -> None:
        """Read the window with ``preadv`` straight into ``out[at]`` (where :meth:`can_read_into`).

        A plain read costs less than a copy out of the memory map: no page faults, and no
        mapped pages to release (2048 x 2048 x 200 in 256 x 256 windows, 2 cores: 0.45 s
        against 0.6-0.7 s). ``at`` selects the window's rows and columns in ``out``; rows
        and columns are contiguous slices within the cube.
        """
        import os

        width, bands = self.shape[1], self.shape[2]
        dst = out[at]
        row_bytes = width * bands * 4
        first = self._data_offset + (rows.start * width + cols.start) * bands * 4
        expected = dst.shape[1] * bands * 4
        for i in range(dst.shape[0]):
            if os.preadv(self._fd, [memoryview(dst[i]).cast("B")], first + i * row_bytes) != expected:
                raise CubeFormatError(f"{self.name}: the file ended before row {rows.start + i} (truncated?)")

    def read_window(self, rows: slice, cols: slice) -> np.ndarray:
        """``(h, w, C)`` float32 copy of the window; the mapped pages are then released.

        Pages of a read-only file mapping count in the process's resident set until
        unmapped, so without the release a pass over a 3 GB ``.npy`` file would end with
        3 GB resident (the data stay in the page cache; only this process lets go of them).
        """
        out = super().read_window(rows, cols)
        self.release()
        return out

    def release(self, rows: tuple[int, int] | None = None) -> None:
        """Let go of the mapped pages read so far (they stay in the page cache), after :meth:`raw_window` reads.

        ``rows`` ``(start, stop)`` limits it to the pages of those scene rows (an HWC file),
        so a block read a few rows at a time never holds more than a few rows' pages.
        """
        from hsi._pages import release_mapped

        whole = rows is None or self.array is not self._mmap  # a C x H x W file: its rows are not scene rows
        release_mapped(self._mmap, None if whole else rows)

    def close(self) -> None:
        """Drop the memory map and the file."""
        import os

        mm = getattr(self._mmap, "_mmap", None)
        self.array = self._mmap = None
        if mm is not None:
            mm.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _preadv_fits(view: np.ndarray) -> bool:
    """Whether :meth:`NpySource.read_into` can read ``view``: native float32, stored C-order ``H x W x C``, ``os.preadv``."""
    import os

    return hasattr(os, "preadv") and view.dtype == np.float32 and view.dtype.isnative and view.flags.c_contiguous


def _open_for_preadv(path: Path) -> int | None:
    """A read-only descriptor of ``path`` (None where it cannot be opened: the memory map then serves alone)."""
    import os

    try:
        return os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None


class LazySource:
    """A cube file opened with :func:`hsi.io.open_cube` (HDF5, MATLAB, ENVI, ERDAS)."""

    def __init__(self, lazy: Any, path: Path) -> None:
        self._lazy = lazy
        self.shape = tuple(int(s) for s in lazy.shape)
        self.wavelengths = lazy.wavelengths
        self.name = str(path)
        self.header = None if lazy.meta.get("header") is None else Path(lazy.meta["header"])  # an ENVI cube's
        self.georef = lazy.meta.get("georef")
        self.fwhm = lazy.fwhm
        self.units = lazy.meta.get("units")

    def read_window(self, rows: slice, cols: slice) -> np.ndarray:
        """``(h, w, C)`` float32 block, as :func:`hsi.io.read_cube` would give those pixels."""
        return self._lazy.read_window(rows, cols)

    #: HDF5 reads each of its chunks once when the window is read whole (in row ranges, again for each range)
    read_into_by_rows = False

    def can_read_into(self, out: np.ndarray) -> bool:
        """Whether :meth:`read_into` can fill ``out`` (:meth:`hsi.io.LazyCube.can_read_into`)."""
        return self._lazy.can_read_into(out)

    def read_into(self, rows: slice, cols: slice, out: np.ndarray, at: tuple[slice, slice]) -> None:
        """The window straight into ``out[at]`` (:meth:`hsi.io.LazyCube.read_window_into`)."""
        self._lazy.read_window_into(rows, cols, out, at)

    def close(self) -> None:
        """Release the file."""
        self._lazy.close()


def raw_window(source: SceneSource, rows: slice, cols: slice) -> np.ndarray:
    """The window in the source's own dtype without a copy where it can (``raw_window``), else ``read_window``."""
    read = getattr(source, "raw_window", None)
    return read(rows, cols) if read is not None else source.read_window(rows, cols)


def can_read_into(source: SceneSource, out: np.ndarray) -> bool:
    """Whether the source reads windows straight into a buffer such as ``out`` (its ``read_into``)."""
    check = getattr(source, "can_read_into", None)
    return bool(check is not None and check(out))


def release_pages(source: SceneSource, rows: tuple[int, int] | None = None) -> None:
    """Call the source's ``release`` (memory-mapped pages let go of, of scene ``rows`` or all) when it has one."""
    release = getattr(source, "release", None)
    if release is None:
        return
    if rows is None:
        release()
    else:
        try:
            release(rows)
        except TypeError:  # a release() of its own that takes no rows
            release()


def open_scene_source(cube: Any, key: str | None = None, layout: str | None = None, georef: str = "check",
                      units: str | None = None, scale: float | None = None) -> SceneSource:
    """A :class:`SceneSource` for a path, an array or an :class:`hsi.io.Cube`.

    Parameters
    ----------
    cube : str, Path, np.ndarray or hsi.io.Cube
        Any file :func:`hsi.io.open_cube` reads (a ``.npy`` file or scene memory-mapped), an
        ``(H, W, C)`` array, or a cube already read.
    key : str, optional
        Variable / dataset name inside a MATLAB or HDF5 file.
    layout : str, optional
        Axis order when the file's cannot be decided ("HWC", "CHW", ...).
    georef : {"check", "ignore"}
        How a cube file's georeference is read (:func:`hsi.io.open_cube`).
    units, scale : optional
        What a cube file's values are and the factor they are divided by on reading, instead of
        what the file declares (:func:`hsi.io.open_cube`; as training was given them).
    """
    from hsi.io import Cube, open_cube

    if isinstance(cube, Cube):
        source = ArraySource(cube.data, cube.wavelengths, str(cube.meta.get("source", "cube")), cube.meta.get("georef"))
        source.fwhm, source.units = cube.fwhm, cube.meta.get("units")
        return source
    if isinstance(cube, np.ndarray):
        return ArraySource(cube)
    path = Path(cube)
    lazy = open_cube(path, key=key, layout=layout, georef=georef, units=units,
                     scale=True if scale is None else float(scale))
    mapped = lazy.mapped_view()  # a .npy file: read from its memory map, without the generic copies
    return LazySource(lazy, path) if mapped is None else NpySource.from_lazy(lazy, mapped, str(path))


def _runs(index: np.ndarray) -> list[tuple[int, int]]:
    """Contiguous ``[start, stop)`` ranges covering the distinct non-negative values of ``index``."""
    values = np.unique(index[index >= 0])
    if values.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(values) != 1) + 1
    return [(int(run[0]), int(run[-1]) + 1) for run in np.split(values, breaks)]


def _is_range(index: np.ndarray) -> bool:
    """True when ``index`` is ``a, a + 1, ..., b`` inside the scene."""
    return bool(index.size and index[0] >= 0 and index[-1] - index[0] == index.size - 1
                and (index.size == 1 or (np.diff(index) == 1).all()))


def read_padded_block(source: SceneSource, rows: tuple[int, int], cols: tuple[int, int], halo: int,
                      mode: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Raw pixels of rows/cols ``[start - halo, stop + halo)`` of the scene padded by ``mode``.

    Only the distinct scene rows and columns needed are read (at most a few contiguous
    windows), then mirrored into place, so the block equals the same window of
    ``numpy.pad(cube, halo, mode)`` without padding the scene.

    Parameters
    ----------
    source : SceneSource
    rows, cols : (start, stop)
        The tile in scene coordinates.
    halo : int
        Margin added on every side.
    mode : str
        Padding mode of the checkpoint (:func:`hsi.infer.windows.padded_index`).

    Returns
    -------
    block : (h + 2 halo, w + 2 halo, C) float32
    outside : (h + 2 halo, w + 2 halo) bool or None
        For "constant"/"zeros" padding, the positions outside the scene (to be set to 0
        after preprocessing); None otherwise.
    """
    height, width, _ = source.shape
    ri = padded_index(rows[0] - halo, rows[1] + halo, height, mode)
    ci = padded_index(cols[0] - halo, cols[1] + halo, width, mode)
    if _is_range(ri) and _is_range(ci):  # an interior tile: one window read, no reordering
        return source.read_window(slice(int(ri[0]), int(ri[-1]) + 1), slice(int(ci[0]), int(ci[-1]) + 1)), None
    row_runs, col_runs = _runs(ri), _runs(ci)
    # compact copy of the needed rows x cols, then one fancy-index gather into the padded order
    row_pos = np.zeros(height, dtype=np.int64)
    col_pos = np.zeros(width, dtype=np.int64)
    nr = sum(b - a for a, b in row_runs)
    nc = sum(b - a for a, b in col_runs)
    compact = np.empty((nr, nc, source.shape[2]), dtype=np.float32)
    r0 = 0
    for a, b in row_runs:
        row_pos[a:b] = np.arange(r0, r0 + b - a)
        c0 = 0
        for c, d in col_runs:
            col_pos[c:d] = np.arange(c0, c0 + d - c)
            compact[r0 : r0 + b - a, c0 : c0 + d - c] = source.read_window(slice(a, b), slice(c, d))
            c0 += d - c
        r0 += b - a
    block = compact[row_pos[np.maximum(ri, 0)][:, None], col_pos[np.maximum(ci, 0)][None, :]]
    outside = None
    if mode in ("constant", "zeros"):
        outside = (ri < 0)[:, None] | (ci < 0)[None, :]
    return block, outside
