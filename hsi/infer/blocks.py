"""A tile's block on its way in: read from the scene and put through the checkpoint's fitted pipeline.

A *block* is a tile plus its margin (``halo``). :func:`load_scaled_block` reads the scene
window into a reused buffer and applies the fitted per-band steps while the rows are in
cache (numpy on one thread, or torch's intra-op threads), then fills the margin from the
thin edge strips; :func:`load_block_on_device` leaves the host only the read and runs the
same steps on the model's accelerator. Other pipelines (PCA, band removal) and paddings go
through :func:`hsi.infer.sources.read_padded_block` and :func:`preprocess_block`. Every
step works pixel by pixel, so a block gives the same values as the same pixels of the
whole transformed cube, bit for bit on every path; non-finite values are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch

from hsi.errors import NonFiniteInputError
from hsi.preprocess._base import find_nonfinite

__all__ = ["BandSample", "affine_steps", "can_fuse", "load_block_on_device", "load_scaled_block", "preprocess_block"]


_ROWS_PER_TRANSFORM = 32
#: bytes of block rows put through the pipeline at a time by :func:`load_scaled_block` on one thread (stays in L2)
_CHUNK_BYTES = 1 << 19
#: the same on torch's intra-op threads: each op's start costs more, and 2 threads read a memory
#: map fastest in chunks of a few MB (2048 x 2048 x 200 ``.npy``, 2 cores: 0.69-0.77 s at 8 MB,
#: 0.74-0.76 s at 2 MB, 1.09 s at 512 KB, 0.89 s for whole 52 MB blocks; a plain copy 0.68 s)
_THREADED_CHUNK_BYTES = 1 << 23


@dataclass(frozen=True)
class BandSample:
    """Raw bands to keep at a grid of a tile's pixels while the tile is read: the false-colour preview's pixels.

    Attributes
    ----------
    bands : list of int
        Band indices, in the order kept.
    rows, cols : (n,) int arrays
        Ascending tile-local rows and columns; every kept row with every kept column.
    """

    bands: list[int]
    rows: np.ndarray
    cols: np.ndarray

    def take(self, tile: np.ndarray) -> np.ndarray:
        """``(len(rows), len(cols), len(bands))`` float32 from the tile's raw pixels ``(h, w, C)``."""
        return np.asarray(tile[np.ix_(self.rows, self.cols, self.bands)], dtype=np.float32)


class _KeptBands:
    """The values of a :class:`BandSample`, taken from a block's core chunk by chunk as it is read."""

    def __init__(self, sample: BandSample, tile: tuple[slice, slice]) -> None:
        self.rows = np.asarray(sample.rows) + tile[0].start  # rows and columns of the core
        self.cols = np.asarray(sample.cols) + tile[1].start
        self.bands = np.asarray(sample.bands)
        self.values = np.empty((len(self.rows), len(self.cols), len(self.bands)), dtype=np.float32)

    def take(self, raw: np.ndarray, start: int, stop: int) -> None:
        """Keep the sample's pixels among core rows ``start..stop``, read raw into ``raw``."""
        lo, hi = np.searchsorted(self.rows, (start, stop))
        if hi > lo:
            self.values[lo:hi] = raw[np.ix_(self.rows[lo:hi] - start, self.cols, self.bands)]


def load_scaled_block(source: Any, rows: tuple[int, int], cols: tuple[int, int], halo: int, mode: str,
                      pipeline: Any, out: np.ndarray, sample: BandSample | None = None,
                      threads: bool = False) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None] | None:
    """The preprocessed block of a tile in one pass over the scene window, or None (use the general path).

    The scene window (the block's core, :func:`hsi.infer.windows.block_plan`) is copied into
    ``out`` a few rows at a time, and each chunk, still in cache, is checked for no-data
    and put through the fitted per-band steps in place; the margin is then filled from the
    preprocessed core by copying its thin edge strips (:func:`hsi.infer.windows.fill_strips`).
    Every step works pixel by pixel, so the block equals :func:`preprocess_block` of
    :func:`hsi.infer.sources.read_padded_block`'s, bit for bit.

    Parameters
    ----------
    source : SceneSource
    rows, cols : (start, stop)
        The tile in scene coordinates.
    halo : int
        Margin on every side.
    mode : str
        Padding mode of the checkpoint.
    pipeline : hsi.preprocess.Pipeline
        Fitted; only a pipeline of per-band steps keeping the band count is fused.
    out : (h + 2 halo, w + 2 halo, C) float32
        Reused buffer, overwritten.
    sample : BandSample, optional
        Raw bands to keep (before preprocessing) at some of the tile's pixels, for the
        false-colour preview.
    threads : bool
        Scale on torch's intra-op threads (the read is in the thread that runs the model,
        so they are free); False in a reader thread of its own, which scales with numpy.

    Returns
    -------
    (block, nodata, kept) or None
        ``block`` is ``out``; ``nodata`` ``(h, w)`` bool or None (tile pixels with a
        non-finite raw band); ``kept`` the values of ``sample`` (:meth:`BandSample.take`), or None. None
        when the pipeline or padding cannot be fused, or some value is not finite after
        preprocessing (the general path then raises :class:`NonFiniteInputError`).
    """
    from hsi.infer.windows import block_plan, fill_strips

    height, width, bands = source.shape
    if not _fusable(pipeline, bands, out):
        return None
    plan = block_plan(rows, cols, halo, height, width, mode)
    if plan is None:
        return None
    core = out[plan.top : plan.bottom, plan.left : plan.right]
    tile = _tile_in_core(plan, rows, cols, halo)
    keep = None if sample is None else _KeptBands(sample, tile)
    read = _chunk_reader(source, plan, out)
    try:
        finite, bad = _scale_chunks(read, core, pipeline, keep, threads)
    finally:
        read.done(0, core.shape[0])  # every row of the window let go of, also after an early stop
    if not finite:  # the general path redoes the block and reports the non-finite values
        return None
    fill_strips(out, plan)
    nodata = None
    if bad is not None and bad[tile].any():
        nodata = np.ascontiguousarray(bad[tile])
    return out, nodata, None if keep is None else keep.values


def load_block_on_device(source: Any, rows: tuple[int, int], cols: tuple[int, int], halo: int, mode: str,
                         pipeline: Any, out: np.ndarray, device: torch.device,
                         sample: BandSample | None = None) -> tuple[torch.Tensor, None, np.ndarray | None] | None:
    """The block of a tile preprocessed on ``device``: the host only reads and copies; or None (use the host).

    The scene window is read raw into ``out`` (pinned for a CUDA device) and copied to the
    device, where the fitted per-band steps run in place (:func:`_apply_affine` with
    torch: the same float32 operations in the same order, so the same values as
    :func:`load_scaled_block`, bit for bit) and the margin is filled from the scaled core
    (:func:`hsi.infer.windows.fill_strips`, which indexes tensors alike).

    Parameters
    ----------
    source, rows, cols, halo, mode, pipeline, out, sample
        As :func:`load_scaled_block`.
    device : torch.device
        The model's device.

    Returns
    -------
    (block, None, kept) or None
        ``block`` ``(h + 2 halo, w + 2 halo, C)`` float32 on ``device``; no no-data mask
        (every value was finite); ``kept`` as in :func:`load_scaled_block`. None when the
        pipeline is not made of per-band affine steps, the padding cannot be planned, or
        a value is not finite after preprocessing: the host path then handles the block
        (and reports or masks the non-finite values).
    """
    from hsi.infer.windows import block_plan, fill_strips

    height, width, bands = source.shape
    steps = affine_steps(pipeline) if _fusable(pipeline, bands, out) else None
    plan = None if steps is None else block_plan(rows, cols, halo, height, width, mode)
    if plan is None:
        return None
    core = out[plan.top : plan.bottom, plan.left : plan.right]
    read = _chunk_reader(source, plan, out)
    try:
        raw = read.read(0, core.shape[0])
        if not read.into_block:
            np.copyto(core, raw, casting="unsafe")  # integer files: float32 here, as read_window gives them
    finally:
        read.done(0, core.shape[0])
    kept = None if sample is None else sample.take(core[_tile_in_core(plan, rows, cols, halo)])
    block = torch.from_numpy(out).to(device, non_blocking=True)
    scaled = block[plan.top : plan.bottom, plan.left : plan.right]
    if not _apply_affine(scaled, scaled, steps, _device_ops(device)):
        return None
    fill_strips(block, plan)
    return block, None, kept


def _tile_in_core(plan: Any, rows: tuple[int, int], cols: tuple[int, int], halo: int) -> tuple[slice, slice]:
    """Where the tile ``rows`` x ``cols`` lies in the block's core (the scene window of ``plan``)."""
    top, left = halo - plan.top, halo - plan.left
    return slice(top, top + rows[1] - rows[0]), slice(left, left + cols[1] - cols[0])


def _device_ops(device: torch.device) -> _ArrayOps:
    """:data:`_TORCH_OPS` on ``device``: the fitted vectors are copied there (tensors pass through)."""
    def wrap(a: Any) -> torch.Tensor:
        return a if isinstance(a, torch.Tensor) else torch.as_tensor(np.asarray(a), device=device)

    return _TORCH_OPS._replace(wrap=wrap)


class _ChunkReader(NamedTuple):
    """Rows ``start..stop-1`` of a block's scene window, raw, asked for in order (:func:`_chunk_reader`)."""

    read: Any  # (start, stop) -> (stop - start, w, C) raw rows: a view of the source, or the block's rows read into it
    reread: Any  # the same rows again, from the source (the block's may have been preprocessed since)
    float32: bool  # the rows are float32 (the affine steps apply)
    into_block: bool  # the rows are read into the block itself (else they are a view of the source)
    done: Any  # (start, stop) -> None: rows no longer needed (their mapped pages are let go of)


def _chunk_reader(source: Any, plan: Any, out: np.ndarray) -> _ChunkReader:
    """How :func:`_scale_chunks` gets the raw rows of the block's core: read into ``out`` or viewed in the source.

    A source that reads straight into a buffer (:func:`hsi.infer.sources.can_read_into`)
    fills the core's rows of ``out``, which are then preprocessed in place: chunk by chunk
    where its ``read_into_by_rows`` says row ranges cost no more than the whole (``.npy``),
    else the whole core at the first chunk (HDF5 reads each of its chunks once). Any other
    source is viewed (a memory map or array, :func:`hsi.infer.sources.raw_window`) and
    copied by the first step.
    """
    from hsi.infer.sources import can_read_into, raw_window, release_pages

    rows, cols = slice(*plan.scene_rows), slice(*plan.scene_cols)
    r0, top, at_cols = rows.start, plan.top, slice(plan.left, plan.right)

    def read_rows(start: int, stop: int) -> np.ndarray:
        at = (slice(top + start, top + stop), at_cols)
        source.read_into(slice(r0 + start, r0 + stop), cols, out, at)
        return out[at]

    def read_all_first(start: int, stop: int) -> np.ndarray:
        if start == 0:
            read_rows(0, plan.bottom - top)
        return out[top + start : top + stop, at_cols]

    if can_read_into(source, out):
        read = read_rows if getattr(source, "read_into_by_rows", False) else read_all_first
        return _ChunkReader(read, read_rows, True, True, lambda start, stop: None)
    src = raw_window(source, rows, cols)
    return _ChunkReader(lambda start, stop: src[start:stop], lambda start, stop: src[start:stop],
                        src.dtype == np.float32, False,
                        lambda start, stop: release_pages(source, (r0 + start, r0 + stop)))


def can_fuse(pipeline: Any, bands: int) -> bool:
    """True when ``pipeline`` is made of in-place per-band steps keeping ``bands`` (:func:`load_scaled_block` applies)."""
    return bool(getattr(pipeline, "in_place", False)) and getattr(pipeline, "n_bands_out_", None) == bands


def _fusable(pipeline: Any, bands: int, out: np.ndarray) -> bool:
    """:func:`can_fuse`, and ``out`` a float32 ``(h, w, bands)`` buffer."""
    return can_fuse(pipeline, bands) and out.dtype == np.float32 and out.ndim == 3 and out.shape[2] == bands


def affine_steps(pipeline: Any) -> list[tuple[np.ndarray, np.ndarray | None, np.ndarray, float, Any]] | None:
    """The pipeline's steps as float32 ``(head, tail, scale, shift, clip)`` of :func:`~hsi.preprocess.scaling.per_band_affine`.

    A no-data fill (:class:`~hsi.preprocess.NonFiniteFill`) leaves finite pixels as they
    are and is dropped; ``clip`` is ``(lo, hi)`` or None. None when a step is neither (the
    pipeline is then applied step by step).
    """
    from hsi.preprocess import NonFiniteFill, PerBandMinMax, PerBandStandardize

    steps = []
    for step in getattr(pipeline, "steps", None) or ():
        if isinstance(step, NonFiniteFill):
            continue
        if isinstance(step, PerBandMinMax):
            lo, hi = step._range()
            centre, scale, shift, clip = step.data_min_, step.scale_, lo, (lo, hi) if step.clip else None
        elif isinstance(step, PerBandStandardize):
            centre, scale, shift, clip = step.mean_, 1.0 / step.scale_, 0.0, None
        else:
            return None
        head = centre.astype(np.float32)
        tail = (centre - head).astype(np.float32)
        steps.append((head, tail if tail.any() else None, np.asarray(scale).astype(np.float32), shift, clip))
    return steps


class _ArrayOps(NamedTuple):
    """The elementwise operations of :func:`_apply_affine` in one library (each rounds once in float32)."""

    wrap: Any  # array -> the library's array, sharing memory
    sub: Any
    mul: Any
    add: Any
    copy: Any  # (dst, src)
    clip: Any  # (x, lo, hi, out)
    all_finite: Any  # x -> bool


def _torch_view(array: np.ndarray) -> torch.Tensor:
    """A tensor sharing ``array``'s memory, read-only arrays (memory maps) included; those are only read."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "not writable": the tensor is never written
        return torch.from_numpy(array)


def _numpy_all_finite(x: np.ndarray) -> bool:
    """Whether every value of ``x`` is finite, by one sum (NaN and infinities carry through it)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return bool(np.isfinite(np.add.reduce(x, axis=None)))


#: numpy: one thread, for reader threads that each take a core of their own
_NUMPY_OPS = _ArrayOps(np.asarray, np.subtract, np.multiply, np.add,
                       lambda dst, src: np.copyto(dst, src, casting="unsafe"), np.clip, _numpy_all_finite)
#: torch: its intra-op threads share each op (and the memory map's page faults) when reads are inline
_TORCH_OPS = _ArrayOps(_torch_view, torch.sub, torch.mul, torch.add, lambda dst, src: dst.copy_(src), torch.clamp,
                       lambda x: bool(torch.isfinite(x.sum())))


def _apply_affine(src: np.ndarray, dst: np.ndarray, steps: list, ops: _ArrayOps = _NUMPY_OPS) -> bool:
    """``dst`` = the affine steps of ``src`` (the first one reads ``src``: the copy is the first operation).

    The same float32 operations, in the same order, as the steps' ``transform``, with
    ``ops``' library (numpy's and torch's give the same values bit for bit); clipping comes
    after the finiteness check. Returns True when every value before clipping is finite
    (then every raw value was: the steps keep NaN and infinities non-finite).
    """
    x, out = ops.wrap(src), ops.wrap(dst)
    first = True
    for head, tail, scale, shift, _clip in steps:
        ops.sub(x if first else out, ops.wrap(head), out=out)
        first = False
        if tail is not None:
            ops.sub(out, ops.wrap(tail), out=out)
        ops.mul(out, ops.wrap(scale), out=out)
        if shift:
            ops.add(out, ops.wrap(np.asarray(shift, dtype=np.float32)), out=out)
    if first:
        ops.copy(out, x)
    finite = ops.all_finite(out)
    if finite:
        for *_, clip in steps:
            if clip is not None:
                ops.clip(out, clip[0], clip[1], out=out)
    return finite


def _scale_chunks(read: _ChunkReader, core: np.ndarray, pipeline: Any, keep: _KeptBands | None,
                  threads: bool = False) -> tuple[bool, np.ndarray | None]:
    """Read the block's core into ``core`` and preprocess it in place, a few rows at a time: ``(finite, no-data mask or None)``.

    A float32 chunk all finite takes :func:`_apply_affine` (read, scale and check in one
    pass over memory, the rest in cache); any other chunk is copied, its no-data pixels
    found, and put through the pipeline step by step. ``finite`` is False (and the rest of
    the block left undone) as soon as a value is NaN or infinite after preprocessing.
    With ``threads`` the affine steps run on torch's intra-op threads, in chunks of
    :data:`_THREADED_CHUNK_BYTES`; otherwise numpy's, in chunks of :data:`_CHUNK_BYTES`.
    """
    chunk_bytes, ops = (_THREADED_CHUNK_BYTES, _TORCH_OPS) if threads else (_CHUNK_BYTES, _NUMPY_OPS)
    n_rows = max(1, chunk_bytes // max(1, core.shape[1] * core.shape[2] * 4))
    steps = affine_steps(pipeline) if read.float32 else None
    bad = None
    for start in range(0, core.shape[0], n_rows):
        stop = min(start + n_rows, core.shape[0])
        chunk = slice(start, stop)
        raw, dst = read.read(start, stop), core[chunk]
        if keep is not None:
            keep.take(raw, start, stop)
        if steps is None or not _apply_affine(raw, dst, steps, ops):
            if steps is not None:  # the affine steps may have overwritten the rows read into the block
                raw = read.reread(start, stop)
            finite, bad = _chunk_by_steps(raw, dst, pipeline, bad, chunk, core.shape[:2])
            if not finite:
                return False, None
        read.done(start, stop)
    return True, bad


def _chunk_by_steps(src: np.ndarray, dst: np.ndarray, pipeline: Any, bad: np.ndarray | None, chunk: slice,
                    shape: tuple[int, int]) -> tuple[bool, np.ndarray | None]:
    """One chunk the general way: copied, its no-data pixels marked in ``bad`` (made when needed), the pipeline in place.

    Returns ``(finite, bad)``: ``finite`` is False when a value is NaN or infinite after preprocessing.
    """
    np.copyto(dst, src, casting="unsafe")
    rows_bad = ~np.isfinite(dst).all(axis=-1)
    if rows_bad.any():
        bad = np.zeros(shape, dtype=bool) if bad is None else bad
        bad[chunk] = rows_bad
    pipeline.transform(dst, out=dst)
    return bool(np.isfinite(dst).all()), bad


def preprocess_block(pipeline: Any, block: np.ndarray, outside: np.ndarray | None, where: str) -> np.ndarray:
    """The block through the fitted pipeline, as ``(h, w, C_out)`` float32, checked finite.

    Parameters
    ----------
    pipeline : hsi.preprocess.Pipeline
        Fitted on the training pixels.
    block : (h, w, C_in) float32
        Raw pixels, owned by the caller's tile pass: a pipeline of per-band steps
        (:attr:`hsi.preprocess.Pipeline.in_place`) overwrites them with the result.
    outside : (h, w) bool or None
        Positions outside the scene under zero padding: set to 0 after the pipeline.
    where : str
        The source and window, for the error message.

    Raises
    ------
    NonFiniteInputError
        Some value is NaN or infinite after preprocessing; names how many pixels and the
        first one (block coordinates).
    """
    if block.dtype == np.float32 and getattr(pipeline, "in_place", False):
        x = pipeline.transform(block, out=block)  # per-band steps: in place, no intermediate arrays
    else:
        # a few rows at a time: some steps (PCA) compute in float64, and a whole block's
        # float64 intermediates would double the memory of the tile budget
        x = np.empty((*block.shape[:2], int(pipeline.n_bands_out_)), dtype=np.float32)
        for start in range(0, block.shape[0], _ROWS_PER_TRANSFORM):
            x[start : start + _ROWS_PER_TRANSFORM] = pipeline.transform(block[start : start + _ROWS_PER_TRANSFORM])
    if outside is not None:
        x[outside] = 0.0
    found = find_nonfinite(x, per_pixel=True)
    if found is not None:
        count, first = found
        raise NonFiniteInputError(
            f"{where}: {count} pixel(s) with NaN or infinite values after preprocessing "
            f"(first at block position {first}); fill or mask them before inference"
        )
    return x
