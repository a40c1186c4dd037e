"""Letting go of a memory map's resident pages, so that reading a map through does not grow the process.

The pages of a file mapping stay in the page cache (and, once written, reach the file); only
this process's resident set lets go of them, and a later access maps them in again.
"""

from __future__ import annotations

import mmap
from typing import Any

__all__ = ["release_mapped"]


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
