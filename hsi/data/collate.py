"""``collate_patches``: stack a batch of patches, padding or centre-cropping to one size.

Spectra are never interpolated: a patch larger than the target is centre-cropped, a
smaller one is padded (zeros or reflection) symmetrically around its centre pixel, so the
centre pixel of every patch stays the centre pixel of the output (for odd sizes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from hsi.data.dataset import PatchBatch

__all__ = ["collate_patches", "fit_spatial"]


def _pair(size: int | Sequence[int]) -> tuple[int, int]:
    if isinstance(size, int):
        return size, size
    h, w = size
    return int(h), int(w)


def fit_spatial(x: torch.Tensor, target_size: int | Sequence[int], pad_mode: str = "zeros") -> torch.Tensor:
    """Centre-crop and/or pad the last two axes of ``x`` to ``target_size``.

    Parameters
    ----------
    x : (..., h, w) tensor
    target_size : ``T`` or ``(Th, Tw)``
    pad_mode : "zeros" (or "constant") or "reflect" (needs the pad smaller than the patch).
    """
    th, tw = _pair(target_size)
    h, w = x.shape[-2:]
    if h > th:
        top = (h - th) // 2
        x = x[..., top : top + th, :]
    if w > tw:
        left = (w - tw) // 2
        x = x[..., :, left : left + tw]
    h, w = x.shape[-2:]
    if (h, w) == (th, tw):
        return x
    pt, pl = (th - h) // 2, (tw - w) // 2
    pad = (pl, tw - w - pl, pt, th - h - pt)
    if pad_mode in ("zeros", "constant"):
        return F.pad(x, pad, mode="constant", value=0.0)
    if pad_mode == "reflect":
        shape = x.shape
        y = F.pad(x.reshape(-1, 1, h, w), pad, mode="reflect")
        return y.reshape(*shape[:-2], th, tw)
    raise ValueError(f"pad_mode must be 'zeros' or 'reflect', got {pad_mode!r}")


def _as_tensor(x: Any) -> torch.Tensor:
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))


def collate_patches(
    batch: Any,
    target_size: int | Sequence[int] | None = None,
    with_coords: bool = False,
    pad_mode: str = "zeros",
) -> Any:
    """Collate ``(patch, label[, coords])`` items into ``(patches, labels[, coords])``.

    Parameters
    ----------
    batch : a :class:`PatchBatch` (from ``HSIPatchDataset.__getitems__``: passed through
        without copying), a list of ``(patch (C, h, w), label)`` or ``(patch, label,
        coords (2,))`` items, or an index-batch dict (device-resident path: returned as is).
    target_size : output spatial size ``T`` or ``(Th, Tw)``; None = keep the common size,
        or pad to the largest when sizes differ.
    with_coords : also return the ``(B, 2)`` int64 centre coordinates.
    pad_mode : "zeros" or "reflect" for patches smaller than the target.

    Returns
    -------
    ``(patches (B, C, Th, Tw) float32, labels (B,) int64)`` plus ``coords (B, 2) int64`` when
    ``with_coords``.
    """
    if isinstance(batch, dict):  # index batch: windows are cut after the transfer to the device
        return {**batch, "with_coords": torch.ones((), dtype=torch.bool)} if with_coords else batch
    if isinstance(batch, PatchBatch):
        patches, labels, coords = batch.patches, batch.labels, batch.coords
        if target_size is not None and tuple(patches.shape[-2:]) != _pair(target_size):
            patches = fit_spatial(patches, target_size, pad_mode)
    else:
        items = list(batch)
        if not items:
            raise ValueError("collate_patches got an empty batch")
        xs = [_as_tensor(it[0]).to(torch.float32) for it in items]
        labels = torch.stack([_as_tensor(it[1]).to(torch.int64).reshape(()) for it in items])
        coords = None
        if with_coords:
            if any(len(it) < 3 for it in items):
                raise ValueError("collate_patches(with_coords=True) needs (patch, label, coords) items")
            coords = torch.stack([_as_tensor(it[2]).to(torch.int64).reshape(2) for it in items])
        sizes = {tuple(x.shape[-2:]) for x in xs}
        target = target_size
        if target is None and len(sizes) > 1:
            target = (max(s[0] for s in sizes), max(s[1] for s in sizes))
        if target is not None:
            xs = [x if tuple(x.shape[-2:]) == _pair(target) else fit_spatial(x, target, pad_mode) for x in xs]
        patches = torch.stack(xs)
    if with_coords:
        return patches, labels, coords
    return patches, labels
