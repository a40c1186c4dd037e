"""Patch datasets, caches, collate, samplers and the Lightning DataModule.

``HSIDataModule`` turns a scene into leakage-free train/val/test patch loaders;
``HSIPatchDataset`` cuts ``(C, P, P)`` windows a batch at a time; ``collate_patches``
stacks, pads or crops them; ``ClassBalancedSampler`` is a DDP-aware balanced sampler.

``HSIDataModule`` is imported on first use: it brings Lightning (about 2 s), which the
gather alone (whole-scene inference of patch-centre models) does not need.
"""

from __future__ import annotations

from hsi.data.augment import PatchAugment
from hsi.data.cache import CacheEntry, PatchCache
from hsi.data.collate import collate_patches
from hsi.data.dataset import HSIIndexDataset, HSIPatchDataset, PatchBatch, gather_index_batch
from hsi.data.loader import HSIDataLoader
from hsi.data.patches import extract_patches, gather_windows, pad_cube, window_view
from hsi.data.samplers import ClassBalancedSampler, EpochShuffleSampler
from hsi.data.scene_source import LoadedSource, SourceSpec, load_source

__all__ = ["CacheEntry", "ClassBalancedSampler", "EpochShuffleSampler", "HSIDataLoader", "HSIDataModule",
           "HSIIndexDataset", "HSIPatchDataset", "LoadedSource", "PatchAugment", "PatchBatch", "PatchCache",
           "SourceSpec", "collate_patches", "extract_patches", "gather_index_batch", "gather_windows", "load_source",
           "pad_cube", "window_view"]


def __getattr__(name: str):
    if name == "HSIDataModule":
        from hsi.data.datamodule import HSIDataModule

        return HSIDataModule
    raise AttributeError(f"module 'hsi.data' has no attribute {name!r}")
