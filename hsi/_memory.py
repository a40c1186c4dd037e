"""This process's memory: its resident set, its peak, and handing freed heap memory back to the system.

Linux-only facts read from ``/proc/self`` (``statm``, ``status``, ``clear_refs``) and glibc's
``malloc_trim``; elsewhere each helper answers "unknown" (0, None or False) or does nothing,
so callers never branch on the platform. Used by the inference predictor (:class:`Trimmer`)
and by the benchmarks that report peak memory.
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path
from typing import Any

__all__ = ["Trimmer", "peak_rss_mb", "release_freed_memory", "reset_peak_rss", "rss_bytes", "status_kb"]


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to do
        return None


def release_freed_memory() -> None:
    """Hand memory freed by the forward passes back to the system (glibc ``malloc_trim``).

    The conv layers' buffers of a few to a few tens of MB come from glibc's per-thread
    arenas, which keep freed memory; over the thousands of batches of a large scene the
    resident set was seen to grow by GBs (2 to 3 GB for cnn2d at tile 256) although the
    live memory stayed near 600 MB. The predictor trims every 64 tiles or batches, and whenever
    the resident set has grown by 256 MB since the last trim (:class:`Trimmer`): trimming after
    every one made each forward pass fault its buffers in again.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _page_size() -> int:
    return int(os.sysconf("SC_PAGE_SIZE")) if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int:
    """Resident set of this process (Linux ``/proc/self/statm``; 0 where unknown)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _page_size()
    except (OSError, ValueError, IndexError):
        return 0


def status_kb(key: str) -> int | None:
    """``key`` of ``/proc/self/status`` in kB (``VmRSS``, ``VmHWM``, ``RssFile``); None where there is none."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def reset_peak_rss() -> bool:
    """Reset this process's peak resident set (``VmHWM``) to its current one (Linux >= 4.0); False where it cannot."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float:
    """Peak resident set of this process in MB since start or the last :func:`reset_peak_rss` (Linux ``VmHWM``),
    else ``ru_maxrss`` (which cannot be reset)."""
    peak = status_kb("VmHWM")
    if peak is not None:
        return peak / 1024.0
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class Trimmer:
    """:func:`release_freed_memory` now and then: every ``every`` calls, or once the resident set grew by ``grow``.

    Trimming after every tile or batch made the next forward pass fault its buffers in again.
    """

    def __init__(self, every: int = 64, grow: int = 256 << 20) -> None:
        self.every, self.grow = int(every), int(grow)
        self.calls = 0
        self.base = rss_bytes()

    def __call__(self) -> None:
        self.calls += 1
        rss = rss_bytes()
        if self.calls % self.every == 0 or rss > self.base + self.grow:
            release_freed_memory()
            self.base = rss_bytes()
