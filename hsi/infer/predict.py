"""Class probabilities of one tile: preprocessing of its block, the forward passes, test-time augmentation.

A *block* is a tile plus its margin (``halo``). :func:`load_scaled_block` reads the scene
window into a reused buffer and applies the checkpoint's fitted per-band steps while the
rows are in cache, then fills the margin from the thin edge strips; other pipelines (PCA,
band removal) and paddings go through :func:`hsi.infer.sources.read_padded_block` and
:func:`preprocess_block`. Every step works pixel by pixel, so a block gives the same
values as the same pixels of the whole transformed cube; non-finite values are refused.
:class:`TilePredictor` turns a block into ``(h, w, K)`` probabilities, or straight into
labels and confidence (:meth:`TilePredictor.maps`: no softmax without test-time
augmentation), on the model's device; the result is returned to the host.

- dense models (``forward_dense``): one pass over the block, the margin cropped off;
  with a margin of at least the receptive radius each pixel's output equals the one an
  untiled pass over the padded scene gives.
- patch-centre models: the ``P x P`` windows centred on every tile pixel are copied from a
  zero-copy window view of the block into one reused batch buffer, row run by row run, in
  batches of :func:`window_batch` windows.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any, NamedTuple

import numpy as np
import torch

from hsi.errors import NonFiniteInputError
from hsi.preprocess._base import find_nonfinite

__all__ = ["TTA_TRANSFORMS", "TilePredictor", "can_fuse", "enumerate_runs", "load_scaled_block", "maps_from_scores",
           "preprocess_block", "release_freed_memory", "window_batch"]


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
    the resident set has grown by 256 MB since the last trim (:class:`_Trimmer`): trimming after
    every one made each forward pass fault its buffers in again.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)

#: test-time augmentations: (name, forward, inverse) on the two last (spatial) axes
TTA_TRANSFORMS = (
    ("identity", lambda t: t, lambda t: t),
    ("flip_lr", lambda t: torch.flip(t, (-1,)), lambda t: torch.flip(t, (-1,))),
    ("flip_ud", lambda t: torch.flip(t, (-2,)), lambda t: torch.flip(t, (-2,))),
    ("rot180", lambda t: torch.flip(t, (-2, -1)), lambda t: torch.flip(t, (-2, -1))),
)


_ROWS_PER_TRANSFORM = 32
#: bytes of block rows put through the pipeline at a time by :func:`load_scaled_block` on one thread (stays in L2)
_CHUNK_BYTES = 1 << 19
#: the same on torch's intra-op threads: each op's start costs more, and 2 threads read a memory
#: map fastest in chunks of a few MB (2048 x 2048 x 200 ``.npy``, 2 cores: 0.69-0.77 s at 8 MB,
#: 0.74-0.76 s at 2 MB, 1.09 s at 512 KB, 0.89 s for whole 52 MB blocks; a plain copy 0.68 s)
_THREADED_CHUNK_BYTES = 1 << 23


def load_scaled_block(source: Any, rows: tuple[int, int], cols: tuple[int, int], halo: int, mode: str,
                      pipeline: Any, out: np.ndarray, rgb_bands: list[int] | None = None,
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
    rgb_bands : list[int], optional
        Raw bands to keep (before preprocessing) for the false-colour image.
    threads : bool
        Scale on torch's intra-op threads (the read is in the thread that runs the model,
        so they are free); False in a reader thread of its own, which scales with numpy.

    Returns
    -------
    (block, nodata, rgb) or None
        ``block`` is ``out``; ``nodata`` ``(h, w)`` bool or None (tile pixels with a
        non-finite raw band); ``rgb`` ``(h, w, 3)`` raw bands of the tile, or None. None
        when the pipeline or padding cannot be fused, or some value is not finite after
        preprocessing (the general path then raises :class:`NonFiniteInputError`).
    """
    from hsi.infer.sources import release_pages
    from hsi.infer.windows import block_plan, fill_strips

    height, width, bands = source.shape
    if not _fusable(pipeline, bands, out):
        return None
    plan = block_plan(rows, cols, halo, height, width, mode)
    if plan is None:
        return None
    core = out[plan.top : plan.bottom, plan.left : plan.right]
    keep = None if rgb_bands is None else np.empty((*core.shape[:2], len(rgb_bands)), dtype=np.float32)
    read = _chunk_reader(source, plan, out)
    try:
        finite, bad = _scale_chunks(read, core, pipeline, keep, rgb_bands, threads)
    finally:
        release_pages(source)
    if not finite:  # the general path redoes the block and reports the non-finite values
        return None
    fill_strips(out, plan)
    th, tw = rows[1] - rows[0], cols[1] - cols[0]
    tile = (slice(halo - plan.top, halo - plan.top + th), slice(halo - plan.left, halo - plan.left + tw))
    nodata = None
    if bad is not None and bad[tile].any():
        nodata = np.ascontiguousarray(bad[tile])
    return out, nodata, None if keep is None else keep[tile]


def load_block_on_device(source: Any, rows: tuple[int, int], cols: tuple[int, int], halo: int, mode: str,
                         pipeline: Any, out: np.ndarray, device: torch.device,
                         rgb_bands: list[int] | None = None) -> tuple[torch.Tensor, None, np.ndarray | None] | None:
    """The block of a tile preprocessed on ``device``: the host only reads and copies; or None (use the host).

    The scene window is read raw into ``out`` (pinned for a CUDA device) and copied to the
    device, where the fitted per-band steps run in place (:func:`_apply_affine` with
    torch: the same float32 operations in the same order, so the same values as
    :func:`load_scaled_block`, bit for bit) and the margin is filled from the scaled core
    (:func:`hsi.infer.windows.fill_strips`, which indexes tensors alike).

    Parameters
    ----------
    source, rows, cols, halo, mode, pipeline, out, rgb_bands
        As :func:`load_scaled_block`.
    device : torch.device
        The model's device.

    Returns
    -------
    (block, None, rgb) or None
        ``block`` ``(h + 2 halo, w + 2 halo, C)`` float32 on ``device``; no no-data mask
        (every value was finite); ``rgb`` as in :func:`load_scaled_block`. None when the
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
    keep = None if rgb_bands is None else core[..., rgb_bands]
    block = torch.from_numpy(out).to(device, non_blocking=True)
    scaled = block[plan.top : plan.bottom, plan.left : plan.right]
    if not _apply_affine(scaled, scaled, steps, _device_ops(device)):
        return None
    fill_strips(block, plan)
    th, tw = rows[1] - rows[0], cols[1] - cols[0]
    rgb = None if keep is None else keep[halo - plan.top : halo - plan.top + th, halo - plan.left : halo - plan.left + tw]
    return block, None, rgb


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


def _scale_chunks(read: _ChunkReader, core: np.ndarray, pipeline: Any, keep: np.ndarray | None,
                  rgb_bands: list[int] | None, threads: bool = False) -> tuple[bool, np.ndarray | None]:
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
            keep[chunk] = raw[..., rgb_bands]
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


#: windows per forward pass on the CPU, by network class, measured on 2 threads (P x P x 200 windows):
#: past a few hundred windows the CPU forward slows down (cnn2d P 11: about 2,400 windows/s at
#: 100 to 256, 1,900 at 512; spectral1d: 60-70k at 100 to 512, 30k at 2048); ``batch_size`` is the upper bound
WINDOW_BATCH = {"CNN2D": 128, "Spectral1DCNN": 256}
DEFAULT_WINDOW_BATCH = 256


def window_batch(net: torch.nn.Module, device: torch.device, batch_size: int) -> int:
    """Windows per forward pass: ``batch_size``, capped on the CPU by :data:`WINDOW_BATCH` (by measurement)."""
    if torch.device(device).type != "cpu":
        return int(batch_size)
    return max(1, min(int(batch_size), WINDOW_BATCH.get(type(net).__name__, DEFAULT_WINDOW_BATCH)))


def maps_from_scores(scores: torch.Tensor, logits: bool, label_dtype: np.dtype,
                     threads: bool = False) -> tuple[Any, Any]:
    """Labels ``1..K`` and confidence from class scores along the last dim, on the scores' device.

    The scores are first made one contiguous ``(N, K)`` array (a network's output may be a
    strided view). On the CPU the reductions run in numpy unless ``threads``: torch's
    reductions waited on its thread pool while a reader thread held the other core (about
    140 ms a tile for what numpy does in a few), but with the cores free they take 0.4x of
    numpy's time (256 x 256 pixels, 16 classes, 2 cores).

    Parameters
    ----------
    scores : (..., K) tensor
        Logits (``logits=True``) or probabilities.
    logits : bool
        With logits the confidence, the largest softmax probability, is
        ``1 / sum(exp(logit - max))``: no softmax is computed.
    label_dtype : np.dtype
        uint8 or uint16 (:func:`hsi.infer.arrays.label_dtype`).
    threads : bool
        On the CPU, reduce with torch on its intra-op threads (nothing else holds them).

    Returns
    -------
    labels : (...) array (CPU with numpy) or tensor (torch)
        ``argmax + 1`` in ``label_dtype`` (a tensor: uint8, or int32 for uint16); 0 where
        a probability row is all 0 (no-data).
    confidence : (...) float32 array or tensor
    """
    shape = tuple(scores.shape[:-1])
    if scores.device.type == "cpu" and not threads:
        labels, confidence = _maps_numpy(scores.detach().float().numpy(), logits, label_dtype)
        return labels.reshape(shape), confidence.reshape(shape)
    flat = scores.reshape(-1, scores.shape[-1]).float().contiguous()
    top, index = flat.max(dim=1)
    index += 1
    if logits:
        confidence = (flat - top[:, None]).exp_().sum(dim=1).reciprocal_()
    else:
        confidence = top
        index.masked_fill_(confidence <= 0, 0)
    dtype = torch.uint8 if np.dtype(label_dtype) == np.uint8 else torch.int32
    return index.to(dtype).reshape(shape), confidence.reshape(shape)


def _maps_numpy(scores: np.ndarray, logits: bool, label_dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """:func:`maps_from_scores` of a ``(..., K)`` array, flat: class by class over ``(K, N)`` planes.

    One copy to ``(N, K)`` (each pixel's scores read once, whatever the view's strides),
    one to class-major planes, then K vectorised steps: numpy's reductions along a short
    last axis are several times slower. A strictly larger score moves the label, so ties go
    to the first class, as ``argmax``.
    """
    k = scores.shape[-1]
    planes = np.ascontiguousarray(np.ascontiguousarray(scores.reshape(-1, k)).T)
    top = planes[0].copy()
    index = np.zeros(top.shape, dtype=label_dtype)
    for c in range(1, k):
        np.copyto(index, c, where=planes[c] > top)
        np.maximum(top, planes[c], out=top)
    index += 1
    if not logits:
        index[top <= 0] = 0  # an all-zero (no-data) row
        return index, top
    total = np.zeros_like(top)
    for c in range(k):  # the largest softmax probability: exp(0) / sum(exp(logit - max)), >= 1 / K
        total += np.exp(np.subtract(planes[c], top, out=planes[c]), out=planes[c])
    return index, np.reciprocal(total, out=total)


def _host(array: Any) -> np.ndarray:
    """A tensor's values as a numpy array on the host (arrays pass through)."""
    return array.cpu().numpy() if isinstance(array, torch.Tensor) else array


class _Trimmer:
    """:func:`release_freed_memory` now and then: every ``every`` calls, or when the resident set grew by ``grow`` bytes.

    Trimming after every tile or batch made the next forward pass fault its buffers in again.
    """

    def __init__(self, every: int = 64, grow: int = 256 << 20) -> None:
        self.every, self.grow = int(every), int(grow)
        self.calls = 0
        self.base = _rss_bytes()

    def __call__(self) -> None:
        self.calls += 1
        rss = _rss_bytes()
        if self.calls % self.every == 0 or rss > self.base + self.grow:
            release_freed_memory()
            self.base = _rss_bytes()


def _rss_bytes() -> int:
    """Resident set of this process (Linux ``/proc/self/statm``; 0 where unknown)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _page_size()
    except (OSError, ValueError, IndexError):
        return 0


@functools.lru_cache(maxsize=1)
def _page_size() -> int:
    import os

    return int(os.sysconf("SC_PAGE_SIZE")) if hasattr(os, "sysconf") else 4096


class TilePredictor:
    """Probabilities, or labels and confidence, of a tile from its preprocessed block.

    Parameters
    ----------
    net : torch.nn.Module
        The classifier (put in eval mode, and its 2-D convolution weights made
        channels-last like the blocks, here: :func:`hsi.models.channels_last_weights`).
        Its outputs are logits, turned into probabilities by a softmax, unless it has
        ``returns_probabilities = True`` (a classical model, :mod:`hsi.infer.classical`),
        whose outputs are used as they are.
    dense : bool
        Use ``net.forward_dense`` on the whole block instead of patch-centre windows.
    halo : int
        Margin of every block (receptive radius for dense models, ``P // 2`` otherwise).
    patch_size : int
        Window side ``P`` of patch-centre models.
    device : torch.device
        Where the forward passes run, and the softmax, argmax and confidence after them.
    batch_size : int
        Windows per pass (patch-centre models), at most (:func:`window_batch`).
    tta : bool
        Average over :data:`TTA_TRANSFORMS`.
    num_classes : int, optional
        ``K`` (default: the network's ``num_classes``); the width of all-zero no-data rows.
    """

    def __init__(self, net: torch.nn.Module, *, dense: bool, halo: int, patch_size: int, device: torch.device,
                 batch_size: int = 512, tta: bool = False, num_classes: int | None = None) -> None:
        from hsi.infer.arrays import label_dtype
        from hsi.models import channels_last_weights

        self.net = channels_last_weights(net.eval())
        self.dense = dense
        self.halo = int(halo)
        self.patch_size = int(patch_size)
        self.device = torch.device(device)
        self.batch_size = window_batch(net, self.device, batch_size)
        self.transforms = TTA_TRANSFORMS if tta else TTA_TRANSFORMS[:1]
        self.num_classes = int(num_classes) if num_classes is not None else int(getattr(net, "num_classes"))
        self.returns_probabilities = bool(getattr(net, "returns_probabilities", False))
        self.label_dtype = label_dtype(self.num_classes)
        self.trim = _Trimmer()
        self._batch: np.ndarray | None = None

    @property
    def scales_on_device(self) -> bool:
        """Whether blocks are preprocessed on the device and handed over there as tensors (:func:`load_block_on_device`).

        True for a dense model on an accelerator; patch-centre windows are gathered on the
        host, from a host block.
        """
        return self.dense and self.device.type != "cpu"

    def _scores(self, x: torch.Tensor, run: Any, spatial: bool, logits_ok: bool) -> tuple[torch.Tensor, bool]:
        """Class scores along dim 1 (TTA averaged) and whether they are logits (one pass, ``logits_ok``)."""
        if len(self.transforms) == 1:
            out = run(x)
            if self.returns_probabilities:
                return out, False
            return (out, True) if logits_ok else (torch.softmax(out, dim=1), False)
        total = None
        for _, fwd, inv in self.transforms:  # a window's class is its centre's: no inverse for windows
            probs = run(fwd(x))
            probs = probs if self.returns_probabilities else torch.softmax(probs, dim=1)
            probs = inv(probs) if spatial else probs
            total = probs if total is None else total + probs
        return total / len(self.transforms), False

    @torch.no_grad()
    def __call__(self, block: np.ndarray | torch.Tensor, nodata: np.ndarray | None = None) -> np.ndarray:
        """``(h, w, K)`` float32 probabilities of the tile inside ``block`` (``(h + 2 halo, w + 2 halo, C)``).

        ``block`` is preprocessed: a host array, or for a dense model a tensor on the device
        (:attr:`scales_on_device`). ``nodata`` (``(h, w)`` bool) marks pixels left unclassified: their probabilities are
        all 0 (a classified pixel's largest one is at least ``1 / K``), and patch-centre
        models do not compute them at all; an all-True mask costs no forward pass.
        """
        if nodata is not None and nodata.all():
            return np.zeros((*nodata.shape, self.num_classes), dtype=np.float32)
        probs = self._dense(block) if self.dense else self._patches(block, nodata)
        if nodata is not None:
            probs[nodata] = 0.0
        return probs

    @torch.no_grad()
    def maps(self, block: np.ndarray | torch.Tensor, nodata: np.ndarray | None = None,
             threads: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Labels ``(h, w)`` (``1..K``, 0 at no-data) and confidence ``(h, w)`` float32 (0 at no-data) of the tile.

        As :meth:`__call__` followed by an argmax, without the softmax when no
        test-time augmentation is asked (:func:`maps_from_scores`, on torch's intra-op
        threads with ``threads``); computed on the model's device.
        """
        h, w = block.shape[0] - 2 * self.halo, block.shape[1] - 2 * self.halo
        if nodata is not None and nodata.all():
            return np.zeros((h, w), dtype=self.label_dtype), np.zeros((h, w), dtype=np.float32)
        if self.dense:
            scores, logits = self._dense_scores(block, True)
            labels, confidence = maps_from_scores(scores.permute(1, 2, 0), logits, self.label_dtype, threads)
            labels, confidence = _host(labels), _host(confidence)
        else:
            labels, confidence = self._patch_maps(block, nodata, threads)
        if nodata is not None:
            labels[nodata] = 0
            confidence[nodata] = 0.0
        self.trim()
        return labels.astype(self.label_dtype, copy=False), confidence

    def _input(self, array: np.ndarray) -> torch.Tensor:
        """``array`` as a tensor on the device (the array itself on the CPU)."""
        t = torch.from_numpy(array)
        return t if self.device.type == "cpu" else t.to(self.device, non_blocking=False)

    def _dense_scores(self, block: np.ndarray | torch.Tensor, logits_ok: bool) -> tuple[torch.Tensor, bool]:
        """``(K, h, w)`` scores of the tile (margin cropped), on the device, and whether they are logits.

        ``block`` is a host array, or a tensor already on the device (:func:`load_block_on_device`).
        """
        h = self.halo
        # (1, C, h, w) with channels-last strides all through: permute(2, 0, 1).unsqueeze(0)
        # gives the batch axis a stride of C, which the convolutions do not take as
        # channels-last (fcn's forward was seen 1.5x slower)
        on_device = block if isinstance(block, torch.Tensor) else self._input(np.ascontiguousarray(block))
        x = on_device[None].permute(0, 3, 1, 2)
        scores, logits = self._scores(x, self.net.forward_dense, True, logits_ok)
        hb, wb = block.shape[:2]
        return scores[0, :, h : hb - h, h : wb - h], logits

    def _dense(self, block: np.ndarray) -> np.ndarray:
        scores, _ = self._dense_scores(block, False)
        probs = scores.permute(1, 2, 0).float().cpu().numpy()
        self.trim()
        return probs

    def _window_batches(self, block: np.ndarray, nodata: np.ndarray | None):
        """Yield ``(flat, x)``: flat tile indices of a batch and its windows on the device, ``(n, C, P, P)`` channels-last.

        The windows are copied row run by row run from a zero-copy window view of the block
        straight into one reused ``(batch, P, P, C)`` buffer (pinned when the device is a GPU).
        """
        p, h = self.patch_size, self.halo
        tw = block.shape[1] - 2 * h
        view = np.lib.stride_tricks.sliding_window_view(block, (p, p), axis=(0, 1)).transpose(0, 1, 3, 4, 2)
        keep = None if nodata is None else ~nodata
        flat = np.arange(view.shape[0] * tw) if keep is None else np.flatnonzero(keep)
        buffer = self._batch_buffer(p, block.shape[2])
        for start in range(0, flat.size, self.batch_size):
            idx = flat[start : start + self.batch_size]
            for k, (row, col, n) in enumerate_runs(idx, tw):
                np.copyto(buffer[k : k + n], view[row, col : col + n])
            yield idx, self._input(buffer[: idx.size]).permute(0, 3, 1, 2)

    def _batch_buffer(self, p: int, c: int) -> np.ndarray:
        """The reused ``(batch, P, P, C)`` float32 window buffer."""
        shape = (self.batch_size, p, p, c)
        if self._batch is None or self._batch.shape != shape:
            pin = self.device.type == "cuda"
            self._batch = torch.empty(shape, dtype=torch.float32, pin_memory=pin).numpy()
        return self._batch

    def _patches(self, block: np.ndarray, nodata: np.ndarray | None = None) -> np.ndarray:
        h = self.halo
        th, tw = block.shape[0] - 2 * h, block.shape[1] - 2 * h
        out = np.zeros((th * tw, self.num_classes), dtype=np.float32)
        for idx, x in self._window_batches(block, nodata):
            scores, _ = self._scores(x, self.net, False, False)
            out[idx] = scores.float().cpu().numpy()
            self.trim()
        return out.reshape(th, tw, -1)

    def _patch_maps(self, block: np.ndarray, nodata: np.ndarray | None,
                    threads: bool = False) -> tuple[np.ndarray, np.ndarray]:
        h = self.halo
        th, tw = block.shape[0] - 2 * h, block.shape[1] - 2 * h
        labels = np.zeros(th * tw, dtype=self.label_dtype)
        confidence = np.zeros(th * tw, dtype=np.float32)
        for idx, x in self._window_batches(block, nodata):
            scores, logits = self._scores(x, self.net, False, True)
            lab, conf = maps_from_scores(scores, logits, self.label_dtype, threads)
            labels[idx], confidence[idx] = _host(lab), _host(conf)
            self.trim()
        return labels.reshape(th, tw), confidence.reshape(th, tw)


def enumerate_runs(flat: np.ndarray, width: int):
    """Yield ``(k, (row, col, n))``: runs of consecutive indices of ``flat`` within one row of ``width``.

    ``k`` is the position of the run's first index in ``flat`` (sorted flat indices of
    an ``(H, width)`` grid).
    """
    if flat.size == 0:
        return
    rows = flat // width
    breaks = np.flatnonzero((np.diff(flat) != 1) | (np.diff(rows) != 0)) + 1
    starts = np.concatenate(([0], breaks))
    stops = np.concatenate((breaks, [flat.size]))
    for a, b in zip(starts.tolist(), stops.tolist()):
        yield a, (int(rows[a]), int(flat[a] - rows[a] * width), b - a)
