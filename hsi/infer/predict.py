"""Class probabilities of one tile: preprocessing of its block, the forward passes, test-time augmentation.

A *block* is a tile plus its margin (``halo``), read raw from the scene
(:func:`hsi.infer.sources.read_padded_block`). :func:`preprocess_block` applies the
checkpoint's fitted pipeline to it (every step works pixel by pixel, so a block gives the
same values as the same pixels of the whole transformed cube) and refuses non-finite
values. :class:`TilePredictor` turns a block into ``(h, w, K)`` probabilities, on the
model's device; the result is returned to the host.

- dense models (``forward_dense``): one pass over the block, the margin cropped off;
  with a margin of at least the receptive radius each pixel's output equals the one an
  untiled pass over the padded scene gives.
- patch-centre models: the ``P x P`` windows centred on every tile pixel are cut from the
  block by :func:`hsi.data.patches.gather_windows` (the training gather) in batches.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np
import torch

from hsi.errors import NonFiniteInputError
from hsi.preprocess._base import find_nonfinite

__all__ = ["TTA_TRANSFORMS", "TilePredictor", "preprocess_block", "release_freed_memory"]


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
    live memory stayed near 600 MB. Trimming after every batch keeps the peak at the live size.
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


class TilePredictor:
    """Probabilities of a tile from its preprocessed block.

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
        Where the forward passes run.
    batch_size : int
        Windows per pass (patch-centre models).
    tta : bool
        Average over :data:`TTA_TRANSFORMS`.
    num_classes : int, optional
        ``K`` (default: the network's ``num_classes``); the width of all-zero no-data rows.
    """

    def __init__(self, net: torch.nn.Module, *, dense: bool, halo: int, patch_size: int, device: torch.device,
                 batch_size: int = 512, tta: bool = False, num_classes: int | None = None) -> None:
        from hsi.models import channels_last_weights

        self.net = channels_last_weights(net.eval())
        self.dense = dense
        self.halo = int(halo)
        self.patch_size = int(patch_size)
        self.device = torch.device(device)
        self.batch_size = int(batch_size)
        self.transforms = TTA_TRANSFORMS if tta else TTA_TRANSFORMS[:1]
        self.num_classes = int(num_classes) if num_classes is not None else int(getattr(net, "num_classes"))
        self.returns_probabilities = bool(getattr(net, "returns_probabilities", False))

    def _probabilities(self, outputs: torch.Tensor) -> torch.Tensor:
        """Class probabilities along dim 1 of the network's outputs (softmax of logits unless already probabilities)."""
        return outputs if self.returns_probabilities else torch.softmax(outputs, dim=1)

    @torch.no_grad()
    def __call__(self, block: np.ndarray, nodata: np.ndarray | None = None) -> np.ndarray:
        """``(h, w, K)`` float32 probabilities of the tile inside ``block`` (``(h + 2 halo, w + 2 halo, C)``).

        ``nodata`` (``(h, w)`` bool) marks pixels left unclassified: their probabilities are
        all 0 (a classified pixel's largest one is at least ``1 / K``), and patch-centre
        models do not compute them at all; an all-True mask costs no forward pass.
        """
        if nodata is not None and nodata.all():
            return np.zeros((*nodata.shape, self.num_classes), dtype=np.float32)
        probs = self._dense(block) if self.dense else self._patches(block, nodata)
        if nodata is not None:
            probs[nodata] = 0.0
        return probs

    def _dense(self, block: np.ndarray) -> np.ndarray:
        h = self.halo
        # (1, C, h, w) with channels-last strides all through: permute(2, 0, 1).unsqueeze(0)
        # gives the batch axis a stride of C, which the convolutions do not take as
        # channels-last (fcn's forward was seen 1.5x slower)
        x = torch.from_numpy(np.ascontiguousarray(block)).to(self.device)[None].permute(0, 3, 1, 2)
        total = None
        for _, fwd, inv in self.transforms:
            probs = inv(self._probabilities(self.net.forward_dense(fwd(x))))
            total = probs if total is None else total + probs
        total = total / len(self.transforms)
        hb, wb = block.shape[:2]
        probs = total[0, :, h : hb - h, h : wb - h].permute(1, 2, 0).float().cpu().numpy()
        del x, total
        release_freed_memory()
        return probs

    def _patches(self, block: np.ndarray, nodata: np.ndarray | None = None) -> np.ndarray:
        from hsi.data.patches import gather_windows

        p, h = self.patch_size, self.halo
        th, tw = block.shape[0] - 2 * h, block.shape[1] - 2 * h
        keep = np.ones((th, tw), dtype=bool) if nodata is None else ~nodata
        coords = np.argwhere(keep)  # row-major, as the flat index below
        out = np.zeros((th * tw, self.num_classes), dtype=np.float32)
        flat = np.flatnonzero(keep)
        for start in range(0, coords.shape[0], self.batch_size):
            windows = gather_windows(block, coords[start : start + self.batch_size], p)
            x = torch.from_numpy(windows).to(self.device)
            total = None
            for _, fwd, _inv in self.transforms:  # a window's class is its centre's: no inverse needed
                probs = self._probabilities(self.net(fwd(x)))
                total = probs if total is None else total + probs
            out[flat[start : start + len(windows)]] = (total / len(self.transforms)).float().cpu().numpy()
            del windows, x, total
            release_freed_memory()
        return out.reshape(th, tw, -1)
