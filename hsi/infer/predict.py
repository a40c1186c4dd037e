"""Class probabilities, or labels and confidence, of one tile from its preprocessed block.

Blocks come preprocessed from :mod:`hsi.infer.blocks`. :class:`TilePredictor` turns a
block into ``(h, w, K)`` probabilities, or straight into labels and confidence
(:meth:`TilePredictor.maps`: no softmax without test-time augmentation), on the model's
device; the result is returned to the host.

- dense models (``forward_dense``): one pass over the block (on the CPU, over strips of
  :data:`DENSE_STRIP_ROWS` rows), the margin cropped off; with a margin of at least the
  receptive radius each pixel's output equals the one an untiled pass over the padded
  scene gives.
- patch-centre models: the ``P x P`` windows centred on every tile pixel are copied from a
  zero-copy window view of the block into one reused batch buffer, row run by row run, in
  batches of :func:`window_batch` windows. A model that offers its first layer
  (``window_stem``, such as cnn2d) has that layer computed once per pixel instead of once
  per window (:mod:`hsi.infer.stem`), and the windows' activations are gathered from it.
  A model whose layers are unpadded across the window (``window_map``: cnn3d from P 5,
  hybridsn) runs all windows of a block in one pass instead, its dense head a
  convolution of the window's size (:class:`hsi.models.WindowMap`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from hsi._memory import Trimmer
from hsi._pages import row_strips
from hsi.errors import OptionError
from hsi.infer.stem import shared_stem

__all__ = ["AUTOCAST_DTYPES", "TTA_TRANSFORMS", "TilePredictor", "autocast_dtype", "enumerate_runs", "maps_from_scores",
           "window_batch"]


#: test-time augmentations: (name, forward, inverse) on the two last (spatial) axes
TTA_TRANSFORMS = (
    ("identity", lambda t: t, lambda t: t),
    ("flip_lr", lambda t: torch.flip(t, (-1,)), lambda t: torch.flip(t, (-1,))),
    ("flip_ud", lambda t: torch.flip(t, (-2,)), lambda t: torch.flip(t, (-2,))),
    ("rot180", lambda t: torch.flip(t, (-2, -1)), lambda t: torch.flip(t, (-2, -1))),
)


#: windows per forward pass on the CPU, by network class, measured on 2 threads (P x P x 200 windows):
#: past a few hundred windows the CPU forward slows down (cnn2d P 11: about 2,400 windows/s at
#: 100 to 256, 1,900 at 512; spectral1d P 1, its max-pool ahead of its tanh, six interleaved rounds
#: of ``bench_infer.py``'s forward-only row, medians: 146k at 100, 156k at 128, 174k at 256 (169-185k),
#: 155k at 512 (101-178k); whole 256^2 runs 75k px/s at 256 against 71k at 512); ``batch_size`` is
#: the upper bound
WINDOW_BATCH = {"CNN2D": 128, "Spectral1DCNN": 256}
DEFAULT_WINDOW_BATCH = 256
#: tile rows per dense forward pass on the CPU (:meth:`TilePredictor._tile_forward`), by measurement
#: (fcn, 1024^2 x 200 ``.npy``, tile 256, 2 cores, three runs each: whole blocks 473-502 MB peak RSS and
#: 2.67-2.78 s of tile pass; 128 rows 455-501 MB, 2.11-2.43 s; 64 rows 440-441 MB, 2.13-2.33 s; 32 rows
#: 435-437 MB, 2.38-2.46 s: the margin's rows cost more than the cache gives back below 64)
DENSE_STRIP_ROWS = 64
#: bytes of shared first-layer maps per strip of tile rows (:mod:`hsi.infer.stem`), by measurement
STEM_STRIP_BYTES = 16 << 20
#: bytes of the widest activation per strip of tile rows when a network runs all windows of a block
#: at once (:class:`hsi.models.WindowMap`), by measurement (128^2 x 200 -> PCA 30, tile 256, 2 cores,
#: three runs each: cnn3d 0.61-0.79 s of tile pass at 16 MB, 0.42-0.52 at 32, 0.40-0.53 at 64, 0.47-0.50
#: at 128; hybridsn 0.90-1.01, 0.46-0.49, 0.40-0.42, 0.44-0.52)
WINDOW_MAP_STRIP_BYTES = 64 << 20


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
        Windows per pass of patch-centre models run window by window, at most
        (:func:`window_batch`); a :attr:`window_map` goes in strips of
        :data:`WINDOW_MAP_STRIP_BYTES` instead.
    tta : bool
        Average over :data:`TTA_TRANSFORMS`.
    num_classes : int, optional
        ``K`` (default: the network's ``num_classes``); the width of all-zero no-data rows.
    precision : {"32-true", "bf16-mixed", "16-mixed"}
        Precision of the forward passes: float32, or autocast to bfloat16 / float16 on the device
        (:data:`AUTOCAST_DTYPES`); the scores are float32 again before the softmax either way.
    """

    def __init__(self, net: torch.nn.Module, *, dense: bool, halo: int, patch_size: int, device: torch.device,
                 batch_size: int = 512, tta: bool = False, num_classes: int | None = None,
                 precision: str = "32-true") -> None:
        from hsi.infer.arrays import label_dtype
        from hsi.models import channels_last_weights

        self.net = channels_last_weights(net.eval())
        self.dense = dense
        self.halo = int(halo)
        self.patch_size = int(patch_size)
        self.device = torch.device(device)
        self.autocast_dtype = autocast_dtype(precision, self.device)
        self.batch_size = window_batch(net, self.device, batch_size)
        self.transforms = TTA_TRANSFORMS if tta else TTA_TRANSFORMS[:1]
        self.num_classes = int(num_classes) if num_classes is not None else int(getattr(net, "num_classes"))
        self.returns_probabilities = bool(getattr(net, "returns_probabilities", False))
        self.label_dtype = label_dtype(self.num_classes)
        self.trim = Trimmer()
        self._batch: np.ndarray | None = None
        # every window of a block in one pass where the network allows (under TTA only for odd P, whose
        # blocks flip onto themselves); else the first layer shared by all windows (hsi.infer.stem), not
        # under TTA, whose flips change every window
        self.window_map = None if dense or (tta and self.patch_size % 2 == 0) else _window_map(self.net)
        no_stem = dense or tta or self.window_map is not None
        self.stem = None if no_stem else shared_stem(self.net, self.patch_size)
        self._window_forward = self.net if self.stem is None else self.stem.rest

    @property
    def whole_blocks(self) -> bool:
        """Whether blocks go through the network whole (dense, or a :attr:`window_map`), not window by window."""
        return self.dense or self.window_map is not None

    @property
    def scales_on_device(self) -> bool:
        """Whether blocks are preprocessed on the device and handed over there as tensors (:func:`hsi.infer.blocks.load_block_on_device`).

        True for a dense model (or one with a :attr:`window_map`) on an accelerator;
        patch-centre windows are gathered on the host, from a host block.
        """
        return self.whole_blocks and self.device.type != "cpu"

    def _scores(self, x: torch.Tensor, run: Any, spatial: bool, logits_ok: bool) -> tuple[torch.Tensor, bool]:
        """Class scores along dim 1 (TTA averaged) and whether they are logits (one pass, ``logits_ok``)."""
        if len(self.transforms) == 1:
            out = self._forward(run, x)
            if self.returns_probabilities:
                return out, False
            return (out, True) if logits_ok else (torch.softmax(out, dim=1), False)
        total = None
        for _, fwd, inv in self.transforms:  # a window's class is its centre's: no inverse for windows
            probs = self._forward(run, fwd(x))
            probs = probs if self.returns_probabilities else torch.softmax(probs, dim=1)
            probs = inv(probs) if spatial else probs
            total = probs if total is None else total + probs
        return total / len(self.transforms), False

    def _forward(self, run: Any, x: torch.Tensor) -> torch.Tensor:
        """``run(x)`` at the predictor's precision, as float32."""
        if self.autocast_dtype is None:
            return run(x)
        with torch.autocast(self.device.type, dtype=self.autocast_dtype):
            return run(x).float()

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
        probs = self._dense(block) if self.whole_blocks else self._patches(block, nodata)
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
        if self.whole_blocks:
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

        ``block`` is a host array, or a tensor already on the device (:func:`hsi.infer.blocks.load_block_on_device`).
        """
        # (1, C, h, w) with channels-last strides all through: permute(2, 0, 1).unsqueeze(0)
        # gives the batch axis a stride of C, which the convolutions do not take as
        # channels-last (fcn's forward was seen 1.5x slower)
        on_device = block if isinstance(block, torch.Tensor) else self._input(np.ascontiguousarray(block))
        x = on_device[None].permute(0, 3, 1, 2)
        scores, logits = self._scores(x, self._tile_forward, True, logits_ok)
        return scores[0], logits

    def _tile_forward(self, x: torch.Tensor) -> torch.Tensor:
        """``forward_dense`` outputs ``(B, K, h, w)`` of the tile inside the block ``x`` ``(B, C, h + 2 halo, w + 2 halo)``.

        A model with a :attr:`window_map` gives its windows' logits instead (:meth:`_all_windows`).
        On the CPU the network runs on strips of :data:`DENSE_STRIP_ROWS` tile rows, each
        with the ``halo`` rows it sees above and below: a strip's layers stay in cache and
        its smaller buffers are reused from the heap, where a whole block's come as fresh
        pages to fault in. Each output pixel reads only the block within ``halo`` of it, so
        the tile's outputs are the whole block's (bit for bit for fcn and ssnet on 262-wide
        blocks; on narrow ones the convolution library may round a strip's sums otherwise,
        by about 1e-7). An accelerator takes the whole block. The margin is cropped on all
        four sides alike, so a flip of the block (TTA) is a flip of the tile.
        """
        if self.window_map is not None:
            return self._all_windows(x)
        h = self.halo
        hb, wb = x.shape[2], x.shape[3]
        rows = hb - 2 * h
        if self.device.type != "cpu" or rows <= DENSE_STRIP_ROWS:
            return self.net.forward_dense(x)[:, :, h : hb - h, h : wb - h]
        out = None
        for top in range(0, rows, DENSE_STRIP_ROWS):
            bottom = min(rows, top + DENSE_STRIP_ROWS)
            strip = self.net.forward_dense(x[:, :, top : bottom + 2 * h])[:, :, h : h + bottom - top, h : wb - h]
            if out is None:
                out = torch.empty((strip.shape[0], strip.shape[1], rows, wb - 2 * h), dtype=strip.dtype,
                                  memory_format=torch.channels_last)
            out[:, :, top:bottom] = strip
        return out

    def _all_windows(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, K, h, w)`` logits of every window of the tile inside ``x``, by the network's :attr:`window_map`.

        It runs on strips of tile rows whose widest activation holds about
        :data:`WINDOW_MAP_STRIP_BYTES`, each with the ``P - 1`` block rows its windows reach
        below; the output at a tile pixel is its window's (top-left at the same block position).
        """
        p = self.patch_size
        rows, cols = x.shape[2] - 2 * self.halo, x.shape[3] - 2 * self.halo
        row_bytes = self.window_map.floats_per_pixel * 4 * x.shape[3]
        out = None
        for strip in row_strips(rows, row_bytes, WINDOW_MAP_STRIP_BYTES):
            part = self.window_map.forward(x[:, :, strip.start : strip.stop + p - 1])
            part = part[:, :, : strip.stop - strip.start, :cols]  # an even P has one window more each way
            if out is None:
                out = torch.empty((part.shape[0], part.shape[1], rows, cols), dtype=part.dtype, device=part.device)
            out[:, :, strip] = part
        return out

    def _dense(self, block: np.ndarray) -> np.ndarray:
        scores, _ = self._dense_scores(block, False)
        probs = scores.permute(1, 2, 0).float().cpu().numpy()
        self.trim()
        return probs

    def _window_batches(self, block: np.ndarray, nodata: np.ndarray | None):
        """Yield ``(flat, x)``: flat tile indices of a batch and the input of ``_window_forward`` for its windows.

        ``x`` is on the device, channels-last: the windows ``(n, C, P, P)``, copied row run by
        row run from a zero-copy window view of the block straight into one reused
        ``(batch, P, P, C)`` buffer (pinned when the device is a GPU); or, with a shared
        stem, their first-layer activations (:meth:`_stem_batches`).
        """
        p, h = self.patch_size, self.halo
        tw = block.shape[1] - 2 * h
        flat = np.arange((block.shape[0] - 2 * h) * tw) if nodata is None else np.flatnonzero(~nodata)
        if self.stem is not None:
            yield from self._stem_batches(block, flat)
            return
        view = np.lib.stride_tricks.sliding_window_view(block, (p, p), axis=(0, 1)).transpose(0, 1, 3, 4, 2)
        buffer = self._batch_buffer(p, block.shape[2])
        for start in range(0, flat.size, self.batch_size):
            idx = flat[start : start + self.batch_size]
            for k, (row, col, n) in enumerate_runs(idx, tw):
                np.copyto(buffer[k : k + n], view[row, col : col + n])
            yield idx, self._input(buffer[: idx.size]).permute(0, 3, 1, 2)

    def _stem_batches(self, block: np.ndarray, flat: np.ndarray):
        """:meth:`_window_batches` through the shared stem: its maps made once per strip of tile rows.

        A strip of ``s`` tile rows has maps of ``s + P - 1`` block rows, near
        :data:`STEM_STRIP_BYTES` in all.
        """
        p, h = self.patch_size, self.halo
        th, width = block.shape[0] - 2 * h, block.shape[1]
        tw = width - 2 * h
        row_bytes = self.stem.map_row_bytes(width)
        for strip in row_strips(th, row_bytes, STEM_STRIP_BYTES - (p - 1) * row_bytes):
            top, bottom = strip.start, strip.stop
            lo, hi = np.searchsorted(flat, [top * tw, bottom * tw])
            if lo == hi:
                continue
            maps = self.stem.maps(self._input(np.ascontiguousarray(block[top : bottom + p - 1])))
            offsets = self.stem.offsets(bottom - top + p - 1, width, maps.device)
            for start in range(lo, hi, self.batch_size):
                idx = flat[start : min(hi, start + self.batch_size)]
                rows, cols = np.divmod(idx, tw)
                tops = torch.from_numpy(rows - top).to(maps.device)
                yield idx, self.stem.windows(maps, offsets, tops, torch.from_numpy(cols).to(maps.device), width)

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
            scores, _ = self._scores(x, self._window_forward, False, False)
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
            scores, logits = self._scores(x, self._window_forward, False, True)
            lab, conf = maps_from_scores(scores, logits, self.label_dtype, threads)
            labels[idx], confidence[idx] = _host(lab), _host(conf)
            self.trim()
        return labels.reshape(th, tw), confidence.reshape(th, tw)


#: the autocast dtype of each mixed precision (Lightning's names); "32-true" runs in float32
AUTOCAST_DTYPES = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}


def autocast_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype of ``precision`` on ``device`` (None: float32).

    Raises
    ------
    OptionError
        An unknown precision, or 16-mixed on the CPU (float16 autocast needs a GPU; bf16-mixed runs there).
    """
    if precision == "32-true":
        return None
    if precision not in AUTOCAST_DTYPES:
        raise OptionError("precision", precision, "one of 32-true, " + ", ".join(AUTOCAST_DTYPES))
    if precision == "16-mixed" and torch.device(device).type == "cpu":
        raise OptionError("precision", precision, "32-true or bf16-mixed on the CPU (float16 autocast needs a GPU)")
    return AUTOCAST_DTYPES[precision]


def _window_map(net: torch.nn.Module) -> Any:
    """``net.window_map()`` (:class:`hsi.models.WindowMap`), or None for a network without the hook."""
    hook = getattr(net, "window_map", None)
    return hook() if callable(hook) else None


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
