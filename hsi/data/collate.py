"""``collate_patches``: stack a batch of ``(patch, label[, coords])`` items into batch tensors.

The DataModule's loaders hand it a :class:`~hsi.data.dataset.PatchBatch` (the whole batch
gathered in one operation), passed through without a copy; a plain list of items, as a
``torch.utils.data.DataLoader`` over single items gives, is stacked. Every patch of a batch
has the same size (one DataModule has one patch size).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from hsi.data.dataset import PatchBatch
from hsi.errors import ShapeMismatchError

__all__ = ["collate_patches"]


def _as_tensor(x: Any) -> torch.Tensor:
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))


def collate_patches(batch: Any, with_coords: bool = False) -> Any:
    """Collate ``(patch, label[, coords])`` items into ``(patches, labels[, coords])``.

    Parameters
    ----------
    batch : a :class:`PatchBatch` (from ``HSIPatchDataset.__getitems__``: passed through
        without copying), a list of ``(patch (C, P, P), label)`` or ``(patch, label,
        coords (2,))`` items, or an index-batch dict (device-resident path: returned as is).
    with_coords : also return the ``(B, 2)`` int64 centre coordinates.

    Returns
    -------
    ``(patches (B, C, P, P) float32, labels (B,) int64)`` plus ``coords (B, 2) int64`` when
    ``with_coords``.

    Raises
    ------
    ShapeMismatchError
        An empty list, items without coordinates for ``with_coords``, or patches of different sizes.
    """
    if isinstance(batch, dict):  # index batch: windows are cut after the transfer to the device
        return {**batch, "with_coords": torch.ones((), dtype=torch.bool)} if with_coords else batch
    if isinstance(batch, PatchBatch):
        patches, labels, coords = batch.patches, batch.labels, batch.coords
    else:
        patches, labels, coords = _stack_items(list(batch), with_coords)
    if with_coords:
        return patches, labels, coords
    return patches, labels


def _stack_items(items: list[Any], with_coords: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    if not items:
        raise ShapeMismatchError("collate_patches got an empty batch")
    xs = [_as_tensor(it[0]).to(torch.float32) for it in items]
    sizes = sorted({tuple(x.shape) for x in xs})
    if len(sizes) > 1:
        raise ShapeMismatchError(f"collate_patches: patches of different shapes in one batch: {sizes[:4]}")
    labels = torch.stack([_as_tensor(it[1]).to(torch.int64).reshape(()) for it in items])
    coords = None
    if with_coords:
        if any(len(it) < 3 for it in items):
            raise ShapeMismatchError("collate_patches(with_coords=True) needs (patch, label, coords) items")
        coords = torch.stack([_as_tensor(it[2]).to(torch.int64).reshape(2) for it in items])
    return torch.stack(xs), labels, coords
