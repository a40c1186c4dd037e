"""Patch classifiers for hyperspectral scenes, built by name.

``build_model(name, num_bands, num_classes, patch_size, **hyperparameters)`` returns an
``nn.Module`` mapping patches ``(B, num_bands, P, P)`` float32 to logits
``(B, num_classes)``. Models with ``dense = True`` (``fcn``) also have
``forward_dense(x: (B, C, h, w)) -> (B, num_classes, h, w)`` for tiled inference.

========================  ========================================  =============  ==============
name                      class                                     min num_bands  min patch_size
========================  ========================================  =============  ==============
``spectral1d``            :class:`Spectral1DCNN` (Hu 2015)          1              1, odd
``cnn3d``                 :class:`CNN3D` (Hamida 2018)              3              3
``hybridsn``              :class:`HybridSN` (Roy 2020)              13             9
``cnn2d``                 :class:`CNN2D`                            1              1
``fcn``                   :class:`FCN`                              1              1, odd
``ssnet``                 :class:`SSNet` (the default)              1              1, odd
``ssftt``                 :class:`SSFTT` (Sun 2022)                 3              5
``spectralformer``        :class:`SpectralFormer` (Hong 2022)       1              1
``spectralformer_pixel``  :class:`SpectralFormerPixel` (Hong 2022)  1              1, odd
``anyband``               :class:`AnyBandNet` (any band set)        1              1, odd
========================  ========================================  =============  ==============
"""

from __future__ import annotations

from hsi.models.anyband import AnyBandNet
from hsi.models.base import ModelSizeError, PatchClassifier, PixelPath, WindowMap, WindowStem, channels_last_weights
from hsi.models.cnn2d import CNN2D
from hsi.models.cnn3d import CNN3D
from hsi.models.fcn import FCN
from hsi.models.hybridsn import HybridSN
from hsi.models.registry import (
    DEFAULT_MODEL,
    UnknownModelError,
    build_model,
    get_model_class,
    list_models,
    recommended_patch_size,
    recommended_pca,
    recommended_scaling,
    register_model,
)
from hsi.models.spectral1d import Spectral1DCNN
from hsi.models.spectralformer import SpectralFormer, SpectralFormerPixel
from hsi.models.ssftt import SSFTT
from hsi.models.ssnet import SSNet

__all__ = [
    "AnyBandNet",
    "CNN2D",
    "CNN3D",
    "DEFAULT_MODEL",
    "FCN",
    "HybridSN",
    "ModelSizeError",
    "PatchClassifier",
    "PixelPath",
    "SSFTT",
    "SSNet",
    "Spectral1DCNN",
    "SpectralFormer",
    "SpectralFormerPixel",
    "UnknownModelError",
    "WindowMap",
    "WindowStem",
    "build_model",
    "channels_last_weights",
    "get_model_class",
    "list_models",
    "recommended_patch_size",
    "recommended_pca",
    "recommended_scaling",
    "register_model",
]
