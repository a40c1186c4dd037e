"""``hsi infer`` beyond the training scene as it was stored: the units, scale, key and layout training was given, other
scenes scored by class name, a cube of other units scaled on its own pixels, a map of nonsense refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.io

from hsi.errors import SceneShiftWarning
from hsi.io import write_h5
from hsi.scenes import make_synthetic_scene

SCENE = {"height": 32, "width": 32, "bands": 10, "n_classes": 4, "seed": 1}
TRAIN = ["--model", "svm", "--block-size", "8", "--patch-size", "1", "--no-progress"]


def _write_cube(tmp_path, how: str) -> list[str]:
    """The scene stored one way, and the ``hsi train`` options that read it."""
    scene = make_synthetic_scene(**SCENE)
    scipy.io.savemat(tmp_path / "gt.mat", {"gt": scene.labels.astype(np.uint8)})
    data = scene.cube.data
    if how == "units_scale":  # reflectance stored as integers x 10000, no scale factor in the file
        write_h5(tmp_path / "cube.h5", np.round(data * 10000).astype(np.int16), wavelengths=scene.cube.wavelengths)
        return ["--cube", "cube.h5", "--units", "reflectance", "--scale", "10000"]
    if how == "key":  # two arrays in one file: the key picks the cube
        scipy.io.savemat(tmp_path / "cube.mat", {"aaa_other": data[..., :3] * 2, "cube": data})
        return ["--cube", "cube.mat", "--cube-key", "cube"]
    scipy.io.savemat(tmp_path / "cube.mat", {"cube": np.ascontiguousarray(data.transpose(2, 0, 1))})  # C x H x W
    return ["--cube", "cube.mat", "--layout", "CHW"]


@pytest.mark.parametrize("how", ["units_scale", "key", "layout"])
def test_the_checkpoints_own_scene_reproduces_trainings_test_numbers(how, hsi_main, tmp_path):
    source = _write_cube(tmp_path, how)
    status, _, err = hsi_main(["train", *source, "--labels", "gt.mat", *TRAIN, "--out", "run"], tmp_path)
    assert status == 0, err
    trained = json.loads((tmp_path / "run" / "metrics.json").read_text())
    status, _, err = hsi_main(["infer", "--checkpoint", "run/model.npz", "--out", "map", "--format", "npy",
                               "--no-progress"], tmp_path)
    assert status == 0, err
    assert "warning" not in err  # no units or value-range warning on its own scene
    mapped = json.loads((tmp_path / "map" / "metrics.json").read_text())
    assert mapped["test"]["pixels"] == sum(trained["support"].values())
    assert mapped["test"]["oa"] == pytest.approx(trained["oa"], abs=1e-12)
    assert mapped["test"]["kappa"] == pytest.approx(trained["kappa"], abs=1e-12)
    record = json.loads((tmp_path / "map" / "inference.json").read_text())
    assert record["preprocessing"]["fitted_on"] == "the checkpoint's training pixels"


def test_another_scene_is_scored_by_class_name_with_its_other_classes_apart(hsi_main, tmp_path):
    """A checkpoint of 4 classes on a scene of 6 whose classes are stored in another order (the crash of
    'cannot reshape array of size 48 into shape (3,3)', and the silent scoring by position)."""
    status, _, err = hsi_main(["train", "--scene", "synthetic", "--scene-options",
                               *(f"{k}={v}" for k, v in SCENE.items()), *TRAIN, "--out", "run"], tmp_path)
    assert status == 0, err
    other = make_synthetic_scene(height=32, width=32, bands=10, n_classes=6, seed=2)
    order = [3, 5, 0, 2, 4, 1]  # the file's class k + 1 is the scene's class order[k] + 1
    relabel = np.zeros(7, dtype=np.int64)
    relabel[[o + 1 for o in order]] = np.arange(1, 7)
    names = [other.class_names[o] for o in order]
    write_h5(tmp_path / "other.h5", other.cube.data, labels=relabel[other.labels], class_names=names,
             wavelengths=other.cube.wavelengths)
    status, printed, err = hsi_main(["infer", "--checkpoint", "run/model.npz", "--cube", "other.h5", "--labels",
                                     "other.h5", "--out", "map", "--format", "npy", "--no-progress"], tmp_path)
    assert status == 0, err
    metrics = json.loads((tmp_path / "map" / "metrics.json").read_text())
    checkpoint = metrics["class_names"][:4]
    assert metrics["classes"]["method"] == "name" and set(metrics["classes"]["unknown"]) == set(names) - set(checkpoint)
    assert metrics["test"] is None and "another scene" in metrics["test_note"]
    predicted = np.load(tmp_path / "map" / "labels.npy")
    for name in checkpoint:  # each shared class's recall, computed here by name
        truth = other.labels == other.class_names.index(name) + 1
        recall = float(np.mean(predicted[truth] == checkpoint.index(name) + 1))
        assert metrics["labeled"]["per_class"][name] == pytest.approx(recall)
    unseen = metrics["labeled"]["unseen_classes"]
    assert sum(e["pixels"] for e in unseen.values()) == int(np.isin(other.labels, [
        other.class_names.index(n) + 1 for n in set(names) - set(checkpoint)]).sum())
    assert "classes matched by name: 4 shared; 2 the checkpoint never saw" in printed
    assert "all labelled pixels: " in printed and "training pixels included" not in printed


def test_a_cube_in_other_units_is_scaled_on_its_own_pixels_or_refused(hsi_main, tmp_path):
    """Trained on reflectance, applied to the same scene stored as raw integers: 'auto' refits the scaling on the
    cube's pixels and maps it as the reflectance cube; the checkpoint's scaling maps every pixel as one class,
    which is refused with the fix, not written with exit status 0."""
    scene = make_synthetic_scene(**SCENE)
    write_h5(tmp_path / "refl.h5", scene.cube.data, wavelengths=scene.cube.wavelengths)
    scipy.io.savemat(tmp_path / "gt.mat", {"gt": scene.labels.astype(np.uint8)})
    raw = np.round(scene.cube.data * 10000 + 3000).astype(np.int16)  # counts with an offset, undeclared
    write_h5(tmp_path / "raw.h5", raw, wavelengths=scene.cube.wavelengths)
    status, _, err = hsi_main(["train", "--cube", "refl.h5", "--labels", "gt.mat", *TRAIN, "--scaling", "standardize",
                               "--out", "run"], tmp_path)
    assert status == 0, err
    infer = ["infer", "--checkpoint", "run/model.npz", "--labels", "gt.mat", "--format", "npy", "--no-progress"]
    status, _, err = hsi_main([*infer, "--cube", "refl.h5", "--out", "same"], tmp_path)
    assert status == 0, err
    with pytest.warns(SceneShiftWarning, match="hsi infer scaled it on its own valid pixels"):
        status, _, err = hsi_main([*infer, "--cube", "raw.h5", "--out", "auto"], tmp_path)
    assert status == 0, err
    same, auto = (json.loads((tmp_path / d / "metrics.json").read_text())["labeled"] for d in ("same", "auto"))
    assert auto["oa"] >= same["oa"] - 0.05
    record = json.loads((tmp_path / "auto" / "inference.json").read_text())
    assert record["preprocessing"]["fitted_on"].startswith("this scene's own pixels (unsupervised, its units")
    status, _, err = hsi_main([*infer, "--cube", "raw.h5", "--out", "kept", "--preprocess", "checkpoint"], tmp_path)
    lines = err.strip().splitlines()
    assert status == 2 and lines[-1].startswith("error: cube ") and "every pixel was mapped as" in lines[-1], err
    assert "--preprocess scene" in lines[-1] and not (tmp_path / "kept").exists()
