"""Fixtures for the preprocess tests: small cubes, a parcel label map factory, real GT maps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers import make_parcels

# (relative path, MATLAB key) of the real ground-truth maps in the shared data folder.
REAL_GT = {
    "indian_pines": ("indian_pines/Indian_pines_gt.mat", "hyperimg_gt"),
    "pavia_university": ("pavia_university/PaviaU_gt.mat", "paviaU_gt"),
    "salinas": ("salinas/Salinas_gt.mat", "hyperimg_gt"),
    "salinas_a": ("salinas_a/SalinasA_gt.mat", "salinasA_gt"),
}


@pytest.fixture
def cube_and_mask() -> tuple[np.ndarray, np.ndarray]:
    """A (30, 25, 12) float cube with band-dependent offsets and a ~40 % training mask."""
    rng = np.random.default_rng(1)
    cube = rng.normal(size=(30, 25, 12)) * np.linspace(1, 50, 12) + np.arange(12) * 10.0
    mask = rng.random((30, 25)) < 0.4
    return cube.astype(np.float32), mask


def _load_gt(path: Path, key: str) -> np.ndarray:
    from scipy.io import loadmat

    return np.asarray(loadmat(path)[key], dtype=np.int64)


@pytest.fixture(scope="session")
def real_labels(shared_data: Path) -> dict[str, np.ndarray]:
    """The four real GT maps, with labels made contiguous 1..K (Salinas-A uses 1, 10..14)."""
    out = {}
    for name, (rel, key) in REAL_GT.items():
        lab = _load_gt(shared_data / rel, key)
        values = np.unique(lab[lab > 0])
        lut = np.zeros(int(lab.max()) + 1, dtype=np.int64)
        lut[values] = np.arange(1, values.size + 1)
        out[name] = lut[lab]
    return out


@pytest.fixture
def parcel_map():
    """The :func:`tests.helpers.make_parcels` factory."""
    return make_parcels
