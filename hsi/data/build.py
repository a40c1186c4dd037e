"""What a DataModule cache holds and how it is built: scene, split and fitted pipeline -> arrays.

``CacheRecipe(...).description(identity)`` is the dictionary the cache is keyed by (:mod:`hsi.data.cache`);
``.build(src)`` applies the fitted pipeline and returns the arrays (padded HWC cube, label map, per-split centre
coordinates and 0-based labels, plus ``(N, P, P, C)`` patch arrays with ``cache="patches"``) and the JSON state.
:func:`hsi.data.sources.build.open_entries` opens or builds it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hsi.data.cache import CACHE_FORMAT, ArraySpec, description_key, json_roundtrip
from hsi.data.patches import gather_windows, pad_cube
from hsi.data.scene_source import LoadedSource
from hsi.errors import CheckpointError
from hsi.preprocess._base import find_nonfinite, nodata_mask
from hsi.preprocess.budget import Budget

if TYPE_CHECKING:
    from hsi.preprocess import Split

__all__ = ["IGNORE_INDEX", "PREPROCESS_SEMANTICS", "CacheRecipe", "budget_of", "check_cube_values", "exclude_nonfinite",
           "zero_based"]

#: the label of an unlabeled pixel in every batch (classes are ``0..K-1`` there); losses and metrics skip it
IGNORE_INDEX = -1

#: the splits that get patch arrays with ``strategy="patches"``
_SPLITS = ("train", "val", "test")

#: Version of what the build does to the data; part of every cache key. Bump it whenever
#: the same inputs would give different arrays. 2: pixels with a non-finite spectrum are
#: left out of every split, and non-finite values are filled with the training median.
#: 3: per-band scaling of float32 cubes computed in float32 (a few ulps from float64).
#: 4: ``predict_on="all"`` leaves no-data pixels out, as whole-scene inference does.
#: 5: the stored class names and palette follow the scene rule (synthetic ``S-...`` names, Samson
#: ``Rock, Tree, Water``, :func:`hsi.scenes.palette.scene_palette` colours). 6: wavelengths of the collection grid.
#: 7: a label map's stored class names (``hsi.io.write_h5``) name its classes; the per-pixel ``normalize`` step.
PREPROCESS_SEMANTICS = 7


@dataclass(frozen=True)
class CacheRecipe:
    """Everything besides the source that determines a cache's contents.

    Parameters
    ----------
    values : dict
        The ``HSIDataModule`` arguments whose role is ``recipe`` (:mod:`hsi._roles`), resolved
        (``buffer`` and ``split_seed`` filled in, ``patch_size`` and ``padding`` of a loaded
        state). The cache key is built from all of them, so an argument declared as a recipe
        argument can never be left out of it.
    checkpoint : dict
        The scene's ``split`` and fitted ``pipeline`` (JSON): made by
        :func:`hsi.data.sources.build.collection_state` (or a checkpoint's), never here.
    """

    values: dict[str, Any]
    checkpoint: dict[str, Any]

    @property
    def patch_size(self) -> int:
        """Window size ``P``."""
        return int(self.values["patch_size"])

    @property
    def padding(self) -> str:
        """Border padding of the cube."""
        return str(self.values["padding"])

    @property
    def strategy(self) -> str:
        """"patches" (also ``(N, P, P, C)`` arrays per split) or "cube"."""
        return "patches" if self.values["cache"] == "patches" else "cube"

    def description(self, identity: dict[str, Any]) -> dict[str, Any]:
        """The dictionary the cache is keyed by (recorded in ``meta.json``): every recipe argument, and more."""
        from hsi import __version__

        ckpt = self.checkpoint
        arguments = {name: json_roundtrip(value) for name, value in sorted(self.values.items()) if name != "cache"}
        digests = {"pipeline": description_key(ckpt["pipeline"]), "split": description_key(ckpt["split"])}
        return {"cache_format": CACHE_FORMAT, "preprocess_semantics": PREPROCESS_SEMANTICS, "hsi_version": __version__,
                "source": identity, **arguments, "state_sha256": digests, "dtype": "float32", "layout": "HWC",
                "strategy": self.strategy}

    def make_split(self, src: LoadedSource) -> Split:
        """The recipe's split, checked against the scene (its shape, and for a block or random split its labels)."""
        from hsi.preprocess import Split

        split = Split.from_state(self.checkpoint["split"])
        if split.shape != src.labels.shape:
            raise CheckpointError(
                f"the split in the loaded state is {split.shape}, the scene {src.name!r} is {src.labels.shape}"
            )
        if split.params.get("method") in ("block", "random") and not split.matches(src.labels):
            raise CheckpointError(
                f"the split in the loaded state was made from a different label map than scene {src.name!r} "
                "(labels_sha256 differs); load the checkpoint with the scene it was trained on"
            )
        return split

    def build(self, src: LoadedSource) -> tuple[dict[str, np.ndarray | ArraySpec], dict[str, Any]]:
        """The cache's arrays and JSON state for the loaded source."""
        from hsi.preprocess import Pipeline
        from hsi.preprocess.shift import value_level

        check_scene_fits_patch(src, self.patch_size)
        check_cube_values(src.cube, src.name)
        nodata = nodata_mask(src.cube)  # the same rule as inference's no-data pixels
        finite_pixel = np.ones(src.cube.shape[:2], dtype=bool) if nodata is None else ~nodata
        src, _ = exclude_nonfinite(src, finite_pixel)  # counted when the scene was read (collection_state)
        split = self.make_split(src)
        pipeline = Pipeline.from_state(self.checkpoint["pipeline"])
        x = np.asarray(pipeline.transform(src.cube), dtype=np.float32)
        _check_finite_output(x, src.name)
        p = self.patch_size
        padded = pad_cube(x, p, self.padding)
        del x
        labels = src.labels
        if src.test_labels is not None:  # fixed split: test pixels take their class from the test map
            labels = np.where(src.test_labels > 0, src.test_labels, labels)
        # a checkpoint's split may include pixels that are non-finite in this cube: never serve them
        masks = {"train": split.train & finite_pixel, "val": split.val & finite_pixel,
                 "test": split.test & finite_pixel, "labeled": labels > 0,
                 "all": finite_pixel}  # no-data pixels are never classified
        arrays: dict[str, np.ndarray | ArraySpec] = {"cube": padded, "label_map": labels.astype(np.int64)}
        for name, mask in masks.items():
            coords = np.argwhere(mask).astype(np.int64)  # row-major order
            arrays[f"{name}_coords"] = coords
            arrays[f"{name}_labels"] = zero_based(labels[coords[:, 0], coords[:, 1]])
            if self.strategy == "patches" and name in _SPLITS:
                arrays[f"{name}_patches"] = ArraySpec(  # N x C x P x P, stored (N, P, P, C)
                    (coords.shape[0], p, p, padded.shape[2]), "<f4", functools.partial(_fill_patches, padded, coords, p)
                )
        scene = {"name": src.name, "class_names": list(src.class_names),
                 "palette": np.asarray(src.palette).astype(int).tolist(),
                 "label_values": [int(v) for v in src.label_values],
                 "wavelengths": None if src.wavelengths is None else np.asarray(src.wavelengths).tolist(),
                 "num_bands_in": int(src.cube.shape[2]), "georef": None if src.georef is None else src.georef.to_dict(),
                 "fwhm": None if src.fwhm is None else np.asarray(src.fwhm).tolist(), "units": src.units,
                 "value_level": value_level(src.cube)}
        return arrays, {"split": split.to_state(), "pipeline": pipeline.to_state(), "scene": scene}


def budget_of(values: dict[str, Any]) -> Budget:
    """The label budget the DataModule's recipe arguments ask for (drawn with the split's seed)."""
    return Budget(per_class=values.get("train_per_class"), fraction=values.get("train_fraction"),
                  val=values.get("val_budget") or "same", seed=int(values["split_seed"]))


def zero_based(labels: np.ndarray) -> np.ndarray:
    """Class ids ``1..K`` (0 = unlabeled) as the batches' int64 ``0..K-1``, unlabeled as :data:`IGNORE_INDEX`."""
    labels = np.asarray(labels, dtype=np.int64)
    return np.where(labels > 0, labels - 1, IGNORE_INDEX)


def check_cube_values(cube: np.ndarray, name: str) -> None:
    """Refuse a cube with no finite value, or whose finite values are all equal (nothing to learn).

    Raises
    ------
    CubeFormatError
        Naming the scene, the value and the fix.
    """
    from hsi.errors import CubeFormatError

    finite = np.isfinite(cube)
    if not finite.any():
        raise CubeFormatError(f"scene {name!r}: the cube has no finite value (all NaN or infinite); cannot train on it")
    lo, hi = np.min(cube, where=finite, initial=np.inf), np.max(cube, where=finite, initial=-np.inf)
    if lo == hi:
        raise CubeFormatError(
            f"scene {name!r}: every finite value of the {cube.shape[0]} x {cube.shape[1]} x {cube.shape[2]} cube is "
            f"{float(lo)!r}; there is nothing to learn from (a blank, all-zero or wrongly decoded file?). "
            f"Check the file, its key and its data type"
        )


def exclude_nonfinite(src: LoadedSource, finite_pixel: np.ndarray) -> tuple[LoadedSource, dict[str, Any]]:
    """Unlabel the pixels whose spectrum has a NaN or infinite value, before any split is made.

    Returns the source with those pixels set to 0 (unlabeled) in ``labels`` and
    ``test_labels``, and the record kept in the scene's facts (``excluded_nonfinite``):
    ``pixels`` (labeled pixels left out), ``per_class`` (counts by class name, classes
    with none omitted), ``first`` ((row, col) of the first, or None), ``nonfinite_pixels``
    (all pixels with a non-finite value, labeled or not).
    """
    import dataclasses
    import logging

    bad = ~finite_pixel
    labels, test = src.labels, src.test_labels
    hit = bad & ((labels > 0) | (test > 0 if test is not None else False))
    counts = np.bincount(np.where(hit, labels, 0).ravel(), minlength=len(src.class_names) + 1)
    if test is not None:
        counts = counts + np.bincount(np.where(hit & (labels == 0), test, 0).ravel(), minlength=counts.size)
    per_class = {src.class_names[k - 1]: int(counts[k]) for k in range(1, counts.size) if counts[k]}
    first = np.argwhere(hit)
    record = {"pixels": int(hit.sum()), "per_class": per_class,
              "first": None if first.size == 0 else [int(v) for v in first[0]], "nonfinite_pixels": int(bad.sum())}
    if record["pixels"]:
        logging.getLogger("hsi.data").warning(
            "scene %r: %d labeled pixel(s) have NaN or infinite values and are left out of every split "
            "(first at (row, col) %s; by class %s)", src.name, record["pixels"], tuple(record["first"]), per_class,
        )
        src = dataclasses.replace(src, labels=np.where(bad, 0, labels),
                                  test_labels=None if test is None else np.where(bad, 0, test))
    return src, record


def _check_finite_output(x: np.ndarray, name: str) -> None:
    """The transformed cube must be finite everywhere (the fill step guarantees it; an old pipeline may not)."""
    found = find_nonfinite(x)
    if found is not None:
        from hsi.errors import NonFiniteInputError

        count, first = found
        raise NonFiniteInputError(
            f"scene {name!r}: {count} NaN or infinite value(s) after preprocessing (first at (row, col, "
            f"band) {first}); the pipeline has no NonFiniteFill step (a checkpoint from an older hsi?). "
            f"Refit the preprocessing, or fill the cube first"
        )


def check_scene_fits_patch(src: LoadedSource, patch_size: int) -> None:
    """Refuse a patch larger than the scene (naming ``patch_size``) before a split comes out empty."""
    height, width = src.labels.shape
    if patch_size > min(height, width):
        from hsi.errors import OptionError

        raise OptionError("patch_size", patch_size, f"at most {min(height, width)}: scene {src.name!r} is "
                          f"{height} x {width} pixels")


def _fill_patches(padded: np.ndarray, coords: np.ndarray, patch_size: int, out: np.ndarray, chunk: int = 1024) -> None:
    """Write the (N, P, P, C) patch array chunk by chunk (``out`` may be a memory map)."""
    for start in range(0, coords.shape[0], chunk):
        out[start : start + chunk] = gather_windows(padded, coords[start : start + chunk], patch_size).transpose(0, 2, 3, 1)
