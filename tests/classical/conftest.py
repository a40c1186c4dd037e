"""Fixtures for the classical baselines: a small seeded multi-class problem."""

from __future__ import annotations

import numpy as np
import pytest


def _blobs(n: int, num_bands: int, num_classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian classes around random centres, overlapping enough that the SVM needs many support vectors."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.0, 1.0, size=(num_classes, num_bands))
    y = np.arange(n) % num_classes
    X = centres[y] + 0.25 * rng.standard_normal((n, num_bands))
    return X.astype(np.float32), y.astype(np.int64)


@pytest.fixture(scope="module")
def blobs() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train (400, 6), y_train, X_test (300, 6), y_test)`` with 4 classes."""
    X, y = _blobs(700, 6, 4, seed=0)
    return X[:400], y[:400], X[400:], y[400:]
