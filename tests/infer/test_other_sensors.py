"""Inference on a cube from another sensor: resampled onto the checkpoint's bands, checked for shift, recorded."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch

from hsi.errors import SceneShiftWarning

#: fast inference: the maps as .npy only
FAST = {"format": ("npy",), "progress": False, "accelerator": "cpu"}


def _infer(ckpt, cube, out, wavelengths=None):
    from hsi.infer import infer_scene
    from hsi.io import Cube

    source = Cube(np.ascontiguousarray(cube, dtype=np.float32), wavelengths, {"source": "new"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = infer_scene(ckpt, source, out=out, **FAST)
    manifest = json.loads((out / "inference.json").read_text())
    return result, manifest, [str(w.message) for w in caught if issubclass(w.category, SceneShiftWarning)]


def test_a_cube_on_other_bands_is_resampled_onto_a_single_scene_checkpoint(spectral_ckpt, scene, tmp_path):
    from hsi.preprocess.response import apply_response, response_matrix

    wl = scene.cube.wavelengths
    fine = np.linspace(wl[0], wl[-1], 4 * wl.size)  # a finer sensor over the same range
    cube = apply_response(scene.cube.data, response_matrix(wl, fine))
    _, manifest, said = _infer(spectral_ckpt, cube, tmp_path / "fine", wavelengths=fine)
    assert manifest["bands"]["method"] == "linear" and manifest["bands"]["dropped"] > 0
    assert manifest["scene_shift"]["checked"] and not manifest["scene_shift"]["preprocessed"]["shifted"]
    assert said == []
    same, manifest, _ = _infer(spectral_ckpt, scene.cube.data, tmp_path / "same", wavelengths=wl)
    assert manifest["bands"] is None  # on the checkpoint's own bands: not resampled


def test_a_cube_in_other_units_is_warned_about_and_recorded(spectral_ckpt, scene, tmp_path):
    _, manifest, said = _infer(spectral_ckpt, scene.cube.data * 10000.0, tmp_path / "x10000",
                               wavelengths=scene.cube.wavelengths)
    shift = manifest["scene_shift"]
    assert shift["raw"]["flagged"] and shift["raw"]["ratio"] == pytest.approx(10000, rel=1e-3)
    assert shift["preprocessed"]["shifted"]
    assert len(said) == 2 and all("'new'" in m and "\n" not in m for m in said)
    _, manifest, said = _infer(spectral_ckpt, scene.cube.data, tmp_path / "as-is", wavelengths=scene.cube.wavelengths)
    assert said == [] and not manifest["scene_shift"]["raw"]["flagged"]


def test_a_checkpoint_without_training_statistics_still_maps(spectral_ckpt, scene, tmp_path):
    """Checkpoints written before the statistics existed load and map; the record says they were not checked."""
    old = torch.load(spectral_ckpt, weights_only=True)
    for key in ("band_stats", "training_values", "grid_fwhm"):
        old["HSIDataModule"].pop(key)
    path = tmp_path / "old.ckpt"
    torch.save(old, path)
    result, manifest, said = _infer(path, scene.cube.data, tmp_path / "old", wavelengths=scene.cube.wavelengths)
    fresh, _, _ = _infer(spectral_ckpt, scene.cube.data, tmp_path / "new", wavelengths=scene.cube.wavelengths)
    assert np.array_equal(np.asarray(result.labels), np.asarray(fresh.labels))
    assert manifest["scene_shift"] == {"checked": False, "note": manifest["scene_shift"]["note"]}
    assert "older hsi" in manifest["scene_shift"]["note"] and said == []


def test_a_cube_without_wavelengths_and_other_bands_is_refused_naming_both(spectral_ckpt, scene, tmp_path):
    from hsi.errors import BandMismatchError
    from hsi.infer import infer_scene
    from hsi.io import Cube

    source = Cube(scene.cube.data[..., :7].copy(), None, {"source": "seven"})
    with pytest.raises(BandMismatchError, match=r"seven: no wavelengths, and its 7 bands are not the checkpoint's 10"):
        infer_scene(spectral_ckpt, source, out=tmp_path / "seven", **FAST)
