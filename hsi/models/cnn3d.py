"""3-D CNN whose pooling is done by spectrally strided 3-D convolutions."""

from __future__ import annotations

import torch
from torch import nn

from hsi.errors import ModelSizeError
from hsi.models.base import (PatchClassifier, WindowMap, check_dropout, check_size, conv_out_size,
                              widest_spectral_activation)
from hsi.models.registry import register_model

__all__ = ["CNN3D"]


@register_model("cnn3d")
class CNN3D(PatchClassifier):
    """3-D CNN: spectral-spatial 3-D convolutions alternating with spectral-stride-2 convolutions.

    Ben Hamida, A. et al. (2018), "3-D deep learning approach for remote sensing image
    classification", IEEE Transactions on Geoscience and Remote Sensing, 56(8), 4420-4434.

    The patch is one channel of a volume ``(1, C, P, P)`` (bands x rows x cols). Layers,
    each followed by ReLU (kernels as bands x rows x cols)::

        conv  3x3x3, c1 filters            spectral: C -> C - 2  (unpadded)
        conv  3x1x1, c1, stride 2 (bands)  "pooling" along the spectrum
        conv  3x3x3, c2 filters            spectral padding 1
        conv  3x1x1, c2, stride 2 (bands)  "pooling"
        conv  3x1x1, c2                    spectral padding 1
        conv  2x1x1, c2, stride 2 (bands)  "pooling"
        dropout -> linear(flattened, K)

    The two spatial 3x3 convolutions are unpadded (``P -> P - 4``) when ``P >= 5``; for
    ``P = 3`` or ``4`` the first one is zero-padded so that any ``P >= 3`` works. The
    flattened size is computed from the sizes by formula, for any ``num_bands >= 3``.

    When to use it: as the published 3-D reference. Its cost grows with the band count:
    give it a PCA (``RECOMMENDED_PCA = 30``: runs apply it to scenes with more bands
    unless told otherwise). On a CPU it is several times slower than ``ssnet``, and
    not more accurate on the scenes measured.

    Parameters
    ----------
    num_bands, num_classes : int
        Input bands ``C`` (>= 3) and output classes ``K``.
    patch_size : int
        Patch side ``P`` (>= 3). ``forward`` requires exactly this size.
    conv_channels : tuple of two ints
        Filters ``(c1, c2)`` of the first and second stage ((20, 35) in the paper).
    dropout : float
        Dropout probability before the linear layer.

    Notes
    -----
    Shapes: ``(B, C, P, P)`` float32 -> logits ``(B, K)``.
    """

    MIN_NUM_BANDS = 3
    MIN_PATCH_SIZE = 3
    fixed_patch_size = True
    RECOMMENDED_PCA = 30

    @classmethod
    def _bands_reason(cls) -> str:
        return "the first 3x3x3 convolution is unpadded along the spectrum"

    @classmethod
    def _patch_reason(cls) -> str:
        return "two 3x3 spatial convolutions need at least a 3x3 patch"

    def __init__(
        self,
        num_bands: int,
        num_classes: int,
        patch_size: int,
        *,
        conv_channels: tuple[int, int] = (20, 35),
        dropout: float = 0.0,
    ) -> None:
        super().__init__(num_bands, num_classes, patch_size)
        name = type(self).__name__
        if len(conv_channels) != 2:
            raise ModelSizeError(
                f"{name}: conv_channels must hold 2 filter counts (c1, c2); got {conv_channels!r}"
            )
        c1 = check_size(name, "conv_channels[0]", conv_channels[0], 1)
        c2 = check_size(name, "conv_channels[1]", conv_channels[1], 1)
        check_dropout(name, "dropout", dropout)

        spatial_pad = 1 if self.patch_size < 5 else 0
        self.features = nn.Sequential(
            nn.Conv3d(1, c1, (3, 3, 3), padding=(0, spatial_pad, spatial_pad)),
            nn.ReLU(inplace=True),
            nn.Conv3d(c1, c1, (3, 1, 1), stride=(2, 1, 1), padding=(1, 0, 0)),
            nn.ReLU(inplace=True),
            nn.Conv3d(c1, c2, (3, 3, 3), padding=(1, 0, 0)),
            nn.ReLU(inplace=True),
            nn.Conv3d(c2, c2, (3, 1, 1), stride=(2, 1, 1), padding=(1, 0, 0)),
            nn.ReLU(inplace=True),
            nn.Conv3d(c2, c2, (3, 1, 1), padding=(1, 0, 0)),
            nn.ReLU(inplace=True),
            nn.Conv3d(c2, c2, (2, 1, 1), stride=(2, 1, 1), padding=(1, 0, 0)),
            nn.ReLU(inplace=True),
        )
        # Spectral length through the six layers, then the spatial side through the two 3x3s.
        bands = conv_out_size(self.num_bands, 3)
        bands = conv_out_size(bands, 3, stride=2, padding=1)
        bands = conv_out_size(bands, 3, padding=1)
        bands = conv_out_size(bands, 3, stride=2, padding=1)
        bands = conv_out_size(bands, 3, padding=1)
        bands = conv_out_size(bands, 2, stride=2, padding=1)
        side = conv_out_size(conv_out_size(self.patch_size, 3, padding=spatial_pad), 3)
        self.flat_features = c2 * bands * side * side
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Dropout(dropout),
            nn.Linear(self.flat_features, self.num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K)`` for patches ``x`` of shape ``(B, C, P, P)``."""
        self._check_input(x)
        return self.classifier(self.features(x.unsqueeze(1)))

    def window_map(self) -> WindowMap | None:
        """Every window of a block at once, where the 3x3 convolutions are unpadded (``patch_size >= 5``).

        A window's features are then a crop of the block's, and the dense head a 3-D
        convolution over the features' whole spectral length and the window's ``(P - 4) x (P - 4)``.
        None for smaller patches, whose first convolution pads each window on its own.
        """
        if self.training or self.features[0].padding[1] != 0:
            return None
        return WindowMap(self._all_windows, widest_spectral_activation(self.features, self.num_bands))

    def _all_windows(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, K, H - P + 1, W - P + 1)`` logits of every window of the block ``x`` ``(B, C, H, W)``.

        The classifier's own layers, in order: its dense layer as a 3-D convolution over the
        window's features, the rest (dropout, in eval mode) as they are.
        """
        out = self.features(x.unsqueeze(1))  # (B, c2, bands, H - 4, W - 4)
        side = self.patch_size - 4
        for layer in self.classifier:
            if isinstance(layer, nn.Linear):
                weight = layer.weight.view(layer.out_features, out.shape[1], out.shape[2], side, side)
                out = torch.nn.functional.conv3d(out, weight, layer.bias).squeeze(2)
            elif not isinstance(layer, nn.Flatten):
                out = layer(out)
        return out
