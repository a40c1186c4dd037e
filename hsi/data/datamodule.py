"""``HSIDataModule``: scenes -> split -> train-fitted preprocessing -> cached patches -> loaders.

``prepare_data`` (once per node) builds the caches; ``setup`` (every process) opens them, one per scene (a single
scene is a collection of one, :mod:`hsi.data.sources`), and makes the datasets. The split and the pipeline fitted on
the TRAIN pixels only are made once, or taken from a checkpoint (``load_state_dict``), never refitted. The class is
the Lightning face of the parts of :mod:`hsi.data.module`: ``options``, ``sources`` (caches and checkpoint state),
``splits``, ``loaders`` (batches, epoch seeding, DDP, the device-resident gather) and ``reporting``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

import lightning.pytorch as pl
import numpy as np

from hsi.data.arguments import (AT_LEAST_ONE, AT_LEAST_ZERO, BUFFER, FOLD, FOLDS, PATCH_SIZE, SPECTRAL_NOISE,
                                SPECTRAL_SCALE, SPLIT_SEED, TRAIN_FRACTION, TRAIN_PER_CLASS, check_pca,
                                check_remove_bands, check_wavelength_range, loader, recipe, source)
from hsi.data.loader import HSIDataLoader
from hsi.data.module import loaders, reporting, splits
from hsi.data.module import sources as scene_sources
from hsi.data.module.loaders import check_trainable_size  # noqa: F401  (imported from here too)
from hsi.data.module.options import DataOptions, resolve_arguments
from hsi.data.patches import DEFAULT_PATCH_SIZE
from hsi.data.sources.dataset import CollectionDataset
from hsi.errors import OptionError
from hsi.io.layout import Layout

if TYPE_CHECKING:
    from pathlib import Path

    import torch

    from hsi.data.cache import CacheEntry
    from hsi.data.sources.open import OpenedSources
    from hsi.preprocess import Pipeline, Split

__all__ = ["HSIDataModule"]


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
        Train on this cube file instead of a registry scene (any format a registered reader reads; `hsi inspect
        --help` lists them); needs its label map.
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
        resolved, self.collection, self.source = resolve_arguments(type(self), self.hparams)
        self.hparams.update(resolved)  # what runs is what is recorded
        self._scene_sources = scene_sources.SceneSources(self.collection, self.source)
        self._stages: set[str] = set()
        self._forget()

    def _forget(self) -> None:
        """Nothing made from opened sources yet (at the start, and when a checkpoint's state is loaded)."""
        self._datasets: dict[str, CollectionDataset] = {}
        self._device_cubes: dict[str, torch.Tensor] = {}
        self._measured: reporting.Measured | None = None  # band statistics, scene shift, training facts

    @property
    def options(self) -> DataOptions:
        """The arguments as the parts read them, typed (made from ``hparams``, so a change to them is seen)."""
        return DataOptions.of(type(self), self.hparams)

    def _recipe(self) -> dict[str, Any]:
        """Every ``recipe`` argument, resolved (what the caches are keyed by)."""
        return self._scene_sources.recipe(self.options)

    def _sources(self) -> OpenedSources:
        return self._scene_sources.get(self.options)

    def _ensure_entry(self) -> CacheEntry:
        """The first scene's cache entry (the only one of a single scene)."""
        return self._sources().entries[0]

    @property
    def _state(self) -> dict[str, Any]:
        return self._sources().state

    def _measures(self) -> reporting.Measured:
        if self._measured is None:
            self._measured = reporting.Measured(self._sources(), self.patch_size)
        return self._measured

    @property
    def patch_size(self) -> int:
        """Window size ``P`` (a loaded state's wins over the argument)."""
        return self._scene_sources.patch_size(self.options)

    @property
    def padding(self) -> str:
        """Border padding mode (a loaded state's wins over the argument)."""
        return self._scene_sources.padding(self.options)

    @property
    def buffer(self) -> int:
        """Split buffer in pixels (``patch_size // 2`` unless given)."""
        return self._scene_sources.buffer(self.options)

    @property
    def in_memory(self) -> bool:
        """True when nothing is written to disk (``cache_dir=None`` or ``cache="memory"``)."""
        return self.options.in_memory

    def prepare_data(self) -> None:
        """Load/generate the scenes and build their caches (one process); sets no state."""
        if not self.in_memory:
            self._scene_sources.open(self.options)

    def setup(self, stage: str | None = None) -> None:
        """Open the caches (building them if needed) and create the datasets for ``stage``."""
        self._sources()
        stages = {"fit": ("train", "val"), "validate": ("val",), "test": ("test",), "predict": ("predict",)}
        names = stages.get(stage, ("train", "val", "test", "predict")) if stage else ("train", "val", "test", "predict")
        self._stages.add(stage or "all")
        for name in names:
            self._datasets[name] = self._make_dataset(name)

    def _make_dataset(self, name: str, augmented: bool = True) -> CollectionDataset:
        return loaders.make_dataset(name, self._sources().entries, self.scene_names, self.patch_size, self.options,
                                    augmented)

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

    def train_dataloader(self) -> HSIDataLoader:
        """Shuffled per epoch by a seeded sampler (class-balanced with ``balanced_sampling``).

        A final batch of one sample is folded into the one before it, so every training
        pixel is seen each epoch and no batch normalisation sees a batch of one.
        """
        return loaders.train_loader(self.train_dataset, self.options, self.trainer)

    def val_dataloader(self) -> HSIDataLoader:
        return loaders.make_loader(self.val_dataset, self.options)

    def test_dataloader(self) -> HSIDataLoader:
        return loaders.make_loader(self.test_dataset, self.options)

    def predict_dataloader(self) -> HSIDataLoader:
        """Batches of ``(patches, labels, coords)``."""
        return loaders.make_loader(self.predict_dataset, self.options, with_coords=True)

    def fixed_dataloader(self, split: str) -> HSIDataLoader:
        """The patches of ``split`` ("train", "val", "test") in their stored order, never augmented.

        The training pixels as they are, e.g. to refit a classifier layer on them
        (:mod:`hsi.training.refit`); the training loader shuffles and augments.
        """
        if split not in ("train", "val", "test"):
            raise OptionError("split", split, "train, val or test")
        return loaders.make_loader(self._make_dataset(split, augmented=False), self.options)

    def pixel_spectra(self, split: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The preprocessed spectra of a split's pixels, for per-pixel models (the classical baselines).

        ``split`` is "train", "val", "test" or "predict". Returns ``X (N, C)`` float32 (the
        centre pixels of the split's patches, scene after scene), ``y (N,)`` int64 0-based
        labels and ``coords (N, 2)`` int64 rows and columns in each pixel's own scene, in the
        order of the split's dataset.
        """
        return loaders.pixel_spectra(self._dataset(split), self._sources().entries, self.patch_size)

    def device_cube(self, device: torch.device | str) -> torch.Tensor:
        """The padded HWC cube as a tensor on ``device`` (copied there once)."""
        return loaders.device_cube(self._device_cubes, self._ensure_entry(), device)

    def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        """Device-resident path: turn an index batch into ``(patches, labels[, coords])`` on its device."""
        if isinstance(batch, dict) and "coords" in batch and "index" in batch:
            cube = self.device_cube(batch["coords"].device)
            return loaders.gather(batch, cube, self.patch_size, self.options.channels_last)
        return batch

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

    def scene_labels(self, name: str) -> np.ndarray:
        """(H, W) int64 labels of scene ``name``: 0 unlabeled, the DataModule's classes 1..K."""
        entry = self._sources().entries[splits.scene_index(self.scene_names, name)]
        return np.asarray(entry.load("label_map", mmap=False))

    def scene_cube(self, name: str) -> np.ndarray:
        """Scene ``name``'s preprocessed cube ``(H + 2 pad, W + 2 pad, C)``, padded by ``patch_size // 2``."""
        return self._sources().entries[splits.scene_index(self.scene_names, name)].load("cube")

    def scene_split(self, name: str) -> Split:
        """The train/val/test :class:`~hsi.preprocess.Split` of scene ``name``."""
        return splits.scene_split(self._state, name)

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
        return scene_sources.label_values(self._sources())

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
        return self.scene_labels(splits.lone_scene(self.scene_names, "label map", "scene_labels(name)"))

    @property
    def image_shape(self) -> tuple[int, int]:
        """``(H, W)`` of the scene (a single scene's)."""
        return self.scene_shapes[splits.lone_scene(self.scene_names, "image shape", "scene_shapes")]

    @property
    def scene_shapes(self) -> dict[str, tuple[int, int]]:
        """``{scene: (H, W)}``."""
        return {s["name"]: (int(s["shape"][0]), int(s["shape"][1])) for s in self._state["scenes"]}

    @property
    def split(self) -> Split:
        """The train/val/test split in use (a single scene's)."""
        return self.scene_split(splits.lone_scene(self.scene_names, "split", "scene_split(name)"))

    def split_summary(self) -> dict[str, Any]:
        """The split's parameters and pixel counts (what ``metrics.json`` records).

        A single scene: its split's parameters and counts. Several: the collection's split,
        its held-out scenes, the counts overall and per scene, and the leakage audit.
        """
        scene_splits = {name: self.scene_split(name) for name in self.scene_names}
        return splits.split_summary(scene_splits, self.collection, self.patch_size)

    def scene_shift(self) -> dict[str, Any] | None:
        """Each scene's units, typical raw value and band statistics after preprocessing against the training
        scenes' (:func:`hsi.data.sources.shift.scene_shift`; warned about once, the first time); None for one scene.
        """
        return self._measures().scene_shift(self.collection.train_names)

    @property
    def preprocessing(self) -> dict[str, Any]:
        """The preprocessing that runs (``auto`` resolved): the options of :class:`~hsi.preprocess.PreprocessSpec`."""
        from hsi.preprocess.spec import PreprocessSpec

        return PreprocessSpec.from_options(self._recipe()).to_options()

    def collection_record(self) -> dict[str, Any]:
        """The scenes as they ran, for ``metrics.json``: entries, split, held-out scenes, preprocessing, the
        normalisation that ran and each scene's units."""
        return reporting.collection_record(self.collection, self._state["scenes"], self.preprocessing)

    def data_arguments(self) -> dict[str, Any]:
        """The arguments that ran, for reports: a collection's without the single-scene source arguments and split
        (its entries and split are in :meth:`collection_record`)."""
        return reporting.data_arguments(type(self), dict(self.hparams))

    def bands_summary(self) -> dict[str, Any] | None:
        """The common band grid of several scenes (range, count, widths, from which scene) and how each scene came
        onto it (method, bands dropped); None for one scene."""
        return reporting.bands_summary(self._state)

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
        return scene_sources.excluded_nonfinite(self._sources())

    def teardown(self, stage: str) -> None:
        """End of a stage: make sure a DDP process group is freed before the interpreter exits.

        Lightning never destroys the process group; left to the interpreter's own shutdown,
        gloo's worker threads can abort the process (see :mod:`hsi._distributed`).
        """
        from hsi._distributed import release_at_exit

        release_at_exit()

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
        scenes, ``collection``: the grid, classes, each scene's facts and split), and the training facts inference
        checks a new cube against."""
        state = self._scene_sources.checkpoint_state(self.options, self.scene_name)
        facts = self._measures().training_facts(self.collection.train_names, self.scene_split,
                                                lambda: self.train_dataset.labels)
        return {**state, **facts}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Reuse a checkpoint's split(s) and fitted pipeline (no refitting) from now on."""
        had = self._scene_sources.load(state_dict, self.options)
        self._forget()
        if had:
            for stage in sorted(self._stages):
                self.setup(None if stage == "all" else stage)
