"""Whole-scene classification maps from a trained checkpoint.

:func:`infer_scene` classifies every pixel of a scene, window by window, with the
checkpoint's own fitted preprocessing and padding: patch-centre models through the
training gather, dense models (fcn) in overlapping tiles blended with a weight window
(:mod:`hsi.infer.windows`, :mod:`hsi.infer.blend`). Scenes larger than memory are read
window by window and the maps written to memory maps as rows finish; several devices
share the rows through Lightning (:mod:`hsi.infer.distributed`). :class:`InferOptions`
defines every option once.
"""

from __future__ import annotations

from hsi.infer.api import InferResult, infer_scene
from hsi.infer.checkpoint import InferenceModel, check_cube, load_checkpoint
from hsi.infer.options import BLEND_MODES, InferOptions
from hsi.infer.windows import TileGrid, tile_starts, weight_window

__all__ = [
    "BLEND_MODES",
    "InferOptions",
    "InferResult",
    "InferenceModel",
    "TileGrid",
    "check_cube",
    "infer_scene",
    "load_checkpoint",
    "tile_starts",
    "weight_window",
]
