"""``CollectionDataset``: the patches of several scenes as one dataset, indexed (scene, row, col).

Sample ``i`` of the collection is sample ``i - start[s]`` of scene ``s``'s own
:class:`~hsi.data.dataset.HSIPatchDataset` (each cut from that scene's memory-mapped
cache entry), scenes in collection order. A batch is gathered scene by scene and put back
in the order asked, so any sampler (the seeded shuffles, Lightning's
``DistributedSampler``, the class-balanced sampler over ``labels``) works over the whole
collection as over one scene. The cubes are never concatenated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from hsi.data.dataset import HSIPatchDataset, PatchBatch, flat_indices

__all__ = ["CollectionDataset"]


class CollectionDataset(Dataset):
    """Per-scene patch datasets, one after another.

    Parameters
    ----------
    parts : sequence of HSIPatchDataset
        One per scene, in collection order (all with the same patch size and band count).
    names : sequence of str
        The scenes' names.

    Attributes
    ----------
    coords : (N, 2) int64 ndarray
        ``(row, col)`` of each sample in its own scene.
    labels : (N,) int64 ndarray
        0-based class (the collection's classes), -1 unlabeled.
    scene_index : (N,) int64 ndarray
        Index of each sample's scene in ``names``.
    """

    #: windows gathered at a time (see :meth:`_pieces`)
    PIECE = 32

    def __init__(self, parts: Sequence[HSIPatchDataset], names: Sequence[str]) -> None:
        self.parts, self.names = list(parts), list(names)
        sizes = np.array([len(p) for p in self.parts], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.scene_index = np.repeat(np.arange(len(self.parts), dtype=np.int64), sizes)
        empty = np.zeros((0, 2), np.int64)
        self.coords = np.concatenate([p.coords for p in self.parts] or [empty]).astype(np.int64)
        self.labels = np.concatenate([p.labels for p in self.parts] or [np.zeros(0, np.int64)]).astype(np.int64)
        self.patch_size = self.parts[0].patch_size

    def __len__(self) -> int:
        return int(self.starts[-1])

    @property
    def num_bands(self) -> int:
        """Bands of the patches (after preprocessing)."""
        return self.parts[0].num_bands

    @property
    def epoch(self) -> int:
        """The augmentation epoch (the same in every scene's dataset)."""
        return self.parts[0].epoch

    def set_epoch(self, epoch: int) -> None:
        """Set the augmentation epoch of every scene's dataset (shared with worker processes)."""
        for part in self.parts:
            part.set_epoch(epoch)

    def _indices(self, indices: Any) -> np.ndarray:
        return flat_indices(indices, len(self), "CollectionDataset")

    def _pieces(self, scenes: np.ndarray) -> list[tuple[int, torch.Tensor]]:
        """``(scene, positions in the batch)`` of at most :attr:`PIECE` windows each.

        Gathering in pieces of one size keeps the temporaries alike from batch to batch:
        pieces of every size, as scenes' shares of a shuffled batch would be, fragment the C
        allocator's heap, which then keeps hundreds of MB that are free.
        """
        out = []
        for s in np.unique(scenes):
            where = np.flatnonzero(scenes == s)
            out += [(int(s), torch.from_numpy(where[i:i + self.PIECE])) for i in range(0, where.size, self.PIECE)]
        return out

    @property
    def source_kind(self) -> str:
        """Where the windows are cut from: "cube" or "patches" (stored windows), as the first scene's dataset says."""
        return self.parts[0].source_kind

    def __getitems__(self, indices: Sequence[int]) -> PatchBatch:
        """Gather a batch scene by scene; the samples come back in the order of ``indices``.

        A single scene's dataset gathers the batch itself (its indices are the collection's).
        """
        if len(self.parts) == 1:
            return self.parts[0].__getitems__(indices)
        idx = self._indices(indices)
        scenes = self.scene_index[idx]
        patches = labels = coords = None
        for s, where in self._pieces(scenes):
            piece = self.parts[int(s)].__getitems__((idx[where.numpy()] - self.starts[s]).tolist())
            if patches is None:  # one output batch, each scene's windows written into their places
                fmt = torch.channels_last if self.parts[0].channels_last else torch.contiguous_format
                patches = torch.empty((idx.size, *piece.patches.shape[1:]), dtype=piece.patches.dtype
                                      ).contiguous(memory_format=fmt)
                labels = torch.empty(idx.size, dtype=piece.labels.dtype)
                coords = torch.empty((idx.size, 2), dtype=piece.coords.dtype)
            patches[where], labels[where], coords[where] = piece.patches, piece.labels, piece.coords
        if patches is None:
            raise IndexError("CollectionDataset: an empty batch")
        return PatchBatch(patches, labels, coords, torch.from_numpy(idx))

    def __getitem__(self, i: int) -> Any:
        """``(patch (C, P, P), label)`` of sample ``i`` (a single scene's dataset's own item)."""
        if len(self.parts) == 1:
            return self.parts[0][i]
        batch = self.__getitems__([i])
        return batch.patches[0], batch.labels[0]

    def __repr__(self) -> str:
        return f"CollectionDataset(n={len(self)}, scenes={self.names})"
