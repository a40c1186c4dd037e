"""Checkpoints of 1-epoch runs on a tiny synthetic scene, made once per session.

``SCENE`` is small (36 x 30 pixels, so tiles of 8..16 do not divide it; 10 bands; 4
classes) and training is cut to a few batches: the tests check that inference reproduces
the model, not that the model is good.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import helpers

#: the synthetic scene of every checkpoint here (non-square, so rows and columns cannot be swapped unnoticed)
SCENE = {"height": 36, "width": 30, "bands": 10, "n_classes": 4, "seed": 5, "parcel_size": 9.0}
DM_ARGS = dict(scene="synthetic", scene_options=SCENE, patch_size=5, block_size=9, fractions=(0.5, 0.25, 0.25),
               batch_size=64, seed=0)


def make_datamodule(**overrides):
    """The training DataModule (in memory), with ``overrides``."""
    return helpers.quiet_datamodule(**{**DM_ARGS, **overrides})


def train_checkpoint(path: Path, model: str, shape_from_data: bool = False, **dm_overrides) -> Path:
    """Fit ``model`` for 3 batches on :func:`make_datamodule` (``dm_overrides``) and save the checkpoint at ``path``
    (:func:`tests.helpers.train_checkpoint`, which says what ``shape_from_data`` does)."""
    return helpers.train_checkpoint(path, make_datamodule(**dm_overrides), model, shape_from_data=shape_from_data)


@pytest.fixture(scope="session")
def fcn_ckpt(tmp_path_factory) -> Path:
    """A dense (fcn) checkpoint with PCA to 6 bands, on 7 x 7 patches: its whole receptive field (radius 3)."""
    return train_checkpoint(tmp_path_factory.mktemp("fcn") / "fcn.ckpt", "fcn", pca=6, patch_size=7)


@pytest.fixture(scope="session")
def cnn_ckpt(tmp_path_factory) -> Path:
    """A patch-centre (cnn2d) checkpoint with PCA to 6 bands."""
    return train_checkpoint(tmp_path_factory.mktemp("cnn") / "cnn.ckpt", "cnn2d", pca=6)


@pytest.fixture(scope="session")
def spectral_ckpt(tmp_path_factory) -> Path:
    """A spectral1d checkpoint on 1 x 1 patches (what ``hsi train --model spectral1d`` gives), raw bands."""
    return train_checkpoint(tmp_path_factory.mktemp("spectral") / "spectral.ckpt", "spectral1d", patch_size=1)


@pytest.fixture(scope="session")
def scene():
    """The synthetic scene of the checkpoints."""
    from hsi.scenes.synthetic import make_synthetic_scene

    return make_synthetic_scene(**SCENE)


@pytest.fixture(scope="session")
def dm_factory():
    """``dm_factory(**overrides)`` -> the training DataModule of the checkpoints (in memory)."""
    return make_datamodule
