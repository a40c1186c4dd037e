"""``HSIDataModule``: scenes -> split -> train-fitted preprocessing -> cached patches -> loaders.

Flow (``prepare_data`` once per node, ``setup`` on every process):

1. the sources (synthetic scene, registry scene or files, or a collection of them with
   ``scenes=``; a single scene is a collection of one, :mod:`hsi.data.sources`) give cubes
   and labels, each collection scene resampled onto one band grid and one set of classes;
2. the split (``block_split`` by default, buffer ``patch_size // 2``; whole held-out scenes
   with a collection's ``split: scene``) is made from the labels, and the preprocessing
   pipeline (``make_pipeline``) is fitted on the TRAIN pixels only — or both are taken from
   a checkpoint (``load_state_dict``), never refitted;
3. the transformed cube is padded (HWC) and stored with per-split centre coordinates
   and 0-based labels (``cache="cube"``), plus ``N x C x P x P`` arrays per split with
   ``cache="patches"`` (:mod:`hsi.data.build`), in a verified cache keyed by all of the
   above (:mod:`hsi.data.cache`), or kept in memory when ``cache_dir`` is None (no files);
4. ``setup`` opens the caches, one per scene (building them if ``prepare_data`` did not), and
   makes the datasets (:class:`~hsi.data.sources.dataset.CollectionDataset`, indexed scene by
   scene); the splits, pipeline, class names and palette are read back from them.

Batches: ``(patches (B, C, P, P) float32, labels (B,) int64)`` from train/val/test,
``(patches, labels, coords (B, 2) int64)`` from predict. Labels are 0-based; -1 marks an
unlabeled pixel (``predict_on="all"``). A final training batch of one sample is folded into
the batch before it (batch normalisation cannot train on one sample, and no pixel is
dropped); val/test/predict loaders yield every pixel, in batches of any size. A training
split of fewer than 2 pixels per process is refused (:func:`check_trainable_size`).

Epoch seeding: augmentation randomness is ``f(seed, epoch, sample index)``; the epoch is
the train sampler's epoch (set by Lightning each epoch, or by
``loader.set_epoch(epoch)`` in a plain loop) and is copied into the dataset when the
epoch's iterator is created (:class:`hsi.data.HSIDataLoader`), so batches are identical
for any ``num_workers``.

DDP: the default train sampler is a seeded ``RandomSampler`` subclass, which Lightning
replaces by its ``DistributedSampler`` (``use_distributed_sampler=True``): disjoint
shards (at most ``world_size - 1`` indices repeated to even them), reshuffled per epoch,
shuffle seed from ``seed_everything``. With ``balanced_sampling=True`` the sampler is our
:class:`~hsi.data.samplers.ClassBalancedSampler`, a ``DistributedSampler`` subclass sized
from the trainer's world size/rank, which Lightning leaves in place.

Device-resident gathering (``gather_on_device=True``): loaders yield index batches
(centres, labels, augmentation parameters); ``on_after_batch_transfer`` cuts the windows
from a copy of the padded cube on the batch's device and augments them there — the same
batches as the host path.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import lightning.pytorch as pl
import numpy as np
import torch

from hsi._roles import check_declared, roles
from hsi.data.arguments import (
    AT_LEAST_ONE,
    AT_LEAST_ZERO,
    BUFFER,
    FOLD,
    FOLDS,
    PATCH_SIZE,
    SPECTRAL_NOISE,
    SPECTRAL_SCALE,
    SPLIT_SEED,
    TRAIN_FRACTION,
    TRAIN_PER_CLASS,
    check_combinations,
    check_pca,
    integral_pca,
    check_remove_bands,
    check_wavelength_range,
    loader,
    recipe,
    source,
)
from hsi.data.augment import PatchAugment
from hsi.data.build import CacheRecipe
from hsi.data.cache import CacheEntry, json_roundtrip
from hsi.data.checkpoint import check_state, make_collection_state, make_state
from hsi.data.collate import collate_patches
from hsi.data.dataset import HSIIndexDataset, HSIPatchDataset, gather_index_batch
from hsi.data.loader import HSIDataLoader
from hsi.data.patches import DEFAULT_PATCH_SIZE
from hsi.data.samplers import ClassBalancedSampler, EpochShuffleSampler, distributed_context, trainer_epoch
from hsi.data.scene_source import SourceSpec
from hsi.data.sources.arguments import resolve_defaults, sources_of
from hsi.data.sources.dataset import CollectionDataset
from hsi.data.sources.open import OpenedSources, open_sources
from hsi.data.sources.shift import centre_pixels, scene_shift
from hsi.errors import CheckpointError, OptionError, SplitError
from hsi.io.layout import Layout

if TYPE_CHECKING:
    from hsi.preprocess import Pipeline, Split

__all__ = ["HSIDataModule"]

logger = logging.getLogger("hsi.data")


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


class HSIDataModule(pl.LightningDataModule):
    """Patches of a hyperspectral scene for Lightning (or any training loop).

    Parameters
    ----------
    scene : str | None
        Registry scene (synthetic, indian_pines, salinas, salinas_a, pavia_university, pavia_centre, ksc,
        botswana, samson, jasper_ridge, urban; `hsi scenes` lists them); ignored when a cube file is given.
        synthetic needs no files.
    root : str | None
        Folder of the registry scene's files (None: $HSI_DATA_DIR, else ~/.cache/hsi; `hsi scenes` says which files go there).
    download : bool
        Fetch a registry scene's missing files from their public URLs (verified, then kept under root).
    cube_path : str | None
        Train on this cube file instead of a registry scene (.mat, .h5, ENVI .hdr, GeoTIFF .tif); needs its label map.
    labels_path : str | None
        Label map of the cube file (0 = unlabeled).
    cube_key : str | None
        Variable or dataset name of the cube inside its file (None: discovered).
    labels_key : str | None
        Variable or dataset name of the labels inside their file (None: discovered).
    layout : Layout | None
        Axis order of the stored cube array (None: decided from the wavelengths and the shape).
    scene_options : dict[str, Any] | None
        Options of the scene loader, e.g. purity=0.8 for unmixing scenes, height=48 width=48 bands=20 seed=1
        for the synthetic scene.
    ignore_georef : bool
        Read the scene without its georeference: a broken one (a transform without a CRS, a rotated grid, a
        label map on another grid) is then not refused, and the maps carry no map coordinates.
    units : Literal["reflectance", "radiance", "unknown"] | None
        What the cube file's values are, overriding what the file declares (None: the file's declaration, else the
        rule: integers with no declared scale are kept as stored, floats within 0-1 are reflectance).
    scale : float | None
        Divide the cube file's values by this on reading instead of the file's reflectance scale factor (e.g. 10000
        for reflectance stored as integers x 10000; None: the file's own factor).
    scenes : str | list[dict[str, Any]] | None
        A collection of scenes instead of one: a YAML file (scenes:, split: block or scene, test_scenes:,
        val_scenes:), a pack .h5 written by `hsi convert --collection`, or a list of entries ({name, scene, root,
        scene_options} or {name, cube, labels, cube_key, labels_key, layout}, each with optional classes:
        {its name: collection name}); see hsi.collection.
    scaling : Literal["auto", "minmax", "standardize"] | None
        Per-band scaling fitted on the training pixels only (auto: minmax for one scene, standardize for several,
        whose per-scene statistics are steadier as mean and deviation than as extremes; none: no scaling).
    normalize : Literal["none", "brightness", "l2", "derivative", "derivative+l2"]
        Per-pixel normalisation before the scaling, against gains and offsets between sensors: brightness and l2
        divide each spectrum by its mean or norm, derivative takes band-to-band differences, derivative+l2 both.
    pca : int | float | None
        PCA fitted on the training pixels: a number of components (e.g. 30) or a variance fraction in (0, 1)
        (e.g. 0.999); none: no PCA.
    remove_bands : list[int] | None
        Band indices removed before scaling (counted in the bands that wavelength_range keeps).
    wavelength_range : tuple[float, float] | None
        Keep only the bands whose centre lies within MIN MAX nm (inclusive), e.g. 400 1000 for a sensor that covers
        only those; the bands are cut on reading (a collection's common grid is cut), so the checkpoint's bands
        are these and inference cuts a cube with more bands the same way (None: every band).
    split : Literal["block", "random", "fixed"]
        block: spatially disjoint square blocks with a buffer; random: per pixel (test pixels leak into
        training patches; for comparison with the literature only); fixed: labels_path is the training map
        and test_labels_path the test map.
    test_labels_path : str | None
        Test ground-truth map for split=fixed.
    test_labels_key : str | None
        Variable or dataset name inside test_labels_path (None: discovered).
    block_size : int
        Side of the square blocks of the block split, in pixels.
    buffer : int | None
        Pixels left out of training around val/test blocks (None: patch_size // 2, so no training patch
        sees a val/test pixel; `hsi evaluate`: the largest any model of the board needs, the same for all).
    fractions : tuple[float, float, float]
        Train, val and test fractions (for split=fixed, the val share is taken from the training pixels).
    split_seed : int | None
        Seed of the split (None: the same as seed).
    folds : int | None
        Spatial cross-validation (split=block): the labelled blocks are dealt into this many folds, stratified
        by class, and fold `fold` is the test split; validation blocks come from the other folds (in the ratio
        of the train and val fractions) and the buffer is applied as usual (None: no folds; `hsi evaluate`
        runs every fold).
    fold : int | None
        The fold tested, from 1 to folds (with folds; a checkpoint that recorded the fold counted from 0, as
        earlier versions did, is read with its fold converted).
    train_per_class : int | None
        Label budget: after the split and its buffer, keep only this many labelled training pixels per class, drawn
        with the split's seed from the training pixels (a class with fewer keeps all it has; None: every training
        pixel). The same seed gives the same pixels for every model.
    train_fraction : float | None
        Label budget as a share in (0, 1] of each class's training pixels (rounded, at least one); exclusive with
        train_per_class.
    val_budget : Literal["same", "all", "none"]
        The validation pixels under a label budget: same: the same budget drawn from the validation pixels (early
        stopping and the best checkpoint judged on them); all: every validation pixel; none: no validation pixel.
    patch_size : int
        Side of the square patch around each pixel (odd, >= 1).
    padding : Literal["reflect", "symmetric", "edge", "zeros", "constant", "wrap"]
        How the cube is padded at its borders so edge pixels get full patches.
    batch_size : int
        Patches per batch.
    num_workers : int
        DataLoader worker processes (0: load in the main process).
    pin_memory : bool
        Pin batches in page-locked memory (faster copies to a GPU).
    persistent_workers : bool
        Keep worker processes alive between epochs.
    cache_dir : str | None
        Folder of the .npy patch caches; a second run with the same inputs reuses them (None: keep everything
        in memory, no files).
    cache : Literal["cube", "patches", "memory"]
        cube: padded cube + coordinates, windows are cut per batch; patches: also the windows of every split,
        stored (N, P, P, C) (for slow random-access storage); memory: no files even with a cache_dir.
    augment : bool
        Random flips and quarter turns of the training patches.
    spectral_scale : float | None
        With augment: multiply each training patch by a factor drawn from U(1 - s, 1 + s), 0 = off
        (brightness changes; in the units after scaling; None: 0 for one scene, 0.1 for several, which lets a
        model trained on one sensor hold up on another).
    spectral_noise : float | None
        With augment: add a per-band offset drawn from N(0, sigma^2) to each training patch, 0 = off
        (None: 0 for one scene, 0.05 for several).
    gather_on_device : bool
        Keep the preprocessed cube on the accelerator and cut patches there.
    balanced_sampling : bool
        Class-balanced, distributed-aware training sampler.
    predict_on : Literal["test", "labeled", "all"]
        Pixels of the predict loader: the test split, every labeled pixel, or every pixel of the scene
        that has data (no-data pixels, with a NaN or infinite band, are never classified).
    seed : int
        Seed of shuffling and augmentation (and of the split unless split_seed is set).
    channels_last : bool
        Memory format of the patch tensors: shapes are always (B, C, P, P); True lays the memory out
        (B, P, P, C), what the gather writes at memory speed; False returns C-contiguous tensors.
    """

    def __init__(
        self,
        scene: Annotated[str | None, source()] = "synthetic",
        root: Annotated[str | None, source()] = None,
        download: Annotated[bool, loader()] = False,
        cube_path: Annotated[str | None, source("cube")] = None,
        labels_path: Annotated[str | None, source("labels")] = None,
        cube_key: Annotated[str | None, source()] = None,
        labels_key: Annotated[str | None, source()] = None,
        layout: Annotated[Layout | None, source()] = None,
        scene_options: Annotated[dict[str, Any] | None, source()] = None,
        ignore_georef: Annotated[bool, source()] = False,
        units: Annotated[Literal["reflectance", "radiance", "unknown"] | None, source()] = None,
        scale: Annotated[float | None, source()] = None,
        scenes: Annotated[str | list[dict[str, Any]] | None, source()] = None,
        scaling: Annotated[Literal["auto", "minmax", "standardize"] | None, recipe()] = "auto",
        normalize: Annotated[Literal["none", "brightness", "l2", "derivative", "derivative+l2"], recipe()] = "none",
        pca: Annotated[int | float | None, recipe(check_pca)] = None,
        remove_bands: Annotated[list[int] | None, recipe(check_remove_bands)] = None,
        wavelength_range: Annotated[tuple[float, float] | None, recipe(check_wavelength_range)] = None,
        split: Annotated[Literal["block", "random", "fixed"], recipe()] = "block",
        test_labels_path: Annotated[str | None, source("test_labels")] = None,
        test_labels_key: Annotated[str | None, source()] = None,
        block_size: Annotated[int, recipe(AT_LEAST_ONE)] = 16,
        buffer: Annotated[int | None, recipe(BUFFER)] = None,
        fractions: Annotated[tuple[float, float, float], recipe()] = (0.6, 0.2, 0.2),
        split_seed: Annotated[int | None, recipe(SPLIT_SEED)] = None,
        folds: Annotated[int | None, recipe(FOLDS)] = None, fold: Annotated[int | None, recipe(FOLD)] = None,
        train_per_class: Annotated[int | None, recipe(TRAIN_PER_CLASS)] = None,
        train_fraction: Annotated[float | None, recipe(TRAIN_FRACTION)] = None,
        val_budget: Annotated[Literal["same", "all", "none"], recipe()] = "same",
        patch_size: Annotated[int, recipe(PATCH_SIZE)] = DEFAULT_PATCH_SIZE,
        padding: Annotated[Literal["reflect", "symmetric", "edge", "zeros", "constant", "wrap"], recipe()] = "reflect",
        batch_size: Annotated[int, loader(AT_LEAST_ONE)] = 64,
        num_workers: Annotated[int, loader(AT_LEAST_ZERO)] = 0,
        pin_memory: Annotated[bool, loader()] = False, persistent_workers: Annotated[bool, loader()] = False,
        cache_dir: Annotated[str | None, loader()] = None,
        cache: Annotated[Literal["cube", "patches", "memory"], recipe(resume="free")] = "cube",
        augment: Annotated[bool, loader()] = True,
        spectral_scale: Annotated[float | None, loader(SPECTRAL_SCALE)] = None,
        spectral_noise: Annotated[float | None, loader(SPECTRAL_NOISE)] = None,
        gather_on_device: Annotated[bool, loader()] = False,
        balanced_sampling: Annotated[bool, loader()] = False,
        predict_on: Annotated[Literal["test", "labeled", "all"], loader()] = "test",
        seed: Annotated[int, loader(AT_LEAST_ZERO, resume="fixed")] = 0,
        channels_last: Annotated[bool, loader()] = True,
    ) -> None:
        super().__init__()
        # saved as a list (save_hyperparameters reads the locals): hparams.yaml then reads back with yaml.safe_load
        fractions = list(fractions) if isinstance(fractions, tuple) else fractions
        wavelength_range = list(wavelength_range) if isinstance(wavelength_range, tuple) else wavelength_range
        self.save_hyperparameters()
        # LightningCLI hands "--data.pca 4" over as 4.0 (in the hyperparameters it passes too): a whole
        # number of components, not a variance fraction
        self.hparams["pca"] = integral_pca(self.hparams["pca"])
        check_declared(type(self), dict(self.hparams))
        check_combinations(dict(self.hparams))
        named = {n: self.hparams[n] for n, role in roles(type(self)).items() if role.kind == "source" and n != "scenes"}
        spec = SourceSpec(**{**named, "scene_options": dict(scene_options or {})}, download=bool(download),
                          wavelength_range=self.hparams["wavelength_range"])
        # a single scene is a collection of one; ``source`` names the run (and says where a lone scene's files are)
        self.collection, self.source = sources_of(dict(self.hparams), spec)
        # what runs is what is recorded (checkpoints, reports, resume): "auto" and None resolved by the scene count
        self.hparams.update(resolve_defaults(self.hparams, len(self.collection.entries)))
        self._start_empty()

    def _start_empty(self) -> None:
        """Nothing opened or loaded yet."""
        self._override: dict[str, Any] | None = None  # a single scene's split/pipeline from load_state_dict
        self._saved: dict[str, Any] | None = None  # a collection's state from load_state_dict
        self._expected_classes: list[str] | None = None  # class names of a loaded state
        self._opened: OpenedSources | None = None
        self._datasets: dict[str, CollectionDataset] = {}
        self._stages: set[str] = set()
        self._device_cubes: dict[str, torch.Tensor] = {}
        self._shift: dict[str, Any] | None = None  # the scene-shift records
        self._facts: dict[str, Any] | None = None  # the training facts of the state
        self._stats: dict[tuple[tuple[str, ...], str], Any] = {}  # band statistics by (scenes, pixels)

    # ================================================================== cache
    @property
    def patch_size(self) -> int:
        """Window size ``P`` (a loaded state's wins over the argument)."""
        return int(self._override["patch_size"]) if self._override else int(self.hparams.patch_size)

    @property
    def padding(self) -> str:
        """Border padding mode (a loaded state's wins over the argument)."""
        return str(self._override["padding"]) if self._override else str(self.hparams.padding)

    @property
    def buffer(self) -> int:
        """Split buffer in pixels (``patch_size // 2`` unless given)."""
        b = self.hparams.buffer
        return self.patch_size // 2 if b is None else int(b)

    def _recipe(self) -> CacheRecipe:
        """The cache contents the current arguments (and any loaded state) ask for: every ``recipe`` argument."""
        h = self.hparams
        resolved = {"buffer": self.buffer, "split_seed": h.seed if h.split_seed is None else h.split_seed,
                    "patch_size": self.patch_size, "padding": self.padding}
        values = {name: resolved.get(name, h[name]) for name, role in roles(type(self)).items() if role.kind == "recipe"}
        return CacheRecipe(values, checkpoint=self._override)

    @property
    def in_memory(self) -> bool:
        """True when nothing is written to disk (``cache_dir=None`` or ``cache="memory"``)."""
        return self.hparams.cache_dir is None or self.hparams.cache == "memory"

    def _open(self) -> OpenedSources:
        """Open (or build) every scene's cache entry and their shared state (in memory if ``cache_dir`` is None)."""
        h = self.hparams
        return open_sources(self.collection, self.source, dict(self._recipe().values), override=self._override,
                            saved=self._saved, cache_dir=None if self.in_memory else h.cache_dir,
                            download=bool(h.download), ignore_georef=bool(h.ignore_georef))

    def _sources(self) -> OpenedSources:
        if self._opened is None:
            opened = self._open()
            found = list(opened.state["class_names"])
            if self._expected_classes is not None and found != self._expected_classes:
                raise CheckpointError(
                    f"HSIDataModule.load_state_dict: the checkpoint's classes {self._expected_classes} differ from "
                    f"the scene's {found}"
                )
            self._opened = opened
            self._device_cubes.clear()
            self._shift = self._facts = None
            self._stats.clear()
        return self._opened

    def _ensure_entry(self) -> CacheEntry:
        """The first scene's cache entry (the only one of a single scene)."""
        return self._sources().entries[0]

    # ================================================================== Lightning hooks
    def prepare_data(self) -> None:
        """Load/generate the scenes and build their caches (one process); sets no state."""
        if not self.in_memory:
            self._open()

    def setup(self, stage: str | None = None) -> None:
        """Open the caches (building them if needed) and create the datasets for ``stage``."""
        self._sources()
        stages = {"fit": ("train", "val"), "validate": ("val",), "test": ("test",), "predict": ("predict",)}
        names = stages.get(stage, ("train", "val", "test", "predict")) if stage else ("train", "val", "test", "predict")
        self._stages.add(stage or "all")
        for name in names:
            self._datasets[name] = self._make_dataset(name)

    def _scene_dataset(self, entry: CacheEntry, key: str, augment: PatchAugment | None, seed: int) -> HSIPatchDataset:
        """The patches of one scene's split ``key`` (from its cube, its stored patches, or index batches)."""
        coords, labels = entry.arrays[f"{key}_coords"], entry.arrays[f"{key}_labels"]
        common = {"augment": augment, "seed": seed, "channels_last": bool(self.hparams.channels_last)}
        if self.hparams.gather_on_device:
            return HSIIndexDataset(coords, labels, self.patch_size, cube=entry.arrays["cube"], **common)
        if f"{key}_patches" in entry.arrays:
            return HSIPatchDataset(coords, labels, self.patch_size, patches=entry.arrays[f"{key}_patches"],
                                   patches_layout="NPPC", **common)
        return HSIPatchDataset(coords, labels, self.patch_size, cube=entry.arrays["cube"], **common)

    def _make_dataset(self, name: str, augmented: bool = True) -> CollectionDataset:
        h = self.hparams
        key = h.predict_on if name == "predict" else name
        augment = PatchAugment(scale=float(h.spectral_scale), noise=float(h.spectral_noise)) \
            if (name == "train" and h.augment and augmented) else None
        # distinct augmentation draws per scene; the first scene's (a single scene's) seed is the seed itself
        parts = [self._scene_dataset(entry, key, augment, int(h.seed) + 7919 * i)
                 for i, entry in enumerate(self._sources().entries)]
        return CollectionDataset(parts, self.scene_names)

    def _dataset(self, name: str) -> CollectionDataset:
        if name not in self._datasets:
            self._datasets[name] = self._make_dataset(name)
        return self._datasets[name]

    @property
    def train_dataset(self) -> CollectionDataset:
        """Training patches (augmented when ``augment=True``)."""
        return self._dataset("train")

    @property
    def val_dataset(self) -> CollectionDataset:
        return self._dataset("val")

    @property
    def test_dataset(self) -> CollectionDataset:
        return self._dataset("test")

    @property
    def predict_dataset(self) -> CollectionDataset:
        """The ``predict_on`` pixels; ``.coords`` are their (row, col) centres, ``.scene_index`` their scenes."""
        return self._dataset("predict")

    def _loader(
        self, ds: CollectionDataset, sampler: Any = None, with_coords: bool = False, train: bool = False
    ) -> HSIDataLoader:
        h = self.hparams
        return HSIDataLoader(
            ds,
            batch_size=int(h.batch_size),
            sampler=sampler,
            merge_lone_tail=train,  # no training batch of one (batch norm); eval loaders unchanged
            num_workers=int(h.num_workers),
            pin_memory=bool(h.pin_memory),
            persistent_workers=bool(h.persistent_workers) and int(h.num_workers) > 0,
            collate_fn=functools.partial(collate_patches, with_coords=with_coords),
        )

    def train_dataloader(self) -> HSIDataLoader:
        """Shuffled per epoch by a seeded sampler (class-balanced with ``balanced_sampling``).

        A final batch of one sample is folded into the one before it, so every training
        pixel is seen each epoch and no batch normalisation sees a batch of one.
        """
        ds = self.train_dataset
        num_replicas, rank = distributed_context(self.trainer)
        check_trainable_size(len(ds), num_replicas)
        if self.hparams.balanced_sampling:
            sampler = ClassBalancedSampler(ds.labels, num_replicas=num_replicas, rank=rank, seed=int(self.hparams.seed))
        else:
            sampler = EpochShuffleSampler(ds, seed=int(self.hparams.seed))
        sampler.set_epoch(trainer_epoch(self.trainer))  # a resumed run's first epoch, not 0
        return self._loader(ds, sampler, train=True)

    def val_dataloader(self) -> HSIDataLoader:
        return self._loader(self.val_dataset)

    def test_dataloader(self) -> HSIDataLoader:
        return self._loader(self.test_dataset)

    def predict_dataloader(self) -> HSIDataLoader:
        """Batches of ``(patches, labels, coords)``."""
        return self._loader(self.predict_dataset, with_coords=True)

    def fixed_dataloader(self, split: str) -> HSIDataLoader:
        """The patches of ``split`` ("train", "val", "test") in their stored order, never augmented.

        The training pixels as they are, e.g. to refit a classifier layer on them
        (:mod:`hsi.training.refit`); the training loader shuffles and augments.
        """
        if split not in ("train", "val", "test"):
            raise OptionError("split", split, "train, val or test")
        return self._loader(self._make_dataset(split, augmented=False))

    def pixel_spectra(self, split: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The preprocessed spectra of a split's pixels, for per-pixel models (the classical baselines).

        ``split`` is "train", "val", "test" or "predict". Returns ``X (N, C)`` float32 (the
        centre pixels of the split's patches, scene after scene), ``y (N,)`` int64 0-based
        labels and ``coords (N, 2)`` int64 rows and columns in each pixel's own scene, in the
        order of the split's dataset.
        """
        dataset = self._dataset(split)
        pad, xs = self.patch_size // 2, []
        for part, entry in zip(dataset.parts, self._sources().entries):
            cube, c = entry.load("cube"), np.asarray(part.coords, dtype=np.int64)  # padded (H + 2 pad, W + 2 pad, C)
            xs.append(np.asarray(cube[c[:, 0] + pad, c[:, 1] + pad, :], dtype=np.float32))
        return np.concatenate(xs), np.asarray(dataset.labels, np.int64), np.asarray(dataset.coords, np.int64)

    # ================================================================== device path
    def device_cube(self, device: torch.device | str) -> torch.Tensor:
        """The padded HWC cube as a tensor on ``device`` (copied there once)."""
        device = torch.device(device)
        key = str(device)
        if key not in self._device_cubes:
            cube = np.array(self._ensure_entry().load("cube"), dtype=np.float32)  # writable copy
            self._device_cubes[key] = torch.from_numpy(cube).to(device)
        return self._device_cubes[key]

    def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        """Device-resident path: turn an index batch into ``(patches, labels[, coords])`` on its device."""
        if isinstance(batch, dict) and "coords" in batch and "index" in batch:
            cube = self.device_cube(batch["coords"].device)
            patches, labels = gather_index_batch(batch, cube, self.patch_size, bool(self.hparams.channels_last))
            if "with_coords" in batch:
                return patches, labels, batch["coords"]
            return patches, labels
        return batch

    # ================================================================== scenes
    @property
    def _state(self) -> dict[str, Any]:
        return self._sources().state

    @property
    def scene_name(self) -> str:
        """Name of the source scene (the scenes joined, for several)."""
        return str(self.source.name)

    @property
    def scene_names(self) -> list[str]:
        """Names of the scenes, in order (one for a single scene)."""
        return [str(s["name"]) for s in self._state["scenes"]]

    def scene_classes(self) -> dict[str, list[str]]:
        """``{scene: [classes it has]}``."""
        return {s["name"]: list(s["classes"]) for s in self._state["scenes"]}

    def _scene_index(self, name: str) -> int:
        names = self.scene_names
        if name not in names:
            raise OptionError("scene", name, f"one of the DataModule's scenes ({', '.join(names)})")
        return names.index(name)

    def scene_labels(self, name: str) -> np.ndarray:
        """(H, W) int64 labels of scene ``name``: 0 unlabeled, the DataModule's classes 1..K."""
        return np.asarray(self._sources().entries[self._scene_index(name)].load("label_map", mmap=False))

    def scene_cube(self, name: str) -> np.ndarray:
        """Scene ``name``'s preprocessed cube ``(H + 2 pad, W + 2 pad, C)``, padded by ``patch_size // 2``."""
        return self._sources().entries[self._scene_index(name)].load("cube")

    def scene_split(self, name: str) -> Split:
        """The train/val/test :class:`~hsi.preprocess.Split` of scene ``name``."""
        from hsi.preprocess import Split

        return Split.from_state(self._state["splits"][self._scene_index(name)])

    def _lone_scene(self, what: str, instead: str) -> str:
        """The name of the only scene; :class:`AttributeError` for several (use ``instead``)."""
        names = self.scene_names
        if len(names) != 1:
            raise AttributeError(f"{len(names)} scenes have one {what} each: use {instead}")
        return names[0]

    @property
    def class_names(self) -> list[str]:
        """Names of classes 1..K."""
        return list(self._state["class_names"])

    @property
    def num_classes(self) -> int:
        """Number of classes K."""
        return len(self._state["class_names"])

    @property
    def palette(self) -> np.ndarray:
        """(K + 1, 3) uint8; row 0 = unlabeled."""
        return np.asarray(self._state["palette"], dtype=np.uint8)

    @property
    def label_values(self) -> list[int]:
        """Original label ids of classes 1..K in the source (1..K for several scenes)."""
        opened = self._sources()
        if opened.single:
            return list(opened.entries[0].state["scene"]["label_values"])
        return list(range(1, self.num_classes + 1))

    @property
    def wavelengths(self) -> np.ndarray | None:
        """Band centres the model's input comes from (before preprocessing; the common grid of several scenes)."""
        grid = self._state.get("grid")
        return None if grid is None else np.asarray(grid, dtype=np.float64)

    @property
    def num_bands(self) -> int:
        """Bands after preprocessing (the model's input channels)."""
        return int(self._ensure_entry().load("cube").shape[2])

    def raw_band_count(self) -> int:
        """Bands before preprocessing (of the common grid for several scenes)."""
        grid = self._state.get("grid")
        return len(grid) if grid is not None else int(self._state["scenes"][0]["n_bands"])

    @property
    def labels(self) -> np.ndarray:
        """(H, W) int64 scene labels: 0 unlabeled, classes 1..K (a single scene's)."""
        return self.scene_labels(self._lone_scene("label map", "scene_labels(name)"))

    @property
    def image_shape(self) -> tuple[int, int]:
        """``(H, W)`` of the scene (a single scene's)."""
        shape = self._state["scenes"][self._scene_index(self._lone_scene("image shape", "scene_shapes"))]["shape"]
        return int(shape[0]), int(shape[1])

    @property
    def scene_shapes(self) -> dict[str, tuple[int, int]]:
        """``{scene: (H, W)}``."""
        return {s["name"]: (int(s["shape"][0]), int(s["shape"][1])) for s in self._state["scenes"]}

    @property
    def split(self) -> Split:
        """The train/val/test split in use (a single scene's)."""
        return self.scene_split(self._lone_scene("split", "scene_split(name)"))

    def split_summary(self) -> dict[str, Any]:
        """The split's parameters and pixel counts (what ``metrics.json`` records).

        A single scene: its split's parameters and counts. Several: the collection's split,
        its held-out scenes, the counts overall and per scene, and the leakage audit.
        """
        from hsi.data.sources.split import collection_leakage

        splits = {name: self.scene_split(name) for name in self.scene_names}
        counts = {name: {f"{k}_pixels": int(getattr(s, k).sum()) for k in ("train", "val", "test")}
                  for name, s in splits.items()}
        if len(splits) == 1:
            (split,) = splits.values()
            return {**dict(split.params), **next(iter(counts.values()))}
        col = self.collection
        summary: dict[str, Any] = {"method": col.split, "test_scenes": list(col.test_scenes),
                                   "val_scenes": list(col.val_scenes), "scenes": counts}
        for k in ("train", "val", "test"):
            summary[f"{k}_pixels"] = sum(c[f"{k}_pixels"] for c in counts.values())
        budget = next(iter(splits.values())).params.get("budget")  # one draw over the whole collection
        if budget is not None:
            summary["budget"] = budget
        held = list(col.test_scenes) + list(col.val_scenes)
        summary["leakage"] = collection_leakage(list(splits.values()), list(splits), self.patch_size, held)
        return summary

    def scene_shift(self) -> dict[str, Any] | None:
        """Each scene's units, typical raw value and band statistics after preprocessing against the training
        scenes' (:func:`hsi.data.sources.shift.scene_shift`; warned about once, the first time); None for one scene.
        """
        if self._shift is None and len(self.scene_names) > 1:
            self._shift = scene_shift(self._state["scenes"], self.collection.train_names, self._band_stats)
        return self._shift

    def _band_stats(self, scenes: list[str], key: str) -> Any:
        """:func:`~hsi.preprocess.shift.band_stats` of the preprocessed ``key`` pixels ("train", "all") of
        ``scenes`` together (computed once per DataModule state: the shift check and the checkpoint share them)."""
        cache_key = (tuple(scenes), key)
        if cache_key not in self._stats:
            from hsi.preprocess.shift import band_stats

            entries, names = self._sources().entries, self.scene_names
            self._stats[cache_key] = band_stats([centre_pixels(entries[names.index(n)], key, self.patch_size)
                                                 for n in scenes])
        return self._stats[cache_key]

    @property
    def preprocessing(self) -> dict[str, Any]:
        """The preprocessing that runs (``auto`` resolved): ``scaling``, ``normalize``, ``pca``, ``remove_bands``."""
        values = self._recipe().values
        return {name: values[name] for name in ("scaling", "normalize", "pca", "remove_bands")}

    def collection_record(self) -> dict[str, Any]:
        """The scenes as they ran, for ``metrics.json``: entries, split, held-out scenes, preprocessing, the
        normalisation that ran and each scene's units."""
        col, units = self.collection, {s["name"]: s.get("units") for s in self._state["scenes"]}
        fitted = {"collection": "one pipeline fitted on the training pixels of the training scenes",
                  "scene": "each scene's own, fitted on " + ("all its valid pixels (unsupervised, labels never read)"
                                                              if col.split == "scene" else "its own training pixels")}
        return {"entries": col.to_dict()["scenes"], "split": col.split, "test_scenes": list(col.test_scenes),
                "val_scenes": list(col.val_scenes), "preprocess": col.preprocess,
                "preprocess_fitted": fitted[col.preprocess], **self.preprocessing, "units": units}

    def data_arguments(self) -> dict[str, Any]:
        """The arguments that ran, for reports: a collection's without the single-scene source arguments and split
        (its entries and split are in :meth:`collection_record`)."""
        arguments = dict(self.hparams)
        if arguments.get("scenes") is not None:
            for name, role in roles(type(self)).items():
                if (role.kind == "source" and name not in ("scenes", "ignore_georef")) or name == "split":
                    arguments.pop(name, None)
        return arguments

    def bands_summary(self) -> dict[str, Any] | None:
        """The common band grid of several scenes (range, count, widths, from which scene) and how each scene came
        onto it (method, bands dropped); None for one scene."""
        state = self._state
        if len(self.scene_names) == 1:
            return None
        from hsi.preprocess.response import grid_summary

        grid = None if state["grid"] is None else {**grid_summary(state["grid"], state.get("grid_fwhm")),
                                                    "from": state.get("grid_from"),
                                                    "fwhm_from": state.get("grid_fwhm_from")}
        return {"grid": grid, "scenes": {s["name"]: s.get("resampling") for s in state["scenes"]}}

    @property
    def pipeline(self) -> Pipeline:
        """The preprocessing fitted on the training pixels (of all training scenes; with ``preprocess: scene`` the
        first training scene's, each scene's own in ``state_dict()["collection"]["pipelines"]``)."""
        from hsi.preprocess import Pipeline

        return Pipeline.from_state(self._state["pipeline"])

    @property
    def cache_path(self) -> Path | None:
        """The cache folder in use (the first scene's; None in memory)."""
        return self._ensure_entry().path

    @property
    def excluded_nonfinite(self) -> dict[str, Any]:
        """Labeled pixels left out of every split because their spectrum holds NaN or Inf (counts, per class, first)."""
        opened = self._sources()
        if opened.single:
            return dict(opened.entries[0].state["scene"].get("excluded_nonfinite") or {"pixels": 0})
        return {"pixels": sum(int(e.state["scene"].get("excluded_nonfinite", {}).get("pixels", 0))
                              for e in opened.entries)}

    def teardown(self, stage: str) -> None:
        """End of a stage: make sure a DDP process group is freed before the interpreter exits.

        Lightning never destroys the process group; left to the interpreter's own shutdown,
        gloo's worker threads can abort the process (see :mod:`hsi._distributed`).
        """
        from hsi._distributed import release_at_exit

        release_at_exit()

    # ================================================================== checkpoint state
    @classmethod
    def load_from_checkpoint(cls, checkpoint_path: Any, map_location: Any = None, hparams_file: Any = None,
                             **kwargs: Any) -> HSIDataModule:
        """Lightning's loader; a ``fold`` the checkpoint counted from 0 (earlier versions) is read counted from 1."""
        if "fold" not in kwargs and hparams_file is None:
            from hsi.data.checkpoint import read_checkpoint

            saved = read_checkpoint(checkpoint_path).get("datamodule_hyper_parameters") or {}
            if saved.get("fold") is not None:
                kwargs["fold"] = saved["fold"]
        return super().load_from_checkpoint(checkpoint_path, map_location=map_location, hparams_file=hparams_file,
                                            **kwargs)

    def state_dict(self) -> dict[str, Any]:
        """JSON-only state: fitted pipeline, split, class names, palette, patch size, label mapping (and, for several
        scenes, ``collection``: the grid, classes, each scene's facts and split)."""
        opened = self._sources()
        if opened.single:
            state = make_state(opened.entries[0].state, num_bands=self.num_bands, image_shape=self.image_shape,
                               patch_size=self.patch_size, padding=self.padding)
        else:
            state = make_collection_state(opened.state, name=self.scene_name, num_bands=self.num_bands,
                                          patch_size=self.patch_size, padding=self.padding)
        return {**state, **self._training_facts()}

    def _training_facts(self) -> dict[str, Any]:
        """What inference checks a new cube against: the band statistics after preprocessing of the training pixels
        and of all the training scenes' valid pixels (a cube on other bands is matched to the latter), and the
        training scenes' units and typical raw value (computed once)."""
        if self._facts is None:
            names = self.scene_names
            train = [n for n in self.collection.train_names if self.scene_split(n).train.any()] or names
            stats = self._band_stats(train, "train")
            facts = [s for s in self._state["scenes"] if s["name"] in train]
            levels = [f.get("value_level") for f in facts if f.get("value_level")]
            classes = None if len(names) == 1 else [self.class_names[k] for k in
                                                    sorted(set(np.unique(self.train_dataset.labels).tolist()))]
            self._facts = {"band_stats": stats.to_dict(), "scene_band_stats": self._band_stats(train, "all").to_dict(),
                           "training_values": {
                "names": train, "units": [(f.get("units") or {}).get("kind", "unknown") for f in facts],
                "value_level": float(np.median(levels)) if levels else None, "classes": classes}}
        return self._facts

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Reuse a checkpoint's split(s) and fitted pipeline (no refitting) from now on."""
        check_state(state_dict)
        if int(state_dict["patch_size"]) != int(self.hparams.patch_size):
            logger.warning("patch_size %s from the loaded state overrides the argument patch_size=%s",
                           state_dict["patch_size"], self.hparams.patch_size)
        if isinstance(self.source, SourceSpec):
            self._saved = None
        elif "collection" not in state_dict:
            raise CheckpointError("HSIDataModule.load_state_dict: the checkpoint was trained on one scene, not on "
                                  "a collection (scenes=)")
        else:
            self._saved = json_roundtrip(state_dict["collection"])
        self._override = json_roundtrip({k: state_dict[k] for k in ("split", "pipeline", "patch_size", "padding")})
        self._expected_classes = list(state_dict["class_names"])  # checked whenever the caches are opened
        had = self._opened is not None
        self._opened = None
        self._datasets.clear()
        if had:
            for stage in sorted(self._stages):
                self.setup(None if stage == "all" else stage)
