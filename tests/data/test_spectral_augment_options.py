"""Spectral scale and noise augmentation reached from the DataModule's arguments (training batches only)."""

from __future__ import annotations

import warnings

import torch

SCENE = dict(height=24, width=24, bands=8, n_classes=3, seed=1)


def _batch(split: str = "train", **kw):
    from hsi.data import HSIDataModule

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dm = HSIDataModule(scene="synthetic", scene_options=SCENE, patch_size=5, block_size=6, seed=3, **kw)
        dm.setup("fit")
    loader = dm.train_dataloader() if split == "train" else dm.val_dataloader()
    return next(iter(loader))[0].contiguous()


def test_spectral_scale_multiplies_each_training_patch_within_its_range():
    plain, scaled = _batch(), _batch(spectral_scale=0.2)
    flat_plain, flat_scaled = plain.reshape(len(plain), -1), scaled.reshape(len(plain), -1)
    per_sample = (flat_scaled * flat_plain).sum(1) / (flat_plain * flat_plain).sum(1)  # least-squares factor
    torch.testing.assert_close(flat_scaled, flat_plain * per_sample[:, None], rtol=1e-5, atol=1e-6)
    assert ((per_sample >= 0.8) & (per_sample <= 1.2)).all() and per_sample.std() > 0.01


def test_spectral_noise_adds_one_offset_per_band_and_is_seeded():
    plain, noisy = _batch(), _batch(spectral_noise=0.05)
    offset = (noisy - plain).permute(0, 2, 3, 1).reshape(len(plain), -1, plain.shape[1])  # (B, P*P, C)
    assert torch.allclose(offset, offset[:, :1, :].expand_as(offset), atol=1e-6)  # constant over the window
    assert 0.02 < float(offset[:, 0, :].std()) < 0.1
    torch.testing.assert_close(_batch(spectral_noise=0.05), noisy)  # same seed, same batch


def test_validation_batches_are_never_augmented():
    torch.testing.assert_close(_batch("val", spectral_scale=0.3, spectral_noise=0.1), _batch("val"))


def test_a_strength_with_augment_off_is_refused_by_the_datamodule():
    import pytest

    from hsi.data import HSIDataModule
    from hsi.errors import OptionError

    with pytest.raises(OptionError, match=r"spectral_noise: 0\.05: 0 or unset with augment off .*no effect"):
        HSIDataModule(scene="synthetic", scene_options=SCENE, augment=False, spectral_noise=0.05)
    with pytest.raises(OptionError, match=r"spectral_scale: 0\.2: 0 or unset with augment off"):
        HSIDataModule(scene="synthetic", scene_options=SCENE, augment=False, spectral_scale=0.2)
    off = HSIDataModule(scenes=[{"name": "a", "scene": "synthetic", "scene_options": SCENE},
                                {"name": "b", "scene": "synthetic", "scene_options": {**SCENE, "seed": 2}}],
                        augment=False, spectral_noise=0.0)
    # a collection's defaults (0.1, 0.05) are recorded as 0 when nothing is augmented: what runs is what is recorded
    assert (off.hparams.spectral_scale, off.hparams.spectral_noise) == (0.0, 0.0)
