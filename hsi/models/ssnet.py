"""Spectral-first, centre-aware network: per-pixel spectral features plus a spatial context branch."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hsi.models.base import Encoder, PatchClassifier, PixelPath, check_dropout, check_size
from hsi.models.registry import register_model

__all__ = ["SSNet"]


@register_model("ssnet")
class SSNet(PatchClassifier):
    """Spectral stem, spatial context, and a head that always sees the centre pixel's own spectrum.

    The spectral-then-spatial order follows Zhong, Z. et al. (2018), "Spectral-spatial
    residual network for hyperspectral image classification: a 3-D deep learning
    framework", IEEE Transactions on Geoscience and Remote Sensing, 56(2), 847-858; the
    fully convolutional read-out follows ``fcn`` (Long et al., 2015). The skip of the
    per-pixel features to the head is this package's.

    Layers (every convolution followed by BatchNorm and ReLU, except the last)::

        stem     spectral_layers x Conv2d 1x1 (C -> width -> width ...)   per-pixel spectra
        context  num_blocks x Conv2d 3x3 'same' (width -> width)           neighbourhood
        head     concat(stem, context) -> Dropout2d -> Conv2d 1x1 (2 width -> K)

    (the context is dropped for a whole sample with probability ``context_dropout`` in
    training).

    The stem works on each pixel alone, like a per-pixel classifier; the context branch
    adds what the neighbours say; the head reads both **at the centre pixel**, so the
    centre's own spectrum is never averaged away by its neighbours (which is what global
    average pooling does in ``cnn2d``). Every layer is convolutional, so
    ``forward_dense`` labels each pixel of a tile in one pass, like ``fcn``.

    ``forward`` on patches ``(B, C, P, P)`` returns the centre pixel of ``forward_dense``
    from the centre ``(2r + 1)`` window only (``r = num_blocks``, the receptive radius),
    with unpadded 3x3 convolutions that shrink it to the centre pixel: the centre cannot
    see further, so the logits are those of ``forward_dense`` (exactly so in eval mode;
    in train mode batch normalisation uses the statistics of what it computes), at a
    quarter of the cost for ``r = 3``.

    When to use it: the default. It takes raw bands (no PCA needed: the 1x1 stem is the
    spectral reduction, learnt on the training pixels); a whole 20-epoch run on the
    145 x 145 x 200 synthetic scene took 31 CPU-seconds with one torch thread (many more
    with two: its convolutions are too small to split). Measured as ``hsi train`` runs it
    (20 epochs, its stem started from a full-batch per-pixel fit, :meth:`pixel_path` and
    :mod:`hsi.training.pretrain`, its classifier layer refit after training) in 5-fold
    spatial cross-validation (accuracy benchmark, docs/benchmarks.md): Samson 99.6 ± 0.2 % OA against
    99.4 ± 0.5 % for a cross-validated per-pixel RBF-SVM (context does not help there);
    synthetic scene 95.0 ± 1.6 % against 69.1 ± 2.2 % (context does).

    Parameters
    ----------
    num_bands : int
        Input bands ``C`` (>= 1); raw bands or a PCA.
    num_classes : int
        Output classes ``K``.
    patch_size : int
        Odd patch side ``P`` (>= 1) used for training; dense inference takes any tile size.
    width : int
        Channels of every stem and context layer.
    spectral_layers : int
        Number of 1x1 stem layers (>= 1).
    num_blocks : int
        Number of 3x3 context blocks (>= 0); also the receptive radius ``r``.
    dropout : float
        Channel dropout before the classifier.
    context_dropout : float
        In training, the probability that a sample's whole context branch is zeroed
        (the rest scaled by ``1 / (1 - p)``), so that the spectral path learns to classify
        alone and the context only corrects it.

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
    #: the window it reads with the default ``num_blocks=3`` (``2 r + 1``): a larger patch gives the same
    #: logits but a wider split buffer, so fewer training pixels (5-fold spatial CV, benchmarks/README.md: synthetic
    #: 93.2 -> 94.9 % OA, Samson 98.4 -> 98.7 %); give ``--patch-size 2r+1`` with a larger ``num_blocks``
    RECOMMENDED_PATCH_SIZE = 7

    def __init__(
        self,
        num_bands: int,
        num_classes: int,
        patch_size: int,
        *,
        width: int = 64,
        spectral_layers: int = 2,
        num_blocks: int = 3,
        dropout: float = 0.0,
        context_dropout: float = 0.5,
    ) -> None:
        super().__init__(num_bands, num_classes, patch_size)
        name = type(self).__name__
        width = check_size(name, "width", width, 1)
        spectral_layers = check_size(name, "spectral_layers", spectral_layers, 1)
        self.receptive_radius = check_size(name, "num_blocks", num_blocks, 0)
        check_dropout(name, "dropout", dropout)
        check_dropout(name, "context_dropout", context_dropout)

        stem: list[nn.Module] = []
        in_channels = self.num_bands
        for _ in range(spectral_layers):
            stem += _conv_bn_relu(in_channels, width, 1)
            in_channels = width
        self.stem = nn.Sequential(*stem)
        self.context = nn.Sequential(*(_ContextBlock(width) for _ in range(self.receptive_radius)))
        self.context_dropout = context_dropout
        self.head = nn.Sequential(nn.Dropout2d(dropout), nn.Conv2d(2 * width, self.num_classes, 1))

    def pixel_path(self) -> PixelPath:
        """The stem's (convolution, batch norm) pairs and the head's first ``width`` inputs, which read the stem."""
        convs = [m for m in self.stem if isinstance(m, nn.Conv2d)]
        norms = [m for m in self.stem if isinstance(m, nn.BatchNorm2d)]
        classifier = self.head[-1]
        return PixelPath(list(zip(convs, norms)), classifier, slice(0, convs[-1].out_channels))

    def encoder(self) -> Encoder:
        """The stem and the context: what the head reads at the centre, ``2 width`` features."""
        return Encoder({"stem": self.stem, "context": self.context}, self._centre_features,
                       self.head[-1].in_channels)

    def _centre_features(self, x: torch.Tensor) -> torch.Tensor:
        """The head's input ``(B, 2 width)`` at the centre of patches ``x`` ``(B, C, P, P)``."""
        spectral, context = self._centre_parts(x)
        return torch.cat([spectral, context], dim=1)[:, :, 0, 0]

    def _dense_parts(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Stem and context outputs ``(B, width, h, w)`` of every pixel of a tile (padded convolutions)."""
        spectral = self.stem(x)
        context = spectral
        for block in self.context:
            context = block(context, padding=1)
        return spectral, context

    def _centre_parts(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Stem and context outputs ``(B, width, 1, 1)`` at the centre of patches ``x``.

        Only the centre ``(2r + 1)`` window can reach the centre's output; unpadded 3x3
        convolutions shrink it to the centre pixel (eval: the values of :meth:`_dense_parts` there).
        A patch smaller than the receptive field is zero-padded inside instead.
        """
        r = self.receptive_radius
        ci, cj = x.shape[2] // 2, x.shape[3] // 2
        if ci < r or cj < r:
            spectral, context = self._dense_parts(x)
            return spectral[:, :, ci : ci + 1, cj : cj + 1], context[:, :, ci : ci + 1, cj : cj + 1]
        x = x[:, :, ci - r : ci + r + 1, cj - r : cj + r + 1]
        spectral = self.stem(x)
        context = spectral
        for block in self.context:
            context = block(context, padding=0)
        return spectral[:, :, r : r + 1, r : r + 1], context

    def _logits(self, spectral: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        if self.training and self.context_dropout > 0:
            # Whole-sample dropout of the context: the spectral path must classify alone.
            keep = torch.rand(context.shape[0], 1, 1, 1, device=context.device) >= self.context_dropout
            context = context * keep / (1.0 - self.context_dropout)
        return self.head(torch.cat([spectral, context], dim=1))

    def forward_dense(self, x: torch.Tensor) -> torch.Tensor:
        """Per-pixel logits ``(B, K, h, w)`` for a tile ``x`` of shape ``(B, C, h, w)``."""
        self._check_input(x)
        return self._logits(*self._dense_parts(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K)`` of the centre pixel of patches ``x`` ``(B, C, P, P)``."""
        self._check_input(x)
        return self._logits(*self._centre_parts(x))[:, :, 0, 0]


class _ContextBlock(nn.Module):
    """3x3 convolution -> BatchNorm -> ReLU, padded (dense tiles) or not (patch centres)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(width, width, 3, bias=False)
        self.bn = nn.BatchNorm2d(width)

    def forward(self, x: torch.Tensor, padding: int = 1) -> torch.Tensor:
        return F.relu(self.bn(F.conv2d(x, self.conv.weight, padding=padding)))


def _conv_bn_relu(in_channels: int, out_channels: int, kernel: int) -> list[nn.Module]:
    return [
        nn.Conv2d(in_channels, out_channels, kernel, padding=kernel // 2, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(inplace=True),
    ]
