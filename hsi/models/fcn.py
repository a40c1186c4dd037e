"""Small fully-convolutional network that labels every pixel of a tile in one pass."""

from __future__ import annotations

import torch
from torch import nn

from hsi.models.base import PatchClassifier, check_dropout, check_size
from hsi.models.registry import register_model

__all__ = ["FCN"]


@register_model("fcn")
class FCN(PatchClassifier):
    """Fully-convolutional pixel classifier: 1x1 spectral reduction, 3x3 blocks, 1x1 to classes.

    After Long, J., Shelhamer, E. and Darrell, T. (2015), "Fully convolutional networks for
    semantic segmentation", IEEE CVPR, 3431-3440.

    Layers::

        Conv2d 1x1 (C -> width) -> BN -> ReLU          spectral reduction
        num_blocks x [Conv2d 3x3 'same' -> BN -> ReLU]  spatial context
        Dropout2d -> Conv2d 1x1 (width -> K)            per-pixel logits

    ``forward_dense`` maps a tile ``(B, C, h, w)`` of any size to ``(B, K, h, w)``. Each
    output pixel sees a ``(2r + 1) x (2r + 1)`` window with ``r = num_blocks`` (the
    receptive field); pixels closer than ``r`` to the tile edge see zero padding, so tiled
    inference should overlap tiles by at least ``r`` (``receptive_radius``).

    When to use it: for fast whole-scene (dense) inference, or as a lighter ``ssnet``. It
    reads the centre pixel like ``ssnet`` but mixes its spectrum with the neighbours' in
    every block, where ``ssnet`` also hands the centre's own spectral features to the head.

    ``forward`` on patches ``(B, C, P, P)`` returns the centre pixel of ``forward_dense``;
    it only computes the centre ``(2r + 1)`` window when ``P`` is larger, which gives the
    same logits since the centre pixel cannot see anything further out (exactly so in
    eval mode; in train mode batch normalisation uses the statistics of what it computes).

    Parameters
    ----------
    num_bands, num_classes : int
        Input bands ``C`` (>= 1) and output classes ``K``.
    patch_size : int
        Odd patch side ``P`` (>= 1) used for training; dense inference takes any tile size.
    width : int
        Channels of the reduction and of every 3x3 block.
    num_blocks : int
        Number of 3x3 blocks (>= 0); also the receptive-field radius.
    dropout : float
        Channel dropout before the classifier.

    Attributes
    ----------
    receptive_radius : int
        ``r``: output pixel ``(i, j)`` depends only on input pixels within ``r`` of it.

    Notes
    -----
    Shapes: ``forward``: ``(B, C, P, P)`` -> ``(B, K)``;
    ``forward_dense``: ``(B, C, h, w)`` -> ``(B, K, h, w)``.
    """

    dense = True
    ODD_PATCH_SIZE = True

    def __init__(
        self,
        num_bands: int,
        num_classes: int,
        patch_size: int,
        *,
        width: int = 64,
        num_blocks: int = 3,
        dropout: float = 0.0,
    ) -> None:
        super().__init__(num_bands, num_classes, patch_size)
        name = type(self).__name__
        width = check_size(name, "width", width, 1)
        self.receptive_radius = check_size(name, "num_blocks", num_blocks, 0)
        check_dropout(name, "dropout", dropout)

        layers: list[nn.Module] = [
            nn.Conv2d(self.num_bands, width, 1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
        ]
        for _ in range(self.receptive_radius):
            layers += [
                nn.Conv2d(width, width, 3, padding="same", bias=False),
                nn.BatchNorm2d(width),
                nn.ReLU(inplace=True),
            ]
        layers += [nn.Dropout2d(dropout), nn.Conv2d(width, self.num_classes, 1)]
        self.body = nn.Sequential(*layers)

    def forward_dense(self, x: torch.Tensor) -> torch.Tensor:
        """Per-pixel logits ``(B, K, h, w)`` for a tile ``x`` of shape ``(B, C, h, w)``."""
        self._check_input(x)
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K)`` of the centre pixel of patches ``x`` ``(B, C, P, P)``."""
        self._check_input(x)
        h, w = x.shape[2], x.shape[3]
        r = self.receptive_radius
        ci, cj = h // 2, w // 2
        # Rows/cols further than r from the centre cannot change its output: crop them.
        top, left = max(ci - r, 0), max(cj - r, 0)
        x = x[:, :, top : ci + r + 1, left : cj + r + 1]
        return self.body(x)[:, :, ci - top, cj - left]
