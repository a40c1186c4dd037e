"""What a DataModule cache holds and how it is built: scene -> split -> fitted pipeline -> arrays.

A :class:`CacheRecipe` is everything besides the source that determines a cache: the
preprocessing, the split, the patch size, padding and storage strategy, and optionally a
split and pipeline taken from a checkpoint (never refitted). ``recipe.description(identity)``
is the dictionary the cache is keyed by (:mod:`hsi.data.cache`); ``recipe.build(src)``
makes the split, fits the pipeline on the training pixels, and returns the arrays (padded
HWC cube, label map, per-split centre coordinates and 0-based labels, plus ``(N, P, P, C)``
patch arrays with ``strategy="patches"``) and the JSON state (split, pipeline, scene info).
:func:`open_entry` opens or builds that cache, or builds it in memory.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hsi.data.cache import (
    CACHE_FORMAT,
    ArraySpec,
    CacheEntry,
    PatchCache,
    description_key,
    json_roundtrip,
    materialize,
)
from hsi.data.patches import gather_windows, pad_cube
from hsi.data.scene_source import LoadedSource, SourceSpec, load_source

if TYPE_CHECKING:
    from hsi.preprocess import Pipeline, Split

__all__ = ["CacheRecipe", "open_entry"]

#: the splits that get patch arrays with ``strategy="patches"``
_SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class CacheRecipe:
    """Everything besides the source that determines a cache's contents.

    Parameters
    ----------
    scaling, pca, remove_bands : arguments of ``hsi.preprocess.make_pipeline``.
    split_method : "block" | "random" | "fixed".
    block_size, buffer, fractions, split_seed : split parameters (``buffer`` resolved).
    patch_size, padding : window size ``P`` and border padding of the cube.
    strategy : "cube" | "patches" (also stores ``(N, P, P, C)`` arrays for train/val/test).
    checkpoint : a loaded state with the ``split`` and fitted ``pipeline`` (JSON) to use
        instead of making and fitting them; None makes new ones.
    """

    scaling: str | None
    pca: int | float | None
    remove_bands: list[int] | None
    split_method: str
    block_size: int
    buffer: int
    fractions: tuple[float, ...]
    split_seed: int
    patch_size: int
    padding: str
    strategy: str
    checkpoint: dict[str, Any] | None = None

    def description(self, identity: dict[str, Any]) -> dict[str, Any]:
        """The dictionary the cache is keyed by (recorded in ``meta.json``)."""
        from hsi import __version__

        ckpt = self.checkpoint
        return {
            "cache_format": CACHE_FORMAT,
            "hsi_version": __version__,
            "source": identity,
            "preprocess": {
                "scaling": self.scaling,
                "pca": self.pca,
                "remove_bands": None if self.remove_bands is None else [int(b) for b in self.remove_bands],
                "state_sha256": description_key(ckpt["pipeline"]) if ckpt else None,
            },
            "split": {
                "method": self.split_method,
                "block_size": int(self.block_size),
                "buffer": self.buffer,
                "fractions": [float(f) for f in self.fractions],
                "seed": int(self.split_seed),
                "state_sha256": description_key(ckpt["split"]) if ckpt else None,
            },
            "patch_size": self.patch_size,
            "padding": self.padding,
            "dtype": "float32",
            "layout": "HWC",
            "strategy": self.strategy,
        }

    def make_split(self, src: LoadedSource) -> Split:
        """The checkpoint's split (checked against the scene), or a new one from the labels."""
        from hsi.preprocess import Split, block_split, fixed_split, random_split

        if self.checkpoint:
            split = Split.from_state(self.checkpoint["split"])
            if split.shape != src.labels.shape:
                raise ValueError(
                    f"the split in the loaded state is {split.shape}, the scene {src.name!r} is {src.labels.shape}"
                )
            if split.params.get("method") in ("block", "random") and not split.matches(src.labels):
                raise ValueError(
                    f"the split in the loaded state was made from a different label map than scene {src.name!r} "
                    "(labels_sha256 differs); load the checkpoint with the scene it was trained on"
                )
            return split
        if self.split_method == "block":
            return block_split(src.labels, block_size=self.block_size, fractions=self.fractions, buffer=self.buffer,
                               seed=self.split_seed)
        if self.split_method == "random":
            return random_split(src.labels, fractions=self.fractions, seed=self.split_seed)
        return fixed_split(src.labels, src.test_labels, val_fraction=float(self.fractions[1]), seed=self.split_seed)

    def make_pipeline(self, src: LoadedSource, split: Split) -> Pipeline:
        """The checkpoint's pipeline, or a new one fitted on the training pixels only."""
        from hsi.preprocess import Pipeline, make_pipeline

        if self.checkpoint:
            return Pipeline.from_state(self.checkpoint["pipeline"])
        pipe = make_pipeline(scaling=self.scaling, pca=self.pca, remove_bands=self.remove_bands)
        return pipe.fit(src.cube, split.train, wavelengths=src.wavelengths)

    def build(self, src: LoadedSource) -> tuple[dict[str, np.ndarray | ArraySpec], dict[str, Any]]:
        """The cache's arrays and JSON state for the loaded source."""
        split = self.make_split(src)
        pipeline = self.make_pipeline(src, split)
        x = np.asarray(pipeline.transform(src.cube), dtype=np.float32)
        p = self.patch_size
        padded = pad_cube(x, p, self.padding)
        del x
        labels = src.labels
        if src.test_labels is not None:  # fixed split: test pixels take their class from the test map
            labels = np.where(src.test_labels > 0, src.test_labels, labels)
        masks = {"train": split.train, "val": split.val, "test": split.test, "labeled": labels > 0,
                 "all": np.ones(labels.shape, dtype=bool)}
        arrays: dict[str, np.ndarray | ArraySpec] = {"cube": padded, "label_map": labels.astype(np.int64)}
        for name, mask in masks.items():
            coords = np.argwhere(mask).astype(np.int64)  # row-major order
            arrays[f"{name}_coords"] = coords
            arrays[f"{name}_labels"] = labels[coords[:, 0], coords[:, 1]].astype(np.int64) - 1
            if self.strategy == "patches" and name in _SPLITS:
                arrays[f"{name}_patches"] = ArraySpec(  # N x C x P x P, stored (N, P, P, C)
                    (coords.shape[0], p, p, padded.shape[2]), "<f4", functools.partial(_fill_patches, padded, coords, p)
                )
        state = {
            "split": split.to_state(),
            "pipeline": pipeline.to_state(),
            "scene": {
                "name": src.name,
                "class_names": list(src.class_names),
                "palette": np.asarray(src.palette).astype(int).tolist(),
                "label_values": [int(v) for v in src.label_values],
                "wavelengths": None if src.wavelengths is None else np.asarray(src.wavelengths).tolist(),
                "num_bands_in": int(src.cube.shape[2]),
            },
        }
        return arrays, state


def open_entry(source: SourceSpec, recipe: CacheRecipe, cache_dir: str | None) -> CacheEntry:
    """Open (or build) the cache of ``recipe`` applied to ``source``; in memory if ``cache_dir`` is None."""
    identity = source.identity()
    src = None
    if identity is None:  # registry scenes: files known only after loading
        src = load_source(source)
        identity = src.identity
    description = recipe.description(identity)
    if cache_dir is None:
        arrays, state = recipe.build(src or load_source(source))
        return CacheEntry({k: materialize(v) for k, v in arrays.items()}, json_roundtrip(state), None, True,
                          {"description": description})
    cache = PatchCache(cache_dir, description, prefix=source.name)
    return cache.open_or_build(lambda: recipe.build(src or load_source(source)))


def _fill_patches(padded: np.ndarray, coords: np.ndarray, patch_size: int, out: np.ndarray, chunk: int = 1024) -> None:
    """Write the (N, P, P, C) patch array chunk by chunk (``out`` may be a memory map)."""
    for start in range(0, coords.shape[0], chunk):
        out[start : start + chunk] = gather_windows(padded, coords[start : start + chunk], patch_size).transpose(0, 2, 3, 1)
