"""A wavelength-aware checkpoint (anyband) maps a cube on other bands without resampling it, and says so."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch

from tests.infer.conftest import SCENE, make_datamodule, train_checkpoint

FAST = {"format": ("npy",), "progress": False, "accelerator": "cpu"}


@pytest.fixture(scope="module")
def anyband_ckpt(tmp_path_factory):
    """One short epoch of anyband on the tiny synthetic scene (10 bands, 400-2500 nm), its shape from the data."""
    path = tmp_path_factory.mktemp("anyband") / "anyband.ckpt"
    overrides = {"patch_size": 5, "scaling": "standardize"}
    return train_checkpoint(path, "anyband", shape_from_data=True, **overrides), make_datamodule(**overrides)


def _infer(ckpt, data, wavelengths, out):
    from hsi.infer import infer_scene
    from hsi.io import Cube

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = infer_scene(ckpt, Cube(np.ascontiguousarray(data, dtype=np.float32), wavelengths, {"source": "new"}),
                             out=out, **FAST)
    return result, json.loads((out / "inference.json").read_text())


def test_the_network_is_built_on_the_wavelengths_of_its_input(anyband_ckpt):
    path, dm = anyband_ckpt
    saved = torch.load(path, weights_only=False)["hyper_parameters"]["model_options"]
    assert saved["wavelengths"] == pytest.approx(dm.wavelengths.tolist())


def test_a_cube_on_other_bands_is_read_on_its_own_bands_and_said(anyband_ckpt, tmp_path):
    from hsi.preprocess.response import apply_response, response_matrix
    from hsi.scenes.synthetic import make_synthetic_scene

    path, _ = anyband_ckpt
    scene = make_synthetic_scene(**SCENE)
    wl = scene.cube.wavelengths
    other = np.linspace(405.0, 2495.0, 7)  # another sensor: 7 bands at other centres, spanning the trained range
    cube = apply_response(scene.cube.data, response_matrix(wl, other))
    result, manifest = _infer(path, cube, other, tmp_path / "other")
    assert manifest["bands"]["method"] == "own bands" and manifest["bands"]["bands"] == 7
    assert manifest["bands"]["matched_to_training_scene"] is True
    assert "without resampling" in result.bands_note and "7 bands" in result.bands_note
    assert result.labels.shape == scene.labels.shape

    same, manifest = _infer(path, scene.cube.data, wl, tmp_path / "same")
    assert manifest["bands"] is None and same.bands_note is None  # its own bands: nothing changes
    from hsi.infer import infer_scene

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        own = infer_scene(path, scene="synthetic", **FAST)
    assert np.array_equal(np.asarray(same.labels), np.asarray(own.labels))


def test_bands_beyond_the_trained_range_are_dropped_with_one_line(anyband_ckpt, tmp_path, capsys):
    from hsi.cli import main
    from hsi.io import write_h5
    from hsi.scenes.synthetic import make_synthetic_scene

    path, _ = anyband_ckpt
    scene = make_synthetic_scene(**SCENE)
    wide = np.linspace(400.0, 2800.0, 10)  # 2800 nm lies beyond 400-2500 nm and its half-spacing slack
    cube = write_h5(tmp_path / "wide.h5", scene.cube.data, labels=scene.labels, wavelengths=wide)
    status = main(["infer", "--checkpoint", str(path), "--cube", str(cube), "--out", str(tmp_path / "map"),
                   "--no-progress", "--format", "npy"])
    out = capsys.readouterr().out
    assert status == 0
    bands = next(line for line in out.splitlines() if line.startswith("bands: "))
    assert "reads the cube's own 9 bands" in bands and "1 band(s) beyond the trained 400-2500 nm dropped" in bands
    record = json.loads((tmp_path / "map" / "inference.json").read_text())["bands"]
    assert record["dropped_beyond_trained_range"] == 1 and record["coverage_of_trained_range"] == 1.0


def test_a_cube_spanning_too_little_of_the_trained_range_is_refused_naming_the_fix(anyband_ckpt, tmp_path, capsys):
    """Below MIN_COVERAGE of the trained range the network is not trusted (a 401-899 nm cube read by a network of
    399-2457 nm mapped water as dirt)."""
    from hsi.cli import main
    from hsi.infer.own_bands import MIN_COVERAGE
    from hsi.io import write_h5
    from hsi.scenes.synthetic import make_synthetic_scene

    path, _ = anyband_ckpt
    scene = make_synthetic_scene(**SCENE)
    narrow = np.linspace(1800.0, 2500.0, 10)  # a third of 400-2500 nm (MIN_COVERAGE is more)
    cube = write_h5(tmp_path / "narrow.h5", scene.cube.data, labels=scene.labels, wavelengths=narrow)
    status = main(["infer", "--checkpoint", str(path), "--cube", str(cube), "--out", str(tmp_path / "map"),
                   "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and err[-1].startswith("error: cube "), err
    assert "span 1800-2500 nm, 33 % of that range" in err[-1] and f"at least {100 * MIN_COVERAGE:.0f} %" in err[-1]
    assert "--wavelength-range 1800 2500" in err[-1]
    assert not (tmp_path / "map").exists()


def test_pca_is_refused_for_a_network_that_reads_wavelengths():
    import lightning.pytorch as pl

    from hsi.errors import OptionError
    from hsi.training import HSIClassifier

    dm = make_datamodule(pca=3)
    trainer = pl.Trainer(max_epochs=1, limit_train_batches=1, limit_val_batches=0, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(OptionError, match="pca: 3: none: anyband reads each band with its wavelength"):
            trainer.fit(HSIClassifier(model="anyband"), datamodule=dm)


def test_an_anyband_network_built_without_wavelengths_has_its_cube_resampled(tmp_path):
    from hsi.preprocess.response import apply_response, response_matrix
    from hsi.scenes.synthetic import make_synthetic_scene

    path = train_checkpoint(tmp_path / "fixed.ckpt", "anyband", patch_size=5)  # shape given: no wavelengths
    assert "wavelengths" not in (torch.load(path, weights_only=False)["hyper_parameters"]["model_options"] or {})
    scene = make_synthetic_scene(**SCENE)
    finer = np.linspace(400.0, 2500.0, 19)
    result, manifest = _infer(path, apply_response(scene.cube.data, response_matrix(scene.cube.wavelengths, finer)),
                              finer, tmp_path / "map")
    assert manifest["bands"]["method"] in ("subset", "linear", "gaussian") and result.bands_note is None


def test_a_cube_without_wavelengths_is_refused_by_a_network_that_reads_them(anyband_ckpt, tmp_path):
    from hsi.errors import WavelengthError
    from hsi.infer import infer_scene
    from hsi.scenes.synthetic import make_synthetic_scene

    path, _ = anyband_ckpt
    cube = make_synthetic_scene(**SCENE).cube.data  # its 10 bands, as an array: no wavelengths
    with pytest.raises(WavelengthError, match=r"cube .* has no band wavelengths, but checkpoint .* \(AnyBandNet, "
                                              r"trained on 10 bands at 400-2500 nm\) reads each band with its "
                                              r"wavelength: give the cube's band centres"):
        infer_scene(path, np.ascontiguousarray(cube, dtype=np.float32), out=tmp_path / "map", **FAST)
    assert not (tmp_path / "map").exists()


def test_a_cube_without_wavelengths_is_read_on_a_fixed_band_checkpoints_bands_with_a_warning(tmp_path):
    from hsi.errors import AssumedBandsWarning
    from hsi.infer import infer_scene
    from hsi.scenes.synthetic import make_synthetic_scene

    path = train_checkpoint(tmp_path / "fixed.ckpt", "spectral1d", patch_size=5)
    scene = make_synthetic_scene(**SCENE)
    with pytest.warns(AssumedBandsWarning, match=r"has no band wavelengths: its 10 bands are assumed to be checkpoint "
                                                 r".*'s \(10 bands at 400-2500 nm\)"):
        assumed = infer_scene(path, np.ascontiguousarray(scene.cube.data, dtype=np.float32), **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AssumedBandsWarning)  # with its wavelengths: nothing assumed, no warning
        from hsi.io import Cube

        given = infer_scene(path, Cube(np.ascontiguousarray(scene.cube.data, dtype=np.float32),
                                       scene.cube.wavelengths, {"source": "new"}), **FAST)
    assert np.array_equal(assumed.labels, given.labels)
