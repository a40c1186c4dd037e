"""Tile grids, blend weight windows and padded index maps for whole-scene inference.

A scene axis of length ``n`` is covered by tiles of length ``t = min(tile, n)`` starting
every ``t - overlap`` pixels; the last tile is moved back to end exactly at the scene edge,
so tiles that do not divide the scene still cover it without running off it. Each tile's
input also carries a margin (``halo``) read from the scene padded as in training, so a
pixel's output does not depend on which tile computed it. :func:`block_plan` and
:func:`fill_strips` build that margin from the block's own edge strips (one scene window
read, the strips copied), which equals ``numpy.pad`` of the whole scene.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hsi.errors import OptionError

__all__ = ["BlockPlan", "TileGrid", "block_plan", "fill_strips", "padded_index", "tile_starts", "weight_window"]


def tile_starts(n: int, tile: int, overlap: int) -> list[int]:
    """Start offsets of tiles of length ``min(tile, n)`` covering ``0..n`` with ``overlap``.

    Parameters
    ----------
    n : int
        Axis length (>= 1).
    tile : int
        Tile length (>= 1); clipped to ``n``.
    overlap : int
        Pixels shared by consecutive tiles, ``0 <= overlap < tile``.

    Returns
    -------
    list[int]
        Increasing starts; the first is 0 and the last is ``n - min(tile, n)``.
    """
    t = min(tile, n)
    stride = max(t - overlap, 1)
    starts = list(range(0, n - t + 1, stride))
    if starts[-1] != n - t:
        starts.append(n - t)
    return starts


@dataclass(frozen=True)
class TileGrid:
    """The tiles of an ``H x W`` scene.

    Attributes
    ----------
    height, width : int
        Scene size.
    tile_h, tile_w : int
        Tile size (``tile`` clipped to the scene).
    row_starts, col_starts : tuple[int, ...]
        Tile starts along each axis (:func:`tile_starts`).
    overlap : int
        Pixels that consecutive tiles were asked to share (the last tile of an axis may
        share more, having been moved back to the scene edge).
    """

    height: int
    width: int
    tile_h: int
    tile_w: int
    row_starts: tuple[int, ...]
    col_starts: tuple[int, ...]
    overlap: int = 0

    @classmethod
    def build(cls, height: int, width: int, tile: int, overlap: int) -> TileGrid:
        """The grid of ``tile x tile`` tiles overlapping by ``overlap`` (both clipped to the scene)."""
        return cls(height, width, min(tile, height), min(tile, width),
                   tuple(tile_starts(height, tile, overlap)), tuple(tile_starts(width, tile, overlap)), int(overlap))

    @property
    def n_tiles(self) -> int:
        """Number of tiles."""
        return len(self.row_starts) * len(self.col_starts)

    def own_span(self, start: int, axis: int) -> tuple[int, int]:
        """``[start, end)`` that the tile starting at ``start`` owns along ``axis`` (0 rows, 1 columns).

        A tile owns the pixels from its start to the next tile's start (the last one to the
        scene edge), so the spans of an axis are disjoint and cover it.
        """
        starts, n = (self.row_starts, self.height) if axis == 0 else (self.col_starts, self.width)
        i = starts.index(start)
        return start, starts[i + 1] if i + 1 < len(starts) else n

    def owned_rows(self, first: int, stop: int) -> tuple[int, int]:
        """Output rows ``[lo, hi)`` owned by the tile rows ``first..stop-1``.

        Tile row ``i`` owns the rows from its start to the next row's start (the last
        one to the scene edge), so consecutive ranges of tile rows own disjoint rows.
        """
        lo = 0 if first == 0 else self.row_starts[first]
        hi = self.height if stop >= len(self.row_starts) else self.row_starts[stop]
        return lo, hi

    def rows_touching(self, lo: int, hi: int) -> list[int]:
        """Indices of the tile rows that write into output rows ``[lo, hi)``."""
        return [i for i, y in enumerate(self.row_starts) if y < hi and y + self.tile_h > lo]


def weight_window(height: int, width: int, blend: str) -> np.ndarray:
    """The ``(height, width)`` float32 blend weights of one tile, all > 0, maximum 1.

    Parameters
    ----------
    height, width : int
        Tile size.
    blend : str
        "mean" (all ones), "gaussian" (sigma 1/8 of the side, centred) or "hann"
        (raised cosine that would vanish one pixel beyond each edge).

    Returns
    -------
    np.ndarray
        Outer product of the two 1-D windows, clamped below at 1e-3 so that edge pixels
        of the scene, covered by one tile only, stay defined.
    """

    def one(n: int) -> np.ndarray:
        if blend == "mean":
            return np.ones(n)
        i = np.arange(n, dtype=np.float64)
        if blend == "gaussian":
            sigma = max(n / 8.0, 1e-6)
            return np.exp(-0.5 * ((i - (n - 1) / 2.0) / sigma) ** 2)
        if blend == "hann":
            return 0.5 - 0.5 * np.cos(2.0 * np.pi * (i + 1) / (n + 1))
        raise OptionError("blend", blend, "one of gaussian, hann, mean")

    w = np.outer(one(height), one(width))
    w /= w.max()
    return np.maximum(w, 1e-3).astype(np.float32)


def padded_index(start: int, stop: int, n: int, mode: str) -> np.ndarray:
    """Source indices of positions ``start..stop-1`` of an axis of length ``n`` padded by ``mode``.

    Positions outside ``0..n-1`` map as ``numpy.pad`` would: "reflect" mirrors without
    repeating the edge, "symmetric" repeats it, "edge" clamps, "wrap" wraps around;
    "constant"/"zeros" give -1 (the caller fills those with 0 after preprocessing).

    Returns
    -------
    np.ndarray
        ``(stop - start,)`` int64.
    """
    i = np.arange(start, stop, dtype=np.int64)
    if mode in ("constant", "zeros"):
        return np.where((i >= 0) & (i < n), i, -1)
    if mode == "edge":
        return np.clip(i, 0, n - 1)
    if mode == "wrap":
        return np.mod(i, n)
    if mode in ("reflect", "symmetric"):
        if n == 1:
            return np.zeros_like(i)
        if mode == "reflect":
            period = 2 * n - 2
            j = np.mod(i, period)
            return np.where(j < n, j, period - j)
        period = 2 * n
        j = np.mod(i, period)
        return np.where(j < n, j, period - 1 - j)
    raise OptionError("padding", mode, "one of reflect, symmetric, edge, constant, zeros, wrap")


@dataclass(frozen=True)
class BlockPlan:
    """How a padded block is made from one scene window and copies of its own edge strips.

    Attributes
    ----------
    scene_rows, scene_cols : (start, stop)
        The scene window read (the block's positions inside the scene: its *core*).
    top, left : int
        Block position of the core's first row and column.
    row_src, col_src : np.ndarray
        ``(block_h,)`` / ``(block_w,)`` int64: the block row (column) each block row
        (column) copies, itself inside the core; -1 where zero padding puts a 0.
    """

    scene_rows: tuple[int, int]
    scene_cols: tuple[int, int]
    top: int
    left: int
    row_src: np.ndarray
    col_src: np.ndarray

    @property
    def bottom(self) -> int:
        """Block row after the core's last one."""
        return self.top + self.scene_rows[1] - self.scene_rows[0]

    @property
    def right(self) -> int:
        """Block column after the core's last one."""
        return self.left + self.scene_cols[1] - self.scene_cols[0]


def _axis_plan(start: int, stop: int, halo: int, n: int, mode: str) -> tuple[tuple[int, int], int, np.ndarray] | None:
    """Scene span, core offset and source positions of one block axis; None when a source lies outside the core."""
    index = padded_index(start - halo, stop + halo, n, mode)
    lo, hi = max(0, start - halo), min(n, stop + halo)
    offset = start - halo
    src = np.where(index >= 0, index - offset, -1)
    inside = src[src >= 0]
    if inside.size and (inside.min() < lo - offset or inside.max() >= hi - offset):
        return None
    return (lo, hi), lo - offset, src


def block_plan(rows: tuple[int, int], cols: tuple[int, int], halo: int, height: int, width: int,
               mode: str) -> BlockPlan | None:
    """The :class:`BlockPlan` of the tile ``rows`` x ``cols`` with margin ``halo``, or None.

    None when some padded position copies a scene pixel outside the block's core (a
    "wrap" padding, or a scene narrower than the margin): the caller then gathers the
    block from the scene (:func:`hsi.infer.sources.read_padded_block`).
    """
    r = _axis_plan(rows[0], rows[1], halo, height, mode)
    c = _axis_plan(cols[0], cols[1], halo, width, mode)
    if r is None or c is None:
        return None
    return BlockPlan(r[0], c[0], r[1], c[1], r[2], c[2])


def fill_strips(block: np.ndarray, plan: BlockPlan) -> None:
    """Fill the margin of ``block`` around its core in place, as ``numpy.pad`` of the scene would.

    Only the thin edge strips are written: the left and right strips of the core rows from
    the core's columns, then the top and bottom strips (full width, corners included)
    from the rows so completed; zero padding writes zeros.
    """
    a, b, c, d = plan.top, plan.bottom, plan.left, plan.right
    for cols in (slice(0, c), slice(d, block.shape[1])):
        src = plan.col_src[cols]
        if src.size:
            block[a:b, cols] = 0.0 if src[0] < 0 else block[a:b, src]
    for rows in (slice(0, a), slice(b, block.shape[0])):
        src = plan.row_src[rows]
        if src.size:
            block[rows] = 0.0 if src[0] < 0 else block[src]
