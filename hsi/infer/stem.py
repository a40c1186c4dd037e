"""The first convolution of all the windows of a block, computed once per pixel.

A patch-centre model whose first layer is a stride-1 convolution with zero padding that
keeps the size spends much of its forward pass there (cnn2d at P 11 on 200 bands: 28 of
its 81 MFLOP a window), though neighbouring windows hold the same pixels. Inside a window,
the layer's output at ``(i, j)`` sums the kernel taps that land inside the window, and
which taps those are depends only on how close ``(i, j)`` is to the window's edges. So
each tap set's sums are formed once for every pixel of the block (one matrix product of
the pixels with all taps, then shifted adds), the per-pixel operations after the layer
(batch norm, ReLU) are applied to those maps, and each window's activations are gathered
from them. The windows' outputs are the per-window forward pass's up to float rounding
(the same products, summed in another order).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from hsi.models.base import WindowStem

__all__ = ["SharedStem", "shared_stem"]

#: per-pixel operations the shared maps may go through (batch norm only in eval mode)
POINTWISE = (nn.BatchNorm2d, nn.ReLU, nn.LeakyReLU, nn.ELU, nn.GELU, nn.SiLU, nn.Identity)


def shared_stem(net: nn.Module, patch_size: int) -> SharedStem | None:
    """The :class:`SharedStem` of ``net`` for windows of side ``patch_size``; None when ``net`` offers none it allows.

    ``net`` offers one through ``window_stem()`` (:class:`hsi.models.WindowStem`); it is
    taken only for a plain convolution (stride 1, no dilation or groups, zero padding of
    half an odd kernel) followed by :data:`POINTWISE` operations, in eval mode.
    """
    parts = net.window_stem() if callable(getattr(net, "window_stem", None)) else None
    if not isinstance(parts, WindowStem) or not _plain_same_conv(parts.conv):
        return None
    ops = list(parts.pointwise.modules())[1:] if isinstance(parts.pointwise, nn.Sequential) else [parts.pointwise]
    if not all(isinstance(m, POINTWISE) for m in ops) or any(m.training for m in ops):
        return None
    return SharedStem(parts, int(patch_size))


def _plain_same_conv(conv: nn.Module) -> bool:
    """Whether ``conv`` is a size-keeping, zero-padded, stride-1 ``Conv2d`` with an odd square kernel."""
    if not isinstance(conv, nn.Conv2d):
        return False
    k = conv.kernel_size
    return (k[0] == k[1] and k[0] % 2 == 1 and conv.stride == (1, 1) and conv.dilation == (1, 1)
            and conv.groups == 1 and conv.padding_mode == "zeros" and conv.padding == (k[0] // 2, k[0] // 2))


@dataclass(frozen=True)
class _TapLayout:
    """Which taps each window position sums.

    ``ranges[m]`` is tap set ``m`` as ``(y0, y1, x0, x1)`` (kernel rows and columns), and
    ``index[i][j]`` the set summed at window position ``(i, j)``.
    """

    ranges: list[tuple[int, int, int, int]]
    index: list[list[int]]

    @classmethod
    def build(cls, kernel: int, patch_size: int) -> _TapLayout:
        half = kernel // 2
        # taps ky with 0 <= i + ky - half < P, per window row i (the same along columns)
        spans = [(max(0, half - i), min(kernel, patch_size - i + half)) for i in range(patch_size)]
        distinct = sorted(set(spans))
        axis = [distinct.index(s) for s in spans]
        ranges = [(*ry, *rx) for ry in distinct for rx in distinct]
        index = [[axis[i] * len(distinct) + axis[j] for j in range(patch_size)] for i in range(patch_size)]
        return cls(ranges, index)


class SharedStem:
    """A network's first layer shared by all the windows of a block (see the module's notes).

    Parameters
    ----------
    parts : hsi.models.WindowStem
        The network's first convolution, the per-pixel operations after it, and the rest.
    patch_size : int
        Window side ``P``.
    """

    def __init__(self, parts: WindowStem, patch_size: int) -> None:
        conv = parts.conv
        self.parts = parts
        self.patch_size = int(patch_size)
        self.kernel = int(conv.kernel_size[0])
        self.out_channels = int(conv.out_channels)
        # (C, k, k, O) flattened: one product of a pixel's bands with every tap of every output
        self.taps = conv.weight.detach().permute(1, 2, 3, 0).reshape(conv.in_channels, -1).contiguous()
        self.bias = None if conv.bias is None else conv.bias.detach()
        self.layout = _TapLayout.build(self.kernel, self.patch_size)

    @property
    def n_maps(self) -> int:
        """Tap sets, one map each (9 for a 3 x 3 kernel)."""
        return len(self.layout.ranges)

    def map_row_bytes(self, width: int) -> int:
        """Bytes of one block row of ``width`` pixels in :meth:`maps` (all tap sets, float32)."""
        return self.n_maps * width * self.out_channels * 4

    def maps(self, rows: torch.Tensor) -> torch.Tensor:
        """The activated first-layer maps of the block rows ``rows`` ``(R, W, C)``: ``(n_maps * R * W, O)``.

        Row ``m * R * W + r * W + c`` holds, for pixel ``(r, c)``, the layer's output that
        sums tap set ``m``, after the per-pixel operations. Taps that would read outside
        ``rows`` are left out; no window whose position uses tap set ``m`` there reads them.
        """
        height, width, bands = rows.shape
        k, half, out = self.kernel, self.kernel // 2, self.out_channels
        products = (rows.reshape(-1, bands) @ self.taps.to(rows.device)).view(height, width, k, k, out)
        sums = torch.zeros((self.n_maps, height, width, out), dtype=products.dtype, device=rows.device)
        for m, (y0, y1, x0, x1) in enumerate(self.layout.ranges):
            for ky in range(y0, y1):
                dy = ky - half  # output pixel r sums product row r + dy
                for kx in range(x0, x1):
                    dx = kx - half
                    target = sums[m, max(0, -dy) : height - max(0, dy), max(0, -dx) : width - max(0, dx)]
                    target += products[max(0, dy) : height + min(0, dy), max(0, dx) : width + min(0, dx), ky, kx]
        if self.bias is not None:
            sums += self.bias.to(rows.device)
        activated = self.parts.pointwise(sums.permute(0, 3, 1, 2))  # channels-last, as the layer's own output
        return activated.permute(0, 2, 3, 1).reshape(-1, out)

    def offsets(self, height: int, width: int, device: torch.device) -> torch.Tensor:
        """``(P, P)`` rows of :meth:`maps` (of ``height x width`` block rows) for a window whose top-left pixel is ``(0, 0)``."""
        plane = height * width
        p = self.patch_size
        return torch.tensor([[self.layout.index[i][j] * plane + i * width + j for j in range(p)] for i in range(p)],
                            dtype=torch.int64, device=device)

    def windows(self, maps: torch.Tensor, offsets: torch.Tensor, tops: torch.Tensor, lefts: torch.Tensor,
                width: int) -> torch.Tensor:
        """First-layer activations ``(n, O, P, P)`` (channels-last) of the windows with top-left pixels ``(tops, lefts)``."""
        p = self.patch_size
        index = (tops * width + lefts)[:, None, None] + offsets
        return maps.index_select(0, index.reshape(-1)).view(-1, p, p, self.out_channels).permute(0, 3, 1, 2)

    def rest(self, x: torch.Tensor) -> torch.Tensor:
        """The network's logits from first-layer activations ``x``."""
        return self.parts.rest(x)
