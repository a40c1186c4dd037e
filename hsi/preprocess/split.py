"""Train/val/test splits of a label map: spatial blocks, random pixels, or fixed maps.

All splits return a :class:`Split` with boolean ``(H, W)`` masks over labeled pixels.

:func:`block_split` is the one to use for honest numbers: whole square blocks go to
one split, and training pixels near a val/test block are dropped into ``buffer``, so a
patch model with ``patch_size // 2 <= buffer`` never sees a labeled val/test pixel.
:func:`random_split` reproduces the per-pixel splits of the literature and warns
(:class:`hsi.errors.LeakageWarning`). :func:`fixed_split` wraps benchmark releases
that ship separate train and test maps.

This module only gathers the public names; the code lives in
:mod:`hsi.preprocess.split_types` (result types and their state),
:mod:`hsi.preprocess.split_blocks` (block split) and
:mod:`hsi.preprocess.split_pixels` (random and fixed splits).
"""

from __future__ import annotations

from hsi.preprocess.split_blocks import block_split
from hsi.preprocess.split_pixels import fixed_split, random_split
from hsi.preprocess.split_types import COLUMNS, Split, SplitCounts, StratificationWarning
from hsi.preprocess.split_types import labels_digest  # noqa: F401  (kept importable from here)

__all__ = [
    "COLUMNS",
    "Split",
    "SplitCounts",
    "StratificationWarning",
    "block_split",
    "fixed_split",
    "random_split",
]
