"""Whole-scene classification maps from a trained checkpoint.

:func:`infer` is the one entry, for one scene or many: one scene's maps are written into
``out``, several scenes' (a collection, or a list of cube files) into ``out/<name>/`` beside a
summary table (:mod:`hsi.infer.entry`); ``hsi infer`` calls it and nothing else. Each scene is
classified pixel by pixel, window by window, with the checkpoint's own fitted preprocessing and
padding: patch-centre models through the training gather, dense models (fcn) in overlapping
tiles blended with a weight window (:mod:`hsi.infer.windows`, :mod:`hsi.infer.blend`). Scenes
larger than memory are read window by window and the maps written to memory maps as rows
finish; several devices share the rows through Lightning (:mod:`hsi.infer.distributed`).
:class:`InferOptions` defines every option once. :func:`infer_scene` (one scene) and
:func:`hsi.infer.many.infer_scenes` (several) are the names :func:`infer` calls, kept for code
that uses them: the same maps, bit for bit.
"""

from __future__ import annotations

from hsi.infer.api import InferResult, infer_scene
from hsi.infer.checkpoint import InferenceModel, check_cube, load_checkpoint
from hsi.infer.entry import infer
from hsi.infer.options import BLEND_MODES, InferOptions
from hsi.infer.windows import TileGrid, tile_starts, weight_window

__all__ = [
    "BLEND_MODES",
    "InferOptions",
    "InferResult",
    "InferenceModel",
    "TileGrid",
    "check_cube",
    "infer",
    "infer_scene",
    "load_checkpoint",
    "tile_starts",
    "weight_window",
]
