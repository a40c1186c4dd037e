"""Reading a large array through in strips of rows, letting go of a memory map's pages behind.

:func:`row_strips` cuts an array's rows into strips of a bounded size, so that no step holds
a whole map or its copy; :func:`release_mapped` drops a memory map's resident pages once a
strip is read. The pages of a file mapping stay in the page cache (and, once written, reach
the file); only this process's resident set lets go of them, and a later access maps them
in again.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from typing import Any

__all__ = ["release_mapped", "row_strips"]


def row_strips(height: int, row_size: int, budget: int, multiple: int = 1) -> Iterator[slice]:
    """Slices covering rows ``0..height`` in order, each of about ``budget`` (in the unit of ``row_size``).

    Parameters
    ----------
    height : int
        Rows to cover.
    row_size : int
        Size of one row: bytes or pixels, as ``budget`` is given.
    budget : int
        Size a strip stays within, where a single step of ``multiple`` rows allows.
    multiple : int
        Every strip but the last has a multiple of this many rows (whole GeoTIFF tile rows,
        or whole decimation steps so that every strip starts on the grid).
    """
    multiple = max(1, int(multiple))
    rows = multiple * max(1, budget // max(1, row_size * multiple))
    for start in range(0, height, rows):
        yield slice(start, min(start + rows, height))


def release_mapped(array: Any, rows: tuple[int, int] | None = None) -> None:
    """Drop this process's resident pages of the memory map ``array``: of rows ``start..stop``, or all.

    Rows are released only for a whole C-ordered ``numpy.memmap`` (one whose base is its
    mapping; a view of it releases every page). Anything that is not a memory map is left alone.
    """
    mm = getattr(array, "_mmap", None)
    if mm is None or not hasattr(mm, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return
    if rows is None or not isinstance(array.base, mmap.mmap) or not array.flags.c_contiguous:
        mm.madvise(mmap.MADV_DONTNEED)
        return
    row_bytes = array.strides[0] if array.ndim else array.nbytes
    base = int(array.offset) % mmap.ALLOCATIONGRANULARITY  # where numpy's mapping puts the array
    start = base + rows[0] * row_bytes
    start -= start % mmap.PAGESIZE
    stop = min(len(mm), base + rows[1] * row_bytes)
    if stop > start:
        mm.madvise(mmap.MADV_DONTNEED, start, stop - start)
