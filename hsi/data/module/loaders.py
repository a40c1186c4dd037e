"""The datasets, samplers and loaders of the opened scenes, and the device-resident gather.

Batches: ``(patches (B, C, P, P) float32, labels (B,) int64)`` from train/val/test,
``(patches, labels, coords (B, 2) int64)`` from predict; labels are 0-based, -1 an unlabeled pixel
(``predict_on="all"``). Epoch seeding and the lone final training batch: :mod:`hsi.data.loader`; the samplers under
DDP: :mod:`hsi.data.samplers`. With ``gather_on_device=True`` the loaders yield index batches and
``on_after_batch_transfer`` cuts (and augments) the windows from a copy of the padded cube on the batch's device —
the same batches as the host path.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from hsi.data.augment import PatchAugment
from hsi.data.collate import collate_patches
from hsi.data.dataset import HSIIndexDataset, HSIPatchDataset, gather_index_batch
from hsi.data.loader import HSIDataLoader
from hsi.data.samplers import ClassBalancedSampler, EpochShuffleSampler, distributed_context, trainer_epoch
from hsi.data.sources.dataset import CollectionDataset
from hsi.errors import SplitError

if TYPE_CHECKING:
    from hsi.data.cache import CacheEntry
    from hsi.data.module.options import DataOptions

__all__ = ["check_trainable_size", "device_cube", "gather", "make_dataset", "make_loader", "pixel_spectra",
           "train_loader"]


def check_trainable_size(num_train: int, num_replicas: int = 1) -> None:
    """Refuse a training split too small to give each process a batch of two or more.

    A lone final batch is merged into the one before it, but a process whose whole epoch is
    one sample has nothing to merge it with, and batch normalisation cannot train on it.
    """
    if num_train < 2 * num_replicas:
        per = f" ({num_replicas} processes: 2 each)" if num_replicas > 1 else ""
        raise SplitError(
            f"the training split holds {num_train} labelled pixel(s); training needs at least "
            f"{2 * num_replicas}{per}, since batch normalisation cannot train on a batch of one. "
            "Use a smaller block_size, a larger training fraction or more labels"
        )


def _scene_dataset(entry: CacheEntry, key: str, common: dict[str, Any], patch_size: int,
                   on_device: bool) -> HSIPatchDataset:
    """The patches of one scene's split ``key`` (from its cube, its stored patches, or index batches)."""
    coords, labels = entry.arrays[f"{key}_coords"], entry.arrays[f"{key}_labels"]
    if on_device:
        return HSIIndexDataset(coords, labels, patch_size, cube=entry.arrays["cube"], **common)
    if f"{key}_patches" in entry.arrays:
        return HSIPatchDataset(coords, labels, patch_size, patches=entry.arrays[f"{key}_patches"],
                               patches_layout="NPPC", **common)
    return HSIPatchDataset(coords, labels, patch_size, cube=entry.arrays["cube"], **common)


def make_dataset(name: str, entries: list[CacheEntry], scene_names: list[str], patch_size: int,
                 options: DataOptions, augmented: bool = True) -> CollectionDataset:
    """The dataset of loader ``name`` ("train", "val", "test", "predict") over every scene's cache entry."""
    key = options.predict_on if name == "predict" else name
    augment = PatchAugment(scale=options.spectral_scale, noise=options.spectral_noise) \
        if (name == "train" and options.augment and augmented) else None
    # distinct augmentation draws per scene; the first scene's (a single scene's) seed is the seed itself
    parts = [_scene_dataset(entry, key, {"augment": augment, "seed": options.seed + 7919 * i,
                                         "channels_last": options.channels_last}, patch_size, options.gather_on_device)
             for i, entry in enumerate(entries)]
    return CollectionDataset(parts, scene_names)


def make_loader(ds: CollectionDataset, options: DataOptions, sampler: Any = None, with_coords: bool = False,
                train: bool = False) -> HSIDataLoader:
    """The loader of ``ds`` in batches of ``batch_size`` (no training batch of one: batch norm)."""
    return HSIDataLoader(ds, batch_size=options.batch_size, sampler=sampler, merge_lone_tail=train,
                         num_workers=options.num_workers, pin_memory=options.pin_memory,
                         persistent_workers=options.persistent_workers and options.num_workers > 0,
                         collate_fn=functools.partial(collate_patches, with_coords=with_coords))


def train_loader(ds: CollectionDataset, options: DataOptions, trainer: Any) -> HSIDataLoader:
    """:meth:`~hsi.data.datamodule.HSIDataModule.train_dataloader`, starting at the trainer's epoch (not 0 on resume)."""
    num_replicas, rank = distributed_context(trainer)
    check_trainable_size(len(ds), num_replicas)
    if options.balanced_sampling:
        sampler = ClassBalancedSampler(ds.labels, num_replicas=num_replicas, rank=rank, seed=options.seed)
    else:
        sampler = EpochShuffleSampler(ds, seed=options.seed)
    sampler.set_epoch(trainer_epoch(trainer))
    return make_loader(ds, options, sampler, train=True)


def pixel_spectra(dataset: CollectionDataset, entries: list[CacheEntry], patch_size: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``X (N, C)`` float32 centre spectra, ``y (N,)`` and ``coords (N, 2)`` of ``dataset``, scene after scene."""
    pad, xs = patch_size // 2, []
    for part, entry in zip(dataset.parts, entries):
        cube, c = entry.load("cube"), np.asarray(part.coords, dtype=np.int64)  # padded (H + 2 pad, W + 2 pad, C)
        xs.append(np.asarray(cube[c[:, 0] + pad, c[:, 1] + pad, :], dtype=np.float32))
    return np.concatenate(xs), np.asarray(dataset.labels, np.int64), np.asarray(dataset.coords, np.int64)


def device_cube(cubes: dict[str, torch.Tensor], entry: CacheEntry, device: torch.device | str) -> torch.Tensor:
    """The padded HWC cube of ``entry`` as a tensor on ``device``, copied there once (kept in ``cubes``)."""
    device = torch.device(device)
    key = str(device)
    if key not in cubes:
        cube = np.array(entry.load("cube"), dtype=np.float32)  # writable copy
        cubes[key] = torch.from_numpy(cube).to(device)
    return cubes[key]


def gather(batch: dict[str, Any], cube: torch.Tensor, patch_size: int, channels_last: bool) -> Any:
    """``(patches, labels[, coords])`` of an index batch, cut from ``cube`` on the batch's device."""
    patches, labels = gather_index_batch(batch, cube, patch_size, channels_last)
    if "with_coords" in batch:
        return patches, labels, batch["coords"]
    return patches, labels
