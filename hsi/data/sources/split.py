"""Splits of a collection: blocks inside every scene, or whole scenes held out; and their leakage report.

``split="block"``: the scenes' label maps (in the collection's class ids) are laid side
by side on one block grid, each scene starting on a block boundary and separated from
the next by more than ``buffer`` unlabeled pixels, and :func:`hsi.preprocess.block_split`
splits that mosaic once: the stratification is over the whole collection (every class
that spans enough blocks anywhere reaches train and test), blocks never straddle two
scenes and no buffer reaches across them. Only label maps are laid out, never cubes.

``split="scene"``: the ``test_scenes`` (and ``val_scenes``) are held out whole: every
labelled pixel of theirs is a test (val) pixel and none is a training pixel, so no buffer
is needed. Without ``val_scenes`` the validation pixels are a share
``fractions[1] / (fractions[0] + fractions[1])`` of the blocks of the training scenes,
buffered from training as in a block split.

Each scene gets its own :class:`~hsi.preprocess.Split` (its params say ``collection``). A collection of one
scene is split on its own (:func:`scene_split`: ``block``, with ``folds`` if asked, ``random`` or ``fixed``), the
split a lone scene has always had.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from hsi.data.sources.entries import Collection
from hsi.errors import StratificationWarning
from hsi.preprocess import Split

__all__ = ["collection_leakage", "collection_split", "mosaic_offsets", "scene_split"]


def mosaic_offsets(shapes: Sequence[tuple[int, int]], block_size: int, buffer: int) -> list[int]:
    """Column offset of each scene in the mosaic: block-aligned, more than ``buffer`` pixels apart."""
    gap = math.ceil((buffer + 1) / block_size) * block_size
    offsets, x = [], 0
    for _, w in shapes:
        offsets.append(x)
        x += math.ceil(w / block_size) * block_size + gap
    return offsets


def _part_split(labels: np.ndarray, masks: dict[str, np.ndarray], params: dict[str, Any]) -> Split:
    """A per-scene :class:`Split` (counts and labels digest of this scene); per-scene class notes are not warned."""
    from hsi.preprocess._split_result import make_split

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StratificationWarning)  # the collection-wide split warns once
        return make_split(labels, masks, params, "collection split")


def _mosaic_split(labels: list[np.ndarray], fractions: Sequence[float], values: dict[str, Any]
                  ) -> tuple[list[dict[str, np.ndarray]], dict[str, Any]]:
    """Block-split the side-by-side mosaic of ``labels``; the per-scene masks and the split's params."""
    from hsi.preprocess import block_split

    bs, buf = int(values["block_size"]), int(values["buffer"])
    shapes = [lab.shape for lab in labels]
    offsets = mosaic_offsets(shapes, bs, buf)
    width = offsets[-1] + math.ceil(shapes[-1][1] / bs) * bs
    mosaic = np.zeros((max(s[0] for s in shapes), width), dtype=np.int64)
    for lab, x in zip(labels, offsets):
        mosaic[: lab.shape[0], x: x + lab.shape[1]] = lab
    split = block_split(mosaic, block_size=bs, fractions=fractions, buffer=buf, seed=int(values["split_seed"]))
    out = []
    for lab, x in zip(labels, offsets):
        h, w = lab.shape
        out.append({name: np.ascontiguousarray(getattr(split, name)[:h, x: x + w])
                    for name in ("train", "val", "test", "buffer")})
    params = {k: v for k, v in split.params.items() if k not in ("shape", "labels_sha256", "n_classes")}
    return out, params


def scene_split(labels: np.ndarray, test_labels: np.ndarray | None, values: dict[str, Any]) -> Split:
    """The split of a scene on its own: ``values["split"]`` is block (with ``folds``/``fold``), random or fixed
    (``test_labels`` the test map)."""
    from hsi.preprocess import block_split, fixed_split, random_split

    fractions, seed = tuple(float(f) for f in values["fractions"]), int(values["split_seed"])
    if values["split"] == "block":
        fold = values.get("fold")  # folds count from 1 for people, from 0 in block_split
        return block_split(labels, block_size=values["block_size"], fractions=fractions, buffer=values["buffer"],
                           seed=seed, n_folds=values.get("folds"), fold=None if fold is None else int(fold) - 1)
    if values["split"] == "random":
        return random_split(labels, fractions=fractions, seed=seed)
    return fixed_split(labels, test_labels, val_fraction=fractions[1], seed=seed)


def collection_split(labels: Sequence[np.ndarray], col: Collection, values: dict[str, Any],
                     test_labels: np.ndarray | None = None) -> list[Split]:
    """One :class:`Split` per scene of ``col`` (in its order); one scene's is :func:`scene_split`.

    Parameters
    ----------
    labels : sequence of (H_i, W_i) int arrays
        Each scene's labels in the collection's class ids (0 unlabeled).
    col : Collection
        The scenes and how they are split.
    values : dict
        ``block_size``, ``buffer``, ``fractions`` and ``split_seed`` (the DataModule's; ``split``, ``folds`` and
        ``fold`` for one scene).
    test_labels : (H, W) int array, optional
        The test map of a single scene split ``fixed``.
    """
    if len(labels) == 1:
        return [scene_split(labels[0], test_labels, values)]
    labels = [np.asarray(lab, dtype=np.int64) for lab in labels]
    fractions = [float(f) for f in values["fractions"]]
    names = col.names
    common = {"collection": {"split": col.split, "scenes": names, "test_scenes": list(col.test_scenes),
                             "val_scenes": list(col.val_scenes)}}
    if col.split == "block":
        masks, params = _mosaic_split(labels, fractions, values)
        return [_part_split(lab, m, {**params, **common, "scene": n}) for lab, m, n in zip(labels, masks, names)]
    train_idx = [names.index(n) for n in col.train_names]
    per_train: dict[int, dict[str, np.ndarray]] = {}
    params: dict[str, Any] = {"method": "scene", "seed": int(values["split_seed"])}
    if col.val_scenes:
        for i in train_idx:
            zero = np.zeros(labels[i].shape, dtype=bool)
            per_train[i] = {"train": labels[i] > 0, "val": zero, "test": zero.copy(), "buffer": zero.copy()}
    else:
        share = fractions[1] / (fractions[0] + fractions[1])
        masks, block_params = _mosaic_split([labels[i] for i in train_idx], (1.0 - share, 0.0, share), values)
        params.update({"val_blocks": block_params})
        for i, m in zip(train_idx, masks):  # the mosaic's held-out blocks are validation blocks
            per_train[i] = {"train": m["train"], "val": m["test"], "test": m["val"], "buffer": m["buffer"]}
    out = []
    for i, (lab, name) in enumerate(zip(labels, names)):
        zero = np.zeros(lab.shape, dtype=bool)
        role = "test" if name in col.test_scenes else "val" if name in col.val_scenes else "train"
        masks = per_train.get(i) or {"train": zero, "val": (lab > 0) if role == "val" else zero.copy(),
                                     "test": (lab > 0) if role == "test" else zero.copy(), "buffer": zero.copy()}
        out.append(_part_split(lab, masks, {**params, **common, "scene": name, "role": role}))
    return out


def collection_leakage(splits: Sequence[Split], names: Sequence[str], patch_size: int,
                       held_out: Sequence[str] = ()) -> dict[str, Any]:
    """The leakage audit of every scene, and of the collection.

    Returns
    -------
    dict
        ``scenes``: per scene :func:`hsi.preprocess.leakage_report` of its training pixels
        against its val and test pixels, plus ``train_pixels``; ``held_out``: the held-out
        scenes' training pixels (0 for each); ``test_pixels_in_train_patches``: the total
        (patches never cross scenes: each scene is its own image).
    """
    from hsi.preprocess import leakage_report

    scenes = {}
    for split, name in zip(splits, names):
        report = leakage_report(split.train, split.val | split.test, patch_size)
        scenes[name] = {**report, "train_pixels": int(split.train.sum())}
    return {"scenes": scenes,
            "held_out": {n: scenes[n]["train_pixels"] for n in held_out},
            "test_pixels_in_train_patches": int(sum(s["test_pixels_in_train_patches"] for s in scenes.values()))}
