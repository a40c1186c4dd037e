"""``HSIPatchDataset``: ``(C, P, P)`` windows centred on pixels, gathered a batch at a time.

A dataset holds the centre pixels of one split (``coords``), their 0-based class indices
(``labels``; ``-1`` for unlabeled pixels) and one of two sources:

- ``cube``: the preprocessed cube padded by ``P // 2`` (HWC, see :mod:`hsi.data.patches`);
  a sample is a window cut from it — zero-copy view, one gather per batch;
- ``patches``: a materialized ``(N, C, P, P)`` array (``cache="patches"``).

Sources may be arrays or paths of ``.npy`` files; paths are memory-mapped read-only on
first access in each process (``__getstate__`` drops open maps), so the dataset pickles
cleanly to DataLoader workers.

Batched fetching: ``torch.utils.data.DataLoader`` calls ``__getitems__(indices)`` when it
exists; ours cuts the whole batch in one vectorized gather and returns a
:class:`PatchBatch` — a sequence of ``(patch, label)`` pairs (so ``default_collate``
still works) that also carries the stacked ``(B, C, P, P)`` tensor, which
:func:`hsi.data.collate_patches` passes through without another copy.

Augmentation is part of that gather (:mod:`hsi.data.augment`); the per-window draws of an epoch are made once
for the whole dataset. The epoch lives in a shared-memory tensor, so ``set_epoch`` in the main process reaches
persistent workers too (:class:`hsi.data.HSIDataLoader` sets it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from hsi.data.augment import PatchAugment, symmetry_offsets
from hsi.data.patches import check_patch_size, gather_rows, gather_windows, pad_cube
from hsi.errors import OptionError, ShapeMismatchError

__all__ = ["HSIPatchDataset", "HSIIndexDataset", "PatchBatch", "gather_index_batch"]

ArrayLike = np.ndarray | str | Path


class PatchBatch(Sequence):
    """A fetched batch: a sequence of ``(patch, label)`` plus the stacked tensors.

    Attributes
    ----------
    patches : (B, C, P, P) float32 tensor
    labels : (B,) int64 tensor (0-based; -1 unlabeled)
    coords : (B, 2) int64 tensor of centre ``(row, col)``
    indices : (B,) int64 tensor of dataset indices
    """

    __slots__ = ("patches", "labels", "coords", "indices")

    def __init__(self, patches: torch.Tensor, labels: torch.Tensor, coords: torch.Tensor, indices: torch.Tensor):
        self.patches, self.labels, self.coords, self.indices = patches, labels, coords, indices

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self.patches[i], self.labels[i]

    def __repr__(self) -> str:
        return f"PatchBatch(patches={tuple(self.patches.shape)}, labels={tuple(self.labels.shape)})"


def _load_small(a: ArrayLike, name: str) -> np.ndarray:
    if isinstance(a, (str, Path)):
        return np.load(a, allow_pickle=False)
    return np.asarray(a)


def flat_indices(indices: Any, n: int, owner: str) -> np.ndarray:
    """``indices`` (an int or a sequence, negatives counted from the end) as a flat int64 array in ``0..n-1``.

    Raises
    ------
    IndexError
        An index outside ``-n..n-1``, naming ``owner`` (the dataset's class) and its length.
    """
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"index out of range for {owner} of length {n}: {idx.min()}..{idx.max()}")
    return np.where(idx < 0, idx + n, idx)


class HSIPatchDataset(Dataset):
    """Patches centred on pixels of a preprocessed cube (or a materialized patch array).

    Parameters
    ----------
    coords : (N, 2) int array (or ``.npy`` path) of centre ``(row, col)`` in image coordinates.
    labels : (N,) int array (or path): 0-based class index per centre, ``-1`` = unlabeled.
    patch_size : odd ``P``.
    cube : (H + 2r, W + 2r, C) padded float32 cube (HWC), array or ``.npy`` path
        (memory-mapped lazily). Use :meth:`from_cube` to pad an unpadded cube.
    patches : materialized patches (array or path) instead of ``cube``: ``(N, C, P, P)``,
        or ``(N, P, P, C)`` with ``patches_layout="NPPC"`` (how the patch cache stores them,
        so a batch is one contiguous copy).
    augment : a :class:`PatchAugment`, or None for no augmentation (val/test/predict).
    seed : seed of the augmentation randomness.
    channels_last : memory format of the returned ``(B, C, P, P)`` patches: True (default) lays them out
        ``(B, P, P, C)`` (``torch.channels_last``, see :mod:`hsi.data.patches`; use ``.reshape``, not ``.view``,
        on them), False gives C-contiguous tensors at the cost of a transposition.

    Attributes
    ----------
    coords : (N, 2) int64 ndarray
    labels : (N,) int64 ndarray
    patch_size, num_bands, epoch
    """

    def __init__(self, coords: ArrayLike, labels: ArrayLike, patch_size: int, *, cube: ArrayLike | None = None,
                 patches: ArrayLike | None = None, patches_layout: str = "NCPP", augment: PatchAugment | None = None,
                 seed: int = 0, channels_last: bool = True) -> None:
        if (cube is None) == (patches is None):
            raise OptionError("cube", "given with patches=" if cube is not None else None,
                              "exactly one of cube= (padded HWC) or patches= ((N, C, P, P)) for HSIPatchDataset")
        self.patch_size = check_patch_size(patch_size)
        self.coords = _load_small(coords, "coords").astype(np.int64, copy=False)
        self.labels = _load_small(labels, "labels").astype(np.int64, copy=False)
        if self.coords.ndim != 2 or self.coords.shape[1] != 2:
            raise ShapeMismatchError(f"coords must be (N, 2), got shape {self.coords.shape}")
        if self.labels.shape != (self.coords.shape[0],):
            raise ShapeMismatchError(f"labels must be (N,) = ({self.coords.shape[0]},), got shape {self.labels.shape}")
        self._sources: dict[str, ArrayLike] = {"cube": cube} if cube is not None else {"patches": patches}
        self._opened: dict[str, Any] = {}  # per-process: open memory maps, tensor views
        if patches_layout not in ("NCPP", "NPPC"):
            raise OptionError("patches_layout", patches_layout, "'NCPP' or 'NPPC'")
        self.patches_layout = patches_layout
        self.channels_last = bool(channels_last)
        self.augment = augment
        self.seed = int(seed)
        self._epoch = torch.zeros(1, dtype=torch.int64).share_memory_()
        self._check_source()

    @classmethod
    def from_cube(cls, cube: np.ndarray, coords: np.ndarray, labels: np.ndarray, patch_size: int,
                  padding: str = "reflect", **kwargs: Any) -> HSIPatchDataset:
        """Build from an unpadded ``(H, W, C)`` cube (padded here with ``padding``)."""
        return cls(coords, labels, patch_size, cube=pad_cube(np.asarray(cube, dtype=np.float32), patch_size, padding), **kwargs)

    # ------------------------------------------------------------------ sources
    def _array(self, name: str) -> np.ndarray:
        arr = self._opened.get(name)
        if arr is None:
            src = self._sources[name]
            arr = np.load(src, mmap_mode="r", allow_pickle=False) if isinstance(src, (str, Path)) else np.asarray(src)
            self._opened[name] = arr
        return arr

    @property
    def source_kind(self) -> str:
        """"cube" or "patches"."""
        return next(iter(self._sources))

    def _check_source(self) -> None:
        p, n = self.patch_size, len(self)
        if self.source_kind == "cube":
            shape = self._array("cube").shape
            if len(shape) != 3 or shape[0] < p or shape[1] < p:
                raise ShapeMismatchError(
                    f"cube must be a padded (H + {p - 1}, W + {p - 1}, C) array, got shape {shape}")
            h, w = shape[0] - p + 1, shape[1] - p + 1
            if n and (self.coords.min() < 0 or self.coords[:, 0].max() >= h or self.coords[:, 1].max() >= w):
                raise ShapeMismatchError(f"coords fall outside the {h} x {w} image of the padded cube {shape}")
        else:
            shape = self._array("patches").shape
            spatial = shape[2:] if self.patches_layout == "NCPP" else shape[1:3]
            if len(shape) != 4 or shape[0] != n or spatial != (p, p):
                want = f"(N={n}, C, {p}, {p})" if self.patches_layout == "NCPP" else f"(N={n}, {p}, {p}, C)"
                raise ShapeMismatchError(f"patches must be {want} ({self.patches_layout}), got shape {shape}")
        self._opened.clear()  # reopen lazily where used (e.g. in each worker)

    @property
    def num_bands(self) -> int:
        shape = self._array(self.source_kind).shape
        if self.source_kind == "cube":
            return int(shape[2])
        return int(shape[1] if self.patches_layout == "NCPP" else shape[3])

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_opened"] = {}  # memory maps are reopened lazily in the receiving process
        return state

    # ------------------------------------------------------------------ epoch
    @property
    def epoch(self) -> int:
        return int(self._epoch.item())

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch used to seed augmentation (shared with worker processes)."""
        self._epoch.fill_(int(epoch))

    # ------------------------------------------------------------------ fetching
    def __len__(self) -> int:
        return int(self.coords.shape[0])

    def _indices(self, indices: Any) -> np.ndarray:
        return flat_indices(indices, len(self), "HSIPatchDataset")

    def _augment_params(self, idx: np.ndarray) -> dict[str, np.ndarray] | None:
        """The augmentation parameters of samples ``idx`` at the current epoch (None without augmentation).

        Exactly ``augment.sample(seed, epoch, idx, num_bands)``; the per-window draws
        (symmetry code, scale) are made once per epoch for the whole dataset and looked up.
        """
        if self.augment is None:
            return None
        epoch = self.epoch
        key = (self.seed, epoch, self.augment)
        cached = self._opened.get("window_draws")
        if cached is None or cached[0] != key:
            draws = self.augment.sample_windows(self.seed, epoch, np.arange(len(self)))
            cached = self._opened["window_draws"] = ((self.seed, epoch, dataclasses.replace(self.augment)), draws)
        params = {k: v[idx] for k, v in cached[1].items()}
        noise = self.augment.sample_noise(self.seed, epoch, idx, self.num_bands)
        if noise is not None:
            params["noise"] = noise
        return params

    def _cut(self, idx: np.ndarray, codes: np.ndarray | None) -> np.ndarray:
        """Fresh C-contiguous ``(B, P, P, C)`` float32 windows of samples ``idx``, symmetries applied.

        One gather whether ``codes`` (per-sample symmetry codes, or None) are given or not:
        the symmetries are folded into its index (:func:`~hsi.data.patches.gather_rows`).
        A C-contiguous ``(N, P, P, C)`` patch array is read as a cube of ``N * P`` rows and
        ``P`` columns whose window ``n`` starts at row ``n * P``.
        """
        p = self.patch_size
        codes = codes if codes is not None and np.any(codes) else None
        if self.source_kind == "cube":
            cube = self._array("cube")
            return gather_rows(cube, self.coords[idx, 0], self.coords[idx, 1], p, codes).astype(np.float32, copy=False)
        arr = self._array("patches")
        if self.patches_layout == "NPPC" and arr.flags.c_contiguous:
            tall = arr.reshape(arr.shape[0] * p, p, arr.shape[3])
            return gather_rows(tall, idx * p, np.zeros_like(idx), p, codes).astype(np.float32, copy=False)
        view = arr.transpose(0, 2, 3, 1) if self.patches_layout == "NCPP" else arr  # (N, P, P, C), strided
        if codes is None:
            return np.ascontiguousarray(view[idx], dtype=np.float32)
        src = symmetry_offsets(p)[codes]  # (B, P, P, 2): where each output pixel comes from
        return np.ascontiguousarray(view[idx[:, None, None], src[..., 0], src[..., 1]], dtype=np.float32)

    def _gather(self, idx: np.ndarray, params: dict[str, np.ndarray] | None) -> torch.Tensor:
        """``(B, P, P, C)`` float32 tensor of the windows of samples ``idx``, augmented with ``params``.

        Symmetries are part of the gather's index; spectral scaling and noise are then
        applied in place (the float32 operations of :meth:`PatchAugment.apply_spectral`).
        """
        params = params or {}
        out = torch.from_numpy(self._cut(idx, params.get("code")))
        spectral = {k: params[k] for k in ("scale", "noise") if k in params}
        if spectral:
            PatchAugment.apply_spectral(out.permute(0, 3, 1, 2), spectral)  # in place, on a (B, C, P, P) view
        return out

    def __getitems__(self, indices: Sequence[int]) -> PatchBatch:
        """Fetch a whole batch with one vectorized gather (called by DataLoader)."""
        idx = self._indices(indices)
        patches = self._gather(idx, self._augment_params(idx)).permute(0, 3, 1, 2)  # channels-last (B, C, P, P)
        if not self.channels_last:
            patches = patches.contiguous()
        return PatchBatch(patches, torch.from_numpy(self.labels[idx].copy()), torch.from_numpy(self.coords[idx].copy()),
                          torch.from_numpy(idx))

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``(patch (C, P, P) float32, label int64 scalar)`` for sample ``i``."""
        batch = self.__getitems__([i])
        return batch.patches[0], batch.labels[0]

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(n={len(self)}, patch_size={self.patch_size}, source={self.source_kind!r}, "
                f"augment={self.augment!r})")


class HSIIndexDataset(HSIPatchDataset):
    """The device-resident variant: yields centre indices, not windows.

    ``__getitems__`` returns a dict batch ``{"coords": (B, 2), "label": (B,), "index":
    (B,)}`` (plus ``"code"``, ``"scale"``, ``"noise"`` augmentation parameters when
    augmenting, drawn exactly as :class:`HSIPatchDataset` draws them). After the batch is
    on the device, :func:`gather_index_batch` cuts the windows from the device copy of the
    padded cube. Only a ``cube`` source is accepted.
    """

    def __init__(self, coords: ArrayLike, labels: ArrayLike, patch_size: int, *, cube: ArrayLike, **kwargs: Any) -> None:
        super().__init__(coords, labels, patch_size, cube=cube, **kwargs)

    def __getitems__(self, indices: Sequence[int]) -> dict[str, torch.Tensor]:  # type: ignore[override]
        idx = self._indices(indices)
        batch = {"coords": torch.from_numpy(self.coords[idx].copy()),
                 "label": torch.from_numpy(self.labels[idx].copy()), "index": torch.from_numpy(idx)}
        params = self._augment_params(idx)
        if params is not None:
            batch.update({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in params.items()})
        return batch

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:  # type: ignore[override]
        return {k: v[0] for k, v in self.__getitems__([i]).items()}


def gather_index_batch(batch: dict[str, torch.Tensor], cube: torch.Tensor, patch_size: int, channels_last: bool = True
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """Turn an index batch (from :class:`HSIIndexDataset`) into ``(patches, labels)`` on ``cube``'s device.

    ``cube`` is the padded HWC cube as a tensor on the training device. Windows are cut
    with :func:`hsi.data.patches.gather_windows`, the batch's symmetry codes folded into
    the gather's index, then scaled / offset with the batch's spectral parameters (the
    same float32 operations as the host path): bit-identical to the host path.
    """
    codes = batch.get("code")
    patches = gather_windows(cube, batch["coords"].to(cube.device), patch_size, codes=codes)  # channels-last
    spectral = {k: batch[k] for k in ("scale", "noise") if k in batch}
    if spectral:
        PatchAugment.apply_spectral(patches, spectral)
    if not channels_last:
        patches = patches.contiguous()
    return patches, batch["label"].to(cube.device)
