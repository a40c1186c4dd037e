"""Patch augmentations that keep the band order intact, with worker-independent randomness.

Every random draw is a pure function of ``(seed, epoch, sample index, draw id)``: a
counter-based generator (SplitMix64 finalizer over those integers) evaluated for the whole
batch at once. It plays the role of ``np.random.default_rng([seed, epoch, index])`` — the
result for a sample never depends on which worker fetched it, on the batch it falls in or
on the device — but costs nanoseconds per sample instead of microseconds.

Augmentations (``PatchAugment``):

- the 8 symmetries of the square (horizontal flip, then ``k`` quarter turns in the
  ``(row, col)`` plane), drawn uniformly per sample (``flip=True``, ``rotate=True``);
- optional spectral scaling: the whole patch multiplied by ``U(1 - scale, 1 + scale)``
  (illumination change);
- optional spectral noise: a per-band offset ``N(0, noise^2)`` added to every pixel of the
  patch (one ``(C,)`` draw per sample, so the spectrum shape is jittered, not the bands
  reordered).

Parameters are drawn on the host (:meth:`PatchAugment.sample`) and applied to numpy or
torch batches on any device (:func:`dihedral`, :meth:`PatchAugment.apply_spectral`), so the
device-resident path reproduces the host path exactly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["PatchAugment", "dihedral", "counter_uniform"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64 finalizer on a uint64 array (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def counter_uniform(*keys: Any) -> np.ndarray:
    """Uniform ``[0, 1)`` float64 draws that are a pure function of integer ``keys``.

    ``keys`` are integers or integer arrays broadcast together (e.g. ``seed, epoch,
    indices[:, None], draw_id, bands[None, :]``); the result has the broadcast shape.
    """
    with np.errstate(over="ignore"):
        h = np.zeros((), dtype=np.uint64)
        for i, key in enumerate(keys):
            k = np.asarray(key).astype(np.int64).astype(np.uint64)
            h = _mix(h ^ (k + _GOLDEN * np.uint64(i + 1)))
        return (h >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def dihedral(x: Any, code: int, axes: tuple[int, int] = (-2, -1)) -> Any:
    """Apply symmetry ``code`` (0..7) of the square to the two spatial ``axes`` of ``x``.

    ``code = k + 4 * f``: flip ``axes[1]`` when ``f`` is 1, then rotate by ``k`` quarter
    turns from ``axes[0]`` towards ``axes[1]``. numpy input returns a view, torch input a
    tensor. Band values are only moved between pixels, never mixed or reordered.
    """
    k, flip = int(code) % 4, int(code) // 4
    if isinstance(x, torch.Tensor):
        if flip:
            x = torch.flip(x, (axes[1],))
        return torch.rot90(x, k, axes) if k else x
    if flip:
        x = np.flip(x, axes[1])
    return np.rot90(x, k, axes=axes) if k else x


@dataclass
class PatchAugment:
    """Random flips / quarter turns and optional spectral scaling and noise.

    Parameters
    ----------
    flip : draw a horizontal flip per sample.
    rotate : draw ``k`` quarter turns per sample.
    scale : half-width of the multiplicative factor ``U(1 - scale, 1 + scale)``; 0 = off.
    noise : standard deviation of the per-band additive offset; 0 = off.
    """

    flip: bool = True
    rotate: bool = True
    scale: float = 0.0
    noise: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def spectral(self) -> bool:
        return self.scale > 0 or self.noise > 0

    def sample(self, seed: int, epoch: int, indices: np.ndarray, n_bands: int) -> dict[str, np.ndarray]:
        """Draw the per-sample parameters for dataset ``indices`` at ``epoch``.

        Returns a dict: ``code`` (B,) int64 in 0..7 (see :func:`dihedral`); and when enabled
        ``scale`` (B,) float32 and ``noise`` (B, C) float32.
        """
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        f = (counter_uniform(seed, epoch, idx, 0) < 0.5).astype(np.int64) if self.flip else np.zeros_like(idx)
        k = np.floor(counter_uniform(seed, epoch, idx, 1) * 4).astype(np.int64) if self.rotate else np.zeros_like(idx)
        out = {"code": k + 4 * f}
        if self.scale > 0:
            u = counter_uniform(seed, epoch, idx, 2)
            out["scale"] = (1.0 + self.scale * (2.0 * u - 1.0)).astype(np.float32)
        if self.noise > 0:
            bands = np.arange(n_bands)[None, :]
            u1 = counter_uniform(seed, epoch, idx[:, None], 3, bands)
            u2 = counter_uniform(seed, epoch, idx[:, None], 4, bands)
            normal = np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)  # Box-Muller
            out["noise"] = (self.noise * normal).astype(np.float32)
        return out

    @staticmethod
    def apply_dihedral(x: torch.Tensor, code: torch.Tensor | np.ndarray) -> torch.Tensor:
        """Apply per-sample symmetries to a ``(B, C, P, P)`` tensor (any device)."""
        codes = np.asarray(code.cpu() if isinstance(code, torch.Tensor) else code).reshape(-1)
        if not codes.any():
            return x
        out = torch.empty_like(x)
        for c in np.unique(codes):
            sel = torch.from_numpy(np.nonzero(codes == c)[0]).to(x.device)
            out[sel] = dihedral(x[sel], int(c))
        return out

    @staticmethod
    def apply_spectral(x: torch.Tensor, params: dict[str, Any]) -> torch.Tensor:
        """Apply ``scale`` then ``noise`` (if present in ``params``) to ``(B, C, P, P)`` ``x``.

        In place when ``x`` is a fresh batch; same float32 operations on every device.
        """
        scale = params.get("scale")
        noise = params.get("noise")
        if scale is not None:
            s = torch.as_tensor(scale, device=x.device, dtype=x.dtype)
            x.mul_(s.view(-1, 1, 1, 1))
        if noise is not None:
            n = torch.as_tensor(noise, device=x.device, dtype=x.dtype)
            x.add_(n.view(n.shape[0], n.shape[1], 1, 1))
        return x
