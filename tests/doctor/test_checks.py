"""Each doctor check passes on the real pipeline and fails on one broken on purpose for it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hsi.doctor import (
    check_batches,
    check_inference,
    check_normalization,
    check_overfit,
    check_spectra,
    default_model_factory,
    run_checks,
)
from hsi.doctor.inference import predict_with_hsi_infer

from .conftest import TINY, BrokenLoaders, tiny_datamodule

FCN = default_model_factory("fcn")


def _png_written(result, tmp_path):
    assert result.png == tmp_path / f"{result.name}.png"
    assert result.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_batches_pass_then_fail_on_transposed_and_unscaled_patches(tiny_dm, tmp_path):
    good = check_batches(tiny_dm, tmp_path)
    assert good.passed, good.format()
    _png_written(good, tmp_path)
    transposed = check_batches(BrokenLoaders(tiny_dm, lambda x, y: (x.permute(0, 2, 3, 1), y)))
    assert not transposed.passed
    assert "expected (B, 24, 5, 5)" in transposed.format() and "band axis is not second" in transposed.format()
    unscaled = check_batches(BrokenLoaders(tiny_dm, lambda x, y: (x * 500.0, y)))
    assert not unscaled.passed and "far outside the scaling's 0..1" in unscaled.format()


def test_spectra_pass_then_fail_on_reversed_and_shuffled_bands(tiny_dm, tmp_path):
    good = check_spectra(tiny_dm, tmp_path)
    assert good.passed, good.format()
    assert good.values["error"] < 1e-6
    _png_written(good, tmp_path)
    reversed_ = check_spectra(BrokenLoaders(tiny_dm, lambda x, y: (x.flip(1), y)))
    assert not reversed_.passed and "the band axis is reversed" in reversed_.format()
    perm = torch.as_tensor(np.random.default_rng(0).permutation(24))
    shuffled = check_spectra(BrokenLoaders(tiny_dm, lambda x, y: (x[:, perm], y)))
    assert not shuffled.passed and "jump(s) between neighbouring bands" in shuffled.format()


def test_spectra_pass_with_spectral_augmentation_then_fail_on_reversed_bands():
    """Issue: brightness and noise augmentation (a collection's default) moved the batches' class means off the
    reference, so an untouched pipeline failed; the batches are read with augmentation off."""
    dm = tiny_datamodule(spectral_scale=0.1, spectral_noise=0.05)
    assert dm.train_dataset.parts[0].augment.spectral  # the training loader's batches are brightened and noised
    good = check_spectra(dm)
    assert good.passed, good.format()
    assert good.values["error"] < 1e-6
    assert "training adds brightness x U(1 +- 0.1) and per-band noise sigma 0.05" in good.format()
    reversed_ = check_spectra(BrokenLoaders(dm, lambda x, y: (x.flip(1), y)))
    assert not reversed_.passed and "the band axis is reversed" in reversed_.format()


class _PermutedLabels:
    """A training dataset whose labels were gathered in another order than its patches."""

    def __init__(self, dataset, dynamic: bool) -> None:
        self._ds, self._dynamic = dataset, dynamic
        self.labels = dataset.labels[np.random.default_rng(0).permutation(len(dataset))]

    def __getattr__(self, name):
        return getattr(self._ds, name)

    def __getitems__(self, index):
        batch = self._ds.__getitems__(index)
        if self._dynamic:  # a different pairing at every fetch
            rng = np.random.default_rng(self._ds.epoch)
            batch.labels = batch.labels[torch.as_tensor(rng.permutation(len(batch.labels)))]
        else:
            batch.labels = torch.as_tensor(self.labels[np.asarray(index)])
        return batch


class _WithDataset(BrokenLoaders):
    def __init__(self, datamodule, dataset) -> None:
        super().__init__(datamodule, lambda x, y: (x, y))
        self.train_dataset = dataset


def test_overfit_passes_then_fails_on_shuffled_labels(tiny_dm, tmp_path):
    good = check_overfit(tiny_dm, FCN, tmp_path)
    assert good.passed, good.format()
    assert good.values["final_loss"] < 0.05
    _png_written(good, tmp_path)
    fixed = check_overfit(_WithDataset(tiny_dm, _PermutedLabels(tiny_dm.train_dataset, dynamic=False)), FCN,
                          steps=1)  # the alignment test needs no training
    assert not fixed.passed and "differ from the label map at their patch centres" in fixed.format()
    moving = check_overfit(_WithDataset(tiny_dm, _PermutedLabels(tiny_dm.train_dataset, dynamic=True)), FCN,
                           steps=40)  # the true labels need about 13
    assert not moving.passed and "did not fall below" in moving.format()


def test_overfit_fails_on_a_scrambled_label_map_that_the_pipeline_pairs_faithfully(tmp_path):
    from hsi.data import HSIDataModule
    from hsi.io import write_h5
    from hsi.scenes import load_scene

    scene = load_scene("synthetic", **TINY["scene_options"])
    labels = np.asarray(scene.labels)
    scrambled = np.random.default_rng(0).permutation(labels.ravel()).reshape(labels.shape).astype(np.uint8)
    path = write_h5(tmp_path / "scrambled.h5", scene.cube.data, labels=scrambled, wavelengths=scene.cube.wavelengths)
    dm = HSIDataModule(cube_path=str(path), labels_path=str(path), cube_key="cube", labels_key="labels",
                       patch_size=5, block_size=8, batch_size=32)
    bad = run_checks(dm, None, FCN, ["overfit"])[0]
    text = bad.format()
    assert not bad.passed and "labels equal the label map at every patch centre" in text  # alignment cannot see it
    assert bad.values["steps"] is not None  # 64 random labels are memorised...
    assert "the network learns random labels about as fast" in text  # ...but no faster than permuted ones
    assert "the labels barely predict the spectra" in text


def test_normalization_passes_then_fails_on_scaling_fitted_on_test_pixels(tiny_dm, tmp_path):
    from hsi.data.scene_source import load_source
    from hsi.preprocess import make_pipeline

    good = check_normalization(tiny_dm, tmp_path)
    assert good.passed, good.format()
    _png_written(good, tmp_path)
    cube = load_source(tiny_dm.source).cube
    wrong = make_pipeline(scaling="minmax", fill_nonfinite="median").fit(cube, sample_mask=tiny_dm.split.test)
    broken = tiny_datamodule()
    broken.load_state_dict({**tiny_dm.state_dict(), "pipeline": wrong.to_state()})
    broken.setup("fit")
    bad = check_normalization(broken)
    assert not bad.passed and "it was fitted on other pixels" in bad.format()


def test_inference_passes_then_fails_on_a_stitching_offset(tiny_dm, tmp_path):
    good = check_inference(tiny_dm, FCN, tmp_path, crop=32, tile=12, overlap=4)
    assert good.passed, good.format()
    _png_written(good, tmp_path)

    def offset(model, cube, tile, overlap):  # tiles placed one column to the right of where they belong
        labels, confidence = predict_with_hsi_infer(model, cube, tile, overlap)
        if tile < cube.data.shape[1]:
            labels, confidence = np.roll(labels, 1, axis=1), np.roll(confidence, 1, axis=1)
        return labels, confidence

    bad = check_inference(tiny_dm, FCN, crop=32, tile=12, overlap=4, predict=offset)
    assert not bad.passed and "a seam or stitching offset" in bad.format()
    assert bad.values["max_difference"] > 1e-3


@pytest.mark.shared
def test_every_check_passes_on_the_real_samson_pipeline(shared_data, tmp_path):
    from hsi.data import HSIDataModule

    dm = HSIDataModule(scene="samson", root=str(shared_data / "envi" / "samson"), scene_options={"purity": 0.5},
                       patch_size=5, block_size=16, batch_size=64)
    results = run_checks(dm, tmp_path, FCN)
    assert [r.name for r in results] == ["batches", "spectra", "overfit", "normalization", "inference"]
    assert all(r.passed for r in results), "\n".join(r.format() for r in results)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{r.name}.png" for r in results)
