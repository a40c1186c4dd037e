"""SSFTT: a 3-D and a 2-D convolution, a Gaussian-weighted tokenizer, and one transformer layer."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hsi.errors import ModelSizeError
from hsi.models._transformer import EncoderLayer
from hsi.models.base import PatchClassifier, check_dropout, check_size
from hsi.models.registry import register_model

__all__ = ["SSFTT"]


@register_model("ssftt")
class SSFTT(PatchClassifier):
    """Spectral-spatial feature tokenization transformer.

    Sun, L., Zhao, G., Zheng, Y. and Wu, Z. (2022), "Spectral-spatial feature tokenization
    transformer for hyperspectral image classification", IEEE Transactions on Geoscience and
    Remote Sensing, 60, 5522214. Structure as in the authors' code (zgr6010/HSI_SSFTT,
    ``cls_SSFTT_IP/SSFTTnet.py``); this is an implementation of its own.

    Layers::

        conv3d  8 @ 3x3x3 (bands x rows x cols, unpadded) -> BatchNorm -> ReLU   (C-2, P-2)
        reshape the 8 x (C-2) spectral maps into 8 (C-2) 2-D channels
        conv2d 64 @ 3x3 (unpadded) -> BatchNorm -> ReLU                          (P-4) x (P-4) pixels
        tokenizer: num_tokens tokens, each a softmax-weighted sum over the pixels of their
                   features projected to dim (weights W_a (num_tokens x 64), W_v (64 x dim))
        [class token] + tokens, + learned position embedding, dropout
        depth x transformer layer (heads, mlp_dim; pre-norm, residual)
        linear(dim -> K) on the class token

    The authors' attention scales the dot products by ``dim ** -0.5`` (not the head width's),
    with a biased query / key / value projection; both are kept. The tokenizer pools over all
    pixels, so the network takes any patch of at least 5 x 5.

    Trainable parameters at the paper's Indian Pines settings (PCA 30, 13 x 13, 16 classes):
    153,224, as the authors' code and released weights.

    When to use it: as the published transformer reference, with PCA (the 2-D convolution
    has ``8 (C - 2)`` input channels: ``RECOMMENDED_PCA = 30``, as in the paper) on 13 x 13
    patches (``RECOMMENDED_PATCH_SIZE``).

    Parameters
    ----------
    num_bands, num_classes : int
        Input bands ``C`` (>= 3) and output classes ``K``.
    patch_size : int
        Patch side ``P`` (>= 5); any patch of at least 5 x 5 is read.
    num_tokens : int
        Tokens the tokenizer forms (4 in the paper).
    dim : int
        Token width (64).
    depth : int
        Transformer layers (1).
    heads : int
        Attention heads; ``dim`` must divide by it (8).
    mlp_dim : int
        Hidden units of each layer's MLP (8).
    dropout : float
        Dropout in the transformer layers (0.1).
    emb_dropout : float
        Dropout on the tokens before the transformer (0.1).

    Notes
    -----
    Shapes: ``(B, C, P, P)`` float32 -> logits ``(B, K)``. The forward pass reads the
    convolutions' weights in a memory order of its own and forms the tokens as pooled
    features times ``W_v`` (:meth:`features`, :meth:`tokens`): the same function as the
    layers in the authors' order, to float rounding, on the same ``state_dict``.
    """

    MIN_NUM_BANDS = 3
    MIN_PATCH_SIZE = 5
    RECOMMENDED_PCA = 30
    RECOMMENDED_PATCH_SIZE = 13

    @classmethod
    def _bands_reason(cls) -> str:
        return "the unpadded spectral kernel 3 removes 2 bands"

    @classmethod
    def _patch_reason(cls) -> str:
        return "two unpadded 3x3 convolutions remove 4 pixels"

    def __init__(
        self,
        num_bands: int,
        num_classes: int,
        patch_size: int,
        *,
        num_tokens: int = 4,
        dim: int = 64,
        depth: int = 1,
        heads: int = 8,
        mlp_dim: int = 8,
        dropout: float = 0.1,
        emb_dropout: float = 0.1,
    ) -> None:
        super().__init__(num_bands, num_classes, patch_size)
        name = type(self).__name__
        num_tokens = check_size(name, "num_tokens", num_tokens, 1)
        dim = check_size(name, "dim", dim, 1)
        depth = check_size(name, "depth", depth, 1)
        heads = check_size(name, "heads", heads, 1)
        mlp_dim = check_size(name, "mlp_dim", mlp_dim, 1)
        if dim % heads:
            raise ModelSizeError(f"{name}: dim must be a multiple of heads ({heads}); got {dim}")
        check_dropout(name, "dropout", dropout)
        check_dropout(name, "emb_dropout", emb_dropout)

        self.conv3d = nn.Sequential(nn.Conv3d(1, 8, 3), nn.BatchNorm3d(8), nn.ReLU(inplace=True))
        self.conv2d = nn.Sequential(nn.Conv2d(8 * (self.num_bands - 2), 64, 3), nn.BatchNorm2d(64),
                                    nn.ReLU(inplace=True))
        # the tokenizer's weights keep the authors' (1, rows, cols) shapes, so their initial scale is the same
        self.token_wa = nn.Parameter(nn.init.xavier_normal_(torch.empty(1, num_tokens, 64)))
        self.token_wv = nn.Parameter(nn.init.xavier_normal_(torch.empty(1, 64, dim)))
        self.pos_embedding = nn.Parameter(nn.init.normal_(torch.empty(1, num_tokens + 1, dim), std=0.02))
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.emb_dropout = nn.Dropout(emb_dropout)
        self.layers = nn.Sequential(*(EncoderLayer(dim, heads, dim // heads, mlp_dim, qkv_bias=True,
                                                   scale=dim ** -0.5, dropout=dropout) for _ in range(depth)))
        self.classifier = nn.Linear(dim, self.num_classes)
        nn.init.xavier_uniform_(self.classifier.weight)
        nn.init.normal_(self.classifier.bias, std=1e-6)

    def tokens(self, features: torch.Tensor) -> torch.Tensor:
        """``num_tokens`` tokens ``(B, L, dim)`` from pixel features ``(B, N, 64)``: softmax-weighted sums over the pixels.

        A token is ``sum_n weight_n (feature_n W_v)``; it is computed as ``(sum_n weight_n
        feature_n) W_v``, the same product taken in the other order, which projects the L
        pooled features instead of all N pixels (about a tenth of the work at 13 x 13).
        """
        weights = torch.softmax(features @ self.token_wa[0].T, dim=1)  # (B, N, L): each token's weights over pixels
        return (weights.transpose(1, 2) @ features) @ self.token_wv[0]

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Pixel features ``(B, (P-4)^2, 64)`` of patches ``(B, C, P, P)``: the two convolutions.

        The layers' own sums, laid out so that no activation is copied between memory layouts
        (the weights keep the authors' shapes; only the order in which they are read differs).
        The 3-D convolution reads the batch as ``(B, 1, P, P, C)`` volumes (a view of a
        channels-last batch) with its kernel permuted alike, and writes its 8 maps last in
        memory; the ``(C-2) x 8`` values of a pixel are then that pixel's 2-D channels,
        band-major, which the 2-D convolution reads channels-last with its weight's input
        channels put in the same order. In the authors' order (``(B, 8 (C-2), P-2, P-2)``,
        map-major, contiguous) the channels-last 2-D convolution copied the maps to its layout
        and their gradient came back in it, which made the 3-D block's batch norm and ReLU
        backward several times slower: a training step took 1.2x the authors' code's.
        """
        conv3d, conv2d = self.conv3d[0], self.conv2d[0]
        kernel = conv3d.weight.permute(0, 1, 3, 4, 2).contiguous(memory_format=torch.channels_last_3d)
        maps = F.conv3d(x.permute(0, 2, 3, 1).unsqueeze(1), kernel, conv3d.bias)  # (B, 8, P-2, P-2, C-2)
        maps = self.conv3d[2](self.conv3d[1](maps))  # batch norm, ReLU
        pixels = maps.permute(0, 4, 1, 2, 3).flatten(1, 2)  # (B, (C-2) 8, P-2, P-2): band-major channels
        # (64, (C-2) 8, 3, 3), channels-last, its input channels band-major as the pixels' (one small copy)
        weight = conv2d.weight.unflatten(1, (8, -1)).permute(0, 3, 4, 2, 1).flatten(3).permute(0, 3, 1, 2)
        features = self.conv2d[2](self.conv2d[1](F.conv2d(pixels, weight, conv2d.bias)))  # (B, 64, P-4, P-4)
        return features.flatten(2).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K)`` for patches ``x`` of shape ``(B, C, P, P)``."""
        self._check_input(x)
        tokens = self.tokens(self.features(x))
        tokens = torch.cat([self.cls_token.expand(len(x), -1, -1), tokens], dim=1) + self.pos_embedding
        return self.classifier(self.layers(self.emb_dropout(tokens))[:, 0])
