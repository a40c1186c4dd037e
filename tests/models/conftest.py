"""Fixtures for the model tests: a tiny, seeded, linearly separable patch problem."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """Model tests are many small forward passes: one thread is fastest on shared CI cores."""


def _make_toy(
    num_bands: int, patch_size: int, batch: int = 16, noise: float = 0.1, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Two classes whose spectra ramp up (class 0) or down (class 1), plus Gaussian noise.

    Every pixel of a patch carries its class's spectrum, so both purely spectral and
    spatial models can separate the classes. Returns ``x (batch, C, P, P)`` float32 and
    ``y (batch,)`` int64 with equal class counts.
    """
    gen = torch.Generator().manual_seed(seed)
    ramp = torch.linspace(0.0, 1.0, num_bands)
    spectra = torch.stack([ramp, 1.0 - ramp])  # (2, C)
    y = torch.arange(batch) % 2
    x = spectra[y][:, :, None, None].expand(batch, num_bands, patch_size, patch_size)
    x = x + noise * torch.randn(x.shape, generator=gen)
    return x.contiguous().float(), y


@pytest.fixture
def make_toy() -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    """Factory ``make_toy(num_bands, patch_size, batch=16, noise=0.1, seed=0) -> (x, y)``."""
    return _make_toy
