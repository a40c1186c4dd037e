"""HybridSN: three 3-D convolutions, then a 2-D convolution, then a dense head."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hsi.errors import ModelSizeError
from hsi.models.base import PatchClassifier, WindowMap, check_dropout, check_size, widest_spectral_activation
from hsi.models.registry import register_model

__all__ = ["HybridSN"]


@register_model("hybridsn")
class HybridSN(PatchClassifier):
    """HybridSN: 3-D convolutions for spectral-spatial features, a 2-D one for spatial ones.

    Roy, S. K. et al. (2020), "HybridSN: Exploring 3-D-2-D CNN feature hierarchy for
    hyperspectral image classification", IEEE Geoscience and Remote Sensing Letters,
    17(2), 277-281 (arXiv 2019).

    Layers (kernels as rows x cols x bands, all unpadded, each followed by ReLU)::

        conv3d  8 @ 3x3x7    (P, C)     -> (P-2, C-6)
        conv3d 16 @ 3x3x5               -> (P-4, C-10)
        conv3d 32 @ 3x3x3               -> (P-6, C-12)
        reshape the 32 x (C-12) spectral feature maps into 32*(C-12) 2-D channels
        conv2d 64 @ 3x3                 -> (P-8)
        flatten -> dense 256 -> dropout 0.4 -> dense 128 -> dropout 0.4 -> linear K

    Minimum sizes: ``num_bands >= 13`` (the spectral kernels 7 + 5 + 3 remove 12 bands) and
    ``patch_size >= 9`` (four unpadded 3x3 convolutions remove 8 pixels). The paper feeds
    PCA-reduced cubes (30 components for Indian Pines, 15 for the others) with 25x25 patches
    (19x19 for Pavia). It works on raw cubes too, but the 2-D convolution then has
    ``32 * (C - 12)`` input channels. At ``P = 25`` and ``C = 200`` it holds 3.5 M weights
    and the 3-D feature maps take ~17 MB per sample (float32, forward only), against
    0.33 M and ~2 MB at ``C = 30``: reduce the bands with PCA first
    (``RECOMMENDED_PCA = 30``: runs apply it to scenes with more bands unless told
    otherwise; on 198 raw bands a fit took about 20 minutes on 2 CPU cores).

    When to use it: as the published 3-D/2-D reference, with PCA. Its flatten layer
    weighs every position of the window separately, so it needs many training pixels.

    Parameters
    ----------
    num_bands, num_classes : int
        Input bands ``C`` (>= 13) and output classes ``K``.
    patch_size : int
        Patch side ``P`` (>= 9). ``forward`` requires exactly this size.
    conv2d_channels : int
        Filters of the 2-D convolution (64 in the paper).
    dense_units : tuple of two ints
        Units of the two hidden dense layers ((256, 128) in the paper).
    dropout : float
        Dropout after each hidden dense layer (0.4 in the paper).

    Notes
    -----
    Shapes: ``(B, C, P, P)`` float32 -> logits ``(B, K)``.
    """

    MIN_NUM_BANDS = 13
    MIN_PATCH_SIZE = 9
    fixed_patch_size = True
    RECOMMENDED_PCA = 30

    @classmethod
    def _bands_reason(cls) -> str:
        return "the unpadded spectral kernels 7, 5 and 3 remove 12 bands"

    @classmethod
    def _patch_reason(cls) -> str:
        return "four unpadded 3x3 convolutions remove 8 pixels"

    def __init__(
        self,
        num_bands: int,
        num_classes: int,
        patch_size: int,
        *,
        conv2d_channels: int = 64,
        dense_units: tuple[int, int] = (256, 128),
        dropout: float = 0.4,
    ) -> None:
        super().__init__(num_bands, num_classes, patch_size)
        name = type(self).__name__
        conv2d_channels = check_size(name, "conv2d_channels", conv2d_channels, 1)
        if len(dense_units) != 2:
            raise ModelSizeError(
                f"{name}: dense_units must hold 2 layer widths; got {dense_units!r}"
            )
        d1 = check_size(name, "dense_units[0]", dense_units[0], 1)
        d2 = check_size(name, "dense_units[1]", dense_units[1], 1)
        check_dropout(name, "dropout", dropout)

        # Conv3d kernels are (bands, rows, cols) on a (B, 1, C, P, P) volume.
        self.conv3d = nn.Sequential(
            nn.Conv3d(1, 8, (7, 3, 3)),
            nn.ReLU(inplace=True),
            nn.Conv3d(8, 16, (5, 3, 3)),
            nn.ReLU(inplace=True),
            nn.Conv3d(16, 32, (3, 3, 3)),
            nn.ReLU(inplace=True),
        )
        self.conv2d_in = 32 * (self.num_bands - 12)
        self.conv2d = nn.Sequential(
            nn.Conv2d(self.conv2d_in, conv2d_channels, 3),
            nn.ReLU(inplace=True),
        )
        side = self.patch_size - 8
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(conv2d_channels * side * side, d1),
            nn.ReLU(inplace=True),
            nn.Dropout(dropout),
            nn.Linear(d1, d2),
            nn.ReLU(inplace=True),
            nn.Dropout(dropout),
            nn.Linear(d2, self.num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K)`` for patches ``x`` of shape ``(B, C, P, P)``."""
        self._check_input(x)
        features = self.conv3d(x.unsqueeze(1))  # (B, 32, C-12, P-6, P-6)
        features = features.flatten(1, 2)  # (B, 32*(C-12), P-6, P-6)
        return self.classifier(self.conv2d(features))

    def window_map(self) -> WindowMap | None:
        """Every window of a block at once: the convolutions are unpadded, so a window's are a crop of the block's.

        The head's first dense layer reads the ``(P - 8) x (P - 8)`` features of a window: over
        the block it is a convolution of that size, and the layers after it 1 x 1 ones.
        """
        if self.training:
            return None
        widest = max(widest_spectral_activation(self.conv3d, self.num_bands), self.conv2d[0].out_channels,
                     *(layer.out_features for layer in self.classifier if isinstance(layer, nn.Linear)))
        return WindowMap(self._all_windows, widest)

    def _all_windows(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, K, H - P + 1, W - P + 1)`` logits of every window of the block ``x`` ``(B, C, H, W)``.

        The classifier's own layers, in order: each dense layer as a convolution (the first of
        the window's ``(P - 8) x (P - 8)`` features, the others 1 x 1), the rest (ReLU, dropout
        in eval mode) pixel by pixel.
        """
        out, side = self.conv2d(self.conv3d(x.unsqueeze(1)).flatten(1, 2)), self.patch_size - 8
        for layer in self.classifier:
            if isinstance(layer, nn.Linear):
                out = F.conv2d(out, layer.weight.view(layer.out_features, -1, side, side), layer.bias)
                side = 1  # the layers after the first read one pixel's values
            elif not isinstance(layer, nn.Flatten):
                out = layer(out)
        return out
