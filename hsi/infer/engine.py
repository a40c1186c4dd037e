"""The tile pass: which tiles a process computes, and the loop that reads, predicts and blends them.

A :class:`TileJob` is everything one pass needs (model, source, grid, blend window). With
several processes, tile rows are cut into contiguous shards (:meth:`TileJob.shard`); each
process owns the output rows of its shard and also computes the neighbouring tiles that
overlap those rows, so every owned pixel is blended from exactly the tiles a one-process
run uses and the shards write disjoint rows of the shared maps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hsi.infer.arrays import ResultArrays
from hsi.infer.blend import DirectWriter, RowBlender
from hsi.infer.checkpoint import InferenceModel
from hsi.infer.predict import TilePredictor, preprocess_block
from hsi.infer.sources import SceneSource, read_padded_block
from hsi.infer.windows import TileGrid, weight_window
from hsi.preprocess._base import nodata_mask

__all__ = ["TileJob", "run_tiles"]


@dataclass
class TileJob:
    """One whole-scene pass.

    Attributes
    ----------
    model : InferenceModel
    source : SceneSource
    grid : TileGrid
    blend : str
        Weight window name (:func:`hsi.infer.windows.weight_window`).
    rgb_bands : list[int] or None
        Raw band indices copied into ``results.rgb`` while tiles are read.
    """

    model: InferenceModel
    source: SceneSource
    grid: TileGrid
    blend: str
    rgb_bands: list[int] | None = None

    @classmethod
    def build(cls, model: InferenceModel, source: SceneSource, tile: int, overlap: int, blend: str,
              rgb_bands: list[int] | None = None) -> TileJob:
        """The job for ``tile``/``overlap``; patch-centre models use no overlap (each pixel once)."""
        height, width = source.shape[:2]
        return cls(model, source, TileGrid.build(height, width, tile, overlap if model.dense else 0), blend, rgb_bands)

    def shard(self, rank: int, world: int) -> tuple[list[tuple[int, int]], tuple[int, int]]:
        """Tiles ``(y, x)`` to compute and output rows ``(lo, hi)`` owned by ``rank`` of ``world``."""
        grid = self.grid
        mine = np.array_split(np.arange(len(grid.row_starts)), world)[rank]
        if mine.size == 0:
            return [], (0, 0)
        lo, hi = grid.owned_rows(int(mine[0]), int(mine[-1]) + 1)
        rows = grid.rows_touching(lo, hi)
        return [(grid.row_starts[i], x) for i in rows for x in grid.col_starts], (lo, hi)

    def blender(self, results: ResultArrays, owned: tuple[int, int]) -> RowBlender | DirectWriter:
        """A blender writing rows ``owned`` of ``results`` (a direct writer when tiles do not overlap)."""
        g = self.grid
        if g.overlap == 0:
            return DirectWriter(g, results, owned)
        return RowBlender(g.width, g.tile_h, self.model.num_classes, weight_window(g.tile_h, g.tile_w, self.blend),
                          results, owned)

    def load(self, y: int, x: int, results: ResultArrays,
             owned: tuple[int, int]) -> tuple[np.ndarray, np.ndarray | None]:
        """The preprocessed block (tile plus margin) of the tile at ``(y, x)`` and the tile's no-data mask.

        The mask (``(tile_h, tile_w)`` bool, None when every pixel has data) is taken from
        the raw pixels, before the pipeline's fill gives them training medians: those
        pixels are left unclassified, while their filled values still serve as context
        in their neighbours' windows, as in training. Also copies the false-colour bands.
        """
        g, m = self.grid, self.model
        rows, cols = (y, y + g.tile_h), (x, x + g.tile_w)
        raw, outside = read_padded_block(self.source, rows, cols, m.halo, m.padding)
        h = m.halo
        nodata = nodata_mask(raw[h : h + g.tile_h, h : h + g.tile_w])
        if self.rgb_bands is not None and results.rgb is not None:
            lo, hi = max(rows[0], owned[0]), min(rows[1], owned[1])
            if hi > lo:
                results.rgb[lo:hi, cols[0] : cols[1]] = raw[h + lo - y : h + hi - y, h : h + g.tile_w][..., self.rgb_bands]
        if nodata is not None and nodata.all():
            return raw, nodata  # nothing to classify: the predictor returns zeros without a forward pass
        where = f"{self.source.name} rows {rows[0]}..{rows[1] - 1}, cols {cols[0]}..{cols[1] - 1}"
        return preprocess_block(m.pipeline, raw, outside, where), nodata

    def tile(self, predictor: TilePredictor, y: int, x: int, results: ResultArrays,
             owned: tuple[int, int]) -> np.ndarray:
        """``(h, w, K)`` probabilities of the tile at ``(y, x)`` (:meth:`load` then ``predictor``); 0 at no-data."""
        return predictor(*self.load(y, x, results, owned))


def run_tiles(job: TileJob, predictor: TilePredictor, results: ResultArrays, tiles: list[tuple[int, int]],
              owned: tuple[int, int], progress: bool = True, prefetch: bool = True) -> None:
    """Compute, blend and write ``tiles`` (in row order) into the ``owned`` rows of ``results``.

    The next tile is read and preprocessed in a background thread while the current one
    is on the model (numpy, h5py and torch release the GIL), so reading overlaps compute;
    the order of blending, hence the result, is that of ``tiles``. ``prefetch=False``
    reads in the calling thread (one block in memory at a time).
    """
    from concurrent.futures import ThreadPoolExecutor

    from hsi._progress import progress_bar

    blender = job.blender(results, owned)
    bar = progress_bar(len(tiles), "tiles", "tile", show=progress, leave=False)  # piped: a line per 10 % of tiles
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hsi-infer-read") as pool:
        reader = pool if prefetch else _Inline()
        try:
            pending = reader.submit(job.load, *tiles[0], results, owned) if tiles else None
            for i, (y, x) in enumerate(tiles):
                block, nodata = pending.result()
                pending = reader.submit(job.load, *tiles[i + 1], results, owned) if i + 1 < len(tiles) else None
                blender.add(y, x, predictor(block, nodata))
                bar.update(1)
            blender.finish(job.grid.height)
        finally:
            if pending is not None:
                pending.cancel()
            bar.close()


class _Inline:
    """``submit`` that runs at once (the no-prefetch reader)."""

    def submit(self, fn, *args):
        from concurrent.futures import Future

        future: Future = Future()
        try:
            future.set_result(fn(*args))
        except BaseException as err:  # handed to .result(), as a thread pool would
            future.set_exception(err)
        return future
