"""``HSIDataModule(scenes=...)``: the DataModule over a collection of scenes.

``HSIDataModule(scenes=...)`` is an ``HSIDataModule`` subclass whose methods come from
:class:`CollectionMixin` first (the same arguments; a single scene is unchanged; the
class is made by :func:`hsi.data.datamodule.collection_class`, so this module does not
import the DataModule's). ``prepare_data`` / ``setup`` make the collection's state
(:func:`hsi.collection.build.collection_state`: common grid, union of classes, split,
pipeline fitted once on the training pixels of all training scenes) and one cache entry
per scene (:func:`hsi.collection.build.open_entries`); the datasets are
:class:`~hsi.collection.dataset.CollectionDataset` over the scenes' own patch datasets.
``state_dict`` carries the grid, the classes, each scene's name and classes, the splits
and the pipeline, so ``HSIClassifier``, ``hsi train`` and inference work unchanged.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from hsi.collection.dataset import CollectionDataset
from hsi.collection.entries import Collection, read_collection
from hsi.errors import CheckpointError, OptionError

__all__ = ["CollectionMixin", "CollectionSource"]

logger = logging.getLogger("hsi.data")

#: single-scene source arguments a collection does not take (its entries say where each scene is)
_SCENE_ONLY = ("cube_path", "labels_path", "cube_key", "labels_key", "layout", "test_labels_path", "test_labels_key")


class CollectionSource:
    """What ``datamodule.source`` says of a collection: its ``name`` (run folders) and ``kind``."""

    kind = "collection"

    def __init__(self, collection: Collection) -> None:
        self.collection = collection
        self.name = "+".join(collection.names) if len(collection.names) <= 3 else \
            f"{collection.names[0]}+{len(collection.names) - 1}-more"
        self.scene_options: dict[str, Any] = {}


def _read_memo(path: Path | None) -> dict[str, Any] | None:
    """A collection state kept in the cache folder, or None (absent, unreadable, or not one)."""
    if path is None or not path.is_file():
        return None
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        logger.warning("%s: unreadable collection state; making it again", path)
        return None
    return state if isinstance(state, dict) and state.get("format") == "hsi.collection" else None


class CollectionMixin:
    """What :class:`~hsi.data.HSIDataModule` does differently over the scenes of ``scenes=`` (see the module docstring).

    Mixed in before ``HSIDataModule``: ``super()`` calls reach the single-scene methods.
    """

    hparams: Any
    _datasets: dict[str, Any]
    _stages: set[str]
    _override: dict[str, Any] | None

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickled through the function of its class's module that rebuilds it (``ddp_spawn``, copies)."""
        import sys

        return sys.modules[type(self).__module__].rebuild_collection, (dict(self.__dict__),)

    def _open_collection(self) -> None:
        """Read and check the collection (no cube opened); called at the end of ``__init__``."""
        h = self.hparams
        for name in _SCENE_ONLY:
            if h.get(name) is not None:
                raise OptionError(name, h[name], "not with scenes= (each scene entry names its own files and keys)")
        if h.split not in ("block",):
            raise OptionError("split", h.split, "block with scenes= (hold whole scenes out with split: scene and "
                              "test_scenes in the collection)")
        if h.folds is not None:
            raise OptionError("folds", h.folds, "none with scenes= (cross-validation folds of a collection are "
                              "not supported)")
        if h.gather_on_device:
            raise OptionError("gather_on_device", True, "False with scenes= (each scene is its own cube)")
        self.collection = read_collection(h.scenes)
        self.source = CollectionSource(self.collection)  # type: ignore[assignment]
        self._entries: list[Any] | None = None
        self._state: dict[str, Any] | None = None
        self._saved: dict[str, Any] | None = None

    # ------------------------------------------------------------------ building
    def _load(self, i: int) -> Any:
        from hsi.collection.load import load_entry

        h = self.hparams
        return load_entry(self.collection.entries[i], bool(h.download), bool(h.ignore_georef))

    def _values(self) -> dict[str, Any]:
        return dict(self._recipe().values)

    def collection_state(self) -> dict[str, Any]:
        """The collection's JSON state (made once per process, or a loaded checkpoint's)."""
        if self._state is None:
            from hsi.collection.build import collection_state, memo_path

            memo = None if (self._saved is not None or self.in_memory) else \
                memo_path(self.collection, self._values(), self.hparams.cache_dir)
            self._state = _read_memo(memo)  # made by an earlier run (or by prepare_data on rank 0)
            if self._state is None:
                self._state = collection_state(self.collection, self._values(), self._load, self._saved)
                if memo is not None:
                    from hsi._atomic import write_bytes_atomic

                    memo.parent.mkdir(parents=True, exist_ok=True)
                    write_bytes_atomic(memo, json.dumps(self._state).encode())
        return self._state

    def _ensure_entries(self) -> list[Any]:
        if self._entries is None:
            from hsi.collection.build import open_entries

            cache_dir = None if self.in_memory else self.hparams.cache_dir
            self._entries = open_entries(self.collection, self.collection_state(), self._values(), self._load,
                                         cache_dir)
        return self._entries

    def _ensure_entry(self) -> Any:
        """The first scene's cache entry (what single-scene code reads its geometry from)."""
        return self._ensure_entries()[0]

    def prepare_data(self) -> None:
        """Make the collection's state and build the per-scene caches (one process); sets no dataset."""
        if not self.in_memory:
            self._ensure_entries()

    def _make_dataset(self, name: str, augmented: bool = True) -> CollectionDataset:
        from hsi.data.augment import PatchAugment
        from hsi.data.dataset import HSIPatchDataset

        h = self.hparams
        key = h.predict_on if name == "predict" else name
        augment = PatchAugment(scale=float(h.spectral_scale), noise=float(h.spectral_noise)) \
            if (name == "train" and h.augment and augmented) else None
        parts = []
        for i, entry in enumerate(self._ensure_entries()):
            coords, labels = entry.arrays[f"{key}_coords"], entry.arrays[f"{key}_labels"]
            common = {"augment": augment, "seed": int(h.seed) + 7919 * i,  # distinct augmentation draws per scene
                      "channels_last": bool(h.channels_last)}
            if f"{key}_patches" in entry.arrays:
                parts.append(HSIPatchDataset(coords, labels, self.patch_size, patches=entry.arrays[f"{key}_patches"],
                                             patches_layout="NPPC", **common))
            else:
                parts.append(HSIPatchDataset(coords, labels, self.patch_size, cube=entry.arrays["cube"], **common))
        return CollectionDataset(parts, self.collection.names)

    # ------------------------------------------------------------------ properties
    @property
    def _scene_state(self) -> dict[str, Any]:
        st = self.collection_state()
        excluded = sum(int(e.state["scene"].get("excluded_nonfinite", {}).get("pixels", 0))
                       for e in self._ensure_entries())
        return {"name": self.source.name, "class_names": st["class_names"], "palette": st["palette"],
                "label_values": list(range(1, len(st["class_names"]) + 1)), "wavelengths": st["grid"],
                "excluded_nonfinite": {"pixels": excluded}}

    @property
    def is_collection(self) -> bool:
        """True: a collection of scenes."""
        return True

    @property
    def scene_names(self) -> list[str]:
        """Names of the scenes, in order."""
        return list(self.collection.names)

    def scene_classes(self) -> dict[str, list[str]]:
        """``{scene: [classes it has]}``."""
        return {s["name"]: list(s["classes"]) for s in self.collection_state()["scenes"]}

    def scene_labels(self, name: str) -> np.ndarray:
        """(H, W) int64 labels of scene ``name`` in the collection's classes."""
        return np.asarray(self._ensure_entries()[self.scene_names.index(name)].load("label_map", mmap=False))

    def scene_split(self, name: str) -> Any:
        """The :class:`~hsi.preprocess.Split` of scene ``name``."""
        from hsi.preprocess import Split

        return Split.from_state(self.collection_state()["splits"][self.scene_names.index(name)])

    @property
    def num_bands(self) -> int:
        """Bands after preprocessing (the model's input channels)."""
        return int(self._ensure_entries()[0].load("cube").shape[2])

    @property
    def labels(self) -> np.ndarray:
        raise AttributeError("a collection has one label map per scene: use scene_labels(name)")

    @property
    def image_shape(self) -> tuple[int, int]:
        raise AttributeError("a collection has one image shape per scene: see state_dict()['collection']['scenes']")

    @property
    def split(self) -> Any:
        raise AttributeError("a collection has one split per scene: use scene_split(name)")

    def split_summary(self) -> dict[str, Any]:
        """The split's parameters and pixel counts, overall and per scene (what ``metrics.json`` records)."""
        st = self.collection_state()
        summary: dict[str, Any] = {"method": st["collection"]["split"],
                                   "test_scenes": st["collection"]["test_scenes"],
                                   "val_scenes": st["collection"]["val_scenes"], "scenes": {}}
        for name in self.scene_names:
            split = self.scene_split(name)
            summary["scenes"][name] = {f"{k}_pixels": int(getattr(split, k).sum()) for k in ("train", "val", "test")}
        for k in ("train", "val", "test"):
            summary[f"{k}_pixels"] = sum(s[f"{k}_pixels"] for s in summary["scenes"].values())
        summary.update(self.leakage())
        return summary

    def leakage(self) -> dict[str, Any]:
        """:func:`hsi.collection.split.collection_leakage` of the collection's split."""
        from hsi.collection.split import collection_leakage

        splits = [self.scene_split(n) for n in self.scene_names]
        held = list(self.collection.test_scenes) + list(self.collection.val_scenes)
        return {"leakage": collection_leakage(splits, self.scene_names, self.patch_size, held)}

    @property
    def pipeline(self) -> Any:
        """The preprocessing fitted on the training pixels of all training scenes (``preprocess: scene``: the first
        training scene's; each scene's own is in ``state_dict()["collection"]["pipelines"]``)."""
        from hsi.preprocess import Pipeline

        return Pipeline.from_state(self.collection_state()["pipeline"])

    @property
    def cache_path(self) -> Path | None:
        """The cache folder of the first scene (None in memory)."""
        return self._ensure_entries()[0].path

    def pixel_spectra(self, split: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As ``HSIDataModule.pixel_spectra``, over every scene (in collection order)."""
        dataset = self._dataset(split)
        pad, xs = self.patch_size // 2, []
        for part, entry in zip(dataset.parts, self._ensure_entries()):
            cube, c = entry.load("cube"), np.asarray(part.coords)
            xs.append(np.asarray(cube[c[:, 0] + pad, c[:, 1] + pad, :], dtype=np.float32))
        return np.concatenate(xs), np.asarray(dataset.labels, np.int64), np.asarray(dataset.coords, np.int64)

    # ------------------------------------------------------------------ checkpoint state
    def state_dict(self) -> dict[str, Any]:
        """The single-scene state (first scene's split, for old readers) plus ``collection``: grid, classes, scenes, splits."""
        from hsi.data.checkpoint import STATE_FORMAT, STATE_VERSION

        st = self.collection_state()
        first = st["scenes"][0]
        return {
            "format": STATE_FORMAT, "format_version": STATE_VERSION, "scene_name": self.source.name,
            "class_names": list(st["class_names"]), "palette": st["palette"],
            "label_values": list(range(1, len(st["class_names"]) + 1)), "wavelengths": st["grid"], "georef": None,
            "num_bands_in": len(st["grid"]) if st["grid"] is not None else int(first["n_bands"]),
            "num_bands": self.num_bands, "num_classes": len(st["class_names"]), "image_shape": list(first["shape"]),
            "patch_size": self.patch_size, "padding": self.padding, "split": st["splits"][0],
            "pipeline": st["pipeline"], "collection": st,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Reuse a checkpoint's collection state (grid, classes, splits, pipeline) from now on."""
        from hsi.data.cache import json_roundtrip
        from hsi.data.checkpoint import check_state

        check_state(state_dict)
        if "collection" not in state_dict:
            raise CheckpointError("HSIDataModule.load_state_dict: the checkpoint was trained on one scene, not on "
                                  "a collection (scenes=)")
        self._override = json_roundtrip({k: state_dict[k] for k in ("split", "pipeline", "patch_size", "padding")})
        self._saved = json_roundtrip(state_dict["collection"])
        self._state, self._entries = None, None
        self._datasets.clear()
        for stage in sorted(self._stages):
            self.setup(None if stage == "all" else stage)

    def _recipe(self) -> Any:
        """The recipe values (a loaded state's patch size and padding); the split and pipeline come per scene."""
        from hsi.data.build import CacheRecipe

        recipe = super()._recipe()
        return CacheRecipe(recipe.values, None)

    def raw_band_count(self) -> int:
        """Bands of the common grid (what the model registry's PCA recommendation reads)."""
        st = self.collection_state()
        return len(st["grid"]) if st["grid"] is not None else int(st["scenes"][0]["n_bands"])
