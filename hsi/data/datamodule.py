"""``HSIDataModule``: scene -> split -> train-fitted preprocessing -> cached patches -> loaders.

Flow (``prepare_data`` once per node, ``setup`` on every process):

1. the source (synthetic scene, registry scene or files; :mod:`hsi.data.scene_source`)
   gives a cube and labels;
2. the split (``block_split`` by default, buffer ``patch_size // 2``) is made from the
   labels, and the preprocessing pipeline (``make_pipeline``) is fitted on the TRAIN
   pixels only — or both are taken from a checkpoint (``load_state_dict``), never refitted;
3. the transformed cube is padded (HWC) and stored with per-split centre coordinates
   and 0-based labels (``cache="cube"``), plus ``N x C x P x P`` arrays per split with
   ``cache="patches"`` (:mod:`hsi.data.build`), in a verified cache keyed by all of the
   above (:mod:`hsi.data.cache`), or kept in memory when ``cache_dir`` is None (no files);
4. ``setup`` opens that cache (building it if ``prepare_data`` did not) and makes the
   datasets; the split, pipeline, class names and palette are read back from it.

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

from hsi._checks import number
from hsi._roles import check_declared, roles
from hsi.data.arguments import (
    AT_LEAST_ONE,
    AT_LEAST_ZERO,
    BUFFER,
    FOLD,
    FOLDS,
    PATCH_SIZE,
    SPLIT_SEED,
    check_combinations,
    check_pca,
    integral_pca,
    check_remove_bands,
    loader,
    recipe,
    source,
)
from hsi.data.augment import PatchAugment
from hsi.data.build import CacheRecipe, open_entry
from hsi.data.cache import CacheEntry, json_roundtrip
from hsi.data.checkpoint import check_state, make_state
from hsi.data.collate import collate_patches
from hsi.data.dataset import HSIIndexDataset, HSIPatchDataset, gather_index_batch
from hsi.data.loader import HSIDataLoader
from hsi.data.patches import DEFAULT_PATCH_SIZE
from hsi.data.samplers import ClassBalancedSampler, EpochShuffleSampler, distributed_context
from hsi.data.scene_source import SourceSpec
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


@functools.cache
def collection_class() -> type:
    """The ``HSIDataModule`` of a collection: :class:`hsi.collection.datamodule.CollectionMixin` before it.

    Named ``HSIDataModule`` (``__qualname__``): Lightning files a DataModule's state in a
    checkpoint under that name, where every reader of hsi checkpoints looks for it.
    """
    from hsi.collection.datamodule import CollectionMixin

    return type("CollectionDataModule", (CollectionMixin, HSIDataModule),
                {"__qualname__": "HSIDataModule", "__module__": __name__, "__doc__": CollectionMixin.__doc__})


def rebuild_collection(state: dict[str, Any]) -> HSIDataModule:
    """Unpickle a collection's DataModule (its class is not importable by its ``__qualname__``)."""
    obj = object.__new__(collection_class())
    obj.__dict__.update(state)
    return obj


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
    scenes : str | list[dict[str, Any]] | None
        A collection of scenes instead of one: a YAML file (scenes:, split: block or scene, test_scenes:,
        val_scenes:), a pack .h5 written by `hsi convert --collection`, or a list of entries ({name, scene, root,
        scene_options} or {name, cube, labels, cube_key, labels_key, layout}, each with optional classes:
        {its name: collection name}); see hsi.collection.
    scaling : Literal["minmax", "standardize"] | None
        Per-band scaling fitted on the training pixels only (none: no scaling).
    pca : int | float | None
        PCA fitted on the training pixels: a number of components (e.g. 30) or a variance fraction in (0, 1)
        (e.g. 0.999); none: no PCA.
    remove_bands : list[int] | None
        Band indices removed before scaling.
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
        sees a val/test pixel).
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
        The fold tested, from 0 to folds - 1 (with folds).
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
    spectral_scale : float
        With augment: multiply each training patch by a factor drawn from U(1 - s, 1 + s), 0 = off
        (brightness changes; in the units after scaling).
    spectral_noise : float
        With augment: add a per-band offset drawn from N(0, sigma^2) to each training patch, 0 = off.
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
        scenes: Annotated[str | list[dict[str, Any]] | None, source()] = None,
        scaling: Annotated[Literal["minmax", "standardize"] | None, recipe()] = "minmax",
        pca: Annotated[int | float | None, recipe(check_pca)] = None,
        remove_bands: Annotated[list[int] | None, recipe(check_remove_bands)] = None,
        split: Annotated[Literal["block", "random", "fixed"], recipe()] = "block",
        test_labels_path: Annotated[str | None, source("test_labels")] = None,
        test_labels_key: Annotated[str | None, source()] = None,
        block_size: Annotated[int, recipe(AT_LEAST_ONE)] = 16,
        buffer: Annotated[int | None, recipe(BUFFER)] = None,
        fractions: Annotated[tuple[float, float, float], recipe()] = (0.6, 0.2, 0.2),
        split_seed: Annotated[int | None, recipe(SPLIT_SEED)] = None,
        folds: Annotated[int | None, recipe(FOLDS)] = None, fold: Annotated[int | None, recipe(FOLD)] = None,
        patch_size: Annotated[int, recipe(PATCH_SIZE)] = DEFAULT_PATCH_SIZE,
        padding: Annotated[Literal["reflect", "symmetric", "edge", "zeros", "constant", "wrap"], recipe()] = "reflect",
        batch_size: Annotated[int, loader(AT_LEAST_ONE)] = 64,
        num_workers: Annotated[int, loader(AT_LEAST_ZERO)] = 0,
        pin_memory: Annotated[bool, loader()] = False,
        persistent_workers: Annotated[bool, loader()] = False,
        cache_dir: Annotated[str | None, loader()] = None,
        cache: Annotated[Literal["cube", "patches", "memory"], recipe(resume="free")] = "cube",
        augment: Annotated[bool, loader()] = True,
        spectral_scale: Annotated[float, loader(number(0.0, 1.0))] = 0.0,
        spectral_noise: Annotated[float, loader(number(0.0))] = 0.0,
        gather_on_device: Annotated[bool, loader()] = False,
        balanced_sampling: Annotated[bool, loader()] = False,
        predict_on: Annotated[Literal["test", "labeled", "all"], loader()] = "test",
        seed: Annotated[int, loader(AT_LEAST_ZERO, resume="fixed")] = 0,
        channels_last: Annotated[bool, loader()] = True,
    ) -> None:
        super().__init__()
        # saved as a list (save_hyperparameters reads the locals): hparams.yaml then reads back with yaml.safe_load
        fractions = list(fractions) if isinstance(fractions, tuple) else fractions
        self.save_hyperparameters()
        # LightningCLI hands "--data.pca 4" over as 4.0 (in the hyperparameters it passes too): a whole
        # number of components, not a variance fraction
        self.hparams["pca"] = integral_pca(self.hparams["pca"])
        check_declared(type(self), dict(self.hparams))
        check_combinations(dict(self.hparams))
        named = {n: self.hparams[n] for n, role in roles(type(self)).items() if role.kind == "source" and n != "scenes"}
        self.source = SourceSpec(**{**named, "scene_options": dict(scene_options or {})}, download=bool(download))
        self._override: dict[str, Any] | None = None  # split/pipeline from load_state_dict
        self._expected_classes: list[str] | None = None  # class names of a loaded state
        self._entry: CacheEntry | None = None
        self._datasets: dict[str, HSIPatchDataset] = {}
        self._stages: set[str] = set()
        self._device_cubes: dict[str, torch.Tensor] = {}
        self._split_obj = None
        self._pipeline_obj = None
        if scenes is not None:  # a collection of scenes: the methods of hsi.collection.datamodule.CollectionMixin
            self.__class__ = collection_class()
            self._open_collection()

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

    def _resolve(self) -> CacheEntry:
        """Open (or build) the cache for the current arguments; in memory if ``cache_dir`` is None."""
        return open_entry(self.source, self._recipe(), None if self.in_memory else self.hparams.cache_dir)

    @property
    def in_memory(self) -> bool:
        """True when nothing is written to disk (``cache_dir=None`` or ``cache="memory"``)."""
        return self.hparams.cache_dir is None or self.hparams.cache == "memory"

    def _ensure_entry(self) -> CacheEntry:
        if self._entry is None:
            entry = self._resolve()
            found = list(entry.state["scene"]["class_names"])
            if self._expected_classes is not None and found != self._expected_classes:
                raise CheckpointError(
                    f"HSIDataModule.load_state_dict: the checkpoint's classes {self._expected_classes} differ from "
                    f"the scene's {found}"
                )
            self._entry = entry
            self._split_obj = self._pipeline_obj = None
            self._device_cubes.clear()
        return self._entry

    # ================================================================== Lightning hooks
    def prepare_data(self) -> None:
        """Load/generate the scene and build the cache (one process); sets no state."""
        if not self.in_memory:
            self._resolve()

    def setup(self, stage: str | None = None) -> None:
        """Open the cache (building it if needed) and create the datasets for ``stage``."""
        self._ensure_entry()
        stages = {"fit": ("train", "val"), "validate": ("val",), "test": ("test",), "predict": ("predict",)}
        names = stages.get(stage, ("train", "val", "test", "predict")) if stage else ("train", "val", "test", "predict")
        self._stages.add(stage or "all")
        for name in names:
            self._datasets[name] = self._make_dataset(name)

    def _make_dataset(self, name: str, augmented: bool = True) -> HSIPatchDataset:
        entry = self._ensure_entry()
        key = self.hparams.predict_on if name == "predict" else name
        coords, labels = entry.arrays[f"{key}_coords"], entry.arrays[f"{key}_labels"]
        h = self.hparams
        augment = PatchAugment(scale=float(h.spectral_scale), noise=float(h.spectral_noise)) \
            if (name == "train" and h.augment and augmented) else None
        common = {"augment": augment, "seed": int(self.hparams.seed), "channels_last": bool(self.hparams.channels_last)}
        if self.hparams.gather_on_device:
            return HSIIndexDataset(coords, labels, self.patch_size, cube=entry.arrays["cube"], **common)
        if f"{key}_patches" in entry.arrays:
            return HSIPatchDataset(coords, labels, self.patch_size, patches=entry.arrays[f"{key}_patches"],
                                   patches_layout="NPPC", **common)
        return HSIPatchDataset(coords, labels, self.patch_size, cube=entry.arrays["cube"], **common)

    def _dataset(self, name: str) -> HSIPatchDataset:
        if name not in self._datasets:
            self._datasets[name] = self._make_dataset(name)
        return self._datasets[name]

    @property
    def train_dataset(self) -> HSIPatchDataset:
        """Training patches (augmented when ``augment=True``)."""
        return self._dataset("train")

    @property
    def val_dataset(self) -> HSIPatchDataset:
        return self._dataset("val")

    @property
    def test_dataset(self) -> HSIPatchDataset:
        return self._dataset("test")

    @property
    def predict_dataset(self) -> HSIPatchDataset:
        """The ``predict_on`` pixels; ``.coords`` are their (row, col) centres."""
        return self._dataset("predict")

    def _loader(
        self, ds: HSIPatchDataset, sampler: Any = None, with_coords: bool = False, train: bool = False
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
        centre pixels of the split's patches), ``y (N,)`` int64 0-based labels and
        ``coords (N, 2)`` int64 rows and columns, in the order of the split's dataset.
        """
        dataset = self._dataset(split)
        coords = np.asarray(dataset.coords, dtype=np.int64)
        pad = self.patch_size // 2
        cube = self._ensure_entry().load("cube")  # padded (H + 2 pad, W + 2 pad, C)
        X = np.asarray(cube[coords[:, 0] + pad, coords[:, 1] + pad, :], dtype=np.float32)
        return X, np.asarray(dataset.labels, dtype=np.int64), coords

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

    # ================================================================== properties
    @property
    def _scene_state(self) -> dict[str, Any]:
        return self._ensure_entry().state["scene"]

    @property
    def scene_name(self) -> str:
        """Name of the source scene."""
        return str(self._scene_state["name"])

    @property
    def class_names(self) -> list[str]:
        """Names of classes 1..K."""
        return list(self._scene_state["class_names"])

    @property
    def num_classes(self) -> int:
        """Number of classes K."""
        return len(self._scene_state["class_names"])

    @property
    def palette(self) -> np.ndarray:
        """(K + 1, 3) uint8; row 0 = unlabeled."""
        return np.asarray(self._scene_state["palette"], dtype=np.uint8)

    @property
    def label_values(self) -> list[int]:
        """Original label ids of classes 1..K in the source."""
        return list(self._scene_state["label_values"])

    @property
    def wavelengths(self) -> np.ndarray | None:
        """Band centres of the source (before preprocessing), or None."""
        wl = self._scene_state.get("wavelengths")
        return None if wl is None else np.asarray(wl, dtype=np.float64)

    @property
    def num_bands(self) -> int:
        """Bands after preprocessing (the model's input channels)."""
        return int(self._ensure_entry().load("cube").shape[2])

    @property
    def labels(self) -> np.ndarray:
        """(H, W) int64 scene labels: 0 unlabeled, classes 1..K."""
        return np.asarray(self._ensure_entry().load("label_map", mmap=False))

    @property
    def image_shape(self) -> tuple[int, int]:
        """``(H, W)`` of the scene."""
        shape = self._ensure_entry().load("label_map").shape
        return int(shape[0]), int(shape[1])

    @property
    def split(self) -> Split:
        """The train/val/test split in use."""
        if self._split_obj is None:
            from hsi.preprocess import Split

            self._split_obj = Split.from_state(self._ensure_entry().state["split"])
        return self._split_obj

    @property
    def pipeline(self) -> Pipeline:
        """The preprocessing pipeline fitted on the training pixels."""
        if self._pipeline_obj is None:
            from hsi.preprocess import Pipeline

            self._pipeline_obj = Pipeline.from_state(self._ensure_entry().state["pipeline"])
        return self._pipeline_obj

    @property
    def cache_path(self) -> Path | None:
        """The cache folder in use (None in memory)."""
        return self._ensure_entry().path

    @property
    def excluded_nonfinite(self) -> dict[str, Any]:
        """Labeled pixels left out of every split because their spectrum holds NaN or Inf (counts, per class, first)."""
        return dict(self._scene_state.get("excluded_nonfinite") or {"pixels": 0})

    def teardown(self, stage: str) -> None:
        """End of a stage: make sure a DDP process group is freed before the interpreter exits.

        Lightning never destroys the process group; left to the interpreter's own shutdown,
        gloo's worker threads can abort the process (see :mod:`hsi._distributed`).
        """
        from hsi._distributed import release_at_exit

        release_at_exit()

    # ================================================================== checkpoint state
    def state_dict(self) -> dict[str, Any]:
        """JSON-only state: fitted pipeline, split, class names, palette, patch size, label mapping."""
        entry = self._ensure_entry()
        return make_state(entry.state, num_bands=self.num_bands, image_shape=self.image_shape,
                          patch_size=self.patch_size, padding=self.padding)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Reuse a checkpoint's split and fitted pipeline (no refitting) from now on."""
        check_state(state_dict)
        if int(state_dict["patch_size"]) != int(self.hparams.patch_size):
            logger.warning("patch_size %s from the loaded state overrides the argument patch_size=%s",
                           state_dict["patch_size"], self.hparams.patch_size)
        self._override = json_roundtrip({k: state_dict[k] for k in ("split", "pipeline", "patch_size", "padding")})
        self._expected_classes = list(state_dict["class_names"])  # checked whenever the cache is opened
        had = self._entry is not None
        self._entry = None
        self._datasets.clear()
        if had:
            for stage in sorted(self._stages):
                self.setup(None if stage == "all" else stage)

