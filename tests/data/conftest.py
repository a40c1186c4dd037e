"""Fixtures for the hsi.data tests: a small synthetic scene and a DataModule factory."""

from __future__ import annotations

import pytest

from tests.helpers import quiet_datamodule

#: small, fast synthetic scene (48 x 48 x 20, 5 classes); block_size 8 suits its size
SMALL = {"height": 48, "width": 48, "bands": 20, "n_classes": 5, "seed": 3, "parcel_size": 12.0}


@pytest.fixture
def small_scene():
    from hsi.scenes.synthetic import make_synthetic_scene

    return make_synthetic_scene(**SMALL)


@pytest.fixture
def make_dm(tmp_path):
    """``make_dm(**overrides)`` -> an HSIDataModule on the small scene, caching under tmp_path."""
    def factory(**kw):
        args = dict(scene="synthetic", scene_options=dict(SMALL), block_size=8, patch_size=5, batch_size=16,
                    cache_dir=str(tmp_path / "cache"), seed=0)
        return quiet_datamodule(**{**args, **kw})

    return factory
