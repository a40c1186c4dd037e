"""SpectralFormer: a transformer over the bands, with group-wise spectral embedding and cross-layer fusion."""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from hsi.errors import ModelSizeError, OptionError
from hsi.models._transformer import EncoderLayer
from hsi.models.base import PatchClassifier, check_dropout, check_size
from hsi.models.registry import register_model

__all__ = ["SpectralFormer", "SpectralFormerPixel"]


@register_model("spectralformer")
class SpectralFormer(PatchClassifier):
    """SpectralFormer, patch-wise: one token per band, made of that band's and its neighbours' patch values.

    Hong, D., Han, Z., Yao, J., Gao, L., Zhang, B., Plaza, A. and Chanussot, J. (2022),
    "SpectralFormer: Rethinking hyperspectral image classification with transformers", IEEE
    Transactions on Geoscience and Remote Sensing, 60, 5518615. Structure as in the authors'
    code (danfenghong/IEEE_TGRS_SpectralFormer, ``vit_pytorch.py`` and ``demo.py``); this is an
    implementation of its own.

    Layers::

        group-wise spectral embedding: token b = the P x P values of bands
            b-1, b-2, ..., b-n, b, b+1, ..., b+n (n = band_patches // 2; indices wrap around
            the band axis, in this order, as the authors' code arranges them), linear -> dim
        [class token] + C band tokens, + learned position embedding, dropout
        depth x transformer layer (heads x head_dim, mlp_dim; pre-norm, residual); with
            fusion='caf', before layer l >= 3 the tokens are fused with the input of layer
            l - 2 by a learned (C + 1)-channel 1 x 2 convolution (cross-layer adaptive fusion)
        LayerNorm -> linear(dim -> K) on the class token

    The position embedding and the fusion convolutions have one row per band, so a network
    is built for one band count and takes raw bands (the paper uses no PCA). Its cost grows
    with the square of the band count (attention between every pair of bands): on 200 bands a
    forward pass is about 60 M multiply-adds per sample, against 0.4 M for ssnet's.

    Trainable parameters at the paper's Indian Pines settings (200 bands, 7 x 7, band_patches
    3, CAF, 16 classes): 355,577, as the authors' code and released weights.

    When to use it: as the published transformer reference on raw bands; ``spectralformer``
    reads 7 x 7 patches (``RECOMMENDED_PATCH_SIZE``), ``spectralformer_pixel`` the centre pixel.

    Parameters
    ----------
    num_bands, num_classes : int
        Input bands ``C`` and output classes ``K``.
    patch_size : int
        Patch side ``P``. ``forward`` requires exactly this size.
    band_patches : int
        Bands per token, odd: the band and ``band_patches // 2`` neighbours on each side (3).
    dim : int
        Token width (64).
    depth : int
        Transformer layers (5).
    heads, head_dim : int
        Attention heads and the width of each (4 and 16).
    mlp_dim : int
        Hidden units of each layer's MLP (8).
    fusion : {'caf', 'vit'}
        Cross-layer adaptive fusion ('caf', the paper's) or plain stacked layers ('vit'), the authors' two modes.
    dropout : float
        Dropout in the transformer layers (0.1).
    emb_dropout : float
        Dropout on the tokens before the transformer (0.1).

    Notes
    -----
    Shapes: ``(B, C, P, P)`` float32 -> logits ``(B, K)``.
    """

    fixed_patch_size = True
    RECOMMENDED_PATCH_SIZE = 7

    def __init__(
        self,
        num_bands: int,
        num_classes: int,
        patch_size: int,
        *,
        band_patches: int = 3,
        dim: int = 64,
        depth: int = 5,
        heads: int = 4,
        head_dim: int = 16,
        mlp_dim: int = 8,
        fusion: Literal["caf", "vit"] = "caf",
        dropout: float = 0.1,
        emb_dropout: float = 0.1,
    ) -> None:
        super().__init__(num_bands, num_classes, patch_size)
        name = type(self).__name__
        band_patches = check_size(name, "band_patches", band_patches, 1)
        if band_patches % 2 == 0:
            raise ModelSizeError(f"{name}: band_patches must be odd (a band and as many neighbours on each side); "
                                 f"got {band_patches}")
        dim, depth = check_size(name, "dim", dim, 1), check_size(name, "depth", depth, 1)
        heads, head_dim = check_size(name, "heads", heads, 1), check_size(name, "head_dim", head_dim, 1)
        mlp_dim = check_size(name, "mlp_dim", mlp_dim, 1)
        if fusion not in ("caf", "vit"):
            raise OptionError("fusion", fusion, f"'caf' or 'vit' ({name}: cross-layer adaptive fusion or plain layers)")
        check_dropout(name, "dropout", dropout)
        check_dropout(name, "emb_dropout", emb_dropout)

        reach = band_patches // 2
        # the authors' order of a token's bands: b-1 ... b-n, then b, b+1 ... b+n
        offsets = torch.tensor([-k for k in range(1, reach + 1)] + list(range(reach + 1)))
        self.register_buffer("band_groups", (torch.arange(self.num_bands)[:, None] + offsets) % self.num_bands,
                             persistent=False)
        side = self.window_side()
        self.embed = nn.Linear(band_patches * side * side, dim)
        self.pos_embedding = nn.Parameter(torch.randn(1, self.num_bands + 1, dim))
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.emb_dropout = nn.Dropout(emb_dropout)
        self.layers = nn.ModuleList(EncoderLayer(dim, heads, head_dim, mlp_dim, qkv_bias=False,
                                                 scale=head_dim ** -0.5, dropout=dropout) for _ in range(depth))
        tokens = self.num_bands + 1
        fused = max(depth - 2, 0) if fusion == "caf" else 0
        self.fuse = nn.ModuleList(nn.Conv2d(tokens, tokens, (1, 2)) for _ in range(fused))
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, self.num_classes))

    def window_side(self) -> int:
        """Side of the window each token reads: the whole patch."""
        return self.patch_size

    def band_tokens(self, x: torch.Tensor) -> torch.Tensor:
        """Group-wise spectral embedding: ``(B, C, S, S)`` windows -> ``(B, C, dim)`` band tokens."""
        values = x.flatten(2)[:, self.band_groups]  # (B, C, band_patches, S * S)
        return self.embed(values.flatten(2))

    def encode(self, tokens: torch.Tensor) -> torch.Tensor:
        """The transformer layers, each from the third on fused with the input of the layer two before it."""
        inputs: list[torch.Tensor] = []
        for index, layer in enumerate(self.layers):
            inputs.append(tokens)
            if index >= 2 and self.fuse:
                pair = torch.stack([tokens, inputs[index - 2]], dim=3)  # (B, C + 1, dim, 2)
                tokens = self.fuse[index - 2](pair).squeeze(3)
            tokens = layer(tokens)
        return tokens

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K)`` for patches ``x`` of shape ``(B, C, P, P)``."""
        self._check_input(x)
        side = self.window_side()
        if side != x.shape[2]:  # the pixel-wise variant reads the centre window
            top = x.shape[2] // 2 - side // 2
            x = x[:, :, top:top + side, top:top + side]
        tokens = torch.cat([self.cls_token.expand(len(x), -1, -1), self.band_tokens(x)], dim=1)
        tokens = self.emb_dropout(tokens + self.pos_embedding)
        return self.head(self.encode(tokens)[:, 0])


@register_model("spectralformer_pixel")
class SpectralFormerPixel(SpectralFormer):
    """SpectralFormer, pixel-wise: each band token holds the centre pixel's value of ``band_patches`` bands.

    The paper's pixel-wise variant (its code with ``patches=1``): the same network as
    :class:`SpectralFormer` with 1 x 1 windows. It reads the centre pixel of any odd patch
    (``RECOMMENDED_PATCH_SIZE = 1``). Trainable parameters at the paper's Indian Pines
    settings (200 bands, band_patches 3, CAF, 16 classes): 346,361, as the authors' code and
    released weights. Parameters as :class:`SpectralFormer`.
    """

    fixed_patch_size = False
    ODD_PATCH_SIZE = True
    RECOMMENDED_PATCH_SIZE = 1

    def window_side(self) -> int:
        """Side of the window each token reads: the centre pixel."""
        return 1
