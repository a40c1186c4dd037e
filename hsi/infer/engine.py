"""The tile pass: which tiles a process computes, and the loop that reads, predicts and blends them.

A :class:`TileJob` is everything one pass needs (model, source, grid, blend window). With
several processes, tile rows are cut into contiguous shards (:meth:`TileJob.shard`); each
process owns the output rows of its shard and also computes the neighbouring tiles that
overlap those rows, so every owned pixel is blended from exactly the tiles a one-process
run uses and the shards write disjoint rows of the shared maps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from hsi.infer.arrays import ResultArrays
from hsi.infer.blend import DirectWriter, RowBlender
from hsi.infer.checkpoint import InferenceModel
from hsi.infer.blocks import BandSample, can_fuse, load_block_on_device, load_scaled_block, preprocess_block
from hsi.infer.predict import TilePredictor
from hsi.infer.sources import SceneSource, read_padded_block
from hsi.infer.windows import TileGrid, weight_window
from hsi.preprocess._base import nodata_mask

__all__ = ["TileJob", "add_tile", "maps_only", "prefetch_depth", "run_tiles"]


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
        Raw band indices copied into ``results.rgb`` while tiles are read, at the pixels the
        false-colour preview draws (every :func:`hsi.viz.preview_step`-th row and column).
    """

    model: InferenceModel
    source: SceneSource
    grid: TileGrid
    blend: str
    rgb_bands: list[int] | None = None

    @property
    def rgb_step(self) -> int:
        """Rows and columns between the pixels whose false-colour bands are kept."""
        from hsi.viz import preview_step

        return preview_step((self.grid.height, self.grid.width))

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

    def block_buffer(self, device: Any = "cpu") -> np.ndarray | None:
        """A reusable ``(tile_h + 2 halo, tile_w + 2 halo, C)`` float32 block buffer, pinned for a CUDA device.

        None when the model's pipeline cannot be fused with the read (:func:`hsi.infer.blocks.can_fuse`):
        those blocks are gathered and preprocessed by the general path.
        """
        g, m = self.grid, self.model
        bands = self.source.shape[2]
        if not can_fuse(m.pipeline, bands):
            return None
        shape = (g.tile_h + 2 * m.halo, g.tile_w + 2 * m.halo, bands)
        pin = torch.device(device).type == "cuda" and torch.cuda.is_available()
        return torch.empty(shape, dtype=torch.float32, pin_memory=pin).numpy()

    def block_bytes(self) -> int:
        """Bytes of one raw float32 block (tile plus margin, every band)."""
        g, h = self.grid, self.model.halo
        return (g.tile_h + 2 * h) * (g.tile_w + 2 * h) * self.source.shape[2] * 4

    def load(self, y: int, x: int, results: ResultArrays, owned: tuple[int, int], out: np.ndarray | None = None,
             threads: bool = False, device: torch.device | None = None) -> tuple[Any, np.ndarray | None]:
        """The preprocessed block (tile plus margin) of the tile at ``(y, x)`` and the tile's no-data mask.

        The mask (``(tile_h, tile_w)`` bool, None when every pixel has data) is taken from
        the raw pixels, before the pipeline's fill gives them training medians: those
        pixels are left unclassified, while their filled values still serve as context
        in their neighbours' windows, as in training. Also copies the false-colour bands.
        With ``out`` (a :meth:`block_buffer`) the block is read and preprocessed in one
        pass into it (:func:`hsi.infer.blocks.load_scaled_block`) where the pipeline and
        padding allow; the values are the same either way. ``threads``: the read is in the
        thread that runs the model, so the scaling may use torch's intra-op threads.
        ``device``: preprocess on that device (:func:`hsi.infer.blocks.load_block_on_device`)
        where the block allows, and return it there as a tensor; the host only reads.
        """
        g, m = self.grid, self.model
        rows, cols = (y, y + g.tile_h), (x, x + g.tile_w)
        sample, at = self._rgb_sample(results, rows, cols, owned)
        fast = None
        if out is not None and device is not None:
            fast = load_block_on_device(self.source, rows, cols, m.halo, m.padding, m.pipeline, out, device, sample)
        if fast is None and out is not None:
            fast = load_scaled_block(self.source, rows, cols, m.halo, m.padding, m.pipeline, out, sample, threads)
        if fast is not None:
            block, nodata, kept = fast
            if kept is not None:
                results.rgb[at] = kept
            return block, nodata
        raw, outside = read_padded_block(self.source, rows, cols, m.halo, m.padding)
        h = m.halo
        nodata = nodata_mask(raw[h : h + g.tile_h, h : h + g.tile_w])
        if sample is not None:
            results.rgb[at] = sample.take(raw[h : h + g.tile_h, h : h + g.tile_w])
        if nodata is not None and nodata.all():
            return raw, nodata  # nothing to classify: the predictor returns zeros without a forward pass
        where = f"{self.source.name} rows {rows[0]}..{rows[1] - 1}, cols {cols[0]}..{cols[1] - 1}"
        return preprocess_block(m.pipeline, raw, outside, where), nodata

    def _rgb_sample(self, results: ResultArrays, rows: tuple[int, int], cols: tuple[int, int],
                    owned: tuple[int, int]) -> tuple[BandSample | None, tuple[slice, slice]]:
        """The preview pixels among the tile's owned rows, and where their bands go in ``results.rgb``.

        ``(None, ...)`` when no false-colour bands are kept or the tile holds none of those pixels.
        """
        if self.rgb_bands is None or results.rgb is None:
            return None, (slice(0), slice(0))
        step = self.rgb_step
        first_row = -(-max(rows[0], owned[0]) // step) * step
        first_col = -(-cols[0] // step) * step
        kept_rows = np.arange(first_row, min(rows[1], owned[1]), step)
        kept_cols = np.arange(first_col, cols[1], step)
        if not kept_rows.size or not kept_cols.size:
            return None, (slice(0), slice(0))
        at = (slice(first_row // step, first_row // step + kept_rows.size),
              slice(first_col // step, first_col // step + kept_cols.size))
        return BandSample(self.rgb_bands, kept_rows - rows[0], kept_cols - cols[0]), at

    def tile(self, predictor: TilePredictor, y: int, x: int, results: ResultArrays,
             owned: tuple[int, int]) -> np.ndarray:
        """``(h, w, K)`` probabilities of the tile at ``(y, x)`` (:meth:`load` then ``predictor``); 0 at no-data."""
        return predictor(*self.load(y, x, results, owned))


def maps_only(results: ResultArrays, blender: RowBlender | DirectWriter) -> bool:
    """True when only labels and confidence are written: tiles go straight to maps, no probabilities kept."""
    return results.probabilities is None and isinstance(blender, DirectWriter)


def add_tile(predictor: TilePredictor, blender: RowBlender | DirectWriter, maps: bool, y: int, x: int,
             block: Any, nodata: np.ndarray | None, threads: bool = False) -> None:
    """Predict the tile at ``(y, x)`` from its block and hand it to ``blender`` (as maps when ``maps``).

    ``threads``: no reader thread holds a core, so the labels and confidence may use torch's intra-op threads.
    """
    if maps:
        blender.add_maps(y, x, *predictor.maps(block, nodata, threads=threads))
    else:
        blender.add(y, x, predictor(block, nodata))


def prefetch_depth(block_bytes: int) -> int:
    """Blocks read ahead of the one on the model, by cores and memory.

    0 on up to 2 cores: the reader would take the cores the forward pass uses (fcn on 2
    cores was measured level with and without a reader thread, which costs one more
    block of memory); 1 on up to 4 cores; beyond, one reader thread per 4 cores (at most
    4), each block read ahead holding one buffer of ``block_bytes``, all of them within an
    eighth of the available memory.
    """
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if cores <= 2:
        return 0
    if cores <= 4:
        return 1
    available = _available_bytes()
    by_memory = available // (8 * max(1, block_bytes)) if available else 1
    return int(max(1, min(cores // 4, 4, by_memory)))


def _available_bytes() -> int:
    """``MemAvailable`` of ``/proc/meminfo`` (0 where unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def run_tiles(job: TileJob, predictor: TilePredictor, results: ResultArrays, tiles: list[tuple[int, int]],
              owned: tuple[int, int], progress: bool = True, prefetch: bool = True) -> None:
    """Compute, blend and write ``tiles`` (in row order) into the ``owned`` rows of ``results``.

    Where cores allow (:func:`prefetch_depth`), the next tiles are read and preprocessed in
    background threads, each into a buffer of its own from a small ring, while the current
    one is on the model (numpy, h5py and torch release the GIL), so reading overlaps
    compute; the order of blending, hence the result, is that of ``tiles``. Otherwise, or
    with ``prefetch=False``, tiles are read in the calling thread, each after the previous
    one was computed (one block in memory at a time), and the host's scaling, labels and
    confidence then run on torch's intra-op threads, which nothing else holds. A dense model
    on an accelerator gets its blocks preprocessed there (``predictor.scales_on_device``),
    so the host only reads. Only labels and
    confidence are computed when no probabilities are kept and tiles do not overlap
    (:func:`maps_only`). Memory-mapped maps let go of their written pages after every tile
    (:meth:`~hsi.infer.arrays.ResultArrays.release_pages`).
    """
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    from hsi._progress import progress_bar

    blender = job.blender(results, owned)
    maps = maps_only(results, blender) and hasattr(predictor, "maps")
    device = getattr(predictor, "device", "cpu")
    first = job.block_buffer(device)
    depth = prefetch_depth(job.block_bytes()) if prefetch else 0
    buffers = [first] + [job.block_buffer(device) for _ in range(depth)]
    inline = depth == 0
    scale_on = device if getattr(predictor, "scales_on_device", False) else None
    bar = progress_bar(len(tiles), "tiles", "tile", show=progress, leave=False)  # piped: a line per 10 % of tiles
    with ThreadPoolExecutor(max_workers=max(depth, 1), thread_name_prefix="hsi-infer-read") as pool:
        reader = pool if depth else _Inline()
        pending: deque = deque()

        def submit(i: int) -> None:
            if i < len(tiles):
                pending.append(reader.submit(job.load, *tiles[i], results, owned, buffers[i % len(buffers)], inline,
                                             scale_on))

        try:
            for i in range(len(buffers)):
                submit(i)
            for i, (y, x) in enumerate(tiles):
                block, nodata = pending.popleft().result()
                add_tile(predictor, blender, maps, y, x, block, nodata, inline)
                submit(i + len(buffers))  # into the buffer just used
                results.release_pages()  # written map pages leave the resident set
                bar.update(1)
            blender.finish(job.grid.height)
        finally:
            for future in pending:
                future.cancel()
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
