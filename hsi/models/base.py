"""What every patch classifier shares: size checks, input checks, the ``dense`` flag.

Each architecture checks its sizes in ``__init__`` (so building one directly, without the
registry, fails just as clearly) and checks the input of ``forward``, so that a wrong band
count or patch size names the model, the argument, what it expected and what it got,
instead of surfacing as a matrix-shape error deep inside ``torch``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral
from typing import ClassVar

import torch
from torch import nn

from hsi.errors import ModelSizeError, OptionError, ShapeMismatchError  # noqa: F401 - ModelSizeError re-exported

__all__ = ["Encoder", "ModelSizeError", "PatchClassifier", "PixelPath", "WindowMap", "WindowStem", "channels_last_weights",
           "check_dropout", "check_size", "conv_out_size", "widest_spectral_activation"]


@dataclass
class PixelPath:
    """The part of a network that reads each pixel's own spectrum alone, up to its classifier.

    :mod:`hsi.training.pretrain` starts it from a per-pixel network fitted to the training
    pixels: ``layers`` are the path's ``(1x1 Conv2d without bias, BatchNorm2d)`` pairs, each
    followed by a ReLU, from the bands on; ``head`` is the 1x1 ``Conv2d`` classifier, whose
    input channels ``columns`` are the path's last layer (its other inputs, such as a
    context branch, start at zero weight).
    """

    layers: list[tuple[nn.Conv2d, nn.BatchNorm2d]]
    head: nn.Conv2d
    columns: slice


@dataclass
class Encoder:
    """The part of a network that self-supervised pretraining learns (:mod:`hsi.training.selfsup`).

    ``modules`` name the sub-modules whose weights it learns and ``hsi pretrain`` writes
    (the rest, the classifier, starts as built); ``centre_features`` maps patches
    ``(B, C, P, P)`` to the features ``(B, channels)`` the classifier reads at the centre pixel.
    """

    modules: dict[str, nn.Module]
    centre_features: Callable[[torch.Tensor], torch.Tensor]
    channels: int


@dataclass
class WindowStem:
    """A network's first layer, split off so that overlapping windows can share it (:mod:`hsi.infer.stem`).

    ``conv`` is the first 2-D convolution (stride 1, zero padding that keeps the size),
    ``pointwise`` the per-pixel operations after it (batch norm in eval mode, activations),
    and ``rest`` the network from their output ``(B, conv.out_channels, P, P)`` to the logits.
    """

    conv: nn.Conv2d
    pointwise: nn.Module
    rest: Callable[[torch.Tensor], torch.Tensor]


@dataclass
class WindowMap:
    """A patch-centre network run over a whole block at once: every window's logits in one pass.

    For a network whose layers are unpadded and of stride 1 across the window, the layers
    of a window are a crop of the same layers over the block, and its head a convolution of
    the window's size. ``forward`` maps a block ``(B, C, H + P - 1, W + P - 1)`` to logits
    ``(B, K, H, W)``: at ``(i, j)`` those of the window whose top-left pixel is ``(i, j)``.
    ``floats_per_pixel`` is the widest activation per pixel, to size the strips it runs on.
    """

    forward: Callable[[torch.Tensor], torch.Tensor]
    floats_per_pixel: int


def channels_last_weights(net: nn.Module) -> nn.Module:
    """Store every 2-D convolution's weight channels-last, in place; returns ``net``.

    A 2-D convolution computes in the memory format of its *weight* when input and weight
    differ: a channels-last batch (the package's patches, HWC inference blocks) through a
    contiguous weight is copied back to contiguous inside the call, which made fcn's
    forward on a 262 x 262 x 200 block about 1.8x slower on 2 CPU threads. With the
    weights channels-last the batch's format carries through. Values are unchanged, so
    ``state_dict`` loads and saves as before; 3-D convolutions are left alone.
    """
    for module in net.modules():
        if isinstance(module, nn.Conv2d):
            module.weight.data = module.weight.data.contiguous(memory_format=torch.channels_last)
    return net


def check_size(model: str, argument: str, value: object, minimum: int, why: str = "") -> int:
    """Return ``value`` as an ``int`` after checking it is an integer ``>= minimum``.

    Raises
    ------
    ModelSizeError
        Naming ``model``, ``argument``, the minimum, the reason and the value found.
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ModelSizeError(
            f"{model}: {argument} must be an integer >= {minimum}; got {value!r} "
            f"of type {type(value).__name__}"
        )
    value = int(value)
    if value < minimum:
        reason = f" ({why})" if why else ""
        raise ModelSizeError(f"{model}: {argument} must be >= {minimum}{reason}; got {value}")
    return value


def check_dropout(model: str, argument: str, value: float) -> None:
    """Raise ``ValueError`` naming ``model`` and ``argument`` unless ``0 <= value < 1`` (a drop probability)."""
    if not 0.0 <= value < 1.0:
        raise OptionError(argument, value, f"a drop probability in [0, 1) ({model})")


def conv_out_size(size: int, kernel: int, stride: int = 1, padding: int = 0) -> int:
    """Length of one axis after a convolution (no dilation), as ``torch`` computes it."""
    return (size + 2 * padding - kernel) // stride + 1


def widest_spectral_activation(layers: nn.Sequential, num_bands: int) -> int:
    """The most values per pixel among the outputs of ``layers``' 3-D convolutions: channels x spectral length.

    The convolutions read ``(B, channels, bands, rows, cols)`` volumes, starting from one
    channel of ``num_bands``; other layers keep the shape.
    """
    bands, widest = int(num_bands), int(num_bands)
    for layer in layers:
        if isinstance(layer, nn.Conv3d):
            bands = conv_out_size(bands, layer.kernel_size[0], layer.stride[0], int(layer.padding[0]))
            widest = max(widest, layer.out_channels * bands)
    return widest


class PatchClassifier(nn.Module):
    """Base class: maps patches ``(B, num_bands, P, P)`` to logits ``(B, num_classes)``.

    Parameters
    ----------
    num_bands : int
        Number of spectral bands ``C`` of the input (after any band removal / PCA).
    num_classes : int
        Number of output classes ``K``.
    patch_size : int
        Side ``P`` of the square patches the model is built for.

    Attributes
    ----------
    dense : bool (class attribute)
        True when the model also has ``forward_dense`` (every pixel of a tile at once).
    MIN_NUM_BANDS, MIN_PATCH_SIZE : int (class attributes)
        The smallest sizes the architecture accepts with its default hyperparameters.
    ODD_PATCH_SIZE : bool (class attribute)
        True when ``patch_size`` must be odd (the model reads the centre pixel).
    fixed_patch_size : bool (class attribute)
        True when ``forward`` only accepts patches of exactly ``patch_size`` (a flatten
        layer sized for it); otherwise any spatial size works.
    RECOMMENDED_PCA : int or None (class attribute)
        PCA components a run should apply when the user gives no ``pca`` and the scene
        has more bands than this (models whose cost grows with the band count, such as
        3-D convolutions); None when raw bands are fine. See
        :func:`hsi.models.registry.recommended_pca`.
    RECOMMENDED_PATCH_SIZE : int or None (class attribute)
        Patch side a run should use when the user gives no ``patch_size``: the window the
        model actually reads, for models that read less than the default window (1 for a
        purely spectral model); None when the default is fine. See
        :func:`hsi.models.registry.recommended_patch_size`.
    """

    dense: ClassVar[bool] = False
    MIN_NUM_BANDS: ClassVar[int] = 1
    MIN_PATCH_SIZE: ClassVar[int] = 1
    ODD_PATCH_SIZE: ClassVar[bool] = False
    fixed_patch_size: ClassVar[bool] = False
    RECOMMENDED_PCA: ClassVar[int | None] = None
    RECOMMENDED_PATCH_SIZE: ClassVar[int | None] = None

    def __init__(self, num_bands: int, num_classes: int, patch_size: int) -> None:
        super().__init__()
        name = type(self).__name__
        self.num_bands = check_size(
            name, "num_bands", num_bands, self.MIN_NUM_BANDS, self._bands_reason()
        )
        self.num_classes = check_size(name, "num_classes", num_classes, 1)
        self.patch_size = check_size(
            name, "patch_size", patch_size, self.MIN_PATCH_SIZE, self._patch_reason()
        )
        if self.ODD_PATCH_SIZE and self.patch_size % 2 == 0:
            raise ModelSizeError(
                f"{name}: patch_size must be odd (>= {self.MIN_PATCH_SIZE}) so that the "
                f"patch has a centre pixel; got {self.patch_size}"
            )

    def pixel_path(self) -> PixelPath | None:
        """The per-pixel spectral path that :mod:`hsi.training.pretrain` can start, or None (no such path)."""
        return None

    def encoder(self) -> Encoder | None:
        """The part self-supervised pretraining can learn (:class:`Encoder`), or None (the default: none)."""
        return None

    def window_stem(self) -> WindowStem | None:
        """The first layer and the rest of ``forward``, for inference that shares the layer between windows.

        None (the default) when the network cannot be split so (:mod:`hsi.infer.stem`).
        """
        return None

    def window_map(self) -> WindowMap | None:
        """All windows of a block in one pass (:class:`WindowMap`) for inference; None: one window at a time.

        None (the default) unless the architecture's layers allow it; also None in
        training mode (dropout differs between windows).
        """
        return None

    @classmethod
    def _bands_reason(cls) -> str:
        return ""

    @classmethod
    def _patch_reason(cls) -> str:
        return ""

    def _check_input(self, x: torch.Tensor) -> None:
        """Raise ``ShapeMismatchError`` unless ``x`` is ``(B, num_bands, P, P)`` as required."""
        name = type(self).__name__
        if x.dim() != 4:
            raise ShapeMismatchError(
                f"{name}: input must be (B, C, P, P) with C = {self.num_bands}; "
                f"got a {x.dim()}-D tensor of shape {tuple(x.shape)}"
            )
        if x.shape[1] != self.num_bands:
            raise ShapeMismatchError(
                f"{name}: input has {x.shape[1]} bands (axis 1 of shape {tuple(x.shape)}) "
                f"but the model was built for num_bands={self.num_bands}"
            )
        if self.fixed_patch_size and tuple(x.shape[2:]) != (self.patch_size, self.patch_size):
            raise ShapeMismatchError(
                f"{name}: input patches are {tuple(x.shape[2:])} but the model was built "
                f"for patch_size={self.patch_size} (expected ({self.patch_size}, "
                f"{self.patch_size})); rebuild it with the patch size of the data"
            )
