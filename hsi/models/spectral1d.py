"""1-D CNN over the spectrum of the patch's centre pixel."""

from __future__ import annotations

import math

import torch
from torch import nn

from hsi.models.base import ModelSizeError, PatchClassifier, check_size, conv_out_size
from hsi.models.registry import register_model

__all__ = ["Spectral1DCNN"]


@register_model("spectral1d")
class Spectral1DCNN(PatchClassifier):
    """1-D spectral CNN: conv1d -> max-pool -> fully connected (tanh) -> output.

    Hu, W. et al. (2015), "Deep convolutional neural networks for hyperspectral image
    classification", Journal of Sensors, 258619.

    Only the centre pixel's spectrum ``x[:, :, P // 2, P // 2]`` is used (the network is
    purely spectral); the rest of the patch is ignored. As in the paper the kernel and
    pooling sizes follow the band count: ``kernel_size = ceil(num_bands / 9)`` and
    ``pool_size = ceil(kernel_size / 5)``, with tanh activations.

    When to use it: as a per-pixel deep reference, or on scenes whose classes are
    separable pixel by pixel. It sees no spatial context, so where context matters (the
    synthetic scene) it cannot beat a per-pixel SVM and learns slowly; ``ssnet`` holds
    the same per-pixel path plus context. Since it reads one pixel, runs give it 1 x 1
    patches unless told otherwise (``RECOMMENDED_PATCH_SIZE = 1``: the window a default
    run would cut costs 121 times the data and a buffer of 5 pixels around every
    val/test block, for the same logits).

    Parameters
    ----------
    num_bands, num_classes : int
        Input bands ``C`` (>= 1, and >= ``kernel_size``) and output classes ``K``.
    patch_size : int
        Odd patch side ``P`` (>= 1), so that the centre pixel is defined.
    num_kernels : int
        Filters of the convolution layer (20 in the paper).
    kernel_size : int or None
        Spectral kernel length; ``None`` means ``ceil(num_bands / 9)``.
    pool_size : int or None
        Max-pooling length (and stride); ``None`` means ``ceil(kernel_size / 5)``.
    hidden_units : int
        Units of the fully connected layer (100 in the paper).

    Notes
    -----
    Shapes: ``(B, C, P, P)`` float32 -> logits ``(B, K)``; any odd ``P`` is accepted at run time.
    """

    ODD_PATCH_SIZE = True
    RECOMMENDED_PATCH_SIZE = 1

    def __init__(
        self,
        num_bands: int,
        num_classes: int,
        patch_size: int,
        *,
        num_kernels: int = 20,
        kernel_size: int | None = None,
        pool_size: int | None = None,
        hidden_units: int = 100,
    ) -> None:
        super().__init__(num_bands, num_classes, patch_size)
        name = type(self).__name__
        num_kernels = check_size(name, "num_kernels", num_kernels, 1)
        hidden_units = check_size(name, "hidden_units", hidden_units, 1)
        if kernel_size is None:
            kernel_size = math.ceil(self.num_bands / 9)
        kernel_size = check_size(name, "kernel_size", kernel_size, 1)
        if kernel_size > self.num_bands:
            raise ModelSizeError(
                f"{name}: num_bands must be >= kernel_size={kernel_size} (the convolution is "
                f"unpadded); got num_bands={self.num_bands}"
            )
        conv_len = conv_out_size(self.num_bands, kernel_size)
        if pool_size is None:
            pool_size = math.ceil(kernel_size / 5)
        pool_size = check_size(name, "pool_size", pool_size, 1)
        if pool_size > conv_len:
            raise ModelSizeError(
                f"{name}: pool_size must be <= {conv_len} (num_bands - kernel_size + 1); "
                f"got pool_size={pool_size}"
            )
        self.kernel_size = kernel_size
        self.pool_size = pool_size
        # The paper's tanh then max-pool, computed as max-pool then tanh: the same values (tanh
        # is increasing, so it commutes with the max) on pool_size times fewer of them, where
        # the tanh was half of the forward pass (200 bands, pool 5: 1.8x faster forward)
        self.features = nn.Sequential(
            nn.Conv1d(1, num_kernels, kernel_size),
            nn.MaxPool1d(pool_size),
            nn.Tanh(),
        )
        flat = num_kernels * (conv_len // pool_size)
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(flat, hidden_units),
            nn.Tanh(),
            nn.Linear(hidden_units, self.num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K)`` from the centre spectra of ``x`` ``(B, C, P, P)``."""
        self._check_input(x)
        centre = x[:, :, x.shape[2] // 2, x.shape[3] // 2]  # (B, C)
        return self.classifier(self.features(centre.unsqueeze(1)))
