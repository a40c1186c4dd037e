"""The pixels self-supervised pretraining may read: every pixel of every scene, labels never read.

Published self-supervised protocols for hyperspectral scenes learn from every pixel of the
scene, the test blocks' spectra included (their labels never). :func:`pretext_centres` returns
those pixels; with ``exclude_test=True`` it leaves out every pixel whose window reaches a test
block (a whole held-out test scene, the blocks of a block split, the pixels of a random or fixed
split), for a stricter protocol in which the test area is never seen at all.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.ndimage import maximum_filter

__all__ = ["pretext_centres", "pretext_windows", "held_out_area"]


def held_out_area(split: Any, shape: tuple[int, int]) -> np.ndarray:
    """``(H, W)`` bool: the area of a scene's test split, i.e. the test blocks (not only their labelled pixels).

    A block split's test area is every ``block_size`` square of its grid (anchored at pixel
    (0, 0)) that holds a test pixel; a scene with test pixels and no training pixel (a
    held-out test scene) is test area whole; other splits' test area is their test pixels.
    """
    test = np.asarray(split.test, dtype=bool)
    if not test.any():
        return np.zeros(shape, dtype=bool)
    if not np.asarray(split.train).any():
        return np.ones(shape, dtype=bool)
    if split.params.get("method") != "block":
        return test.copy()
    size = int(split.params["block_size"])
    rows, cols = np.nonzero(test)
    blocks = np.zeros((-(-shape[0] // size), -(-shape[1] // size)), dtype=bool)
    blocks[rows // size, cols // size] = True
    return np.kron(blocks, np.ones((size, size), dtype=bool))[: shape[0], : shape[1]].astype(bool)


def pretext_centres(splits: list[Any], shapes: list[tuple[int, int]], radius: int,
                    exclude_test: bool = False) -> np.ndarray:
    """``(N, 3)`` int64 ``(scene, row, col)`` of the pixels pretraining reads, scene after scene.

    Every pixel of each scene (``shapes``: ``(H, W)`` per scene); with ``exclude_test`` only
    those whose ``(2 radius + 1)`` window lies outside the scene's :func:`held_out_area`. Only
    the splits' masks are read, never a label.
    """
    parts = []
    for index, (split, shape) in enumerate(zip(splits, shapes)):
        keep = np.ones(shape, dtype=bool)
        if exclude_test:
            area = held_out_area(split, shape)
            reach = maximum_filter(area, size=2 * radius + 1, mode="constant", cval=False) if radius else area
            keep &= ~reach
        rows, cols = np.nonzero(keep)
        parts.append(np.stack([np.full(rows.shape, index), rows, cols], axis=1))
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros((0, 3), np.int64)


def pretext_windows(datamodule: Any, exclude_test: bool = False) -> tuple[list[np.ndarray], np.ndarray, int]:
    """The padded cubes of a DataModule's scenes, the centres pretraining may read, and the cubes' padding.

    ``datamodule`` is an :class:`hsi.data.HSIDataModule` after ``setup``; windows are its
    ``patch_size`` wide.
    """
    names = list(datamodule.scene_names)
    shapes = [datamodule.scene_shapes[name] for name in names]
    splits = [datamodule.scene_split(name) for name in names]
    pad = int(datamodule.patch_size) // 2
    centres = pretext_centres(splits, shapes, pad, exclude_test)
    return [datamodule.scene_cube(name) for name in names], centres, pad
