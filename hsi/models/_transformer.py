"""The pre-norm transformer encoder layer that the transformer baselines (SSFTT, SpectralFormer) share.

Both papers use the ViT layer: ``x + Attention(LayerNorm(x))`` then ``x + MLP(LayerNorm(x))``
with a GELU MLP. Their attention differs in three details, which are arguments here so that
each model keeps its authors' parameter count: the width of a head, whether the query / key /
value projection has a bias, and the scale of the dot products.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["EncoderLayer"]


class _Attention(nn.Module):
    """Multi-head self-attention over tokens ``(B, N, dim)``; ``heads * head_dim`` need not equal ``dim``."""

    def __init__(self, dim: int, heads: int, head_dim: int, qkv_bias: bool, scale: float, dropout: float) -> None:
        super().__init__()
        self.heads, self.head_dim, self.scale = heads, head_dim, scale
        self.qkv = nn.Linear(dim, 3 * heads * head_dim, bias=qkv_bias)
        self.out = nn.Linear(heads * head_dim, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        mixed = F.scaled_dot_product_attention(q, k, v, scale=self.scale)  # (B, heads, N, head_dim)
        return self.drop(self.out(mixed.transpose(1, 2).reshape(b, n, self.heads * self.head_dim)))


class EncoderLayer(nn.Module):
    """One pre-norm transformer layer: residual attention, then a residual GELU MLP of ``mlp_dim`` units.

    Parameters
    ----------
    dim : int
        Token width.
    heads, head_dim : int
        Number of attention heads and the width of each.
    mlp_dim : int
        Hidden units of the MLP.
    qkv_bias : bool
        Whether the query / key / value projection has a bias.
    scale : float
        Factor of the query-key dot products (``head_dim ** -0.5`` in the usual layer).
    dropout : float
        Dropout after the attention output and in the MLP.
    """

    def __init__(self, dim: int, heads: int, head_dim: int, mlp_dim: int, *, qkv_bias: bool, scale: float,
                 dropout: float) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = _Attention(dim, heads, head_dim, qkv_bias, scale, dropout)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_dim), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(mlp_dim, dim), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Tokens ``(B, N, dim)`` -> tokens ``(B, N, dim)``."""
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))
