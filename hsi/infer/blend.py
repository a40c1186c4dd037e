"""Weighted blending of overlapping tiles, one band of rows at a time, on the host.

Tiles arrive row of tiles by row of tiles (increasing start rows). The blender keeps sums
``sum(w * p)`` and ``sum(w)`` for the rows the current row of tiles covers; when the next
row of tiles starts at row ``y``, rows above ``y`` can receive nothing more, so they are
divided by their summed weight and handed to the result arrays. Memory is therefore one
row of tiles (``tile x W x K`` floats), whatever the scene height.

Without overlap there is nothing to blend: :class:`DirectWriter` hands each tile's own
pixels (:meth:`hsi.infer.windows.TileGrid.own_span`) straight to the result arrays.
"""

from __future__ import annotations

import numpy as np

from hsi.infer.arrays import ResultArrays
from hsi.infer.windows import TileGrid

__all__ = ["DirectWriter", "RowBlender"]


class DirectWriter:
    """Write every tile's own pixels into rows ``[lo, hi)`` of ``results`` (a grid without overlap).

    Where the last tile of an axis was moved back to the scene edge, the pixels it shares
    with its neighbour are taken from the neighbour, which owns them; with a margin of
    the receptive radius both tiles computed the same values there.
    """

    def __init__(self, grid: TileGrid, results: ResultArrays, owned: tuple[int, int]) -> None:
        self.grid = grid
        self.results = results
        self.owned = (int(owned[0]), int(owned[1]))

    def add(self, y: int, x: int, probs: np.ndarray) -> None:
        """Write the owned part of the ``(h, w, K)`` probabilities of the tile at ``(y, x)``."""
        top, bottom = self.grid.own_span(y, 0)
        top, bottom = max(top, self.owned[0]), min(bottom, self.owned[1])
        left, right = self.grid.own_span(x, 1)
        if bottom > top:
            self.results.write_block(top, left, probs[top - y : bottom - y, left - x : right - x])

    def add_maps(self, y: int, x: int, labels: np.ndarray, confidence: np.ndarray) -> None:
        """Write the owned part of the ``(h, w)`` labels and confidence of the tile at ``(y, x)``."""
        top, bottom = self.grid.own_span(y, 0)
        top, bottom = max(top, self.owned[0]), min(bottom, self.owned[1])
        left, right = self.grid.own_span(x, 1)
        if bottom > top:
            rows, cols = slice(top - y, bottom - y), slice(left - x, right - x)
            self.results.write_maps(top, left, labels[rows, cols], confidence[rows, cols])

    def finish(self, height: int) -> None:
        """Nothing is held back."""


class RowBlender:
    """Accumulate tile probabilities and write finished rows into ``[lo, hi)`` of ``results``.

    Parameters
    ----------
    width : int
        Scene width ``W``.
    band_height : int
        Height of one row of tiles.
    num_classes : int
    weights : (band_height, tile_w) float32
        The blend window of a full tile (:func:`hsi.infer.windows.weight_window`).
    results : ResultArrays
        Where finished rows go.
    owned : (lo, hi)
        Rows this process writes; finished rows outside are dropped (another process owns them).
    """

    def __init__(self, width: int, band_height: int, num_classes: int, weights: np.ndarray,
                 results: ResultArrays, owned: tuple[int, int]) -> None:
        self.weights = weights
        self.results = results
        self.owned = (int(owned[0]), int(owned[1]))
        self.base: int | None = None
        self.sum_p = np.zeros((band_height, width, num_classes), dtype=np.float32)
        self.sum_w = np.zeros((band_height, width), dtype=np.float32)

    def add(self, y: int, x: int, probs: np.ndarray) -> None:
        """Add the ``(h, w, K)`` probabilities of the tile whose top-left pixel is ``(y, x)``."""
        if self.base is None:
            self.base = y
        elif y < self.base:
            raise ValueError(f"tiles must come in increasing rows: tile at row {y} after row {self.base}")
        elif y > self.base:
            self._advance(y)
        h, w = probs.shape[:2]
        wt = self.weights[:h, :w]
        r = y - self.base
        self.sum_p[r : r + h, x : x + w] += probs * wt[:, :, None]
        self.sum_w[r : r + h, x : x + w] += wt

    def _advance(self, y: int) -> None:
        """Finish rows ``[base, y)`` and move the band down so that it starts at ``y``."""
        n = self.sum_w.shape[0]
        done = min(y - self.base, n)
        self._emit(self.base, done)
        keep = n - done
        self.sum_p[:keep] = self.sum_p[done:]
        self.sum_w[:keep] = self.sum_w[done:]
        self.sum_p[keep:] = 0.0
        self.sum_w[keep:] = 0.0
        self.base = y

    def _emit(self, start: int, count: int) -> None:
        lo, hi = max(start, self.owned[0]), min(start + count, self.owned[1])
        if hi <= lo:
            return
        a, b = lo - start, hi - start
        w = self.sum_w[a:b]
        if (w <= 0).any():
            raise RuntimeError(f"rows {lo}..{hi - 1}: some pixels were covered by no tile (tile grid bug)")
        self.results.write_rows(lo, self.sum_p[a:b] / w[:, :, None])

    def finish(self, height: int) -> None:
        """Finish every remaining row (up to the scene height)."""
        if self.base is not None:
            self._emit(self.base, min(self.sum_w.shape[0], height - self.base))
            self.base = None
