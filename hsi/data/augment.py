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

Parameters are drawn on the host (:meth:`PatchAugment.sample`) and applied on any device: the symmetries inside
the gathers of :mod:`hsi.data.patches` (:func:`symmetry_offsets`), then scaling and noise in place
(:meth:`PatchAugment.apply_spectral`, the same float32 operations on every device), so the device-resident path
reproduces the host path exactly.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["PatchAugment", "counter_uniform", "dihedral", "symmetry_offsets"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64 finalizer on a uint64 array (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


_MASK = (1 << 64) - 1


def _mix_int(z: int) -> int:
    """:func:`_mix` on one Python integer (the same wrapping arithmetic, without numpy's per-call cost)."""
    z = ((z ^ (z >> 30)) * int(_M1)) & _MASK
    z = ((z ^ (z >> 27)) * int(_M2)) & _MASK
    return z ^ (z >> 31)


def _fold(h: Any, keys: tuple, start: int) -> Any:
    """Hash ``keys`` (positions ``start, start + 1, ...``) into the state ``h``.

    ``h`` is a Python int while every key so far is a scalar (cheap), then a uint64 array.
    ``counter_uniform(*keys)`` is ``_unit(_fold(0, keys, 0))``; folding a prefix once and
    the rest later gives the same result.
    """
    for i, key in enumerate(keys, start=start):
        salt = (int(_GOLDEN) * (i + 1)) & _MASK
        if isinstance(h, int) and isinstance(key, (int, np.integer)):
            h = _mix_int(h ^ ((int(key) + salt) & _MASK))
            continue
        with np.errstate(over="ignore"):
            k = np.asarray(key).astype(np.int64).astype(np.uint64)
            h = _mix(np.uint64(h) ^ (k + np.uint64(salt)) if isinstance(h, int) else h ^ (k + np.uint64(salt)))
    return h


def _unit(h: Any) -> np.ndarray:
    """Top 53 bits of a hash as float64 in ``[0, 1)``."""
    return (np.asarray(h, dtype=np.uint64) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def counter_uniform(*keys: Any) -> np.ndarray:
    """Uniform ``[0, 1)`` float64 draws that are a pure function of integer ``keys``.

    ``keys`` are integers or integer arrays broadcast together (e.g. ``seed, epoch,
    indices[:, None], draw_id, bands[None, :]``); the result has the broadcast shape.
    Each key is mixed in turn: ``h = mix(h ^ (key + golden * (position + 1)))`` from
    ``h = 0`` (SplitMix64's finalizer and constant, wrapping uint64 arithmetic).
    """
    return _unit(_fold(0, keys, 0))


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


@functools.lru_cache(maxsize=64)
def symmetry_offsets(patch_size: int) -> np.ndarray:
    """Where each pixel of a transformed window comes from, for the 8 symmetry codes.

    Parameters
    ----------
    patch_size : int
        Window side ``P``.

    Returns
    -------
    (8, P, P, 2) int64 read-only array: ``dihedral(w, code)[..., i, j]`` is
    ``w[..., a, b]`` with ``(a, b) = offsets[code, i, j]``. Built by applying
    :func:`dihedral` to a grid of pixel positions, so it matches it by construction.
    """
    p = int(patch_size)
    grid = np.stack(np.meshgrid(np.arange(p), np.arange(p), indexing="ij"))  # (2, P, P): (row, col)
    offsets = np.stack([np.ascontiguousarray(dihedral(grid, code)) for code in range(8)]).transpose(0, 2, 3, 1)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    offsets.flags.writeable = False
    return offsets


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
        ``scale`` (B,) float32 and ``noise`` (B, C) float32. The union of
        :meth:`sample_windows` and :meth:`sample_noise`.
        """
        out = self.sample_windows(seed, epoch, indices)
        noise = self.sample_noise(seed, epoch, indices, n_bands)
        if noise is not None:
            out["noise"] = noise
        return out

    def sample_windows(self, seed: int, epoch: int, indices: np.ndarray) -> dict[str, np.ndarray]:
        """The per-window draws: ``code`` (B,) int64, and ``scale`` (B,) float32 when enabled.

        Cheap enough to draw for a whole dataset once per epoch (``HSIPatchDataset`` does).
        """
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        h = self._prefix(seed, epoch, idx)[:, None]
        u = _unit(_fold(h, (np.arange(3)[None, :],), 3))  # (B, 3): draws 0 (flip), 1 (turns), 2 (scale)
        f = (u[:, 0] < 0.5).astype(np.int64) if self.flip else np.zeros_like(idx)
        k = np.floor(u[:, 1] * 4).astype(np.int64) if self.rotate else np.zeros_like(idx)
        out = {"code": k + 4 * f}
        if self.scale > 0:
            out["scale"] = (1.0 + self.scale * (2.0 * u[:, 2] - 1.0)).astype(np.float32)
        return out

    def sample_noise(self, seed: int, epoch: int, indices: np.ndarray, n_bands: int) -> np.ndarray | None:
        """The per-band offsets ``(B, C)`` float32 (draws 3 and 4, Box-Muller), or None when off."""
        if self.noise <= 0:
            return None
        h = self._prefix(seed, epoch, np.asarray(indices, dtype=np.int64).reshape(-1))[:, None]
        bands = np.arange(n_bands)[None, :]
        u1 = _unit(_fold(h, (3, bands), 3))
        u2 = _unit(_fold(h, (4, bands), 3))
        normal = np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)  # Box-Muller
        return (self.noise * normal).astype(np.float32)

    @staticmethod
    def _prefix(seed: int, epoch: int, idx: np.ndarray) -> np.ndarray:
        """The hash state after ``(seed, epoch, index)``, shared by every draw of a sample."""
        return _fold(_fold(0, (int(seed), int(epoch)), 0), (idx,), 2)

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
